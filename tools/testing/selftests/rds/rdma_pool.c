// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_pool.c - MR pool and RLIMIT_MEMLOCK exhaustion, and recovery.
 *
 * Node 0's rds_rdma is reloaded with small pools (rds_ib_mr_8k_pool_size
 * = POOL_8K, rds_ib_mr_1m_pool_size = POOL_1M) for the run and with the
 * defaults afterwards.  Registration past a full pool fails with ENOMEM
 * after a bounded wait (ib_mr.c; Debian's rds_rdma treats the pool size as
 * a soft limit and fails with the ENOMEM of ib_alloc_mr() once the device
 * is out of MRs), past RLIMIT_MEMLOCK with ENOMEM, and with EPERM where no
 * locked memory is allowed at all (rdma.c, as in-tree).  Nothing may leak:
 * after freeing, exactly as many registrations fit again, round after
 * round, and the pool of the other size class is not affected.
 *
 *   pool_8k, pool_1m  fill a pool, free one, free all, three rounds
 *   close             a closed socket gives its MRs back
 *   memlock           a child without CAP_IPC_LOCK fills its RLIMIT_MEMLOCK,
 *                     twice (the accounting is given back)
 *   inflight          the 8K pool filled with use-once keys handed to the
 *                     peer (RDS_CMSG_RDMA_MAP) for RDMA WRITEs not yet done:
 *                     ENOMEM; the peer then writes them all, and as its
 *                     completions arrive the keys die and registration
 *                     works again; every WRITE's data checked, every
 *                     notification RDS_RDMA_SUCCESS.
 *   op_pages          an RDMA op of more pages than the send queue room
 *                     always holds: EMSGSIZE, the connection stays up
 *   op_memlock        ops queued to a peer that is down charge their pins
 *                     to RLIMIT_MEMLOCK: ENOMEM past it, given back on close
 *
 *   rdma_pool serve ADDR PORT SECS     peer side of "inflight" (node 1)
 */
#include <sys/mman.h>
#include <sys/resource.h>
#include "rds_test.h"

#define POOL_8K		32
#define POOL_1M		4
#define PARAMS		"/sys/module/rds_rdma/parameters/"
#define PAGE		4096
#define BIG		(64 * 1024)	/* a 1M-pool MR */
#define PORT_PEER	18740
#define PORT_SELF	18741
#define SELF		"/tests/rdma_pool"
#define INLEN		6000		/* 2 pages: the 8K pool */

/*
 * Register MRs of len bytes, stride apart from buf, until one fails or max
 * succeeded.  Returns how many succeeded; *err the errno of the failure.
 */
static int fill(int fd, char *buf, size_t len, size_t stride, int max,
		uint64_t *cookies, int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < max; n++) {
		if (rds_get_mr(fd, buf + n * stride, len, &cookies[n], 0)) {
			*err = errno;
			break;
		}
	}
	return n;
}

static int free_all(int fd, uint64_t *cookies, int n)
{
	int i, bad = 0;

	for (i = 0; i < n; i++)
		bad += rds_free_mr(fd, cookies[i], 0) != 0;
	return bad;
}

FIXTURE(pool)
{
	int fd;
	char *buf;
	size_t size;
};

FIXTURE_SETUP(pool)
{
	self->size = (POOL_8K * 2 + 8) * (size_t)BIG;
	self->fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, self->fd) TH_LOG("bind: %s", strerror(errno));
	self->buf = mmap(NULL, self->size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	memset(self->buf, 1, self->size);
}

FIXTURE_TEARDOWN(pool)
{
	close(self->fd);
	munmap(self->buf, self->size);
}

/* One class: fill, free one and refill it, free all; three rounds. */
static void rounds(struct __test_metadata *_metadata, int fd, char *buf,
		   size_t len, size_t stride, int pool, char *other,
		   size_t olen)
{
	uint64_t cookies[POOL_8K * 2 + 1], oc;
	int round, n, err;

	for (round = 0; round < 3; round++) {
		n = fill(fd, buf, len, stride, pool * 2, cookies, &err);
		EXPECT_EQ(pool, n) TH_LOG("round %d: %d MRs of %zu bytes fit",
					  round, n, len);
		EXPECT_EQ(ENOMEM, err) TH_LOG("round %d: %s", round,
					      strerror(err));
		if (n < 1)
			return;
		/* The other size class still works. */
		ASSERT_OK(rds_get_mr(fd, other, olen, &oc, 0));
		ASSERT_OK(rds_free_mr(fd, oc, 0));
		/* Free one: exactly one more fits. */
		ASSERT_OK(rds_free_mr(fd, cookies[n - 1], 0));
		EXPECT_EQ(1, fill(fd, buf + (n - 1) * stride, len, stride, 2,
				  &cookies[n - 1], &err));
		EXPECT_EQ(ENOMEM, err);
		EXPECT_EQ(0, free_all(fd, cookies, n));
	}
}

