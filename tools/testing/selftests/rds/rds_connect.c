// SPDX-License-Identifier: GPL-2.0
/*
 * connect(), getsockname(), getpeername() on PF_RDS sockets.
 *
 * In-tree rds_connect() only records the default destination (no
 * handshake, no bind needed, may be repeated).  Errors: len < 2 or shorter
 * than the family's sockaddr: -EINVAL; family neither AF_INET nor AF_INET6:
 * -EAFNOSUPPORT; IPv4 INADDR_ANY: -EDESTADDRREQ; IPv4 broadcast/multicast:
 * -EINVAL; IPv6 non-unicast (::, multicast, bad v4-mapped): -EPROTOTYPE;
 * IPv6 link-local without scope: -EINVAL.
 *
 * rds_getname(): getpeername on a socket without destination: -ENOTCONN;
 * getsockname on an unbound socket: AF_UNSPEC (or, once connected, the
 * destination's family with a zero address), length of a sockaddr_in (or
 * sockaddr_in6).
 */
#include "rds_test.h"

FIXTURE(conn)
{
	int fd;
};

FIXTURE_VARIANT(conn)
{
	int family;
	const char *mcast;
	int mcast_err;		/* multicast destination */
	int any_err;		/* wildcard destination */
};

FIXTURE_VARIANT_ADD(conn, ipv4)
{
	.family = AF_INET,
	.mcast = "224.0.0.1",
	.mcast_err = EINVAL,
	.any_err = EDESTADDRREQ,
};

FIXTURE_VARIANT_ADD(conn, ipv6)
{
	.family = AF_INET6,
	.mcast = "ff02::1",
	.mcast_err = EPROTOTYPE,
	.any_err = EPROTOTYPE,
};

FIXTURE_SETUP(conn)
{
	self->fd = rds_socket();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(conn)
{
	close(self->fd);
}

static socklen_t peer(int family, uint16_t port, struct sockaddr_storage *ss)
{
	return rds_mkaddr(family, rds_peer_str(family), port, ss);
}

TEST_F(conn, unbound_getname)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0xaa, sizeof(ss));
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&ss, &len));
	EXPECT_EQ(AF_UNSPEC, ss.ss_family);
	EXPECT_EQ(sizeof(struct sockaddr_in), len);
	len = sizeof(ss);
	EXPECT_ERRNO(getpeername(self->fd, (struct sockaddr *)&ss, &len),
		     ENOTCONN);
}

TEST_F(conn, connect_unbound)
{
	struct sockaddr_storage dst, got;
	socklen_t len = peer(variant->family, 4242, &dst);
	static const uint8_t zero[16];

	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&dst, len));
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(rds_sslen(&dst), len);
	EXPECT_TRUE(rds_addr_eq(&dst, &got));

	/* unbound but connected: family of the destination, zero address */
	len = sizeof(got);
	memset(&got, 0xaa, sizeof(got));
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(variant->family, got.ss_family);
	EXPECT_EQ(rds_sslen(&dst), len);
	EXPECT_EQ(0, rds_port_of(&got));
	if (variant->family == AF_INET) {
		EXPECT_EQ(0, ((struct sockaddr_in *)&got)->sin_addr.s_addr);
	} else {
		EXPECT_EQ(0, memcmp(zero,
				    &((struct sockaddr_in6 *)&got)->sin6_addr, 16));
	}
}

TEST_F(conn, connect_bound)
{
	struct sockaddr_storage me, dst, got;
	socklen_t len;

	close(self->fd);
	self->fd = rds_bound_socket(variant->family, 0, &me);
	ASSERT_LE(0, self->fd);
	len = peer(variant->family, 5555, &dst);
	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&dst, len));
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(rds_addr_eq(&dst, &got));
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(rds_addr_eq(&me, &got));
	EXPECT_EQ(rds_sslen(&me), len);
	if (variant->family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&got;

		EXPECT_EQ(0, s6->sin6_scope_id);
		EXPECT_EQ(0, s6->sin6_flowinfo);
	}
}

TEST_F(conn, reconnect_replaces)
{
	struct sockaddr_storage d1, d2, got;
	socklen_t len = peer(variant->family, 1000, &d1);

	peer(variant->family, 2000, &d2);
	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&d1, len));
	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&d2, len));
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(rds_addr_eq(&d2, &got));
}

