// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_mr - RDS_GET_MR, RDS_GET_MR_FOR_DEST and RDS_FREE_MR with good and
 * hostile arguments.
 *
 * The argument checks that come before the transport (socket state, option
 * length, the user pointer) run everywhere.  The rest needs a transport
 * that registers memory without a connection: where GET_MR answers
 * EOPNOTSUPP (the in-tree FRWR module, or our rds_rdma before its MR pool)
 * those cases are skipped.  Memory limits are checked in a child that
 * gives up CAP_IPC_LOCK and lowers RLIMIT_MEMLOCK.
 *
 * With our rds_rdma, a GET_MR whose REG_MR fails (the test knob
 * rds_ib_mr_reg_sync_fail_next: the HCA executed it, so the key is valid
 * although the waiter is told otherwise) answers EAGAIN, writes no cookie,
 * hands the MR to recovery (ib_rdma_mr_reaped), never releases the pages
 * while the key may be valid (ib_rdma_mr_unmap_keyed stays put), gives the
 * pin and its RLIMIT_MEMLOCK charge back, and the next GET_MR works.
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include "rds_test.h"

#define MIB (1UL << 20)
#define BUFSZ (4 * MIB)

FIXTURE(mr)
{
	int fd;
	struct sockaddr_storage addr;
	char *buf;
	char *hole;
	char *edge;
	uint64_t cookie;
	bool can_register;
};

FIXTURE_VARIANT(mr)
{
	int family;
};

FIXTURE_VARIANT_ADD(mr, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(mr, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(mr)
{
	self->fd = rds_bound_socket(variant->family, 0, &self->addr);
	ASSERT_LE(0, self->fd) TH_LOG("bind: %s", strerror(errno));
	self->buf = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 1, BUFSZ);
	self->hole = rds_hole_page();
	ASSERT_NE(NULL, self->hole);
	self->edge = rds_edge_page();
	ASSERT_NE(NULL, self->edge);
	self->cookie = 0;
	if (rds_get_mr(self->fd, self->buf, 4096, &self->cookie, 0) == 0) {
		self->can_register = true;
		ASSERT_OK(rds_free_mr(self->fd, self->cookie, 0));
	} else {
		ASSERT_EQ(EOPNOTSUPP, errno);
		self->can_register = false;
	}
}

#define REG_SYNC_FAIL \
	"/sys/module/rds_rdma/parameters/rds_ib_mr_reg_sync_fail_next"
#define QP_FAIL "/sys/module/rds_rdma/parameters/rds_ib_mr_qp_fail_next"

FIXTURE_TEARDOWN(mr)
{
	/* A test that failed half-way must not leave its knobs set. */
	if (!access(REG_SYNC_FAIL, W_OK))
		rds_knob(REG_SYNC_FAIL, "0");
	if (!access(QP_FAIL, W_OK))
		rds_knob(QP_FAIL, "0");
	close(self->fd);
	munmap(self->buf, BUFSZ);
	munmap(self->edge, 4096);
}

#define NEED_REGISTRATION() do {					\
		if (!self->can_register)				\
			SKIP(return, "GET_MR: EOPNOTSUPP on this transport"); \
	} while (0)

TEST(unbound)
{
	int fd = rds_socket();
	char buf[64];
	uint64_t c;

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(rds_get_mr(fd, buf, sizeof(buf), &c, 0), ENOTCONN);
	EXPECT_ERRNO(rds_free_mr(fd, 0, 0), EINVAL);
	EXPECT_ERRNO(rds_free_mr(fd, 0x1234, 0), EINVAL);
	close(fd);
}

TEST_F(mr, optlen_and_pointers)
{
	struct rds_get_mr_args a = {
		.vec = { .addr = (uintptr_t)self->buf, .bytes = 4096 },
		.cookie_addr = (uintptr_t)&self->cookie,
	};
	struct rds_get_mr_for_dest_args d;
	struct rds_free_mr_args f = { .cookie = 0x1234 };
	char big[sizeof(d) + 8];

	memset(&d, 0, sizeof(d));
	memset(big, 0, sizeof(big));
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR, &a,
				sizeof(a) - 1), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR, big,
				sizeof(a) + 1), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR, &a, 0), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR_FOR_DEST, &d,
				sizeof(d) - 1), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR_FOR_DEST, big,
				sizeof(d) + 1), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_FREE_MR, &f,
				sizeof(f) - 1), EINVAL);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_FREE_MR, big,
				sizeof(f) + 1), EINVAL);

	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR, RDS_KERNEL_PTR,
				sizeof(a)), EFAULT);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR, self->hole,
				sizeof(a)), EFAULT);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_GET_MR_FOR_DEST,
				RDS_KERNEL_PTR, sizeof(d)), EFAULT);
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_FREE_MR, self->hole,
				sizeof(f)), EFAULT);
	/* a cookie this socket does not have */
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_FREE_MR, &f,
				sizeof(f)), EINVAL);
	f.cookie = ~0ULL;
	f.flags = RDS_RDMA_INVALIDATE;
	EXPECT_ERRNO(setsockopt(self->fd, SOL_RDS, RDS_FREE_MR, &f,
				sizeof(f)), EINVAL);
}

