// SPDX-License-Identifier: GPL-2.0
/*
 * bind() on PF_RDS sockets, IPv4 and IPv6 (in-tree rds_bind()/rds_add_bound()):
 *  - AF_INET needs len >= sizeof(sockaddr_in), AF_INET6 >= sizeof(sockaddr_in6),
 *    any other family, or a shorter length: -EINVAL;
 *  - wildcard, broadcast, multicast (also v4-mapped): -EINVAL;
 *  - link-local IPv6 without sin6_scope_id: -EINVAL;
 *  - a bound socket cannot be bound again: -EINVAL;
 *  - port 1 (RDS_FLAG_PROBE_PORT) is reserved: -EINVAL;
 *  - address:port already bound: -EADDRINUSE;
 *  - port 0 picks a free port (never 0 or 1);
 *  - no transport for the address (not on an RDMA device): -EADDRNOTAVAIL;
 *  - a loopback address (127.0.0.0/8, ::ffff:127.x.y.z, ::1) binds with the
 *    loopback transport (SO_RDS_TRANSPORT reads 3), with the same port
 *    rules; SO_RDS_TRANSPORT RDS_TRANS_IB first: -ENOPROTOOPT.
 * Binding needs RDS_LOCAL_ADDR{,6} to be on an rxe device.
 */
#include "rds_test.h"

FIXTURE(bind)
{
	int fd;
	int family;
};

FIXTURE_VARIANT(bind)
{
	int family;
	const char *any;
	const char *mcast;
	const char *bcast;	/* NULL: the family has none */
	const char *nonlocal;	/* on no interface of this node */
};

FIXTURE_VARIANT_ADD(bind, ipv4)
{
	.family = AF_INET,
	.any = "0.0.0.0",
	.mcast = "224.0.0.1",
	.bcast = "255.255.255.255",
	.nonlocal = "192.0.2.200",
};

FIXTURE_VARIANT_ADD(bind, ipv6)
{
	.family = AF_INET6,
	.any = "::",
	.mcast = "ff02::1",
	.bcast = NULL,
	.nonlocal = "2001:db8::c8",
};

FIXTURE_SETUP(bind)
{
	self->family = variant->family;
	self->fd = rds_socket();
	ASSERT_LE(0, self->fd);
}

FIXTURE_TEARDOWN(bind)
{
	if (self->fd >= 0)
		close(self->fd);
}

static socklen_t local(const FIXTURE_VARIANT(bind) *v, uint16_t port,
		       struct sockaddr_storage *ss)
{
	return rds_mkaddr(v->family, rds_local_str(v->family), port, ss);
}

/* A port that is free right now on the local address (found by probing). */
static uint16_t free_port(const FIXTURE_VARIANT(bind) *v)
{
	struct sockaddr_storage ss;
	uint16_t port;
	int fd;

	fd = rds_bound_socket(v->family, 0, &ss);
	if (fd < 0)
		return 0;
	port = rds_port_of(&ss);
	close(fd);
	return port;
}

TEST_F(bind, port0_picks_port)
{
	struct sockaddr_storage ss, got, want;
	socklen_t len = local(variant, 0, &ss);
	char b1[80], b2[80];

	ASSERT_NE(0, len);
	ASSERT_OK(bind(self->fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_OK(getsockname(self->fd, (struct sockaddr *)&got, &len));
	ASSERT_EQ(rds_sslen(&ss), len);
	ASSERT_EQ(variant->family, got.ss_family);
	EXPECT_NE(0, rds_port_of(&got));
	EXPECT_NE(RDS_PROBE_PORT, rds_port_of(&got));
	local(variant, rds_port_of(&got), &want);
	EXPECT_TRUE(rds_addr_eq(&want, &got))
		TH_LOG("got %s want %s", rds_ntop(&got, b1, 80), rds_ntop(&want, b2, 80));
}

TEST_F(bind, port0_distinct)
{
	int fds[64], i, j;
	uint16_t ports[64];
	struct sockaddr_storage ss;

	for (i = 0; i < 64; i++) {
		fds[i] = rds_bound_socket(variant->family, 0, &ss);
		ASSERT_LE(0, fds[i]) TH_LOG("socket %d: %s", i, strerror(errno));
		ports[i] = rds_port_of(&ss);
		EXPECT_NE(0, ports[i]);
		EXPECT_NE(RDS_PROBE_PORT, ports[i]);
		for (j = 0; j < i; j++)
			EXPECT_NE(ports[j], ports[i]);
	}
	for (i = 0; i < 64; i++)
		close(fds[i]);
}

TEST_F(bind, explicit_port)
{
	struct sockaddr_storage ss, got;
	uint16_t port = free_port(variant);
	socklen_t len = local(variant, port, &ss);

	ASSERT_NE(0, port);
	ASSERT_OK(bind(self->fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_OK(getsockname(self->fd, (struct sockaddr *)&got, &len));
	EXPECT_TRUE(rds_addr_eq(&ss, &got));
}

TEST_F(bind, addr_in_use)
{
	struct sockaddr_storage ss;
	uint16_t port = free_port(variant);
	socklen_t len = local(variant, port, &ss);
	int fd2 = rds_socket();

	ASSERT_LE(0, fd2);
	ASSERT_OK(bind(self->fd, (struct sockaddr *)&ss, len));
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&ss, len), EADDRINUSE);
	/* closing the owner frees the port at once */
	close(self->fd);
	self->fd = -1;
	EXPECT_EQ(0, bind(fd2, (struct sockaddr *)&ss, len));
	close(fd2);
}

TEST_F(bind, no_rebind)
{
	struct sockaddr_storage ss, got;
	socklen_t len = local(variant, 0, &ss);
	uint16_t other = free_port(variant);

	ASSERT_OK(bind(self->fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_OK(getsockname(self->fd, (struct sockaddr *)&got, &len));
	/* same address and port, another port, port 0: all refused */
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&got, len), EINVAL);
	rds_set_port(&ss, other);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	rds_set_port(&ss, 0);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
}

TEST_F(bind, wildcard)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, variant->any, 0, &ss);

	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	rds_set_port(&ss, 4000);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
}