TEST_F(conn, connect_self)
{
	struct sockaddr_storage me, got;
	socklen_t len;

	close(self->fd);
	self->fd = rds_bound_socket(variant->family, 0, &me);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&me, rds_sslen(&me)));
	len = sizeof(got);
	ASSERT_EQ(0, getpeername(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(rds_addr_eq(&me, &got));
}

TEST_F(conn, connect_any)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family,
				   variant->family == AF_INET ? "0.0.0.0" : "::",
				   4000, &ss);

	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, len),
		     variant->any_err);
	len = sizeof(ss);
	EXPECT_ERRNO(getpeername(self->fd, (struct sockaddr *)&ss, &len),
		     ENOTCONN);
}

TEST_F(conn, connect_multicast)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, variant->mcast, 4000, &ss);

	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, len),
		     variant->mcast_err);
	if (variant->family == AF_INET) {
		len = rds_mkaddr(AF_INET, "255.255.255.255", 4000, &ss);
		EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, len),
			     EINVAL);
	} else {
		static const char * const bad[] = {
			"::ffff:0.0.0.0", "::ffff:255.255.255.255",
			"::ffff:224.0.0.1",
		};
		unsigned int i;

		for (i = 0; i < 3; i++) {
			len = rds_mkaddr(AF_INET6, bad[i], 4000, &ss);
			TH_LOG("%s", bad[i]);
			EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, len),
				     EPROTOTYPE);
		}
	}
}

TEST_F(conn, connect_short_len)
{
	struct sockaddr_storage ss;
	socklen_t len = peer(variant->family, 4000, &ss);

	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, 0), EINVAL);
	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, 1), EINVAL);
	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, len - 1), EINVAL);
	EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, sizeof(ss) + 1),
		     EINVAL);
	EXPECT_EQ(0, connect(self->fd, (struct sockaddr *)&ss, sizeof(ss)));
}

TEST_F(conn, connect_wrong_family)
{
	static const int fams[] = { AF_UNSPEC, AF_UNIX, AF_RDS, 255 };
	struct sockaddr_storage ss;
	unsigned int i;

	peer(variant->family, 4000, &ss);
	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		ss.ss_family = fams[i];
		TH_LOG("family %d", fams[i]);
		EXPECT_ERRNO(connect(self->fd, (struct sockaddr *)&ss, sizeof(ss)),
			     EAFNOSUPPORT);
	}
}

TEST_F(conn, connect_bad_pointer)
{
	EXPECT_ERRNO(connect(self->fd, NULL, sizeof(struct sockaddr_in6)),
		     EFAULT);
	EXPECT_ERRNO(connect(self->fd, RDS_KERNEL_PTR,
			     sizeof(struct sockaddr_in6)), EFAULT);
}

TEST_F(conn, getname_short_buffer)
{
	struct sockaddr_storage me;
	char buf[sizeof(struct sockaddr_storage)];
	socklen_t len;

	close(self->fd);
	self->fd = rds_bound_socket(variant->family, 0, &me);
	ASSERT_LE(0, self->fd);
	memset(buf, 0x5a, sizeof(buf));
	len = 4;
	ASSERT_EQ(0, getsockname(self->fd, (struct sockaddr *)buf, &len));
	/* truncated copy, real length reported */
	EXPECT_EQ(rds_sslen(&me), len);
	EXPECT_EQ(0, memcmp(buf, &me, 4));
	EXPECT_EQ(0x5a, (unsigned char)buf[4]);
}

TEST_F(conn, getname_bad_pointer)
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);

	close(self->fd);
	self->fd = rds_bound_socket(variant->family, 0, &me);
	ASSERT_LE(0, self->fd);
	EXPECT_ERRNO(getsockname(self->fd, RDS_KERNEL_PTR, &len), EFAULT);
	EXPECT_ERRNO(getsockname(self->fd, (struct sockaddr *)&me, NULL), EFAULT);
	ASSERT_EQ(0, connect(self->fd, (struct sockaddr *)&me, rds_sslen(&me)));
	len = sizeof(me);
	EXPECT_ERRNO(getpeername(self->fd, NULL, &len), EFAULT);
}

TEST(v6_linklocal_connect_needs_scope)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(AF_INET6, "fe80::2", 4000, &ss);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(connect(fd, (struct sockaddr *)&ss, len), EINVAL);
	((struct sockaddr_in6 *)&ss)->sin6_scope_id = 1;
	EXPECT_EQ(0, connect(fd, (struct sockaddr *)&ss, len));
	close(fd);
}

RDS_TEST_MAIN
