// SPDX-License-Identifier: GPL-2.0
/*
 * sendmsg() argument checking, IPv4 and IPv6.  In-tree rds_sendmsg() order:
 *  1. flags other than MSG_DONTWAIT|MSG_CMSG_COMPAT|MSG_ZEROCOPY: -EOPNOTSUPP
 *  2. msg_name: len < sizeof(sockaddr_in), AF_INET6 with len <
 *     sizeof(sockaddr_in6), unknown family, wildcard/broadcast/multicast
 *     destination, link-local without scope: -EINVAL
 *  3. socket unbound, or no destination at all: -ENOTCONN
 *  4. IPv4 source with IPv6 destination or vice versa: -EOPNOTSUPP
 *  5. payload > 1 MiB or > sndbuf/2: -EMSGSIZE
 *  6. cmsgs: malformed or unknown SOL_RDS type: -EINVAL (other levels are
 *     ignored); MSG_ZEROCOPY without a cookie: -EINVAL
 *  7. user buffers: -EFAULT.
 * A socket bound to loopback (127/8, ::1) sends with the loopback
 * transport: MSG_DONTWAIT sends of 1 B, 4 KiB and 64 KiB are queued (and
 * delivered), also to a port nobody holds.  So are MSG_DONTWAIT sends
 * over an RDMA connection that is not up yet (or never comes up).
 * The socket layer adds: msg_namelen > sizeof(sockaddr_storage) to sendto()
 * -EINVAL; a bad msg_name or msghdr pointer -EFAULT; msg_iovlen >
 * UIO_MAXIOV -EMSGSIZE; bad control pointer -EFAULT.
 */
#include "rds_test.h"

FIXTURE(se)
{
	int a, b, u;	/* bound, bound, unbound */
	struct sockaddr_storage aa, ba;
	char buf[8192];
};

FIXTURE_VARIANT(se)
{
	int family;
	int other;		/* the other family */
	const char *any, *mcast, *bcast;
};

FIXTURE_VARIANT_ADD(se, ipv4)
{
	.family = AF_INET,
	.other = AF_INET6,
	.any = "0.0.0.0",
	.mcast = "224.0.0.1",
	.bcast = "255.255.255.255",
};

FIXTURE_VARIANT_ADD(se, ipv6)
{
	.family = AF_INET6,
	.other = AF_INET,
	.any = "::",
	.mcast = "ff02::1",
	.bcast = "::ffff:255.255.255.255",
};

FIXTURE_SETUP(se)
{
	rds_setup_abu(_metadata, variant->family, &self->a, &self->aa,
		      &self->b, &self->ba, &self->u);
}

FIXTURE_TEARDOWN(se)
{
	close(self->a);
	close(self->b);
	close(self->u);
}

/* b received nothing (within a short grace period) */
static bool nothing_queued(int fd)
{
	char c;

	if (rds_wait(fd, POLLIN, 200) & POLLIN)
		return recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK) < 0;
	return true;
}