TEST_F(mr, register_and_free)
{
	struct rds_get_mr_for_dest_args d;
	uint64_t c1 = 0, c2 = 0, c3 = 0;

	NEED_REGISTRATION();
	/* unaligned, ordinary key: the cookie offset is the page offset */
	ASSERT_OK(rds_get_mr(self->fd, self->buf + 100, 5000, &c1,
			     RDS_RDMA_READWRITE));
	EXPECT_EQ(100, rds_cookie_off(c1));
	/* use-once: bit 31 marks it (rds.rst) */
	ASSERT_OK(rds_get_mr(self->fd, self->buf + 8192 + 12, 64, &c2,
			     RDS_RDMA_USE_ONCE | RDS_RDMA_INVALIDATE));
	EXPECT_EQ(0x80000000ULL | 12, rds_cookie_off(c2));
	EXPECT_NE((uint32_t)c1, (uint32_t)c2);
	/* GET_MR_FOR_DEST: dest_addr does not matter */
	memset(&d, 0, sizeof(d));
	d.vec.addr = (uintptr_t)self->buf + MIB;
	d.vec.bytes = MIB;
	d.cookie_addr = (uintptr_t)&c3;
	ASSERT_OK(setsockopt(self->fd, SOL_RDS, RDS_GET_MR_FOR_DEST, &d,
			     sizeof(d)));
	EXPECT_EQ(0, rds_cookie_off(c3));
	/* one device: one epoch */
	EXPECT_EQ((c1 >> 32) & RDS_COOKIE_EPOCH_MASK,
		  (c2 >> 32) & RDS_COOKIE_EPOCH_MASK);
	EXPECT_EQ((c1 >> 32) & RDS_COOKIE_EPOCH_MASK,
		  (c3 >> 32) & RDS_COOKIE_EPOCH_MASK);
	/* no cookie address: registered all the same */
	ASSERT_OK(rds_get_mr(self->fd, self->buf, 4096, NULL, 0));

	ASSERT_OK(rds_free_mr(self->fd, c1, 0));
	EXPECT_ERRNO(rds_free_mr(self->fd, c1, 0), EINVAL);
	ASSERT_OK(rds_free_mr(self->fd, c2, RDS_RDMA_INVALIDATE));
	EXPECT_ERRNO(rds_free_mr(self->fd, c2, 0), EINVAL);
	/* the key is what counts, the offset half is ignored */
	ASSERT_OK(rds_free_mr(self->fd, (uint32_t)c3, 0));
	/* cookie 0 flushes the unused MRs (or EINVAL without a flush) */
	if (rds_free_mr(self->fd, 0, 0))
		EXPECT_EQ(EINVAL, errno);
	/* the last one is released by close() (teardown) */
}

TEST_F(mr, hostile_ranges)
{
	uint64_t c = 0;

	NEED_REGISTRATION();
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, 0, &c, 0), EINVAL);
	EXPECT_ERRNO(rds_get_mr(self->fd, (void *)(~0ULL - 100), 1000, &c, 0),
		     EINVAL);
	EXPECT_ERRNO(rds_get_mr(self->fd, (void *)(~0ULL - 4095), 4095, &c, 0),
		     EINVAL);
	/* the limit is 1 MiB plus the unaligned page */
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, MIB + 4096 + 1, &c, 0),
		     EMSGSIZE);
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, ~0ULL >> 1, &c, 0),
		     EMSGSIZE);
	ASSERT_OK(rds_get_mr(self->fd, self->buf + 4000, MIB, &c, 0));
	ASSERT_OK(rds_free_mr(self->fd, c, 0));
	/* memory that is not there */
	EXPECT_ERRNO(rds_get_mr(self->fd, self->hole, 4096, &c, 0), EFAULT);
	EXPECT_ERRNO(rds_get_mr(self->fd, RDS_KERNEL_PTR, 4096, &c, 0), EFAULT);
	/* partly there: the tail runs into the hole */
	EXPECT_ERRNO(rds_get_mr(self->fd, self->edge, 8192, &c, 0), EFAULT);
	/* a cookie address we cannot write: nothing stays registered */
	c = 0;
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, 4096,
				(uint64_t *)RDS_KERNEL_PTR, 0), EFAULT);
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, 4096,
				(uint64_t *)self->hole, 0), EFAULT);
}