TEST_F(bind, multicast)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, variant->mcast, 4000, &ss);

	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	if (variant->family == AF_INET) {
		len = rds_mkaddr(AF_INET, "239.1.2.3", 0, &ss);
		EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	} else {
		len = rds_mkaddr(AF_INET6, "ff0e::1:2", 0, &ss);
		EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	}
}

TEST_F(bind, broadcast)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (!variant->bcast) {
		/* IPv6 has no broadcast; the v4-mapped forms are checked */
		static const char * const bad[] = {
			"::ffff:255.255.255.255", "::ffff:0.0.0.0",
			"::ffff:224.0.0.1",
		};
		unsigned int i;

		for (i = 0; i < 3; i++) {
			len = rds_mkaddr(AF_INET6, bad[i], 0, &ss);
			TH_LOG("%s", bad[i]);
			EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len),
				     EINVAL);
		}
		return;
	}
	len = rds_mkaddr(AF_INET, variant->bcast, 0, &ss);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
}

TEST_F(bind, short_len)
{
	struct sockaddr_storage ss;
	socklen_t len = local(variant, 0, &ss);

	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, 0), EINVAL);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, 1), EINVAL);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, 2), EINVAL);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len - 1), EINVAL);
	if (variant->family == AF_INET6)
		EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss,
				  sizeof(struct sockaddr_in)), EINVAL);
	/* the socket is still unbound and usable */
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, len));
}

TEST_F(bind, long_len)
{
	struct sockaddr_storage ss;

	local(variant, 0, &ss);
	/* more than sockaddr_storage: refused by the socket layer */
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, sizeof(ss) + 1),
		     EINVAL);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, (socklen_t)-1),
		     EINVAL);
	/* a longer length than the family needs is fine */
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, sizeof(ss)));
}

TEST_F(bind, wrong_family)
{
	static const int fams[] = { AF_UNSPEC, AF_UNIX, AF_RDS, AF_PACKET, 255 };
	struct sockaddr_storage ss;
	socklen_t len = local(variant, 0, &ss);
	unsigned int i;

	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		ss.ss_family = fams[i];
		TH_LOG("family %d", fams[i]);
		EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, sizeof(ss)),
			     EINVAL);
	}
	ss.ss_family = variant->family;
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, len));
}

TEST_F(bind, bad_pointer)
{
	EXPECT_ERRNO(bind(self->fd, NULL, sizeof(struct sockaddr_in6)), EFAULT);
	EXPECT_ERRNO(bind(self->fd, RDS_KERNEL_PTR, sizeof(struct sockaddr_in6)),
		     EFAULT);
}

TEST_F(bind, unaligned_addr)
{
	char raw[sizeof(struct sockaddr_storage) + 1];
	struct sockaddr_storage ss;
	socklen_t len = local(variant, 0, &ss);

	memcpy(raw + 1, &ss, len);
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)(raw + 1), len));
}

TEST_F(bind, probe_port_reserved)
{
	struct sockaddr_storage ss;
	socklen_t len = local(variant, RDS_PROBE_PORT, &ss);

	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	/* still bindable afterwards */
	rds_set_port(&ss, 0);
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, len));
}

