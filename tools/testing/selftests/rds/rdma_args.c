// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_args - the RDMA and atomic cmsgs of sendmsg() with good and hostile
 * arguments, through the loopback transport (both sockets on this node).
 *
 * Loopback carries no RDMA, so a well-formed op ends in EOPNOTSUPP at
 * sendmsg(), as in-tree; everything malformed must be refused before that
 * with the in-tree errno.  After every refusal nothing was sent, no
 * notification is queued (a refused op must never report anything), and
 * the socket still works.
 */
#include <sys/mman.h>
#include "rds_test.h"

#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif

FIXTURE(ra)
{
	int a, b;
	struct sockaddr_storage aa, ba;
	char *buf;		/* 2 MiB + a page, mapped */
	char *hole;		/* a page that is not mapped */
	char *edge;		/* a mapped page followed by an unmapped one */
	uint64_t word[2];
	struct rds_iovec vec[4];
};

FIXTURE_VARIANT(ra)
{
	int family;
};

FIXTURE_VARIANT_ADD(ra, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(ra, ipv6)
{
	.family = AF_INET6,
};

#define BUFSZ ((2U << 20) + 4096)

FIXTURE_SETUP(ra)
{
	int one = 1;

	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	/* failures must not report even to a RECVERR socket */
	ASSERT_OK(setsockopt(self->a, SOL_RDS, RDS_RECVERR, &one,
			     sizeof(one)));
	self->buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 0x5a, BUFSZ);
	self->hole = rds_hole_page();
	ASSERT_NE(NULL, self->hole);
	self->edge = rds_edge_page();
	ASSERT_NE(NULL, self->edge);
	self->vec[0].addr = (uintptr_t)self->buf;
	self->vec[0].bytes = 4096;
}

FIXTURE_TEARDOWN(ra)
{
	close(self->a);
	close(self->b);
	munmap(self->buf, BUFSZ);
	munmap(self->edge, 4096);
}

/* plen zero bytes with the cmsgs of cm: one sendmsg, never retried. */
static ssize_t send_cmsgs(int fd, const struct sockaddr_storage *to,
			  size_t plen, const struct rds_cm *cm, int n)
{
	static const char payload[64];

	return rds_sendmsg_cm(fd, to, payload, plen, cm, n, 0);
}

static ssize_t send1(FIXTURE_DATA(ra) *self, int type, const void *d,
		     size_t len)
{
	struct rds_cm cm = { .type = type, .data = d, .len = len };

	return send_cmsgs(self->a, &self->ba, 16, &cm, 1);
}

