// SPDX-License-Identifier: GPL-2.0
/*
 * SIOCRDSSETTOS / SIOCRDSGETTOS (in-tree rds_ioctl()):
 *  - GETTOS always works (0 until set);
 *  - SETTOS needs a transport with a TOS (bound to an RDMA address, or
 *    SO_RDS_TRANSPORT), else the ioctl is unknown to RDS and the socket
 *    layer answers ENOTTY: unbound, and bound to loopback (127/8, ::1);
 *  - SETTOS works once, and only before the socket has sent (has a
 *    connection): EINVAL otherwise;
 *  - bad argument pointer: EFAULT; any other SIOCPROTOPRIVATE+n: ENOTTY.
 * A message sent with a TOS arrives (over its own connection).
 */
#include "rds_test.h"

FIXTURE(tos)
{
	int a, b, u;
	struct sockaddr_storage aa, ba;
};

RDS_FAMILY_VARIANTS(tos);

FIXTURE_SETUP(tos)
{
	rds_setup_abu(_metadata, variant->family, &self->a, &self->aa,
		      &self->b, &self->ba, &self->u);
}

FIXTURE_TEARDOWN(tos)
{
	close(self->a);
	close(self->b);
	close(self->u);
}

/*
 * The argument buffer is larger than an rds_tos_t: when RDS does not know
 * an ioctl, the socket layer reads a struct ifreq from the same pointer.
 */
union tosarg {
	rds_tos_t tos;
	char pad[64];
};

static int gettos(int fd)
{
	union tosarg t;

	memset(&t, 0xee, sizeof(t));
	if (ioctl(fd, SIOCRDSGETTOS, &t) < 0)
		return -1;
	return t.tos;
}

static int settos(int fd, rds_tos_t v)
{
	union tosarg t;

	memset(&t, 0, sizeof(t));
	t.tos = v;
	return ioctl(fd, SIOCRDSSETTOS, &t);
}

TEST_F(tos, values)
{
	ASSERT_EQ(0x89e0, SIOCRDSSETTOS);
	ASSERT_EQ(0x89e1, SIOCRDSGETTOS);
	ASSERT_EQ(1, sizeof(rds_tos_t));
}

TEST_F(tos, get_default)
{
	EXPECT_EQ(0, gettos(self->u));
	EXPECT_EQ(0, gettos(self->a));
}

TEST_F(tos, set_get)
{
	ASSERT_EQ(0, settos(self->a, 5));
	EXPECT_EQ(5, gettos(self->a));
	ASSERT_EQ(0, settos(self->b, 255));
	EXPECT_EQ(255, gettos(self->b));
}

TEST_F(tos, set_once)
{
	ASSERT_EQ(0, settos(self->a, 3));
	EXPECT_ERRNO(settos(self->a, 4), EINVAL);
	EXPECT_ERRNO(settos(self->a, 3), EINVAL);
	EXPECT_EQ(3, gettos(self->a));
}

TEST_F(tos, set_unbound)
{
	EXPECT_ERRNO(settos(self->u, 1), ENOTTY);
	EXPECT_EQ(0, gettos(self->u));
}

/* The loopback transport has no TOS map: unknown ioctl, nothing set. */
TEST_F(tos, set_loopback_bound)
{
	struct sockaddr_storage la;
	char c;
	int lo;

	lo = rds_bound_socket_at(variant->family, rds_loop_str(variant->family),
				 0, &la);
	ASSERT_LE(0, lo) TH_LOG("bind %s: %s", rds_loop_str(variant->family),
				strerror(errno));
	EXPECT_ERRNO(settos(lo, 1), ENOTTY);
	EXPECT_ERRNO(settos(lo, 0), ENOTTY);
	EXPECT_EQ(0, gettos(lo));
	EXPECT_ERRNO(ioctl(lo, SIOCRDSSETTOS, NULL), EFAULT);
	ASSERT_EQ(1, rds_sendto(lo, "l", 1, 0, &la));
	ASSERT_EQ(1, rds_recv_wait(lo, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_ERRNO(settos(lo, 1), ENOTTY);
	close(lo);
}

/* SO_RDS_TRANSPORT alone (unbound) is enough for a TOS. */
TEST_F(tos, set_with_transport_unbound)
{
	ASSERT_EQ(0, setsockopt(self->u, SOL_RDS, SO_RDS_TRANSPORT,
				&(int){ RDS_TRANS_IB }, sizeof(int)));
	EXPECT_EQ(0, settos(self->u, 4));
	EXPECT_EQ(4, gettos(self->u));
	EXPECT_ERRNO(settos(self->u, 5), EINVAL);
}

TEST_F(tos, set_after_send)
{
	char c;

	ASSERT_EQ(1, rds_sendto(self->a, "t", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_ERRNO(settos(self->a, 2), EINVAL);
	EXPECT_EQ(0, gettos(self->a));
}

TEST_F(tos, bad_pointer)
{
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSSETTOS, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSSETTOS, RDS_KERNEL_PTR), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSGETTOS, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSGETTOS, RDS_KERNEL_PTR), EFAULT);
	EXPECT_ERRNO(ioctl(self->u, SIOCRDSSETTOS, NULL), EFAULT);
	/* nothing was set */
	EXPECT_EQ(0, gettos(self->a));
	EXPECT_EQ(0, settos(self->a, 9));
}

TEST_F(tos, unknown_ioctl)
{
	union tosarg t;

	memset(&t, 0, sizeof(t));
	EXPECT_ERRNO(ioctl(self->a, SIOCPROTOPRIVATE + 2, &t), ENOTTY);
	EXPECT_ERRNO(ioctl(self->a, SIOCPROTOPRIVATE + 15, &t), ENOTTY);
	EXPECT_ERRNO(ioctl(self->u, SIOCPROTOPRIVATE + 2, &t), ENOTTY);
}

TEST_F(tos, send_with_tos)
{
	struct sockaddr_storage from;
	char buf[64];
	int i;

	ASSERT_EQ(0, settos(self->a, 7));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(10, rds_sendto(self->a, "0123456789", 10, 0, &self->ba));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(10, rds_recv_wait(self->b, buf, sizeof(buf), 0, &from,
					    RDS_WAIT_MS)) TH_LOG("message %d", i);
		EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
	}
	/* replies on TOS 0 to the same address still flow */
	ASSERT_EQ(2, rds_sendto(self->b, "ok", 2, 0, &self->aa));
	ASSERT_EQ(2, rds_recv_wait(self->a, buf, sizeof(buf), 0, NULL, RDS_WAIT_MS));
}

RDS_TEST_MAIN