/* In a child: no CAP_IPC_LOCK and RLIMIT_MEMLOCK = limit; GET_MR of len. */
static int limited_get_mr(int fd, void *buf, uint64_t len, rlim_t limit)
{
	struct rlimit rl = { .rlim_cur = limit, .rlim_max = limit };
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		uint64_t c;

		alarm(60);
		if (rds_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(200);
		if (rds_get_mr(fd, buf, len, &c, 0) == 0)
			_exit(0);
		_exit(errno < 200 ? errno : 201);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST_F(mr, memlock)
{
	NEED_REGISTRATION();
	/* no locked memory allowed at all */
	EXPECT_EQ(EPERM, limited_get_mr(self->fd, self->buf, 4096, 0));
	/* 16 pages allowed: 64 KiB is over the limit */
	EXPECT_EQ(ENOMEM, limited_get_mr(self->fd, self->buf, 65536 + 4096,
					 65536));
	/* and 8 KiB fits */
	EXPECT_EQ(0, limited_get_mr(self->fd, self->buf, 8192, 65536));
}

TEST_F(mr, close_with_mrs)
{
	uint64_t c;
	int i;

	NEED_REGISTRATION();
	for (i = 0; i < 64; i++)
		ASSERT_OK(rds_get_mr(self->fd, self->buf + i * 8192, 8192, &c,
				     i & 1 ? RDS_RDMA_USE_ONCE : 0));
	/* teardown closes the socket with 64 MRs on it */
}

/*
 * The socket's device is looked up once (an rdma_cm id bound to its
 * address) and cached: 64 registrations cost no lookup; an address
 * appearing anywhere invalidates the cache, which costs exactly one.
 */
TEST_F(mr, device_cached)
{
	long long before, after;
	uint64_t c;
	int i;

	NEED_REGISTRATION();
	before = rds_counter("ib_dev_lookups");
	if (before < 0)
		SKIP(return, "no ib_dev_lookups counter (not our rds_rdma)");
	for (i = 0; i < 64; i++) {
		ASSERT_OK(rds_get_mr(self->fd, self->buf, 8192, &c, 0));
		ASSERT_OK(rds_free_mr(self->fd, c, 0));
	}
	after = rds_counter("ib_dev_lookups");
	EXPECT_EQ(before, after) TH_LOG("%lld lookups for 64 GET_MRs",
					after - before);
	if (system("ip addr add 203.0.113.77/32 dev lo"))
		SKIP(return, "cannot add an address");
	for (i = 0; i < 8; i++) {
		ASSERT_OK(rds_get_mr(self->fd, self->buf, 8192, &c, 0));
		ASSERT_OK(rds_free_mr(self->fd, c, 0));
	}
	EXPECT_EQ(0, system("ip addr del 203.0.113.77/32 dev lo"));
	EXPECT_EQ(after + 1, rds_counter("ib_dev_lookups"));
}

/*
 * In a child without CAP_IPC_LOCK and with RLIMIT_MEMLOCK = 16 pages: a
 * failing GET_MR of 8 pages (the parent armed the knob), then GET_MR of
 * 12 pages until it fits, which it can only once the failed one's 8 pages
 * were unpinned and uncharged (bounded: 10 s).  Returns 0, or 100 + the
 * errno of a first GET_MR that did not fail with EAGAIN, or the errno of
 * the last try.
 */
static int failed_get_mr_uncharged(int fd, char *buf)
{
	struct rlimit rl = { .rlim_cur = 16 * 4096, .rlim_max = 16 * 4096 };
	int status, i;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		uint64_t c = 0;

		alarm(60);
		if (rds_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(200);
		if (rds_get_mr(fd, buf, 8 * 4096, &c, RDS_RDMA_READWRITE) == 0)
			_exit(100);
		if (errno != EAGAIN || c)
			_exit(errno < 100 ? 100 + errno : 201);
		for (i = 0; i < 200; i++) {
			if (rds_get_mr(fd, buf + 8 * 4096, 12 * 4096, &c, 0) == 0)
				_exit(rds_free_mr(fd, c, RDS_RDMA_INVALIDATE) ?
				      202 : 0);
			if (errno != ENOMEM)
				break;
			usleep(50000);
		}
		_exit(errno < 100 ? errno : 201);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * A synchronous registration whose REG_MR fails leaves the key state
 * unknown (here: valid).  The pages must stay mapped and pinned until
 * recovery deregistered the MR; ib_rdma_mr_unmap_keyed counts the
 * kernel's own check of that order (pages DMA-unmapped while the verbs MR
 * exists and its key is neither free nor dead), ib_rdma_mr_reaped the
 * MRs recovery deregistered.
 */
TEST_F(mr, sync_reg_failure)
{
	long long keyed, reaped, now;
	uint64_t c = 0;

	NEED_REGISTRATION();
	if (access(REG_SYNC_FAIL, W_OK))
		SKIP(return, "no %s (not our rds_rdma)", REG_SYNC_FAIL);
	keyed = rds_counter("ib_rdma_mr_unmap_keyed");
	reaped = rds_counter("ib_rdma_mr_reaped");
	ASSERT_LE(0, keyed);
	ASSERT_LE(0, reaped);

	ASSERT_OK(rds_knob(REG_SYNC_FAIL, "1"));
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf, 8192, &c,
				RDS_RDMA_READWRITE), EAGAIN);
	rds_knob(REG_SYNC_FAIL, "0");
	EXPECT_EQ(0, c) TH_LOG("a cookie for a failed registration");
	now = rds_counter_wait_above("ib_rdma_mr_reaped", reaped, 10000);
	EXPECT_LT(reaped, now) TH_LOG("recovery did not deregister the MR");
	EXPECT_EQ(keyed, rds_counter("ib_rdma_mr_unmap_keyed"))
		TH_LOG("pages released before the key was killed (dmesg)");

	/* The same with a memory limit: the pin is given back after all. */
	reaped = now;
	ASSERT_OK(rds_knob(REG_SYNC_FAIL, "1"));
	EXPECT_EQ(0, failed_get_mr_uncharged(self->fd, self->buf));
	rds_knob(REG_SYNC_FAIL, "0");
	EXPECT_LT(reaped, rds_counter_wait_above("ib_rdma_mr_reaped", reaped,
						 10000));
	EXPECT_EQ(keyed, rds_counter("ib_rdma_mr_unmap_keyed"));

	/* The registration QP recovered: the next GET_MR works. */
	ASSERT_OK(rds_get_mr(self->fd, self->buf, 8192, &c,
			     RDS_RDMA_READWRITE));
	EXPECT_NE(0, c);
	ASSERT_OK(rds_free_mr(self->fd, c, RDS_RDMA_INVALIDATE));
}

/*
 * Keys whose invalidation cannot be posted because the registration QP
 * cannot be made again are given up as unknown: recovery must still
 * deregister them (killing the keys, giving the pages back) without
 * waiting for another registration on the device.  The QP is broken with
 * a failing GET_MR (its recovery tears it down), every attempt to make
 * it again fails (rds_ib_mr_qp_fail_next), and four live keys are freed
 * with RDS_RDMA_INVALIDATE: all four must be reaped.
 */
TEST_F(mr, regqp_down_reaps)
{
	long long reaped, now;
	uint64_t c[4], bad = 0;
	int i;

	NEED_REGISTRATION();
	if (access(QP_FAIL, W_OK) || access(REG_SYNC_FAIL, W_OK))
		SKIP(return, "no %s (not our rds_rdma)", QP_FAIL);
	for (i = 0; i < 4; i++)
		ASSERT_OK(rds_get_mr(self->fd, self->buf + i * 8192, 8192,
				     &c[i], RDS_RDMA_READWRITE));
	/* Keys freed lazily before (the fixture's) die now, not below. */
	ASSERT_OK(rds_free_mr(self->fd, 0, 0));
	reaped = rds_counter("ib_rdma_mr_reaped");
	/* Before the QP breaks: nothing may make it again (timed flushes). */
	ASSERT_OK(rds_knob(QP_FAIL, "1000"));
	ASSERT_OK(rds_knob(REG_SYNC_FAIL, "1"));
	EXPECT_ERRNO(rds_get_mr(self->fd, self->buf + 4 * 8192, 8192, &bad,
				RDS_RDMA_READWRITE), EAGAIN);
	rds_knob(REG_SYNC_FAIL, "0");
	now = rds_counter_wait_above("ib_rdma_mr_reaped", reaped, 10000);
	if (now <= reaped)
		rds_knob(QP_FAIL, "0");
	ASSERT_LT(reaped, now) TH_LOG("recovery did not run");
	/* Recovery is done once it reaped: the QP is gone. */
	for (i = 0; i < 4; i++)
		EXPECT_EQ(0, rds_free_mr(self->fd, c[i], RDS_RDMA_INVALIDATE));
	reaped = rds_counter_wait_above("ib_rdma_mr_reaped", now + 3, 10000);
	rds_knob(QP_FAIL, "0");
	EXPECT_EQ(now + 4, reaped)
		TH_LOG("%lld of 4 keys given up were deregistered",
		       reaped - now);

	/* The QP can be made again: the next GET_MR works. */
	ASSERT_OK(rds_get_mr(self->fd, self->buf, 8192, &c[0],
			     RDS_RDMA_READWRITE));
	ASSERT_OK(rds_free_mr(self->fd, c[0], RDS_RDMA_INVALIDATE));
}

RDS_TEST_MAIN