TEST_F(bind, not_on_rdma_device)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, variant->nonlocal, 0, &ss);

	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EADDRNOTAVAIL);
	rds_set_port(&ss, 4000);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EADDRNOTAVAIL);
	/* the failed bind left the socket unbound: a good one works */
	len = local(variant, 0, &ss);
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, len));
}

TEST_F(bind, peer_address_is_not_local)
{
	struct sockaddr_storage ss;
	socklen_t len;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	len = rds_mkaddr(variant->family, rds_peer_str(variant->family), 0, &ss);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EADDRNOTAVAIL);
}

static int trans_of(int fd)
{
	socklen_t len = sizeof(int);
	int t = -2;

	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, &len) < 0)
		return -3;
	return t;
}

/* In-tree rds_trans_get_preferred(): loopback addresses take loopback. */
TEST_F(bind, loopback)
{
	struct sockaddr_storage ss, got, want;
	const char *lo = rds_loop_str(variant->family);
	socklen_t len = rds_mkaddr(variant->family, lo, 0, &ss);
	char b1[80], b2[80];
	int fd2;

	ASSERT_NE(0, len);
	ASSERT_OK(bind(self->fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_OK(getsockname(self->fd, (struct sockaddr *)&got, &len));
	ASSERT_EQ(rds_sslen(&ss), len);
	EXPECT_NE(0, rds_port_of(&got));
	EXPECT_NE(RDS_PROBE_PORT, rds_port_of(&got));
	rds_mkaddr(variant->family, lo, rds_port_of(&got), &want);
	EXPECT_TRUE(rds_addr_eq(&want, &got))
		TH_LOG("got %s want %s", rds_ntop(&got, b1, 80), rds_ntop(&want, b2, 80));
	/* RDS_TRANS_LOOP (3) in-tree; the uapi's RDS_TRANS_COUNT */
	EXPECT_EQ(3, trans_of(self->fd));

	/* the port rules are the same as on an RDMA address */
	fd2 = rds_socket();
	ASSERT_LE(0, fd2);
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&got, rds_sslen(&got)),
		     EADDRINUSE);
	rds_set_port(&ss, RDS_PROBE_PORT);
	EXPECT_ERRNO(bind(fd2, (struct sockaddr *)&ss, rds_sslen(&ss)), EINVAL);
	EXPECT_EQ(RDS_TRANS_NONE, trans_of(fd2));
	rds_set_port(&ss, 0);
	EXPECT_EQ(0, bind(fd2, (struct sockaddr *)&ss, rds_sslen(&ss)));
	close(fd2);

	/* bound: no second bind, to loopback or to the RDMA address */
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, rds_sslen(&ss)), EINVAL);
	len = local(variant, 0, &ss);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
	len = rds_mkaddr(variant->family == AF_INET ? AF_INET6 : AF_INET,
			 rds_local_str(variant->family == AF_INET ? AF_INET6 : AF_INET),
			 0, &ss);
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), EINVAL);
}

/* A transport chosen first must serve the address itself. */
TEST_F(bind, loopback_with_ib_transport)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, rds_loop_str(variant->family),
				   0, &ss);

	ASSERT_EQ(0, setsockopt(self->fd, SOL_RDS, SO_RDS_TRANSPORT,
				&(int){ RDS_TRANS_IB }, sizeof(int)));
	EXPECT_ERRNO(bind(self->fd, (struct sockaddr *)&ss, len), ENOPROTOOPT);
	EXPECT_EQ(RDS_TRANS_IB, trans_of(self->fd));
	len = local(variant, 0, &ss);
	EXPECT_EQ(0, bind(self->fd, (struct sockaddr *)&ss, len));
}

TEST_F(bind, close_unbinds)
{
	struct sockaddr_storage ss;
	uint16_t port = free_port(variant);
	int i, fd;

	ASSERT_NE(0, port);
	for (i = 0; i < 20; i++) {
		fd = rds_bound_socket(variant->family, port, &ss);
		ASSERT_LE(0, fd) TH_LOG("round %d: %s", i, strerror(errno));
		EXPECT_EQ(port, rds_port_of(&ss));
		close(fd);
	}
}

/* IPv4 and IPv6 share no port space per address, but each address has its
 * own: the same port number can be bound on the v4 and the v6 address. */
