// SPDX-License-Identifier: GPL-2.0
/*
 * RDMA and atomic control messages between two sockets of this node go
 * through the loopback transport, which carries no RDMA: well-formed ops
 * are refused with -EOPNOTSUPP and nothing is sent.  RDMA_DEST with a
 * cookie the socket never registered is -EINVAL (as in-tree).  RDMA_MAP
 * registers memory through the socket's own transport: -EOPNOTSUPP where
 * that cannot register yet, otherwise the message goes out with the cookie
 * and the receiver gets it as RDS_CMSG_RDMA_DEST.  Skipped on the in-tree
 * module (RDS_TEST_INTREE{,_LOCAL}=1).  Hostile arguments: rdma_args.c.
 */
#include "rds_test.h"

FIXTURE(rc)
{
	int a, b;
	struct sockaddr_storage aa, ba;
	char buf[8192];
	uint64_t word;
	struct rds_iovec vec;
};

FIXTURE_VARIANT(rc)
{
	int family;
};

FIXTURE_VARIANT_ADD(rc, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(rc, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(rc)
{
	if (rds_intree())
		SKIP(return, "the in-tree module implements RDMA and atomics");
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	self->vec.addr = (uintptr_t)self->buf;
	self->vec.bytes = sizeof(self->buf);
}

FIXTURE_TEARDOWN(rc)
{
	if (rds_intree())
		return;
	close(self->a);
	close(self->b);
}

static ssize_t send_cmsg(int fd, const struct sockaddr_storage *to, size_t plen,
			 int type, const void *data, size_t dlen, void *payload)
{
	union {
		char buf[CMSG_SPACE(256)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = payload, .iov_len = plen };
	struct msghdr m = {
		.msg_name = (void *)to, .msg_namelen = rds_sslen(to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = CMSG_SPACE(dlen),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(dlen);
	memcpy(CMSG_DATA(c), data, dlen);
	return sendmsg(fd, &m, MSG_DONTWAIT);
}

static void nothing_arrived(struct __test_metadata *_metadata,
			    FIXTURE_DATA(rc) *self)
{
	char c;

	ASSERT_EQ(1, rds_sendto(self->a, "m", 1, 0, &self->ba));
	/* the marker is the first (and only) thing b gets */
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('m', c);
	EXPECT_ERRNO(recv(self->b, &c, 1, MSG_DONTWAIT), EAGAIN);
}

TEST_F(rc, rdma_args)
{
	struct rds_rdma_args args = {
		.cookie = 0x1234,
		.remote_vec = { .addr = 0, .bytes = 4096 },
		.local_vec_addr = (uintptr_t)&self->vec,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
		.user_token = 1,
	};

	self->vec.bytes = 4096;
	EXPECT_ERRNO(send_cmsg(self->a, &self->ba, 16, RDS_CMSG_RDMA_ARGS,
			       &args, sizeof(args), self->buf), EOPNOTSUPP);
	args.flags = 0;
	EXPECT_ERRNO(send_cmsg(self->a, &self->ba, 0, RDS_CMSG_RDMA_ARGS,
			       &args, sizeof(args), self->buf), EOPNOTSUPP);
	nothing_arrived(_metadata, self);
}

TEST_F(rc, rdma_dest)
{
	rds_rdma_cookie_t cookie = 0x100000001ULL;

	EXPECT_ERRNO(send_cmsg(self->a, &self->ba, 16, RDS_CMSG_RDMA_DEST,
			       &cookie, sizeof(cookie), self->buf), EINVAL);
	nothing_arrived(_metadata, self);
}

TEST_F(rc, rdma_map)
{
	struct rds_get_mr_args mr = {
		.vec = { .addr = (uintptr_t)self->buf, .bytes = 4096 },
		.cookie_addr = (uintptr_t)&self->word,
		.flags = RDS_RDMA_USE_ONCE,
	};

	union {
		char buf[CMSG_SPACE(64)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = self->buf + 4096, .iov_len = 64 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;
	uint64_t got = 0;
	ssize_t r;

	self->word = 0;
	r = send_cmsg(self->a, &self->ba, 16, RDS_CMSG_RDMA_MAP, &mr,
		      sizeof(mr), self->buf);
	if (r < 0) {
		EXPECT_EQ(EOPNOTSUPP, errno);
		nothing_arrived(_metadata, self);
		return;
	}
	EXPECT_EQ(16, r);
	EXPECT_EQ(0x80000000ULL | ((uintptr_t)self->buf & 4095),
		  rds_cookie_off(self->word));
	ASSERT_EQ(16, rds_recvmsg_wait(self->b, &m, 0, RDS_WAIT_MS));
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_RDS &&
		    c->cmsg_type == RDS_CMSG_RDMA_DEST)
			memcpy(&got, CMSG_DATA(c), sizeof(got));
	EXPECT_EQ(self->word, got);
	nothing_arrived(_metadata, self);
}

TEST_F(rc, atomics)
{
	static const int types[] = {
		RDS_CMSG_ATOMIC_FADD, RDS_CMSG_ATOMIC_CSWP,
		RDS_CMSG_MASKED_ATOMIC_FADD, RDS_CMSG_MASKED_ATOMIC_CSWP,
	};
	struct rds_atomic_args at;
	unsigned int i;

	memset(&at, 0, sizeof(at));
	at.cookie = 0x1234;
	at.local_addr = (uintptr_t)&self->word;
	at.remote_addr = 0;
	at.flags = RDS_RDMA_NOTIFY_ME;
	at.user_token = 2;
	for (i = 0; i < 4; i++) {
		TH_LOG("type %d", types[i]);
		EXPECT_ERRNO(send_cmsg(self->a, &self->ba, 0, types[i], &at,
				       sizeof(at), self->buf), EOPNOTSUPP);
	}
	nothing_arrived(_metadata, self);
}

RDS_TEST_MAIN