/* A message still goes through after an error. */
static void still_works(struct __test_metadata *_metadata, FIXTURE_DATA(se) *self)
{
	char c = 0;

	ASSERT_EQ(1, rds_sendto(self->a, "k", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	ASSERT_EQ('k', c);
}

TEST_F(se, unbound_enotconn)
{
	EXPECT_ERRNO(rds_sendto(self->u, "x", 1, 0, &self->ba), ENOTCONN);
	EXPECT_ERRNO(rds_sendto(self->u, "x", 1, MSG_DONTWAIT, &self->ba), ENOTCONN);
	EXPECT_ERRNO(send(self->u, "x", 1, 0), ENOTCONN);
	/* connected but unbound: still not usable */
	ASSERT_EQ(0, connect(self->u, (struct sockaddr *)&self->ba,
			     rds_sslen(&self->ba)));
	EXPECT_ERRNO(send(self->u, "x", 1, 0), ENOTCONN);
	/* unbound beats the size check */
	EXPECT_ERRNO(rds_sendto(self->u, self->buf, 2 * RDS_MAX_PAYLOAD, 0,
				&self->ba), ENOTCONN);
	EXPECT_TRUE(nothing_queued(self->b));
}

TEST_F(se, no_destination_enotconn)
{
	EXPECT_ERRNO(send(self->a, "x", 1, 0), ENOTCONN);
	/* write() adds MSG_EOR on a SOCK_SEQPACKET socket: never allowed */
	EXPECT_ERRNO(write(self->a, "x", 1), EOPNOTSUPP);
	/* a NULL msg_name counts as no name, whatever msg_namelen says */
	{
		struct iovec iov = { .iov_base = "x", .iov_len = 1 };
		struct msghdr m = { .msg_name = NULL, .msg_namelen = 16,
				    .msg_iov = &iov, .msg_iovlen = 1 };

		EXPECT_ERRNO(sendmsg(self->a, &m, 0), ENOTCONN);
	}
	still_works(_metadata, self);
}

TEST_F(se, unknown_flags)
{
	static const int flags[] = {
		MSG_OOB, MSG_PEEK, MSG_DONTROUTE, MSG_CTRUNC, MSG_TRUNC,
		MSG_EOR, MSG_WAITALL, MSG_CONFIRM, MSG_NOSIGNAL, MSG_MORE,
		MSG_FASTOPEN, MSG_BATCH, MSG_ERRQUEUE, 0x40000000,
		/* not MSG_WAITFORONE (0x10000): since 6.5 the socket layer
		 * strips that bit (MSG_SENDPAGE_NOPOLICY) from sendmsg flags */
	};
	unsigned int i;

	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		TH_LOG("flag 0x%x", flags[i]);
		EXPECT_ERRNO(rds_sendto(self->a, "x", 1, flags[i], &self->ba),
			     EOPNOTSUPP);
		EXPECT_ERRNO(rds_sendto(self->a, "x", 1, flags[i] | MSG_DONTWAIT,
					&self->ba), EOPNOTSUPP);
	}
	/* the flag check comes first, even on an unbound socket */
	EXPECT_ERRNO(rds_sendto(self->u, "x", 1, MSG_MORE, &self->ba), EOPNOTSUPP);
	EXPECT_TRUE(nothing_queued(self->b));
	still_works(_metadata, self);
}

TEST_F(se, name_too_short)
{
	struct sockaddr_storage d = self->ba;

	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, 1), EINVAL);
	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, 8), EINVAL);
	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d,
			    sizeof(struct sockaddr_in) - 1), EINVAL);
	if (variant->family == AF_INET6)
		EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d,
				    sizeof(struct sockaddr_in6) - 1), EINVAL);
	/* more than sockaddr_storage: the socket layer says no to sendto() */
	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d,
			    sizeof(d) + 1), EINVAL);
	EXPECT_TRUE(nothing_queued(self->b));
	/* a longer-than-needed name is fine */
	EXPECT_EQ(1, sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, sizeof(d)));
	EXPECT_EQ(1, rds_drain(self->b, 2000));
}

TEST_F(se, name_wrong_family)
{
	static const int fams[] = { AF_UNSPEC, AF_UNIX, AF_RDS, 255 };
	struct sockaddr_storage d = self->ba;
	unsigned int i;

	for (i = 0; i < sizeof(fams) / sizeof(fams[0]); i++) {
		d.ss_family = fams[i];
		TH_LOG("family %d", fams[i]);
		EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d,
				    sizeof(d)), EINVAL);
	}
	EXPECT_TRUE(nothing_queued(self->b));
}

TEST_F(se, bad_destinations)
{
	const char *bad[] = { variant->any, variant->mcast, variant->bcast };
	struct sockaddr_storage d;
	socklen_t len;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		len = rds_mkaddr(variant->family, bad[i], rds_port_of(&self->ba), &d);
		ASSERT_NE(0, len);
		TH_LOG("%s", bad[i]);
		EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, len),
			     EINVAL);
		/* also when unbound: the name is checked first */
		EXPECT_ERRNO(sendto(self->u, "x", 1, 0, (struct sockaddr *)&d, len),
			     EINVAL);
	}
	if (variant->family == AF_INET6) {
		len = rds_mkaddr(AF_INET6, "fe80::1", 4000, &d);
		EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, len),
			     EINVAL);
	}
}