/* Nothing was sent or queued: only the marker arrives, a has no notice. */
static void clean_after(struct __test_metadata *_metadata,
			FIXTURE_DATA(ra) *self)
{
	char c;

	ASSERT_EQ(1, rds_sendto(self->a, "m", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('m', c);
	EXPECT_ERRNO(recv(self->b, &c, 1, MSG_DONTWAIT), EAGAIN);
	EXPECT_ERRNO(recv(self->a, &c, 1, MSG_DONTWAIT), EAGAIN);
	EXPECT_EQ(0, rds_wait(self->a, POLLIN, 0) & POLLIN);
}

static struct rds_rdma_args good_args(FIXTURE_DATA(ra) *self)
{
	struct rds_rdma_args a = {
		.cookie = 0x1234,
		.remote_vec = { .addr = 0, .bytes = 1U << 20 },
		.local_vec_addr = (uintptr_t)self->vec,
		.nr_local = 1,
		.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
		.user_token = 7,
	};
	return a;
}

TEST_F(ra, args_good_loop_eopnotsupp)
{
	struct rds_rdma_args a = good_args(self);

	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	/* READ, several iovecs, every flag */
	self->vec[1].addr = (uintptr_t)self->buf + 8192 + 17;
	self->vec[1].bytes = 5000;
	self->vec[2].addr = (uintptr_t)self->buf + 65536;
	self->vec[2].bytes = 1;
	a.nr_local = 3;
	a.flags = RDS_RDMA_FENCE | RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT |
		  RDS_RDMA_USE_ONCE;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	/* exactly 1 MiB */
	self->vec[0].bytes = 1U << 20;
	a.nr_local = 1;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	clean_after(_metadata, self);
}

TEST_F(ra, args_hostile)
{
	struct rds_rdma_args a = good_args(self);
	struct rds_iovec *many;

	a.nr_local = 0;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EINVAL);
	a.nr_local = UIO_MAXIOV + 1;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	a.nr_local = 0xffffffffu;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);

	a = good_args(self);
	a.local_vec_addr = (uintptr_t)RDS_KERNEL_PTR;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);
	a.local_vec_addr = (uintptr_t)self->hole;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);
	/* an iovec array running off the end of the mapping */
	many = (struct rds_iovec *)(self->edge + 4096) - 1;
	*many = self->vec[0];
	a.local_vec_addr = (uintptr_t)many;
	a.nr_local = 2;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);

	a = good_args(self);
	self->vec[0].bytes = 0;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EINVAL);
	self->vec[0].addr = ~0ULL - 100;
	self->vec[0].bytes = 1000;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EINVAL);
	self->vec[0].addr = ~0ULL - 4095;
	self->vec[0].bytes = 4095;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EINVAL);

	/* more local than remote bytes */
	self->vec[0].addr = (uintptr_t)self->buf;
	self->vec[0].bytes = 8192;
	a.remote_vec.bytes = 8191;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EINVAL);
	/* over 1 MiB */
	self->vec[0].bytes = (1U << 20) + 1;
	a.remote_vec.bytes = 4U << 20;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	self->vec[0].bytes = 1U << 20;
	self->vec[1].addr = (uintptr_t)self->buf;
	self->vec[1].bytes = 1;
	a.nr_local = 2;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	/* huge iovecs whose sum wraps 64 bits */
	self->vec[0].bytes = 1ULL << 63;
	self->vec[1].bytes = 1ULL << 63;
	EXPECT_NE(0, send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)));

	/* local memory that is not mapped, or read-only for a READ */
	a = good_args(self);
	self->vec[0].addr = (uintptr_t)self->hole;
	self->vec[0].bytes = 4096;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);
	self->vec[0].addr = (uintptr_t)RDS_KERNEL_PTR;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);
	/* the first page is there, the second is not */
	self->vec[0].addr = (uintptr_t)self->edge + 100;
	self->vec[0].bytes = 5000;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EFAULT);

	/* a short cmsg */
	a = good_args(self);
	self->vec[0].addr = (uintptr_t)self->buf;
	{
		struct rds_cm cm = { RDS_CMSG_RDMA_ARGS, &a, sizeof(a),
				 sizeof(a) - 8 };

		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, &cm, 1),
			     EINVAL);
		/* ... judged before the size, as in-tree: EINVAL, not EMSGSIZE */
		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 2U << 20, &cm, 1),
			     EINVAL);
	}
	/* the announced RDMA bytes count against the 1 MiB limit */
	a = good_args(self);
	a.remote_vec.bytes = (1U << 20) + 1;
	self->vec[0].addr = (uintptr_t)self->buf;
	self->vec[0].bytes = 4096;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	clean_after(_metadata, self);
}

