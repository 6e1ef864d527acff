// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_atomic_shared - atomics from both nodes 0 and 1 on one counter word
 * of node 2 (needs a 3-node cluster: tests.txt PEER ours3).
 *
 *   rdma_atomic_shared serve ADDR PORT SECONDS
 *        node 2 (started with rds-peer): registers a page of 64-bit words
 *        with RDS_GET_MR (RDS_RDMA_READWRITE), hands out the cookie, sets
 *        and reads words on request
 *   rdma_atomic_shared hammer LADDR SADDR PORT COOKIE IDX PROCS N MODE TOTAL
 *        node 1 (through rds-peer, output read by node 0): PROCS processes
 *        each doing N increments of the word, MODE fadd, mfadd (masked
 *        FADD, full-width mask: emulated on rxe) or cswp; prints every old
 *        value it saw ("v HEX"), node 1's emulation counters ("emul ...")
 *        and a status ("rc N")
 *   rdma_atomic_shared [harness options]   node 0: the cases below
 *
 * An RDS socket cannot do RDMA to its own node (a local destination takes
 * the loopback transport), so a counter shared by nodes 0 and 1 lives on a
 * third node.  Each case: 4 processes on node 0 and 4 on node 1 add 1 to
 * the word N times each, at the same time (a start barrier on the word
 * itself: each process does its first increment, then reads the word with
 * fetch-adds of 0 until all 8 first increments are there).  Every atomic
 * asks for a notification and must report RDS_RDMA_SUCCESS.  At the end
 * the word is the initial value plus 8 N, its neighbours are untouched,
 * and the old values returned by the increments, collected from both
 * nodes and sorted, are exactly initial .. initial + 8 N - 1 (each seen
 * once), with the two nodes' values interleaved.
 *
 *   fadd        plain RDS_CMSG_ATOMIC_FADD on both nodes
 *   masked_fadd node 1 uses RDS_CMSG_MASKED_ATOMIC_FADD with nocarry mask
 *               bit 63 (a full-width add, but not the trivial mask: rxe has
 *               no masked atomics, so rds_rdma emulates it by a CMP_AND_SWP
 *               loop; node 1's ib_atomic_emulated counts N per process),
 *               node 0 plain FADD: the emulation is atomic with respect to
 *               the HCA's fetch-adds
 *   cswp        increments by RDS_CMSG_ATOMIC_CSWP: read the word, swap
 *               in value + 1 if it still holds value, else retry with the
 *               value the CSWP returned
 *
 * N is 300 (RDS_ATOMIC_SHARED_N in the environment overrides).  Hostile
 * arguments are rdma_atomic's business; this one is about atomicity across
 * nodes.
 */
#include <sys/mman.h>
#include "rds_test.h"

#define SRV_PORT	18760
#define SRV_MAGIC	0x53484152U	/* "SHAR" */
#define SRV_WORDS	512
#define CTR		1		/* the counter's word index */
#define CTR_INIT	0x123456789000ULL
#define SENTINEL	0x5a5a5a5a5a5a5a5aULL
#define NOTE_MS		60000
#define PROCS		4		/* per node */
#define BARRIER_MS	180000
#define MAX_TRIES	100000		/* CSWP attempts per process */

enum { OP_HELLO = 1, OP_SET, OP_GET, OP_QUIT };
enum { M_FADD, M_MFADD, M_CSWP };

struct sreq {
	uint32_t magic, op, seq, idx;
	uint64_t val;
};

struct srep {
	uint32_t magic, op, seq, pad;
	uint64_t val, cookie;
};

/* ------------------------------------------------------------------ */
/* atomics and their notifications                                     */

static ssize_t send_atomic(int fd, const struct sockaddr_storage *to,
			   int type, const struct rds_atomic_args *at)
{
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_atomic_args))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
		.msg_name = (void *)to, .msg_namelen = rds_sslen(to),
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c;

	memset(u.buf, 0, sizeof(u.buf));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(sizeof(*at));
	memcpy(CMSG_DATA(c), at, sizeof(*at));
	return sendmsg(fd, &m, 0);
}