TEST_F(se, family_mix)
{
	struct sockaddr_storage d;
	socklen_t len = rds_mkaddr(variant->other, rds_local_str(variant->other),
				   rds_port_of(&self->ba), &d);

	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, (struct sockaddr *)&d, len),
		     EOPNOTSUPP);
	EXPECT_ERRNO(sendto(self->a, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&d,
			    len), EOPNOTSUPP);
	still_works(_metadata, self);
}

TEST_F(se, name_bad_pointer)
{
	struct iovec iov = { .iov_base = "x", .iov_len = 1 };
	struct msghdr m = { .msg_name = RDS_KERNEL_PTR,
			    .msg_namelen = sizeof(struct sockaddr_in6),
			    .msg_iov = &iov, .msg_iovlen = 1 };

	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	EXPECT_ERRNO(sendto(self->a, "x", 1, 0, RDS_KERNEL_PTR,
			    sizeof(struct sockaddr_in6)), EFAULT);
	m.msg_name = (void *)16;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	EXPECT_ERRNO(sendmsg(self->a, NULL, 0), EFAULT);
	EXPECT_ERRNO(sendmsg(self->a, RDS_KERNEL_PTR, 0), EFAULT);
	still_works(_metadata, self);
}

TEST_F(se, payload_bad_pointer)
{
	struct iovec iov[2];
	struct msghdr m = { .msg_name = &self->ba,
			    .msg_namelen = rds_sslen(&self->ba),
			    .msg_iov = iov, .msg_iovlen = 1 };

	EXPECT_ERRNO(rds_sendto(self->a, NULL, 100, 0, &self->ba), EFAULT);
	EXPECT_ERRNO(rds_sendto(self->a, RDS_KERNEL_PTR, 100, 0, &self->ba), EFAULT);
	EXPECT_ERRNO(rds_sendto(self->a, (void *)4096, 100, 0, &self->ba), EFAULT);
	/* the second segment is bad */
	iov[0] = (struct iovec){ self->buf, 10 };
	iov[1] = (struct iovec){ (void *)8, 10 };
	m.msg_iovlen = 2;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	/* the iovec array itself is bad */
	m.msg_iov = RDS_KERNEL_PTR;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	m.msg_iov = NULL;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	/* nothing half-sent arrived */
	EXPECT_TRUE(nothing_queued(self->b));
	still_works(_metadata, self);
}

TEST_F(se, too_many_iovecs)
{
	static struct iovec iov[1025];
	struct msghdr m = { .msg_name = &self->ba,
			    .msg_namelen = rds_sslen(&self->ba),
			    .msg_iov = iov, .msg_iovlen = 1025 };
	int i;

	for (i = 0; i < 1025; i++)
		iov[i] = (struct iovec){ self->buf, 1 };
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EMSGSIZE);
	/* 1024 is allowed */
	m.msg_iovlen = 1024;
	EXPECT_EQ(1024, sendmsg(self->a, &m, 0));
	EXPECT_EQ(1, rds_drain(self->b, 2000));
}