TEST_F(pool, pool_8k)
{
	rounds(_metadata, self->fd, self->buf, PAGE, PAGE, POOL_8K,
	       self->buf + self->size - 2 * BIG, BIG);
}

TEST_F(pool, pool_1m)
{
	rounds(_metadata, self->fd, self->buf, BIG, BIG, POOL_1M,
	       self->buf + self->size - 2 * BIG, 100);
}

TEST_F(pool, close)
{
	uint64_t cookies[POOL_8K * 2];
	int round, n, err, fd;

	for (round = 0; round < 3; round++) {
		fd = rds_bound_socket(AF_INET, 0, NULL);
		ASSERT_LE(0, fd);
		/* The previous socket's MRs come back (flushed on close). */
		n = fill(fd, self->buf, PAGE, PAGE, POOL_8K * 2, cookies, &err);
		EXPECT_EQ(POOL_8K, n) TH_LOG("round %d: %d fit", round, n);
		EXPECT_EQ(ENOMEM, err);
		close(fd);
	}
}

TEST_F(pool, memlock)
{
	/* 32 pages; a one-page MR is accounted as 3 (rds.ko's worst case). */
	struct rlimit rl = { 32 * PAGE, 32 * PAGE };
	uint64_t cookies[POOL_8K * 2];
	int status, n, err;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		struct rlimit zero = { 0, 0 };
		int round, first = -1, i;

		alarm(100);
		if (rds_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		for (round = 0; round < 3; round++) {
			/* The unaccounting of freed MRs runs from a work item. */
			for (i = 0; i < 50; i++) {
				n = fill(self->fd, self->buf, PAGE, PAGE,
					 POOL_8K, cookies, &err);
				if (first < 0 || n >= first)
					break;
				free_all(self->fd, cookies, n);
				rds_msleep(100);
			}
			if (n < 1 || n >= POOL_8K || err != ENOMEM) {
				printf("# memlock round %d: %d fit, %s\n", round,
				       n, strerror(err));
				_exit(11);
			}
			if (first < 0)
				first = n;
			if (n != first) {
				printf("# memlock round %d: %d fit, %d at first\n",
				       round, n, first);
				_exit(12);
			}
			if (free_all(self->fd, cookies, n))
				_exit(13);
		}
		printf("# memlock: %d one-page MRs within 32 pages\n", first);
		/* No locked memory at all: EPERM, as in-tree. */
		if (setrlimit(RLIMIT_MEMLOCK, &zero))
			_exit(14);
		if (rds_get_mr(self->fd, self->buf, PAGE, &cookies[0], 0) == 0 ||
		    errno != EPERM)
			_exit(15);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* And the parent (CAP_IPC_LOCK) still fills the whole pool. */
	n = fill(self->fd, self->buf, PAGE, PAGE, POOL_8K * 2, cookies, &err);
	EXPECT_EQ(POOL_8K, n);
	EXPECT_EQ(0, free_all(self->fd, cookies, n));
}

/* ---- inflight: use-once keys held by the peer ---------------------------- */

enum { P_KEY = 1, P_GO = 2, P_QUIT = 9, P_DONE = 3, P_REPORT = 4 };

struct pmsg {
	uint32_t op, k, len, seed;
	uint32_t ok, notes, pad[2];
};

#define SEND_MS		20000	/* bounded wait through a full send buffer */

static ssize_t send_c(int fd, const struct sockaddr_storage *to,
		      const void *buf, size_t len, int type, const void *d,
		      size_t dlen)
{
	return rds_send_cmsg(fd, to, buf, len, type, d, dlen, SEND_MS);
}

/* Node 1: collect keys; on GO write into all of them; report. */
static int serve(const char *addr, int port, int secs)
{
	static char local[INLEN];
	struct { struct pmsg q; uint64_t cookie; } keys[POOL_8K * 2];
	struct sockaddr_storage me, from;
	int fd, nkeys = 0, i;

	alarm(secs + 30);
	fd = rds_socket();
	if (fd < 0 || !rds_mkaddr(AF_INET, addr, port, &me) ||
	    bind(fd, (struct sockaddr *)&me, rds_sslen(&me)))
		return 1;
	for (;;) {
		struct rds_rx rx;
		struct pmsg q;
		ssize_t n = rds_recv_rx(fd, &q, sizeof(q), &rx, secs * 1000);

		if (n < 0)
			return 0;
		if (n != sizeof(q))
			continue;
		from = rx.from;
		if (q.op == P_QUIT)
			return 0;
		if (q.op == P_KEY && rx.cookie && q.len <= INLEN &&
		    nkeys < (int)(sizeof(keys) / sizeof(keys[0]))) {
			keys[nkeys].q = q;
			keys[nkeys].cookie = rx.cookie;
			nkeys++;
			continue;
		}
		if (q.op != P_GO)
			continue;
		{
			struct pmsg rep = { .op = P_REPORT };
			int notes = 0, ok = 0;

			for (i = 0; i < nkeys; i++) {
				struct pmsg d = { .op = P_DONE,
						  .k = keys[i].q.k };
				int st;

				rds_fill(local, keys[i].q.len, keys[i].q.seed);
				/* Its notification: the local buffer is free. */
				st = rds_do_rdma(fd, &from, &d, sizeof(d),
						 keys[i].cookie, local,
						 keys[i].q.len, true, i,
						 SEND_MS);
				if (st == -1)
					break;
				notes += st >= 0 || st == -3;
				ok += st == RDS_RDMA_SUCCESS;
			}
			rep.notes = notes;
			rep.ok = ok;
			send_c(fd, &from, &rep, sizeof(rep), 0, NULL, 0);
			nkeys = 0;
		}
	}
}

TEST_F_TIMEOUT(pool, inflight, 300)
{
	struct sockaddr_storage peer;
	struct rds_get_mr_args extra;
	uint64_t cookies[POOL_8K * 2];
	char cmd[256], *in;
	int fd, i, n, err, done = 0, bad = 0, tries;
	struct pmsg q, rep = { 0 };
	bool have_rep = false;
	struct timespec t0;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	in = self->buf;		/* POOL_8K slots of 2 pages */
	extra = (struct rds_get_mr_args){
		.vec = { (uintptr_t)(self->buf + POOL_8K * 2 * PAGE), 100 },
		.flags = RDS_RDMA_USE_ONCE,
	};
	snprintf(cmd, sizeof(cmd),
		 "rds-peer 1 '%s serve %s %d 120 >/tmp/rdma_pool.log 2>&1 &'",
		 SELF, rds_peer_str(AF_INET), PORT_PEER);
	ASSERT_EQ(0, system(cmd));
	rds_msleep(1000);
	fd = rds_bound_socket(AF_INET, PORT_SELF, NULL);
	ASSERT_LE(0, fd);
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), PORT_PEER, &peer);

	/* Fill the 8K pool with use-once keys that the peer holds. */
	memset(in, 0x5a, POOL_8K * 2 * PAGE);
	for (i = 0; i < POOL_8K; i++) {
		struct rds_get_mr_args mr = {
			.vec = { (uintptr_t)(in + i * 2 * PAGE + 100), INLEN - 100 },
			.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE,
		};

		q = (struct pmsg){ .op = P_KEY, .k = i, .len = INLEN - 100,
				   .seed = 77 + i };
		if (send_c(fd, &peer, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
			   sizeof(mr)) != sizeof(q)) {
			TH_LOG("MAP %d: %s", i, strerror(errno));
			break;
		}
	}
	EXPECT_EQ(POOL_8K, i);
	/* Every MR is a live key waiting for the peer's WRITE. */
	n = fill(fd, self->buf + POOL_8K * 2 * PAGE, PAGE, PAGE, 2, cookies,
		 &err);
	EXPECT_EQ(0, n);
	EXPECT_EQ(ENOMEM, err);
	free_all(fd, cookies, n);
	/* A MAP cmsg fails the sendmsg() alike, and nothing is sent. */
	q = (struct pmsg){ .op = P_KEY, .k = 999, .len = 100 };
	EXPECT_ERRNO(send_c(fd, &peer, &q, sizeof(q), RDS_CMSG_RDMA_MAP,
			    &extra, sizeof(extra)), ENOMEM);

	/*
	 * Go: while the WRITEs come in, register again; each key dies with
	 * its completing message and its MR comes back to the pool.
	 */
	q = (struct pmsg){ .op = P_GO };
	ASSERT_EQ(sizeof(q), send_c(fd, &peer, &q, sizeof(q), 0, NULL, 0));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = 0;
	for (tries = 0; n < POOL_8K && rds_ms_since(&t0) < 120000; tries++) {
		if (rds_get_mr(fd, self->buf + (POOL_8K * 2 + n) * PAGE, PAGE,
			       &cookies[n], 0) == 0) {
			n++;
			continue;
		}
		if (errno != ENOMEM) {
			TH_LOG("GET_MR while keys die: %s", strerror(errno));
			break;
		}
	}
	EXPECT_EQ(POOL_8K, n) TH_LOG("%d registered again after %d tries", n,
				     tries);
	TH_LOG("%d MRs registered again in %ld ms (%d tries)", n,
	       rds_ms_since(&t0), tries);

	/* Every completing message: the peer's data in place. */
	while (!have_rep || done < POOL_8K) {
		ssize_t r = rds_recv_rx(fd, &q, sizeof(q), NULL, 60000);

		if (r < 0)
			break;
		if (r != sizeof(q))
			continue;
		if (q.op == P_REPORT) {
			rep = q;
			have_rep = true;
		} else if (q.op == P_DONE && q.k < POOL_8K) {
			done++;
			if (!rds_check(in + q.k * 2 * PAGE + 100, INLEN - 100,
				       77 + q.k))
				bad++;
		}
	}
	EXPECT_EQ(POOL_8K, done);
	EXPECT_EQ(0, bad);
	EXPECT_TRUE(have_rep);
	EXPECT_EQ(POOL_8K, rep.notes);
	EXPECT_EQ(POOL_8K, rep.ok) TH_LOG("peer: %u of %u WRITEs succeeded",
					  rep.ok, rep.notes);
	EXPECT_EQ(0, free_all(fd, cookies, n));
	q = (struct pmsg){ .op = P_QUIT };
	send_c(fd, &peer, &q, sizeof(q), 0, NULL, 0);
	close(fd);
}