TEST_F(ra, grouping)
{
	struct rds_rdma_args a = good_args(self);
	struct rds_atomic_args at;
	rds_rdma_cookie_t cookie = 0x1234;
	struct rds_get_mr_args mr = {
		.vec = { .addr = (uintptr_t)self->buf, .bytes = 4096 },
		.cookie_addr = (uintptr_t)self->word,
	};

	memset(&at, 0, sizeof(at));
	at.cookie = 0x1234;
	at.local_addr = (uintptr_t)self->word;
	{	/* two RDMA ops: one per message */
		struct rds_cm cm[2] = {
			{ RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
			{ RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
		};

		/* 2 x 1 MiB announced: over the limit first, as in-tree */
		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2),
			     EMSGSIZE);
		a.remote_vec.bytes = 8192;
		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2), EINVAL);
		a = good_args(self);
	}
	{	/* two atomics */
		struct rds_cm cm[2] = {
			{ RDS_CMSG_ATOMIC_FADD, &at, sizeof(at) },
			{ RDS_CMSG_ATOMIC_CSWP, &at, sizeof(at) },
		};

		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2), EINVAL);
	}
	{	/* an RDMA and an atomic may share a message */
		struct rds_cm cm[2] = {
			{ RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
			{ RDS_CMSG_ATOMIC_FADD, &at, sizeof(at) },
		};

		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2),
			     EOPNOTSUPP);
	}
	{	/* an op and a cookie may not */
		struct rds_cm cm[2] = {
			{ RDS_CMSG_RDMA_ARGS, &a, sizeof(a) },
			{ RDS_CMSG_RDMA_DEST, &cookie, sizeof(cookie) },
		};

		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2), EINVAL);
	}
	{
		struct rds_cm cm[2] = {
			{ RDS_CMSG_ATOMIC_CSWP, &at, sizeof(at) },
			{ RDS_CMSG_RDMA_MAP, &mr, sizeof(mr) },
		};

		EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, cm, 2), EINVAL);
	}
	clean_after(_metadata, self);
}

TEST_F(ra, dest_hostile)
{
	rds_rdma_cookie_t cookie = 0x100000001ULL;
	struct rds_cm cm = { RDS_CMSG_RDMA_DEST, &cookie, sizeof(cookie), 4 };

	/* a cookie this socket never registered */
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_DEST, &cookie, sizeof(cookie)),
		     EINVAL);
	cookie = 0;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_DEST, &cookie, sizeof(cookie)),
		     EINVAL);
	EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, &cm, 1), EINVAL);
	clean_after(_metadata, self);
}

TEST_F(ra, atomics)
{
	static const int types[] = {
		RDS_CMSG_ATOMIC_FADD, RDS_CMSG_ATOMIC_CSWP,
		RDS_CMSG_MASKED_ATOMIC_FADD, RDS_CMSG_MASKED_ATOMIC_CSWP,
	};
	struct rds_atomic_args at;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		TH_LOG("type %d", types[i]);
		memset(&at, 0, sizeof(at));
		at.cookie = 0x1234;
		at.remote_addr = 8;
		at.flags = RDS_RDMA_NOTIFY_ME;
		at.user_token = 2;
		at.local_addr = (uintptr_t)self->word;
		/* good: no atomics over loopback */
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)),
			     EOPNOTSUPP);
		/* misaligned result address */
		at.local_addr = (uintptr_t)self->word + 4;
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)), EFAULT);
		at.local_addr = (uintptr_t)self->word + 1;
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)), EFAULT);
		/* unmapped or kernel result address */
		at.local_addr = (uintptr_t)self->hole;
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)), EFAULT);
		at.local_addr = (uintptr_t)RDS_KERNEL_PTR;
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)), EFAULT);
		at.local_addr = 0;
		EXPECT_ERRNO(send1(self, types[i], &at, sizeof(at)), EFAULT);
		/* short */
		{
			struct rds_cm cm = { types[i], &at, sizeof(at),
					 sizeof(at) - 8 };

			EXPECT_ERRNO(send_cmsgs(self->a, &self->ba, 16, &cm, 1),
				     EINVAL);
		}
	}
	EXPECT_EQ(0, self->word[0]);
	clean_after(_metadata, self);
}

/*
 * An op's pages (the sum of its iovecs' page spans, overlaps counted) are
 * bounded by what a connection's RDMA send queue room always holds
 * (RDS_RDMA_MAX_OP_PAGES, twice a 1 MiB unaligned buffer: 514 pages of
 * 4 KiB): past that EMSGSIZE at sendmsg(), before the transport is asked.
 * In-tree accepts such an op and its transport later fails it (issue 9).
 */