static ssize_t send_cmsg(int fd, const struct sockaddr_storage *to,
			 int level, int type, const void *data, size_t dlen)
{
	union {
		char buf[CMSG_SPACE(256)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = "c", .iov_len = 1 };
	struct msghdr m = {
		.msg_name = (void *)to, .msg_namelen = rds_sslen(to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = CMSG_SPACE(dlen),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(dlen);
	memcpy(CMSG_DATA(c), data, dlen);
	return sendmsg(fd, &m, 0);
}

TEST_F(se, unknown_rds_cmsg)
{
	/* receive-only and unassigned types */
	static const int types[] = {
		0, RDS_CMSG_RDMA_STATUS, RDS_CMSG_CONG_UPDATE, 10,
		RDS_CMSG_RXPATH_LATENCY, RDS_CMSG_ZCOPY_COMPLETION, 14, 100,
		-1,
	};
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		TH_LOG("cmsg type %d", types[i]);
		EXPECT_ERRNO(send_cmsg(self->a, &self->ba, SOL_RDS, types[i],
				       &v, sizeof(v)), EINVAL);
	}
	EXPECT_TRUE(nothing_queued(self->b));
	still_works(_metadata, self);
}

TEST_F(se, other_level_cmsg_ignored)
{
	int v = 1;
	char c;

	/* cmsgs of other levels are not RDS's business */
	ASSERT_EQ(1, send_cmsg(self->a, &self->ba, SOL_IP, 1, &v, sizeof(v)));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	ASSERT_EQ(1, send_cmsg(self->a, &self->ba, SOL_SOCKET, SO_TIMESTAMP,
			       &v, sizeof(v)));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	ASSERT_EQ(1, send_cmsg(self->a, &self->ba, 999, RDS_CMSG_RDMA_ARGS,
			       &v, sizeof(v)));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
}

TEST_F(se, malformed_cmsg)
{
	union {
		char buf[CMSG_SPACE(64)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = "c", .iov_len = 1 };
	struct msghdr m = {
		.msg_name = &self->ba, .msg_namelen = rds_sslen(&self->ba),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = (struct cmsghdr *)u.buf;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_DEST;
	/* cmsg_len beyond the control buffer */
	c->cmsg_len = sizeof(u.buf) + 8;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EINVAL);
	/* cmsg_len shorter than the header */
	c->cmsg_len = sizeof(struct cmsghdr) - 1;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EINVAL);
	/* bad control pointer */
	m.msg_control = RDS_KERNEL_PTR;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	m.msg_control = (void *)64;
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EFAULT);
	EXPECT_TRUE(nothing_queued(self->b));
	still_works(_metadata, self);
}

TEST_F(se, zerocopy_without_cookie)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = self->buf, .iov_len = 4096 };
	struct msghdr m = {
		.msg_name = &self->ba, .msg_namelen = rds_sslen(&self->ba),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	uint32_t cookie = 7;
	int one = 1;

	union {
		char b[CMSG_SPACE(sizeof(struct rds_zcopy_cookies))];
		struct cmsghdr align;
	} cu;
	struct iovec riov = { .iov_base = self->buf, .iov_len = 16 };
	struct msghdr rm = {
		.msg_iov = &riov, .msg_iovlen = 1,
		.msg_control = cu.b, .msg_controllen = sizeof(cu.b),
	};
	struct rds_zcopy_cookies done = { 0 };
	static char got[4096];
	struct cmsghdr *rc;

	/* MSG_ZEROCOPY needs an RDS_CMSG_ZCOPY_COOKIE */
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, MSG_ZEROCOPY, &self->ba), EINVAL);
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
	c->cmsg_len = CMSG_LEN(sizeof(cookie));
	memcpy(CMSG_DATA(c), &cookie, sizeof(cookie));
	if (rds_intree()) {
		/* in-tree: zerocopy is RDS/TCP only */
		EXPECT_ERRNO(sendmsg(self->a, &m, MSG_ZEROCOPY), EOPNOTSUPP);
		EXPECT_TRUE(nothing_queued(self->b));
		return;
	}
	/* ours: a local destination gets a copy, the cookie comes back */
	EXPECT_EQ(4096, sendmsg(self->a, &m, MSG_ZEROCOPY)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(4096, rds_recv_wait(self->b, got, sizeof(got), 0, NULL, RDS_WAIT_MS));
	EXPECT_TRUE(rds_wait(self->a, POLLIN, RDS_WAIT_MS) & POLLIN);
	EXPECT_EQ(0, recvmsg(self->a, &rm, MSG_DONTWAIT)) TH_LOG("%s", strerror(errno));
	for (rc = CMSG_FIRSTHDR(&rm); rc; rc = CMSG_NXTHDR(&rm, rc))
		if (rc->cmsg_level == SOL_RDS &&
		    rc->cmsg_type == RDS_CMSG_ZCOPY_COMPLETION &&
		    rc->cmsg_len >= CMSG_LEN(sizeof(done)))
			memcpy(&done, CMSG_DATA(rc), sizeof(done));
	EXPECT_EQ(1, done.num);
	EXPECT_EQ(cookie, done.cookies[0]);
}