/* ---- ops: page bound and RLIMIT_MEMLOCK ---------------------------------- */

/* Ping the peer and wait for its pong: the connection is up. */
static int ping_peer(int fd, const struct sockaddr_storage *peer0, int ms)
{
	struct timespec t0;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&t0) < ms) {
		if (rds_sendto(fd, NULL, 0, 0, peer0) == 0 &&
		    rds_recv_wait(fd, &c, 1, 0, NULL, 2000) == 0)
			return 0;
	}
	return -1;
}

static ssize_t send_op(int fd, const struct sockaddr_storage *to,
		       struct rds_iovec *v, unsigned int n, uint64_t bytes,
		       uint64_t flags)
{
	struct rds_rdma_args a = {
		.cookie = 0x1234,
		.remote_vec = { .addr = 0, .bytes = bytes },
		.local_vec_addr = (uintptr_t)v,
		.nr_local = n,
		.flags = flags,
		.user_token = n,
	};

	return rds_send_cmsg(fd, to, NULL, 0, RDS_CMSG_RDMA_ARGS, &a,
			     sizeof(a), 0);
}

/*
 * An op of more pages than the RDMA send queue room always holds is
 * refused at sendmsg() with EMSGSIZE, and the connection it would have
 * broken stays up: no reset, pings still answered (issue 9).  1000
 * one-byte iovecs each on its own page, and 255 three-page plus 769
 * two-page iovecs (2303 pages: 288 WRs of 8 SGEs on rxe, more than the
 * 256 entries of room there).
 */