#define OP_MAX_PAGES	514
#define MANY_SZ		(1100 * 4096UL)

TEST_F(ra, args_too_many_pages)
{
	struct rds_rdma_args a = good_args(self);
	struct rds_iovec *v;
	char *many;
	unsigned int i;

	if (rds_intree())
		SKIP(return, "in-tree accepts ops of any page count");
	v = calloc(UIO_MAXIOV, sizeof(*v));
	ASSERT_NE(NULL, v);
	many = mmap(NULL, MANY_SZ, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, many);
	memset(many, 1, MANY_SZ);
	a.local_vec_addr = (uintptr_t)v;
	a.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;

	/* 1000 one-byte iovecs, each on its own page */
	for (i = 0; i < 1000; i++) {
		v[i].addr = (uintptr_t)many + i * 4096UL + 7;
		v[i].bytes = 1;
	}
	a.nr_local = 1000;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	/* the bound itself is fine (loopback: EOPNOTSUPP), one more is not */
	a.nr_local = OP_MAX_PAGES;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	a.nr_local = OP_MAX_PAGES + 1;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	/* READs alike */
	a.flags = RDS_RDMA_NOTIFY_ME;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	/* UIO_MAXIOV two-byte iovecs across one page boundary: 2048 pages */
	for (i = 0; i < UIO_MAXIOV; i++) {
		v[i].addr = (uintptr_t)many + 4095;
		v[i].bytes = 2;
	}
	a.nr_local = UIO_MAXIOV;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)), EMSGSIZE);
	/* a 1 MiB unaligned buffer in 4 KiB pieces: 257 pages, fine */
	for (i = 0; i < 256; i++) {
		v[i].addr = (uintptr_t)many + 100 + i * 4096UL;
		v[i].bytes = 4096;
	}
	a.nr_local = 256;
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	munmap(many, MANY_SZ);
	free(v);
	clean_after(_metadata, self);
}

#define NOTIFIER_FAIL	"/sys/module/rds/parameters/rdma_notifier_fail"

/* Fail the next notifier allocation, send, and turn the injection off. */
static ssize_t send1_nofail(FIXTURE_DATA(ra) *self, int type, const void *d,
			    size_t len)
{
	ssize_t r;
	int e;

	if (rds_write_file(NOTIFIER_FAIL, "1"))
		return -2;
	r = send1(self, type, d, len);
	e = errno;
	rds_write_file(NOTIFIER_FAIL, "0");
	errno = e;
	return r;
}

/*
 * A notifier that cannot be allocated fails the sendmsg() with ENOMEM:
 * never a message that goes out without its op and never reports (issue
 * 9).  Over loopback such a message would be delivered as plain data.
 */
TEST_F(ra, notifier_enomem)
{
	struct rds_rdma_args a = good_args(self);
	struct rds_atomic_args at;

	if (rds_intree())
		SKIP(return, "fault injection of our rds.ko");
	if (access(NOTIFIER_FAIL, W_OK))
		SKIP(return, "no %s", NOTIFIER_FAIL);
	/* NOTIFY_ME */
	EXPECT_ERRNO(send1_nofail(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     ENOMEM);
	/* no NOTIFY_ME, but RDS_RECVERR: a notifier for failures */
	a.flags = RDS_RDMA_READWRITE;
	EXPECT_ERRNO(send1_nofail(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     ENOMEM);
	memset(&at, 0, sizeof(at));
	at.cookie = 0x1234;
	at.local_addr = (uintptr_t)self->word;
	at.flags = RDS_RDMA_NOTIFY_ME;
	EXPECT_ERRNO(send1_nofail(self, RDS_CMSG_ATOMIC_FADD, &at, sizeof(at)),
		     ENOMEM);
	/* the injection is spent: the usual EOPNOTSUPP of loopback */
	EXPECT_ERRNO(send1(self, RDS_CMSG_RDMA_ARGS, &a, sizeof(a)),
		     EOPNOTSUPP);
	clean_after(_metadata, self);
}

RDS_TEST_MAIN
