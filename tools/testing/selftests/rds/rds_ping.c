// SPDX-License-Identifier: GPL-2.0
/*
 * RDS ping (what rds-ping does; in-tree recv.c): a message to port 0 of an
 * address is answered, while net.rds.ping_enable is 1 (the default), by a
 * 0-byte pong from that address, source port 0, to the sender's port.
 * Local address and, with two nodes, the peer; IPv4 and IPv6.
 */
#include "rds_test.h"

#define PING_SYSCTL "/proc/sys/net/rds/ping_enable"

FIXTURE(ping)
{
	int a;
	struct sockaddr_storage aa, dst;
};

FIXTURE_VARIANT(ping)
{
	int family;
	bool peer;
};

FIXTURE_VARIANT_ADD(ping, local4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(ping, local6)
{
	.family = AF_INET6,
};

FIXTURE_VARIANT_ADD(ping, peer4)
{
	.family = AF_INET,
	.peer = true,
};

FIXTURE_VARIANT_ADD(ping, peer6)
{
	.family = AF_INET6,
	.peer = true,
};

FIXTURE_SETUP(ping)
{
	if (variant->peer && !rds_have_peer())
		SKIP(return, "no peer node");
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	rds_mkaddr(variant->family, variant->peer ? rds_peer_str(variant->family)
						  : rds_local_str(variant->family),
		   0, &self->dst);
}

FIXTURE_TEARDOWN(ping)
{
	close(self->a);
}

/* Expect one pong (0 bytes from dst:0) within ms. */
static void expect_pong(struct __test_metadata *_metadata,
			FIXTURE_DATA(ping) *self, int ms)
{
	struct sockaddr_storage from;
	char buf[64];
	ssize_t r;

	memset(&from, 0, sizeof(from));
	r = rds_recv_wait(self->a, buf, sizeof(buf), 0, &from, ms);
	ASSERT_EQ(0, r) TH_LOG("pong: %zd %s", r, strerror(errno));
	EXPECT_TRUE(rds_addr_eq(&self->dst, &from));
}

TEST_F(ping, pong)
{
	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
	/* the first ping may have to wait for the connection */
	expect_pong(_metadata, self, 30000);
}

TEST_F(ping, repeated)
{
	int i;

	for (i = 0; i < 20; i++) {
		ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
		expect_pong(_metadata, self, 30000);
	}
}

TEST_F(ping, with_payload)
{
	char buf[100];

	memset(buf, 'p', sizeof(buf));
	/* the pong is empty whatever the ping carried */
	ASSERT_EQ(100, rds_sendto(self->a, buf, 100, 0, &self->dst));
	expect_pong(_metadata, self, 30000);
}

TEST_F(ping, burst)
{
	int i;

	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
	for (i = 0; i < 10; i++)
		expect_pong(_metadata, self, 30000);
	rds_msleep(300);
	EXPECT_ERRNO(recv(self->a, NULL, 0, MSG_DONTWAIT), EAGAIN);
}

TEST_F(ping, disabled)
{
	char old[16] = "1";

	if (variant->peer)
		SKIP(return, "sysctl of the local node only");
	ASSERT_EQ(0, rds_read_file(PING_SYSCTL, old, sizeof(old)))
		TH_LOG("no %s", PING_SYSCTL);
	/* make sure the connection is up first */
	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
	expect_pong(_metadata, self, 30000);
	ASSERT_EQ(0, rds_write_file(PING_SYSCTL, "0"));
	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
	rds_msleep(1000);
	EXPECT_ERRNO(recv(self->a, NULL, 0, MSG_DONTWAIT), EAGAIN);
	ASSERT_EQ(0, rds_write_file(PING_SYSCTL, old));
	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->dst));
	expect_pong(_metadata, self, 30000);
}

RDS_TEST_MAIN