TEST_F_TIMEOUT(pool, op_pages, 120)
{
	struct sockaddr_storage peer0, peer;
	struct rds_iovec *v;
	long long resets;
	unsigned int i;
	int fd;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	v = calloc(1024, sizeof(*v));
	ASSERT_NE(NULL, v);
	fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, fd);
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), 0, &peer0);
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), PORT_PEER, &peer);
	ASSERT_EQ(0, ping_peer(fd, &peer0, 30000));
	resets = rds_counter("conn_reset");

	for (i = 0; i < 1000; i++) {
		v[i].addr = (uintptr_t)self->buf + i * (uint64_t)PAGE + 9;
		v[i].bytes = 1;
	}
	EXPECT_ERRNO(send_op(fd, &peer, v, 1000, 1000,
			     RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME),
		     EMSGSIZE);
	for (i = 0; i < 1024; i++) {
		v[i].addr = (uintptr_t)self->buf + PAGE - 1;
		v[i].bytes = i < 255 ? PAGE + 2 : 2;
	}
	EXPECT_ERRNO(send_op(fd, &peer, v, 1024, 1U << 20,
			     RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME),
		     EMSGSIZE);
	rds_msleep(2000);
	EXPECT_EQ(0, ping_peer(fd, &peer0, 30000));
	EXPECT_EQ(resets, rds_counter("conn_reset"))
		TH_LOG("the connection was reset");
	/* nothing was queued, so nothing reports */
	EXPECT_EQ(-1, rds_wait_note(fd, NULL, 500));
	close(fd);
	free(v);
}