TEST_F(se, loopback_dontwait)
{
	static const size_t sizes[] = { 1, 4096, 65536 };
	struct sockaddr_storage la, lb, from, nobody;
	const char *lo = rds_loop_str(variant->family);
	static char big[65536], got[65536];
	unsigned int i;
	int a, b;

	a = rds_bound_socket_at(variant->family, lo, 0, &la);
	ASSERT_LE(0, a) TH_LOG("bind %s: %s", lo, strerror(errno));
	b = rds_bound_socket_at(variant->family, lo, 0, &lb);
	ASSERT_LE(0, b) TH_LOG("bind %s: %s", lo, strerror(errno));
	for (i = 0; i < 3; i++) {
		rds_fill(big, sizes[i], i + 1);
		EXPECT_EQ((ssize_t)sizes[i],
			  rds_sendto(a, big, sizes[i], MSG_DONTWAIT, &lb))
			TH_LOG("%zu bytes: %s", sizes[i], strerror(errno));
	}
	for (i = 0; i < 3; i++) {
		ASSERT_EQ((ssize_t)sizes[i],
			  rds_recv_wait(b, got, sizeof(got), 0, &from, RDS_WAIT_MS));
		EXPECT_TRUE(rds_check(got, sizes[i], i + 1));
		EXPECT_TRUE(rds_addr_eq(&la, &from));
	}
	/* nobody there: queued all the same (and dropped on arrival) */
	nobody = lb;
	rds_set_port(&nobody, rds_port_of(&lb) == 65535 ? 2 : rds_port_of(&lb) + 1);
	close(b);
	for (i = 0; i < 3; i++)
		EXPECT_EQ((ssize_t)sizes[i],
			  rds_sendto(a, big, sizes[i], MSG_DONTWAIT, &nobody))
			TH_LOG("%zu bytes: %s", sizes[i], strerror(errno));
	EXPECT_EQ(1, rds_sendto(a, "x", 1, MSG_DONTWAIT, &lb));
	/* to the node's RDMA address: delivered locally as well */
	EXPECT_EQ(1, rds_sendto(a, "y", 1, MSG_DONTWAIT, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, got, sizeof(got), 0, &from,
				   RDS_WAIT_MS));
	EXPECT_EQ('y', got[0]);
	EXPECT_TRUE(rds_addr_eq(&la, &from));
	close(a);
}

/*
 * MSG_DONTWAIT sends of 1 B, 4 KiB and 64 KiB over a connection that is
 * not up are queued and return their length, as in-tree: to an address on
 * the link that nobody owns (the connection never comes up), and to the
 * peer over a connection of a TOS no socket used yet (it is still being
 * set up when sendmsg() returns).  Nothing waits and nothing is refused.
 */
TEST_F(se, dontwait_connection_not_up)
{
	static const size_t sizes[] = { 1, 4096, 65536 };
	struct sockaddr_storage to;
	static char big[65536];
	union {
		rds_tos_t tos;
		char pad[64];
	} t;
	unsigned int i;
	int fd;

	rds_fill(big, sizeof(big), 9);
	ASSERT_LT(0, rds_mkaddr(variant->family,
				rds_unreach_str(variant->family), 4000, &to));
	for (i = 0; i < 3; i++)
		EXPECT_EQ((ssize_t)sizes[i],
			  rds_sendto(self->a, big, sizes[i], MSG_DONTWAIT, &to))
			TH_LOG("%zu bytes to nobody: %s", sizes[i], strerror(errno));
	EXPECT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				rds_sslen(&to)));

	if (!rds_have_peer())
		return;
	fd = rds_bound_socket_at(variant->family, rds_local_str(variant->family),
				 0, NULL);
	ASSERT_LE(0, fd);
	memset(&t, 0, sizeof(t));
	t.tos = 37;
	ASSERT_EQ(0, ioctl(fd, SIOCRDSSETTOS, &t));
	ASSERT_LT(0, rds_mkaddr(variant->family, rds_peer_str(variant->family),
				4001, &to));
	for (i = 0; i < 3; i++)
		EXPECT_EQ((ssize_t)sizes[i],
			  rds_sendto(fd, big, sizes[i], MSG_DONTWAIT, &to))
			TH_LOG("%zu bytes to the peer: %s", sizes[i], strerror(errno));
	close(fd);
	still_works(_metadata, self);
}

TEST_F(se, errors_leave_socket_usable)
{
	int i;

	for (i = 0; i < 100; i++) {
		EXPECT_ERRNO(rds_sendto(self->a, self->buf, 10, MSG_MORE, &self->ba),
			     EOPNOTSUPP);
		EXPECT_ERRNO(rds_sendto(self->a, NULL, 10, 0, &self->ba), EFAULT);
	}
	still_works(_metadata, self);
}

RDS_TEST_MAIN