/* The status of the next notification on fd (data skipped); -1: none. */
static int wait_note(int fd, int ms)
{
	union {
		char b[256];
		struct cmsghdr align;
	} u;
	char data[256];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m;
	struct cmsghdr *c;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = ms - rds_ms_since(&t0);

		if (left <= 0)
			return -1;
		memset(&m, 0, sizeof(m));
		m.msg_iov = &iov;
		m.msg_iovlen = 1;
		m.msg_control = u.b;
		m.msg_controllen = sizeof(u.b);
		if (rds_recvmsg_wait(fd, &m, 0, left) < 0)
			return -1;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct rds_rdma_notify n;

			if (c->cmsg_level != SOL_RDS ||
			    c->cmsg_type != RDS_CMSG_RDMA_STATUS)
				continue;
			memcpy(&n, CMSG_DATA(c), sizeof(n));
			return n.status;
		}
	}
}

static int bound4(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(AF_INET, addr, port, &ss);
	int fd = rds_socket();

	if (fd < 0 || !len || bind(fd, (struct sockaddr *)&ss, len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

struct worker {
	int fd;
	const struct sockaddr_storage *to;
	uint64_t cookie;
	uint32_t idx;
	uint64_t *res;		/* 8-byte aligned result buffer */
};

/*
 * One atomic on the word, waited for: 0 and the old value in *old, or a
 * nonzero step number.  type is the cmsg; a, b its operands (FADD: add and
 * nocarry mask; CSWP: compare and swap).
 */
static int one_atomic(struct worker *w, int type, uint64_t a, uint64_t b,
		      uint64_t *old)
{
	struct rds_atomic_args at;

	memset(&at, 0, sizeof(at));
	at.cookie = w->cookie;
	at.remote_addr = 8 * w->idx;
	at.local_addr = (uintptr_t)w->res;
	at.flags = RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT;
	switch (type) {
	case RDS_CMSG_ATOMIC_FADD:
		at.fadd.add = a;
		break;
	case RDS_CMSG_MASKED_ATOMIC_FADD:
		at.m_fadd.add = a;
		at.m_fadd.nocarry_mask = b;
		break;
	default:
		at.cswp.compare = a;
		at.cswp.swap = b;
		break;
	}
	*w->res = ~0ULL;
	if (send_atomic(w->fd, w->to, type, &at) != 0)
		return 1;
	if (wait_note(w->fd, NOTE_MS) != RDS_RDMA_SUCCESS)
		return 2;
	*old = __atomic_load_n(w->res, __ATOMIC_SEQ_CST);
	return 0;
}

/*
 * One increment by mode; 0 and the old value it replaced in *old.  *guess
 * is the CSWP's idea of the word's value, updated.
 */
static int increment(struct worker *w, int mode, uint64_t *guess,
		     uint64_t *old, unsigned int *tries)
{
	int r;

	if (mode == M_FADD)
		return one_atomic(w, RDS_CMSG_ATOMIC_FADD, 1, 0, old);
	if (mode == M_MFADD)
		return one_atomic(w, RDS_CMSG_MASKED_ATOMIC_FADD, 1,
				  1ULL << 63, old);
	for (;;) {
		if (++*tries > MAX_TRIES)
			return 3;
		r = one_atomic(w, RDS_CMSG_ATOMIC_CSWP, *guess, *guess + 1,
			       old);
		if (r)
			return r;
		if (*old == *guess) {
			*guess = *old + 1;
			return 0;
		}
		*guess = *old;	/* someone else got there first */
	}
}

/*
 * A process's part: n increments, the first before the start barrier
 * (until the word is at least barrier: every process did its first), old
 * values to the pipe out.  Exit status 0 or the failing step.
 */
static int worker_run(const char *laddr, const struct sockaddr_storage *to,
		      uint64_t cookie, uint32_t idx, int mode, uint32_t n,
		      uint64_t barrier, int out)
{
	static uint64_t res __attribute__((aligned(8)));
	struct worker w = { .to = to, .cookie = cookie, .idx = idx,
			    .res = &res };
	uint64_t prev = 0, old, guess = 0, v;
	unsigned int tries = 0;
	struct timespec t0;
	uint32_t i;
	int r;

	w.fd = bound4(laddr, 0);
	if (w.fd < 0)
		return 10;
	/* CSWP: the first guess comes from a read (a fetch-add of 0) */
	if (mode == M_CSWP && one_atomic(&w, RDS_CMSG_ATOMIC_FADD, 0, 0,
					 &guess))
		return 11;
	for (i = 0; i < n; i++) {
		r = increment(&w, mode, &guess, &old, &tries);
		if (r)
			return 20 + r;
		if (i && old <= prev)
			return 30;	/* went backwards: not one counter */
		prev = old;
		if (write(out, &old, sizeof(old)) != sizeof(old))
			return 31;
		if (i)
			continue;
		/* the start barrier: wait for every process's first */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (;;) {
			if (one_atomic(&w, RDS_CMSG_ATOMIC_FADD, 0, 0, &v))
				return 40;
			if (v >= barrier)
				break;
			if (rds_ms_since(&t0) > BARRIER_MS)
				return 41;
			rds_msleep(20);
		}
		guess = v;
	}
	close(w.fd);
	return 0;
}

/*
 * procs processes of worker_run(); their old values into vals (room for
 * procs * n), the count into *got.  Returns how many processes failed.
 */
static int run_workers(const char *laddr, const struct sockaddr_storage *to,
		       uint64_t cookie, uint32_t idx, int mode, int procs,
		       uint32_t n, uint64_t barrier, uint64_t *vals,
		       uint32_t *got, int *status)
{
	pid_t pids[16];
	int p[2], i, st, bad = 0;
	uint32_t m = 0;

	if (procs > 16 || pipe(p))
		return procs;
	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		if (!pids[i]) {
			close(p[0]);
			alarm(600);
			_exit(worker_run(laddr, to, cookie, idx, mode, n,
					 barrier, p[1]));
		}
	}
	close(p[1]);
	while (m < (uint32_t)procs * n &&
	       read(p[0], &vals[m], sizeof(vals[m])) == sizeof(vals[m]))
		m++;
	close(p[0]);
	for (i = 0; i < procs; i++) {
		status[i] = -1;
		if (pids[i] < 0 || waitpid(pids[i], &st, 0) != pids[i]) {
			bad++;
			continue;
		}
		status[i] = st;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	*got = m;
	return bad;
}

static int mode_of(const char *s)
{
	if (!strcmp(s, "fadd"))
		return M_FADD;
	if (!strcmp(s, "mfadd"))
		return M_MFADD;
	if (!strcmp(s, "cswp"))
		return M_CSWP;
	return -1;
}

/* hammer LADDR SADDR PORT COOKIE IDX PROCS N MODE BARRIER (node 1) */
static int hammer(char **argv)
{
	struct sockaddr_storage to;
	int procs = atoi(argv[5]), mode = mode_of(argv[7]), st[16], i, bad;
	uint32_t n = strtoul(argv[6], NULL, 0), got = 0;
	uint64_t *vals;
	long long e0 = rds_counter("ib_atomic_emulated");
	long long r0 = rds_counter("ib_atomic_emulated_retries");
	long long x0 = rds_counter("ib_atomic_emulated_exhausted");

	if (mode < 0 || procs < 1 || procs > 16 || !n ||
	    !rds_mkaddr(AF_INET, argv[1], atoi(argv[2]), &to)) {
		printf("rc 2\n");
		return 2;
	}
	vals = calloc((size_t)procs * n, sizeof(*vals));
	if (!vals) {
		printf("rc 3\n");
		return 3;
	}
	bad = run_workers(argv[0], &to, strtoull(argv[3], NULL, 0),
			  atoi(argv[4]), mode, procs, n,
			  strtoull(argv[8], NULL, 0), vals, &got, st);
	for (i = 0; i < procs; i++)
		if (st[i])
			printf("# node 1 process %d: status %#x\n", i, st[i]);
	for (i = 0; i < (int)got; i++)
		printf("v %llx\n", (unsigned long long)vals[i]);
	if (e0 >= 0)
		printf("emul %lld %lld %lld\n",
		       rds_counter("ib_atomic_emulated") - e0,
		       rds_counter("ib_atomic_emulated_retries") - r0,
		       rds_counter("ib_atomic_emulated_exhausted") - x0);
	printf("rc %d\n", bad);
	free(vals);
	return bad ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* the owner of the counter (node 2)                                   */

static uint64_t srv_words[SRV_WORDS] __attribute__((aligned(4096)));

static int get_mr(int fd, void *addr, size_t len, uint64_t *cookie)
{
	struct rds_get_mr_args mr = {
		.vec = { (uintptr_t)addr, len },
		.cookie_addr = (uintptr_t)cookie,
		.flags = RDS_RDMA_READWRITE,
	};

	*cookie = 0;
	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr));
}

static int serve(const char *addr, int port, int secs)
{
	struct sockaddr_storage from;
	uint64_t cookie;
	struct sreq q;
	int fd = bound4(addr, port);

	if (fd < 0 || get_mr(fd, srv_words, sizeof(srv_words), &cookie))
		return 1;
	for (;;) {
		struct srep r = { .magic = SRV_MAGIC };
		ssize_t n = rds_recv_wait(fd, &q, sizeof(q), 0, &from,
					  secs * 1000);

		if (n < 0)
			return 0;
		if (n != sizeof(q) || q.magic != SRV_MAGIC)
			continue;
		r.op = q.op;
		r.seq = q.seq;
		r.cookie = cookie;
		if (q.op == OP_SET && q.idx < SRV_WORDS)
			__atomic_store_n(&srv_words[q.idx], q.val,
					 __ATOMIC_SEQ_CST);
		else if (q.op == OP_GET && q.idx < SRV_WORDS)
			r.val = __atomic_load_n(&srv_words[q.idx],
						__ATOMIC_SEQ_CST);
		rds_sendto(fd, &r, sizeof(r), 0, &from);
		if (q.op == OP_QUIT)
			return 0;
	}
}

/* ------------------------------------------------------------------ */
/* node 0                                                              */

static uint32_t seq;

static int srv_call(int fd, const struct sockaddr_storage *srv,
		    struct sreq *q, struct srep *r, int ms)
{
	struct timespec t0;

	q->magic = SRV_MAGIC;
	q->seq = ++seq;
	if (rds_sendto(fd, q, sizeof(*q), 0, srv) != sizeof(*q))
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = ms - rds_ms_since(&t0);

		if (left <= 0)
			return -1;
		if (rds_recv_wait(fd, r, sizeof(*r), 0, NULL, left) ==
		    sizeof(*r) && r->magic == SRV_MAGIC && r->seq == q->seq)
			return 0;
		if (rds_ms_since(&t0) >= ms)
			return -1;
	}
}

static int srv_set(int fd, const struct sockaddr_storage *srv, uint32_t idx,
		   uint64_t v)
{
	struct sreq q = { .op = OP_SET, .idx = idx, .val = v };
	struct srep r;

	return srv_call(fd, srv, &q, &r, NOTE_MS);
}

static int srv_get(int fd, const struct sockaddr_storage *srv, uint32_t idx,
		   uint64_t *v)
{
	struct sreq q = { .op = OP_GET, .idx = idx };
	struct srep r;

	if (srv_call(fd, srv, &q, &r, NOTE_MS))
		return -1;
	*v = r.val;
	return 0;
}

static const char *peer2_str(void)
{
	return rds_env("RDS_PEER2_ADDR", "192.0.2.3");
}

FIXTURE(sh)
{
	int c;				/* requests to node 2's server */
	struct sockaddr_storage srv;
	uint64_t cookie;
};

FIXTURE_SETUP(sh)
{
	struct sreq q = { .op = OP_HELLO };
	struct srep r;
	char cmd[256];
	int i;

	if (atoi(rds_env("RDS_NODES", "1")) < 3 || !getenv("RDS_PEER2_ADDR"))
		SKIP(return, "needs 3 nodes (tests.txt PEER ours3)");
	if (rds_intree() || !strcmp(rds_env("RDS_PEER_MODS", "ours"), "intree"))
		SKIP(return, "in-tree atomics do not work over rxe (masked opcodes only)");
	ASSERT_NE(0, rds_mkaddr(AF_INET, peer2_str(), SRV_PORT, &self->srv));
	self->c = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, self->c);
	if (srv_call(self->c, &self->srv, &q, &r, 3000)) {
		snprintf(cmd, sizeof(cmd),
			 "rds-peer 2 '/tests/rdma_atomic_shared serve %s %d 300 >/dev/null 2>&1 &'",
			 peer2_str(), SRV_PORT);
		ASSERT_EQ(0, system(cmd));
		for (i = 0; i < 20; i++) {
			q.op = OP_HELLO;
			if (!srv_call(self->c, &self->srv, &q, &r, 3000))
				break;
		}
		ASSERT_GT(20, i) TH_LOG("the server on node 2 does not answer");
	}
	self->cookie = r.cookie;
	ASSERT_NE(0, self->cookie);
}