/*
 * Count the ops of npages pinned pages each that one socket may queue to
 * an address that never answers (so they stay pinned), up to max; *err
 * the errno of the refusal.  Atomics when npages is 0.
 */
static int queue_ops(int fd, char *buf, int npages, int max, int *err)
{
	struct sockaddr_storage to;
	struct rds_iovec v = { (uintptr_t)buf, (uint64_t)npages * PAGE };
	struct rds_atomic_args at = {
		.cookie = 0x1234, .local_addr = (uintptr_t)buf,
		.fadd = { .add = 1 },
	};
	int n;

	rds_mkaddr(AF_INET, rds_unreach_str(AF_INET), PORT_PEER, &to);
	*err = 0;
	for (n = 0; n < max; n++) {
		ssize_t r = npages ? send_op(fd, &to, &v, 1, v.bytes,
					     RDS_RDMA_READWRITE) :
			    rds_send_cmsg(fd, &to, NULL, 0,
					  RDS_CMSG_ATOMIC_FADD, &at,
					  sizeof(at), 0);
		if (r < 0) {
			*err = errno;
			break;
		}
	}
	return n;
}

/*
 * The pages an RDMA or atomic op pins while it is queued count against
 * RLIMIT_MEMLOCK like an MR's: an unprivileged sender to a peer that is
 * down gets ENOMEM past its limit instead of pinning without bound, and
 * gets the allowance back when the ops go (issue 9).  Limit 64 pages,
 * ops of 16 pages (charged 18, mm_account_pinned_pages()' worst case).
 */
TEST_F_TIMEOUT(pool, op_memlock, 120)
{
	struct rlimit rl = { 64 * PAGE, 64 * PAGE };
	int status;
	pid_t pid;

	if (!rds_have_peer())
		SKIP(return, "no rxe link");
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int round, n, err, fd, first = -1, i, at;

		alarm(100);
		if (rds_drop_ipc_lock() || setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(10);
		for (round = 0; round < 3; round++) {
			/* The unaccounting runs from a work item. */
			for (i = 0; i < 50; i++) {
				fd = rds_bound_socket(AF_INET, 0, NULL);
				if (fd < 0)
					_exit(11);
				n = queue_ops(fd, self->buf, 16, 200, &err);
				if (first < 0 || n >= first)
					break;
				close(fd);
				rds_msleep(100);
			}
			printf("# op_memlock round %d: %d ops of 16 pages, %s\n",
			       round, n, strerror(err));
			if (n < 1 || n > 3 || err != ENOMEM)
				_exit(12);
			if (first < 0)
				first = n;
			if (n != first)
				_exit(13);
			/* the 16-page ops hold most of it: few atomics fit */
			at = queue_ops(fd, self->buf, 0, 200, &err);
			printf("# op_memlock round %d: %d atomics more, %s\n",
			       round, at, strerror(err));
			if (at > 64 / 3 || err != ENOMEM)
				_exit(14);
			close(fd);	/* drops the ops: the pins go */
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

static pid_t main_pid;

/* At exit of the main process (not a test child): default pools again. */
static void reload_defaults(void)
{
	if (getpid() == main_pid && rds_reload_ours("")) {
		printf("# could not reload rds_rdma with its defaults\n");
		fflush(stdout);
		_exit(KSFT_FAIL);
	}
}

int main(int argc, char **argv)
{
	char want[64], got[64];

	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (rds_intree()) {
		printf("TAP version 13\n1..0 # SKIP reloads our rds_rdma\n");
		return KSFT_SKIP;
	}
	snprintf(want, sizeof(want), "rds_ib_mr_8k_pool_size=%d rds_ib_mr_1m_pool_size=%d",
		 POOL_8K, POOL_1M);
	if (rds_reload_ours(want) ||
	    rds_read_file(PARAMS "rds_ib_mr_8k_pool_size", got, sizeof(got)) ||
	    atoi(got) != POOL_8K) {
		printf("TAP version 13\n1..0 # SKIP cannot load rds_rdma with small pools\n");
		rds_reload_ours("");
		return 1;
	}
	rds_test_prepare();
	/* test_harness_run() exits: the defaults come back at exit. */
	main_pid = getpid();
	atexit(reload_defaults);
	return test_harness_run(argc, argv);
}