TEST(same_port_v4_and_v6)
{
	struct sockaddr_storage s4, s6;
	int a, b;

	a = rds_bound_socket(AF_INET, 0, &s4);
	ASSERT_LE(0, a);
	b = rds_bound_socket(AF_INET6, rds_port_of(&s4), &s6);
	ASSERT_LE(0, b) TH_LOG("v6 bind to port %u: %s", rds_port_of(&s4),
			       strerror(errno));
	EXPECT_EQ(rds_port_of(&s4), rds_port_of(&s6));
	close(a);
	close(b);
}

TEST(v6_linklocal_needs_scope)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(AF_INET6, "fe80::1", 0, &ss);
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, len), EINVAL);
	/* with a scope that names no interface: no transport */
	((struct sockaddr_in6 *)&ss)->sin6_scope_id = 9999;
	EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, len), EADDRNOTAVAIL);
	close(fd);
}

/* A v4-mapped IPv6 address binds the IPv4 address. */
TEST(v6_v4mapped_binds_v4)
{
	struct sockaddr_storage ss, got;
	char mapped[64];
	socklen_t len;
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	snprintf(mapped, sizeof(mapped), "::ffff:%s", rds_local_str(AF_INET));
	len = rds_mkaddr(AF_INET6, mapped, 0, &ss);
	ASSERT_NE(0, len);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_INET, got.ss_family);
	EXPECT_EQ(sizeof(struct sockaddr_in), len);
	rds_mkaddr(AF_INET, rds_local_str(AF_INET), rds_port_of(&got), &ss);
	EXPECT_TRUE(rds_addr_eq(&ss, &got));
	close(fd);
}

/* All of 127.0.0.0/8 is loopback, also written v4-mapped. */
TEST(loopback_v4_net_and_mapped)
{
	struct sockaddr_storage ss, got, want;
	socklen_t len;
	int fd;

	fd = rds_bound_socket_at(AF_INET, "127.1.2.3", 0, &got);
	ASSERT_LE(0, fd) TH_LOG("127.1.2.3: %s", strerror(errno));
	close(fd);

	fd = rds_socket();
	ASSERT_LE(0, fd);
	len = rds_mkaddr(AF_INET6, "::ffff:127.0.0.1", 0, &ss);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&ss, len));
	len = sizeof(got);
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&got, &len));
	EXPECT_EQ(AF_INET, got.ss_family);
	rds_mkaddr(AF_INET, "127.0.0.1", rds_port_of(&got), &want);
	EXPECT_TRUE(rds_addr_eq(&want, &got));
	close(fd);

	/* in-tree: loopback is IPv4 127/8 and ::1 only */
	fd = rds_socket();
	ASSERT_LE(0, fd);
	len = rds_mkaddr(AF_INET6, "::2", 0, &ss);
	EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, len), EADDRNOTAVAIL);
	close(fd);
}

static long refcnt(const char *mod)
{
	char path[128], buf[32];

	snprintf(path, sizeof(path), "/sys/module/%s/refcnt", mod);
	if (rds_read_file(path, buf, sizeof(buf)))
		return -1;
	return atol(buf);
}

/*
 * Failed binds must not leak anything, e.g. a reference on the transport
 * module (which would make rds_rdma impossible to unload).  The in-tree
 * rds_bind() leaks one when rds_add_bound() fails (EADDRINUSE, port 1), so
 * this is skipped against it.
 */
TEST(failed_binds_leak_nothing)
{
	struct sockaddr_storage ss;
	long before, after;
	int i, owner, fd;

	if (rds_intree())
		SKIP(return, "in-tree rds_bind() leaks a module reference on this path");
	before = refcnt("rds_rdma");
	if (before < 0)
		SKIP(return, "no /sys/module/rds_rdma/refcnt");
	owner = rds_bound_socket(AF_INET, 0, &ss);
	ASSERT_LE(0, owner);
	for (i = 0; i < 20; i++) {
		fd = rds_socket();
		ASSERT_LE(0, fd);
		EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, rds_sslen(&ss)),
			     EADDRINUSE);
		rds_set_port(&ss, RDS_PROBE_PORT);
		EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, rds_sslen(&ss)), EINVAL);
		close(fd);
		fd = rds_socket();
		ASSERT_LE(0, fd);
		EXPECT_EQ(0, setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT,
					&(int){ RDS_TRANS_IB }, sizeof(int)));
		EXPECT_ERRNO(bind(fd, (struct sockaddr *)&ss, rds_sslen(&ss)), EINVAL);
		close(fd);
		{
			socklen_t l = sizeof(ss);

			ASSERT_EQ(0, getsockname(owner, (struct sockaddr *)&ss, &l));
		}
	}
	close(owner);
	after = refcnt("rds_rdma");
	EXPECT_EQ(before, after) TH_LOG("rds_rdma refcnt %ld -> %ld", before, after);
}

RDS_TEST_MAIN