FIXTURE_TEARDOWN(sh)
{
	if (self->c > 0)
		close(self->c);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint32_t per_proc(void)
{
	return strtoul(rds_env("RDS_ATOMIC_SHARED_N", "300"), NULL, 0);
}

/*
 * The case: PROCS processes here with mode0, PROCS on node 1 with mode1
 * (through rds-peer), n increments each, on node 2's counter.
 */
static void shared(struct __test_metadata *_metadata, FIXTURE_DATA(sh) *self,
		   int mode0, const char *mode1)
{
	uint32_t n = per_proc(), total = 2 * PROCS * n, got0 = 0, got1 = 0;
	uint64_t *vals, *all, v, lo1 = ~0ULL, hi1 = 0;
	long long emul[3] = { -1, -1, -1 }, e0;
	int st[PROCS], i, bad0, rc1 = -1, inside = 0;
	char cmd[512], line[128];
	unsigned long long x;
	FILE *f;

	ASSERT_LT(0, n);
	vals = calloc(total, sizeof(*vals));
	all = calloc(total, sizeof(*all));
	ASSERT_NE(NULL, vals);
	ASSERT_NE(NULL, all);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, srv_set(self->c, &self->srv, CTR - 1 + 2 * i,
				     SENTINEL + i));
	ASSERT_EQ(0, srv_set(self->c, &self->srv, CTR, CTR_INIT));
	e0 = rds_counter("ib_atomic_emulated");

	/* node 1's processes (their output comes when they are done) ... */
	snprintf(cmd, sizeof(cmd),
		 "rds-peer -t 700 1 '/tests/rdma_atomic_shared hammer %s %s %d %#llx %d %d %u %s %#llx' 2>&1",
		 rds_peer_str(AF_INET), peer2_str(), SRV_PORT,
		 (unsigned long long)self->cookie, CTR, PROCS, n, mode1,
		 (unsigned long long)(CTR_INIT + 2 * PROCS));
	f = popen(cmd, "r");
	ASSERT_NE(NULL, f);
	/* ... and ours, at the same time (the barrier sees to it) */
	bad0 = run_workers(rds_local_str(AF_INET), &self->srv, self->cookie,
			   CTR, mode0, PROCS, n, CTR_INIT + 2 * PROCS, vals,
			   &got0, st);
	for (i = 0; i < PROCS; i++)
		if (st[i])
			TH_LOG("node 0 process %d: status %#x", i, st[i]);
	memcpy(all, vals, got0 * sizeof(*all));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "v %llx", &x) == 1) {
			if (got0 + got1 < total)
				all[got0 + got1++] = x;
			lo1 = x < lo1 ? x : lo1;
			hi1 = x > hi1 ? x : hi1;
		} else if (sscanf(line, "emul %lld %lld %lld", &emul[0],
				  &emul[1], &emul[2]) == 3) {
			;
		} else if (sscanf(line, "rc %d", &rc1) == 1) {
			;
		} else {
			TH_LOG("node 1: %s", line);
		}
	}
	i = pclose(f);
	EXPECT_EQ(0, i);
	EXPECT_EQ(0, bad0);
	EXPECT_EQ(0, rc1);
	EXPECT_EQ(PROCS * n, got0);
	EXPECT_EQ(PROCS * n, got1);

	/* the word: initial + every increment; the neighbours untouched */
	ASSERT_EQ(0, srv_get(self->c, &self->srv, CTR, &v));
	EXPECT_EQ(CTR_INIT + total, v);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, srv_get(self->c, &self->srv, CTR - 1 + 2 * i, &v));
		EXPECT_EQ(SENTINEL + i, v);
	}

	/* every old value once: initial .. initial + total - 1 */
	qsort(all, got0 + got1, sizeof(*all), cmp_u64);
	for (i = 0; i < (int)(got0 + got1); i++)
		if (all[i] != CTR_INIT + i) {
			TH_LOG("old value %d is %#llx, want %#llx", i,
			       (unsigned long long)all[i],
			       (unsigned long long)(CTR_INIT + i));
			break;
		}
	EXPECT_EQ(got0 + got1, i);
	/* and the two nodes took turns: ours fall inside node 1's range */
	for (i = 0; i < (int)got0; i++)
		inside += vals[i] > lo1 && vals[i] < hi1;
	TH_LOG("%u + %u increments, %d of node 0's inside node 1's range",
	       got0, got1, inside);
	EXPECT_LT(0, inside);

	if (emul[0] >= 0) {
		TH_LOG("node 1: emulated %lld, retries %lld, exhausted %lld",
		       emul[0], emul[1], emul[2]);
		EXPECT_EQ(strcmp(mode1, "mfadd") ? 0 : (long long)PROCS * n,
			  emul[0]);
		EXPECT_EQ(0, emul[2]);
	}
	if (e0 >= 0)	/* node 0 issued plain atomics only */
		EXPECT_EQ(0, rds_counter("ib_atomic_emulated") - e0);
	free(vals);
	free(all);
}

/* Plain fetch-adds from both nodes. */
TEST_F_TIMEOUT(sh, fadd, 900)
{
	shared(_metadata, self, M_FADD, "fadd");
}

/* Node 1's masked fetch-adds (emulated on rxe) against node 0's plain ones. */
TEST_F_TIMEOUT(sh, masked_fadd, 900)
{
	shared(_metadata, self, M_FADD, "mfadd");
}

/* Compare-and-swap increments from both nodes, retried on mismatch. */
TEST_F_TIMEOUT(sh, cswp, 900)
{
	shared(_metadata, self, M_CSWP, "cswp");
}

/* Ask node 2's server to exit (best effort). */
static void stop_server(void)
{
	struct sreq q = { .op = OP_QUIT };
	struct sockaddr_storage srv;
	struct srep r;
	int fd;

	if (atoi(rds_env("RDS_NODES", "1")) < 3 || !getenv("RDS_PEER2_ADDR"))
		return;
	fd = rds_bound_socket(AF_INET, 0, NULL);
	if (fd < 0)
		return;
	if (rds_mkaddr(AF_INET, peer2_str(), SRV_PORT, &srv))
		printf("# server on node 2 %s\n",
		       srv_call(fd, &srv, &q, &r, 3000) ? "not stopped" :
		       "stopped");
	close(fd);
}

static pid_t main_pid;

static void stop_at_exit(void)
{
	if (getpid() == main_pid)
		stop_server();
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 11 && !strcmp(argv[1], "hammer"))
		return hammer(argv + 2);
	rds_test_prepare();
	main_pid = getpid();
	atexit(stop_at_exit);
	return test_harness_run(argc, argv);
}
