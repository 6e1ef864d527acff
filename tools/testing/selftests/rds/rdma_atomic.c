// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_atomic - the four atomic cmsgs over the IB transport, between node 0
 * and a server on node 1 that owns the target words.
 *
 *   rdma_atomic serve ADDR PORT SECONDS   peer side (started by the tests
 *                                         with rds-peer): registers a page
 *                                         of 64-bit words with RDS_GET_MR,
 *                                         sets and reads them on request,
 *                                         and fetch-adds from several
 *                                         processes into a word of ours
 *   rdma_atomic [harness options]         node 0: the cases below
 *
 * Cases: hostile arguments (short cmsg, NULL/unaligned/kernel/unmapped
 * result address, two atomics, an atomic with a cookie cmsg) fail at
 * sendmsg() with the in-tree errno and report nothing; FADD and CSWP on a
 * word of the peer return the old value in our 8-byte buffer and leave
 * the right value there; unknown flag bits are ignored (as in-tree);
 * NOTIFY_ME, RDS_RECVERR and SILENT report what they must; a bad cookie,
 * a misaligned or out-of-range remote address end in RDS_RDMA_REMOTE_ERROR
 * with neither word touched; fetch-adds from several processes on both
 * nodes (ours into the peer's word, the peer's into ours, at the same
 * time) end exactly at the sum, every old value seen once; masked FADD and
 * CSWP on random values and masks equal a software reference (old value
 * and new memory), with rds_rdma's default choice of opcode and with
 * rds_ib_atomic_force_emul=Y (every masked op emulated by a CMP_AND_SWP
 * loop), also racing plain fetch-adds, with node 0's ib_atomic_emulated
 * counter counting exactly the emulated ops and ib_atomic_emulated_exhausted
 * none; an atomic on a use-once key of the peer succeeds once and kills
 * the key (the next one ends in RDS_RDMA_REMOTE_ERROR, the word unchanged),
 * by SEND_WITH_INV and with rds_ib_inv_force_local=Y by the owner's local
 * invalidation; over siw (iWARP, debug kernel) every atomic fails with
 * EOPNOTSUPP at sendmsg().
 *
 * rxe has plain atomics only (masked_atomic_cap NONE), so on rxe the
 * default choice already emulates every non-trivial masked op; the
 * native-masked case skips there.
 */
#include <sys/mman.h>
#include "rds_test.h"

#define SRV_PORT	18750
#define SRV_WORDS	512
#define SRV_MAGIC	0x41544f4dU	/* "ATOM" */
#define PARAM		"/sys/module/rds_rdma/parameters/rds_ib_atomic_force_emul"
#define NOTE_MS		60000

enum { OP_HELLO = 1, OP_SET, OP_GET, OP_HAMMER, OP_QUIT, OP_USE_ONCE };

struct sreq {
	uint32_t magic, op, seq, idx;
	uint64_t val, cookie, add;
	uint32_t procs, n, port, pad;
};

struct srep {
	uint32_t magic, op, seq;
	int32_t status;
	uint64_t val, cookie;
};

static const int atomic_types[] = {
	RDS_CMSG_ATOMIC_FADD, RDS_CMSG_ATOMIC_CSWP,
	RDS_CMSG_MASKED_ATOMIC_FADD, RDS_CMSG_MASKED_ATOMIC_CSWP,
};

/* ------------------------------------------------------------------ */
/* sendmsg with cmsgs, notifications                                   */

static ssize_t send_atomic(int fd, const struct sockaddr_storage *to,
			   int type, const struct rds_atomic_args *at,
			   size_t plen)
{
	static const char payload[16] = "atomic";
	return rds_send_cmsg(fd, to, payload, plen, type, at, sizeof(*at), 0);
}

static ssize_t send_cmsgs(int fd, const struct sockaddr_storage *to,
			  const void *payload, size_t plen,
			  const struct rds_cm *cm, int n)
{
	return rds_sendmsg_cm(fd, to, payload, plen, cm, n, 0);
}

/* The next notification on fd (data skipped): its status, -1 if none. */
static int wait_note(int fd, uint64_t *token)
{
	return rds_wait_note(fd, token, NOTE_MS);
}

/* Nothing (notification or data) is queued on fd. */
static bool quiet(int fd)
{
	char c;

	return recv(fd, &c, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
}

/* ------------------------------------------------------------------ */
/* the server on the peer                                              */

static uint64_t srv_words[SRV_WORDS] __attribute__((aligned(4096)));

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

static int get_mr(int fd, void *addr, size_t len, uint64_t *cookie)
{
	*cookie = 0;
	return rds_get_mr(fd, addr, len, cookie, RDS_RDMA_READWRITE);
}

/*
 * n fetch-adds of add on cookie + 8 * idx at to, one at a time, each
 * waited for: 0 if each succeeded and saw a larger old value than the one
 * before.  Old values are written to out (if set).
 */
static int fadd_run(const char *laddr, const struct sockaddr_storage *to,
		    uint64_t cookie, uint32_t idx, uint64_t add, uint64_t mask,
		    bool masked, uint32_t n, int out)
{
	static uint64_t res __attribute__((aligned(8)));
	struct rds_atomic_args at;
	uint64_t prev = 0;
	uint32_t i;
	int fd = bound4(laddr, 0);

	if (fd < 0)
		return 10;
	for (i = 0; i < n; i++) {
		memset(&at, 0, sizeof(at));
		at.cookie = cookie;
		at.remote_addr = 8 * idx;
		at.local_addr = (uintptr_t)&res;
		at.flags = RDS_RDMA_NOTIFY_ME | RDS_RDMA_SILENT;
		at.user_token = i;
		if (masked) {
			at.m_fadd.add = add;
			at.m_fadd.nocarry_mask = mask;
		} else {
			at.fadd.add = add;
		}
		res = ~0ULL;
		if (send_atomic(fd, to, masked ? RDS_CMSG_MASKED_ATOMIC_FADD :
				RDS_CMSG_ATOMIC_FADD, &at, 0) != 0)
			return 11;
		if (wait_note(fd, NULL) != RDS_RDMA_SUCCESS)
			return 12;
		if (i && res <= prev)
			return 13;
		prev = res;
		if (out >= 0 && write(out, &res, sizeof(res)) != sizeof(res))
			return 14;
	}
	close(fd);
	return 0;
}

static int hammer(const char *laddr, const struct sockaddr_storage *to,
		  const struct sreq *q)
{
	pid_t pids[16];
	uint32_t i, np = q->procs > 16 ? 16 : q->procs;
	int bad = 0, st;

	for (i = 0; i < np; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			alarm(240);
			_exit(fadd_run(laddr, to, q->cookie, q->idx, q->add, 0,
				       false, q->n, -1));
		}
	}
	for (i = 0; i < np; i++) {
		if (pids[i] < 0 || waitpid(pids[i], &st, 0) != pids[i] ||
		    !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	return bad;
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
			continue;	/* the SENDs of atomics */
		r.op = q.op;
		r.seq = q.seq;
		r.cookie = cookie;
		switch (q.op) {
		case OP_SET:
			if (q.idx < SRV_WORDS)
				((volatile uint64_t *)srv_words)[q.idx] = q.val;
			break;
		case OP_GET:
			if (q.idx < SRV_WORDS)
				r.val = ((volatile uint64_t *)srv_words)[q.idx];
			break;
		case OP_HAMMER: {
			struct sockaddr_storage to = from;

			rds_set_port(&to, q.port);
			r.status = hammer(addr, &to, &q);
			break;
		}
		case OP_USE_ONCE:
			/* a use-once key for the whole page (r.cookie) */
			r.status = rds_get_mr(fd, srv_words, sizeof(srv_words),
					      &r.cookie, RDS_RDMA_READWRITE |
					      RDS_RDMA_USE_ONCE) ? -errno : 0;
			break;
		case OP_QUIT:
			rds_sendto(fd, &r, sizeof(r), 0, &from);
			return 0;
		default:
			break;
		}
		rds_sendto(fd, &r, sizeof(r), 0, &from);
	}
}

/* ------------------------------------------------------------------ */
/* node 0                                                              */

static uint32_t seq;

/* One request to the server; 0 and *r on success. */
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
		ssize_t n;

		if (left <= 0)
			return -1;
		n = rds_recv_wait(fd, r, sizeof(*r), 0, NULL, left);
		if (n < 0)
			return -1;
		if (n == sizeof(*r) && r->magic == SRV_MAGIC &&
		    r->seq == q->seq)
			return 0;
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

/* Software reference: masked FADD, fields end at the set bits of mask. */
static uint64_t ref_fadd(uint64_t v, uint64_t add, uint64_t mask)
{
	uint64_t out = 0, fm;
	int lo = 0, hi;

	while (lo < 64) {
		for (hi = lo; hi < 63 && !((mask >> hi) & 1); hi++)
			;
		fm = hi - lo == 63 ? ~0ULL :
		     ((1ULL << (hi - lo + 1)) - 1) << lo;
		out |= ((v & fm) + (add & fm)) & fm;
		lo = hi + 1;
	}
	return out;
}

/* Masked CSWP: compare under cmask, then swap the bits of smask. */
static uint64_t ref_cswp(uint64_t v, uint64_t cmp, uint64_t swp,
			 uint64_t cmask, uint64_t smask)
{
	if ((v ^ cmp) & cmask)
		return v;
	return (v & ~smask) | (swp & smask);
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	uint64_t x = rnd_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rnd_state = x;
	return x;
}

/* A random mask: dense, sparse, one bit, all, or none. */
static uint64_t rnd_mask(void)
{
	switch (rnd() % 6) {
	case 0:
		return rnd();
	case 1:
		return rnd() & rnd() & rnd();
	case 2:
		return 1ULL << (rnd() % 64);
	case 3:
		return ~0ULL;
	case 4:
		return 0;
	default:
		return rnd() | rnd();
	}
}

static int param_set(const char *v)
{
	return rds_write_file(PARAM, v);
}

static bool only_soft_devices(void)
{
	char buf[64];

	/* rxe: no masked atomics; the test cluster has nothing else. */
	return rds_read_file("/sys/class/infiniband/rxe0/node_type", buf,
			     sizeof(buf)) == 0;
}

FIXTURE(at)
{
	int c;			/* requests to the server */
	int a;			/* atomics (and their notifications) */
	struct sockaddr_storage srv, ca, aa;
	uint64_t cookie;	/* the server's page of words */
	uint64_t *res;		/* our 8-byte result buffers */
	char *hole;		/* an unmapped page */
};

FIXTURE_SETUP(at)
{
	struct sreq q = { .op = OP_HELLO };
	struct srep r;
	char cmd[256];
	int i;

	if (!rds_have_peer())
		SKIP(return, "no peer");
	if (rds_intree() || !strcmp(rds_env("RDS_PEER_MODS", "ours"), "intree"))
		SKIP(return, "in-tree atomics do not work over rxe (masked opcodes only)");
	ASSERT_NE(0, rds_mkaddr(AF_INET, rds_peer_str(AF_INET), SRV_PORT,
				&self->srv));
	self->c = rds_bound_socket(AF_INET, 0, &self->ca);
	ASSERT_LE(0, self->c);
	self->a = rds_bound_socket(AF_INET, 0, &self->aa);
	ASSERT_LE(0, self->a);
	self->res = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->res);
	self->hole = rds_hole_page();
	ASSERT_NE(NULL, self->hole);

	/* A server from an earlier case may still be there. */
	if (srv_call(self->c, &self->srv, &q, &r, 3000)) {
		snprintf(cmd, sizeof(cmd),
			 "rds-peer 1 '/tests/rdma_atomic serve %s %d 120 >/dev/null 2>&1 &'",
			 rds_peer_str(AF_INET), SRV_PORT);
		ASSERT_EQ(0, system(cmd));
		for (i = 0; i < 20; i++) {
			q.op = OP_HELLO;
			if (!srv_call(self->c, &self->srv, &q, &r, 3000))
				break;
		}
		ASSERT_GT(20, i) TH_LOG("the server on node 1 does not answer");
	}
	self->cookie = r.cookie;
	ASSERT_NE(0, self->cookie);
	rnd_state = time(NULL) | 1;
	TH_LOG("seed %llu", (unsigned long long)rnd_state);
}

FIXTURE_TEARDOWN(at)
{
	param_set("N");
	if (self->c > 0)
		close(self->c);
	if (self->a > 0)
		close(self->a);
}

static struct rds_atomic_args args_for(FIXTURE_DATA(at) *self, uint32_t idx,
				       uint64_t *res)
{
	struct rds_atomic_args at;

	memset(&at, 0, sizeof(at));
	at.cookie = self->cookie;
	at.remote_addr = 8 * idx;
	at.local_addr = (uintptr_t)res;
	at.flags = RDS_RDMA_NOTIFY_ME;
	at.user_token = 0x5eed0000 + idx;
	return at;
}

/* Malformed atomics fail at sendmsg() and leave no trace. */
TEST_F(at, hostile_args)
{
	struct rds_atomic_args at;
	rds_rdma_cookie_t ck = self->cookie;
	unsigned int i;
	uint64_t v;

	ASSERT_EQ(0, srv_set(self->c, &self->srv, 1, 1000));
	for (i = 0; i < 4; i++) {
		int t = atomic_types[i];

		TH_LOG("type %d", t);
		at = args_for(self, 1, self->res);
		at.fadd.add = 1;
		at.local_addr = 0;
		EXPECT_ERRNO(send_atomic(self->a, &self->srv, t, &at, 8), EFAULT);
		at.local_addr = (uintptr_t)self->res + 4;
		EXPECT_ERRNO(send_atomic(self->a, &self->srv, t, &at, 8), EFAULT);
		at.local_addr = (uintptr_t)self->res + 1;
		EXPECT_ERRNO(send_atomic(self->a, &self->srv, t, &at, 8), EFAULT);
		at.local_addr = (uintptr_t)RDS_KERNEL_PTR;
		EXPECT_ERRNO(send_atomic(self->a, &self->srv, t, &at, 8), EFAULT);
		at.local_addr = (uintptr_t)self->hole;
		EXPECT_ERRNO(send_atomic(self->a, &self->srv, t, &at, 8), EFAULT);
		at.local_addr = (uintptr_t)self->res;
		{	/* short cmsgs */
			struct rds_cm cm = { t, &at, sizeof(at), sizeof(at) - 8 };

			EXPECT_ERRNO(send_cmsgs(self->a, &self->srv, "x", 1,
						&cm, 1), EINVAL);
			cm.clen = 1;
			EXPECT_ERRNO(send_cmsgs(self->a, &self->srv, "x", 1,
						&cm, 1), EINVAL);
		}
		{	/* two atomics; an atomic and a cookie */
			struct rds_cm cm[2] = {
				{ t, &at, sizeof(at) },
				{ RDS_CMSG_ATOMIC_FADD, &at, sizeof(at) },
			};

			EXPECT_ERRNO(send_cmsgs(self->a, &self->srv, "x", 1,
						cm, 2), EINVAL);
			cm[1].type = RDS_CMSG_RDMA_DEST;
			cm[1].data = &ck;
			cm[1].len = sizeof(ck);
			EXPECT_ERRNO(send_cmsgs(self->a, &self->srv, "x", 1,
						cm, 2), EINVAL);
		}
	}
	/* nothing happened: no notification, the word is as it was */
	EXPECT_TRUE(quiet(self->a));
	ASSERT_EQ(0, srv_get(self->c, &self->srv, 1, &v));
	EXPECT_EQ(1000, v);
	EXPECT_TRUE(quiet(self->a));
}

/* One FADD or CSWP and what it must leave: old value here, new there. */
struct step {
	int type;
	uint64_t a, b;		/* add (FADD); compare, swap (CSWP) */
	size_t plen;		/* payload sent with it */
	uint64_t old, now;	/* the result buffer, the peer's word */
};

static void run_step(struct __test_metadata *_metadata,
		     FIXTURE_DATA(at) *self, uint32_t idx,
		     const struct step *st)
{
	struct rds_atomic_args at = args_for(self, idx, self->res);
	uint64_t v, tok;

	TH_LOG("type %d a %#llx b %#llx", st->type, (unsigned long long)st->a,
	       (unsigned long long)st->b);
	if (st->type == RDS_CMSG_ATOMIC_FADD) {
		at.fadd.add = st->a;
	} else {
		at.cswp.compare = st->a;
		at.cswp.swap = st->b;
	}
	*self->res = 0xdeadbeef;
	ASSERT_EQ(st->plen, send_atomic(self->a, &self->srv, st->type, &at,
					st->plen));
	ASSERT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, &tok));
	EXPECT_EQ(at.user_token, tok);
	EXPECT_EQ(st->old, *self->res);
	ASSERT_EQ(0, srv_get(self->c, &self->srv, idx, &v));
	EXPECT_EQ(st->now, v);
}

/* FADD and CSWP on a word of the peer: old value here, new value there. */
TEST_F(at, fadd_cswp)
{
	const uint64_t k = 0x100000001ULL;
	unsigned int i, j;

	for (i = 0; i < 3; i++) {
		uint32_t idx = 2 + i * 37;
		uint64_t base = (uint64_t)i << 62 | 0x1234567800ULL | i;
		const struct step steps[] = {
			{ RDS_CMSG_ATOMIC_FADD, k, 0, sizeof("atomic") - 1,
			  base, base + k },
			/* CSWP that matches */
			{ RDS_CMSG_ATOMIC_CSWP, base + k, ~base, 3,
			  base + k, ~base },
			/* CSWP that does not: old value, word unchanged */
			{ RDS_CMSG_ATOMIC_CSWP, base, 42, 3, ~base, ~base },
			/* negative add wraps as unsigned */
			{ RDS_CMSG_ATOMIC_FADD, (uint64_t)-5, 0, 0,
			  ~base, ~base - 5 },
		};

		ASSERT_EQ(0, srv_set(self->c, &self->srv, idx, base));
		for (j = 0; j < sizeof(steps) / sizeof(steps[0]); j++)
			run_step(_metadata, self, idx, &steps[j]);
	}
	EXPECT_TRUE(quiet(self->a));
}

/* Flags: unknown bits ignored, SILENT, no NOTIFY_ME, RDS_RECVERR. */
TEST_F(at, flags)
{
	uint64_t *res = self->res, v = 0;
	struct rds_atomic_args at;
	int one = 1, i;

	ASSERT_EQ(0, srv_set(self->c, &self->srv, 3, 10));
	/* unknown flag bits: ignored, as in-tree */
	at = args_for(self, 3, res);
	at.flags |= 0xffffffffffff0000ULL | RDS_RDMA_FENCE | RDS_RDMA_USE_ONCE;
	at.fadd.add = 1;
	ASSERT_LE(0, send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD,
				 &at, 4));
	ASSERT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, NULL));
	EXPECT_EQ(10, *res);

	/* SILENT with no payload: no SEND at all, still done and notified */
	at = args_for(self, 3, res);
	at.flags |= RDS_RDMA_SILENT;
	at.fadd.add = 2;
	ASSERT_EQ(0, send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD,
				 &at, 0));
	ASSERT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, NULL));
	EXPECT_EQ(11, *res);
	ASSERT_EQ(0, srv_get(self->c, &self->srv, 3, &v));
	EXPECT_EQ(13, v);

	/* no NOTIFY_ME: done, nothing reported */
	at = args_for(self, 3, res);
	at.flags = 0;
	at.fadd.add = 4;
	ASSERT_LE(0, send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD,
				 &at, 1));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, srv_get(self->c, &self->srv, 3, &v));
		if (v == 17)
			break;
		rds_msleep(100);
	}
	EXPECT_EQ(17, v);

	/* RDS_RECVERR: success is not reported */
	ASSERT_OK(setsockopt(self->a, SOL_RDS, RDS_RECVERR, &one, sizeof(one)));
	at.fadd.add = 8;
	ASSERT_LE(0, send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD,
				 &at, 1));
	for (i = 0; i < 100; i++) {
		ASSERT_EQ(0, srv_get(self->c, &self->srv, 3, &v));
		if (v == 25)
			break;
		rds_msleep(100);
	}
	EXPECT_EQ(25, v);
	rds_msleep(200);
	EXPECT_TRUE(quiet(self->a));
}

/*
 * A failed work request drops the connection.  A message sent before it
 * is back may meet the old one's end and report RDS_RDMA_DROPPED (ops are
 * never sent twice): wait for a round trip to the server first.
 */
static int reconnected(FIXTURE_DATA(at) *self)
{
	uint64_t v;

	return srv_get(self->c, &self->srv, 0, &v);
}

#define FORCE_LOCAL "/sys/module/rds_rdma/parameters/rds_ib_inv_force_local"

/*
 * An atomic expected to fail on a dead key; its status.  The failure
 * drops the connection, and the disconnect can flush the op before the
 * requester reads the NAK (rxe 6.12 drains the responses of a QP in
 * error, seen once in a full check): RDS_RDMA_DROPPED then proves
 * nothing.  Wait for the connection and try again, at most 3 times; the
 * result word must never change meanwhile.
 */
static int dead_atomic(struct __test_metadata *_metadata,
		       FIXTURE_DATA(at) *self, int type,
		       struct rds_atomic_args *at)
{
	uint64_t *res = self->res;
	int st = -1, try;

	for (try = 0; try < 3; try++) {
		at->user_token++;
		*res = 0x5555;
		if (send_atomic(self->a, &self->srv, type, at, 2) < 0) {
			TH_LOG("dead-key atomic: sendmsg: %s", strerror(errno));
			return -1;
		}
		st = wait_note(self->a, NULL);
		if (st != RDS_RDMA_DROPPED)
			break;
		TH_LOG("dead-key atomic dropped by a reconnect: once more");
		EXPECT_EQ(0x5555, *res);
		if (reconnected(self)) {
			TH_LOG("dead-key atomic: no round trip after the drop");
			return -1;
		}
	}
	return st;
}

/*
 * An atomic on a use-once key: its SEND is fenced behind the atomic, the
 * key dies when the message arrives, a second atomic on it fails.
 */
TEST_F_TIMEOUT(at, use_once, 600)
{
	const uint64_t base = 0x7700000000ULL, k = 5;
	uint64_t *res = self->res, v;
	struct rds_atomic_args at;
	struct sreq q = { .op = OP_USE_ONCE };
	struct srep r;
	long long inv0;
	int mode, t;

	for (mode = 0; mode < 2; mode++) {
		/* 1: we never send SEND_WITH_INV, the owner kills the key */
		ASSERT_EQ(0, rds_write_file(FORCE_LOCAL, mode ? "Y" : "N"));
		for (t = 0; t < 2; t++) {
			uint32_t idx = 40 + 2 * mode + t;
			int type = t ? RDS_CMSG_ATOMIC_CSWP :
				       RDS_CMSG_ATOMIC_FADD;

			TH_LOG("%s, %s", mode ? "local invalidation" :
			       "SEND_WITH_INV", t ? "CSWP" : "FADD");
			ASSERT_EQ(0, srv_set(self->c, &self->srv, idx, base));
			ASSERT_EQ(0, srv_call(self->c, &self->srv, &q, &r,
					      NOTE_MS));
			ASSERT_EQ(0, r.status);
			ASSERT_NE(0, r.cookie);
			inv0 = rds_counter("ib_rdma_send_inv");
			at = args_for(self, idx, res);
			at.cookie = r.cookie;
			at.m_cswp.compare = base;	/* fadd.add for FADD */
			at.m_cswp.swap = t ? base + k : 0;
			if (!t)
				at.fadd.add = k;
			*res = 0x5555;
			ASSERT_LE(0, send_atomic(self->a, &self->srv, type, &at,
						 2));
			EXPECT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, NULL));
			EXPECT_EQ(base, *res);
			/*
			 * SEND_WITH_INV needs a connection that negotiated
			 * it: not one made while a test had forced local
			 * invalidation.  The FADD's second atomic (REMOTE_ERROR)
			 * rebuilt the connection before the CSWP.
			 */
			if (inv0 >= 0 && (mode || t))
				EXPECT_EQ(mode ? 0 : 1,
					  rds_counter("ib_rdma_send_inv") - inv0);
			/* the owner got the message: the key is dead */
			ASSERT_EQ(0, srv_get(self->c, &self->srv, idx, &v));
			EXPECT_EQ(base + k, v);
			EXPECT_EQ(RDS_RDMA_REMOTE_ERROR,
				  dead_atomic(_metadata, self, type, &at));
			ASSERT_EQ(0, srv_get(self->c, &self->srv, idx, &v));
			EXPECT_EQ(base + k, v);
		}
	}
	rds_write_file(FORCE_LOCAL, "N");
	EXPECT_TRUE(quiet(self->a));
}

#define KICK_MS "/sys/module/rds_rdma/parameters/rds_ib_rdma_kick_ms"

/*
 * The SEND behind an atomic on a use-once key is fenced, and counts as
 * outstanding for the RDMA op watchdog until its slot is released (rxe
 * 6.1 can lose the requester's wake-up of a fenced WR).  Once the op and
 * its message are done the watchdog must be idle: with a 50 ms period,
 * no kick in the next 600 ms (an unpaired count would kick every period
 * and drop the connection after rds_ib_rdma_timeout_ms).
 */
/* One use-once FADD of 3 on word 48, done and its message received. */
static int use_once_fadd(struct __test_metadata *_metadata,
			 FIXTURE_DATA(at) *self, uint64_t base)
{
	struct sreq q = { .op = OP_USE_ONCE };
	struct rds_atomic_args at;
	struct srep r;
	uint64_t v;

	if (srv_set(self->c, &self->srv, 48, base) ||
	    srv_call(self->c, &self->srv, &q, &r, NOTE_MS) || r.status)
		return -1;
	at = args_for(self, 48, self->res);
	at.cookie = r.cookie;
	at.fadd.add = 3;
	*self->res = 0x5555;
	if (send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD, &at, 2) < 0)
		return -1;
	EXPECT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, NULL));
	EXPECT_EQ(base, *self->res);
	/* a round trip: the owner got the message */
	if (srv_get(self->c, &self->srv, 48, &v))
		return -1;
	EXPECT_EQ(base + 3, v);
	return 0;
}

TEST_F_TIMEOUT(at, use_once_idle, 300)
{
	const uint64_t base = 0x7800000000ULL;
	long long k0 = -1, k1 = -1, t0, t1;
	char old[32] = "";
	int i, ret = 0;

	if (rds_read_file(KICK_MS, old, sizeof(old)))
		SKIP(return, "no rds_ib_rdma_kick_ms (not our rds_rdma)");
	ASSERT_EQ(0, rds_write_file(KICK_MS, "50"));
	t0 = rds_counter("ib_rdma_timeouts");
	for (i = 0; i < 3 && !ret; i++)
		ret = use_once_fadd(_metadata, self, base + i);
	if (!ret) {
		rds_msleep(300);
		k0 = rds_counter("ib_rdma_kicks");
		rds_msleep(600);
		k1 = rds_counter("ib_rdma_kicks");
	}
	t1 = rds_counter("ib_rdma_timeouts");
	/* before any assertion: the period goes back whatever happened */
	rds_write_file(KICK_MS, old);
	ASSERT_EQ(0, ret) TH_LOG("use-once FADD %d failed", i);
	TH_LOG("ib_rdma_kicks %lld -> %lld", k0, k1);
	EXPECT_LE(0, k0);
	EXPECT_EQ(k0, k1);
	EXPECT_EQ(t0, t1);
	EXPECT_TRUE(quiet(self->a));
}

/* Bad keys and remote addresses: REMOTE_ERROR, nothing written. */
TEST_F_TIMEOUT(at, remote_errors, 600)
{
	/* the operands: m_cswp's four words (fadd.add is the first) */
	static const struct {
		const char *what;
		uint64_t cookie_xor, remote_addr, op[4];
	} bad[] = {
		{ "a key the peer never handed out (another MR index)",
		  0x00ffff00ULL, 8 * 4, { 77, 1, ~0ULL, 0xff } },
		{ "misaligned remote address", 0, 8 * 4 + 4, { 1 } },
		{ "past the end of the MR", 0, sizeof(srv_words), { 1 } },
	};
	uint64_t *res = self->res, v;
	struct rds_atomic_args at;
	int one = 1, st;
	unsigned int i, j;

	ASSERT_EQ(0, srv_set(self->c, &self->srv, 4, 77));
	ASSERT_EQ(0, srv_set(self->c, &self->srv, 5, 88));
	for (i = 0; i < 4; i++) {
		int t = atomic_types[i];

		TH_LOG("type %d", t);
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			TH_LOG("%s", bad[j].what);
			at = args_for(self, 4, res);
			at.cookie ^= bad[j].cookie_xor;
			at.remote_addr = bad[j].remote_addr;
			at.m_cswp.compare = bad[j].op[0];
			at.m_cswp.swap = bad[j].op[1];
			at.m_cswp.compare_mask = bad[j].op[2];
			at.m_cswp.swap_mask = bad[j].op[3];
			st = dead_atomic(_metadata, self, t, &at);
			EXPECT_EQ(RDS_RDMA_REMOTE_ERROR, st);
			EXPECT_EQ(0x5555, *res);
			ASSERT_EQ(0, reconnected(self));
		}
	}
	/* RDS_RECVERR without NOTIFY_ME: the failure is reported */
	ASSERT_OK(setsockopt(self->a, SOL_RDS, RDS_RECVERR, &one, sizeof(one)));
	at = args_for(self, 5, res);
	at.flags = 0;
	at.cookie = self->cookie ^ 0x00ffff00ULL;
	at.fadd.add = 1;
	EXPECT_EQ(RDS_RDMA_REMOTE_ERROR,
		  dead_atomic(_metadata, self, RDS_CMSG_ATOMIC_FADD, &at));
	ASSERT_EQ(0, reconnected(self));
	/* the words are untouched, and the connection came back */
	ASSERT_EQ(0, srv_get(self->c, &self->srv, 4, &v));
	EXPECT_EQ(77, v);
	ASSERT_EQ(0, srv_get(self->c, &self->srv, 5, &v));
	EXPECT_EQ(88, v);
	/* and a good atomic works again */
	at = args_for(self, 5, res);
	at.fadd.add = 1;
	ASSERT_LE(0, send_atomic(self->a, &self->srv, RDS_CMSG_ATOMIC_FADD,
				 &at, 2));
	EXPECT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, NULL));
	EXPECT_EQ(88, *res);
	EXPECT_TRUE(quiet(self->a));
}

/*
 * Masked ops on random values and masks against the reference.  Returns
 * the number of mismatches.
 */
static int masked_random(struct __test_metadata *_metadata,
			 FIXTURE_DATA(at) *self, int rounds, int *nontrivial)
{
	uint64_t *res = self->res, v, want, got, tok;
	struct rds_atomic_args at;
	int i, bad = 0;

	*nontrivial = 0;
	for (i = 0; i < rounds; i++) {
		bool fadd = i & 1;
		uint32_t idx = 8 + (i % 16);

		v = rnd();
		if (rnd() % 4 == 0)
			v = rnd() & rnd();
		ASSERT_EQ(0, srv_set(self->c, &self->srv, idx, v));
		at = args_for(self, idx, res);
		at.user_token = i;
		if (fadd) {
			at.m_fadd.add = rnd() % 3 ? rnd() : ~0ULL;
			at.m_fadd.nocarry_mask = rnd_mask();
			want = ref_fadd(v, at.m_fadd.add,
					at.m_fadd.nocarry_mask);
			*nontrivial += at.m_fadd.nocarry_mask != 0;
		} else {
			at.m_cswp.compare_mask = rnd_mask();
			at.m_cswp.swap_mask = rnd_mask();
			at.m_cswp.swap = rnd();
			/* half of them compare equal under the mask */
			at.m_cswp.compare = rnd() % 2 ?
				v ^ (rnd() & ~at.m_cswp.compare_mask) : rnd();
			want = ref_cswp(v, at.m_cswp.compare, at.m_cswp.swap,
					at.m_cswp.compare_mask,
					at.m_cswp.swap_mask);
			*nontrivial += at.m_cswp.compare_mask != ~0ULL ||
				       at.m_cswp.swap_mask != ~0ULL;
		}
		*res = ~v;
		ASSERT_LE(0, send_atomic(self->a, &self->srv, fadd ?
					 RDS_CMSG_MASKED_ATOMIC_FADD :
					 RDS_CMSG_MASKED_ATOMIC_CSWP, &at,
					 i % 3 ? 8 : 0));
		ASSERT_EQ(RDS_RDMA_SUCCESS, wait_note(self->a, &tok));
		EXPECT_EQ((uint64_t)i, tok);
		ASSERT_EQ(0, srv_get(self->c, &self->srv, idx, &got));
		if (*res != v || got != want) {
			bad++;
			TH_LOG("%s v %#llx add/cmp %#llx swap %#llx masks %#llx %#llx: old %#llx new %#llx, want %#llx",
			       fadd ? "FADD" : "CSWP",
			       (unsigned long long)v,
			       (unsigned long long)at.m_cswp.compare,
			       (unsigned long long)(fadd ? 0 : at.m_cswp.swap),
			       (unsigned long long)(fadd ? at.m_fadd.nocarry_mask :
						    at.m_cswp.compare_mask),
			       (unsigned long long)(fadd ? 0 : at.m_cswp.swap_mask),
			       (unsigned long long)*res,
			       (unsigned long long)got,
			       (unsigned long long)want);
		}
	}
	return bad;
}

/* The software reference itself, on fixed cases. */
TEST(reference)
{
	EXPECT_EQ(0x00ff00ffULL + 1, ref_fadd(0x00ff00ffULL, 1, 0));
	EXPECT_EQ(0ULL, ref_fadd(~0ULL, 1, 0));
	/* 8-bit fields: the carry out of each dies */
	EXPECT_EQ(0x01ffff00ULL, ref_fadd(0x00ffffffULL, 0x01000001ULL,
					  0x8080808080808080ULL));
	EXPECT_EQ(~0ULL - 1, ref_fadd(~0ULL, 1, ~0ULL));
	EXPECT_EQ(0x00ULL, ref_fadd(0x0f, 1, 0x08));
	EXPECT_EQ(0x10ULL, ref_fadd(0x0f, 1, 0x10));
	EXPECT_EQ(0ULL, ref_fadd(~0ULL >> 1, 1, 1ULL << 62));
	EXPECT_EQ(1ULL << 63, ref_fadd(~0ULL >> 1, 1, 1ULL << 63));
	EXPECT_EQ(7ULL, ref_cswp(7, 8, 9, ~0ULL, ~0ULL));
	EXPECT_EQ(9ULL, ref_cswp(8, 8, 9, ~0ULL, ~0ULL));
	EXPECT_EQ(0xf9ULL, ref_cswp(0xf8, 0x08, 0x09, 0x0f, 0x0f));
	EXPECT_EQ(0xf8ULL, ref_cswp(0xf8, 0x07, 0x09, 0x0f, 0x0f));
	EXPECT_EQ(0x19ULL, ref_cswp(0xf8, 0, 0x19, 0, ~0ULL));
}

/*
 * Run masked_random() and check what the emulation counters of node 0 say:
 * emulated is how many ops should have gone through the loop.
 */
static void masked_check(struct __test_metadata *_metadata,
			 FIXTURE_DATA(at) *self, bool forced)
{
	long long e0 = rds_counter("ib_atomic_emulated");
	long long x0 = rds_counter("ib_atomic_emulated_exhausted");
	long long r0 = rds_counter("ib_atomic_emulated_retries");
	int nontrivial, rounds = 96;

	ASSERT_EQ(0, param_set(forced ? "Y" : "N"));
	EXPECT_EQ(0, masked_random(_metadata, self, rounds, &nontrivial));
	EXPECT_TRUE(quiet(self->a));
	if (e0 < 0) {
		TH_LOG("no ib_atomic_emulated counter: not checked");
		return;
	}
	TH_LOG("%d of %d masked ops not trivial; emulated %lld, retries %lld",
	       nontrivial, rounds, rds_counter("ib_atomic_emulated") - e0,
	       rds_counter("ib_atomic_emulated_retries") - r0);
	/* rxe has no masked opcodes: every non-trivial one is emulated */
	EXPECT_EQ(forced ? rounds : only_soft_devices() ? nontrivial : 0,
		  rds_counter("ib_atomic_emulated") - e0);
	EXPECT_EQ(0, rds_counter("ib_atomic_emulated_exhausted") - x0);
}

/* rds_rdma's own choice: plain opcodes for trivial masks, else emulated. */
TEST_F_TIMEOUT(at, masked_default, 900)
{
	masked_check(_metadata, self, false);
}

/* Every masked op through the emulation loop. */
TEST_F_TIMEOUT(at, masked_emulated, 900)
{
	masked_check(_metadata, self, true);
}

/* Native masked opcodes need a device that has them. */
TEST_F(at, masked_native)
{
	int nontrivial;

	if (only_soft_devices())
		SKIP(return, "rxe has no masked atomics (masked_atomic_cap NONE)");
	ASSERT_EQ(0, param_set("N"));
	EXPECT_EQ(0, masked_random(_metadata, self, 96, &nontrivial));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * procs processes here fetch-add 1 to the peer's word n times each (the
 * odd ones with MASKED FADD if masked: emulated), while the server's
 * processes fetch-add 1 into a word of ours: both end at the sum, and
 * every old value we saw is there exactly once.
 */
static void many(struct __test_metadata *_metadata, FIXTURE_DATA(at) *self,
		 int procs, int n, bool masked, bool forced)
{
	static uint64_t ours[8] __attribute__((aligned(4096)));
	uint64_t our_cookie, v, *seen;
	struct sreq q = { .op = OP_HAMMER };
	struct srep r;
	int p[2], i, st, bad = 0, m;
	pid_t pids[8];
	long long e0 = rds_counter("ib_atomic_emulated");
	long long r0 = rds_counter("ib_atomic_emulated_retries");
	long long x0 = rds_counter("ib_atomic_emulated_exhausted");
	int mr_fd;

	ASSERT_EQ(0, param_set(forced ? "Y" : "N"));
	ASSERT_EQ(0, srv_set(self->c, &self->srv, 6, 0));
	mr_fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, mr_fd);
	ours[1] = 1000;
	ASSERT_OK(get_mr(mr_fd, ours, sizeof(ours), &our_cookie));
	ASSERT_OK(pipe(p));
	seen = calloc(procs * n, sizeof(*seen));
	ASSERT_NE(NULL, seen);

	for (i = 0; i < procs; i++) {
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(p[0]);
			alarm(500);
			_exit(fadd_run(rds_local_str(AF_INET), &self->srv,
				       self->cookie, 6, 1, 1ULL << 63,
				       masked && (i & 1), n, p[1]));
		}
	}
	close(p[1]);
	/* the peer's processes, at the same time, into ours[1] */
	q.cookie = our_cookie;
	q.idx = 1;
	q.add = 1;
	q.procs = procs;
	q.n = n;
	q.port = rds_port_of(&self->ca);
	q.magic = SRV_MAGIC;
	q.seq = ++seq;
	ASSERT_EQ(sizeof(q), rds_sendto(self->c, &q, sizeof(q), 0, &self->srv));

	for (m = 0; m < procs * n; m++) {
		ssize_t k = read(p[0], &seen[m], sizeof(seen[m]));

		if (k != sizeof(seen[m]))
			break;
	}
	for (i = 0; i < procs; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &st, 0));
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			TH_LOG("process %d: status %#x", i, st);
			bad++;
		}
	}
	close(p[0]);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(procs * n, m);
	qsort(seen, m, sizeof(*seen), cmp_u64);
	for (i = 0; i < m; i++)
		if (seen[i] != (uint64_t)i) {
			TH_LOG("old value %d is %llu", i,
			       (unsigned long long)seen[i]);
			bad++;
			break;
		}
	EXPECT_EQ(0, bad);

	/* the server's reply to OP_HAMMER (it answers nothing before) */
	for (i = 0; i < 10; i++) {
		ssize_t k = rds_recv_wait(self->c, &r, sizeof(r), 0, NULL,
					  240000);

		ASSERT_LT(0, k);
		if (k == sizeof(r) && r.op == OP_HAMMER && r.seq == q.seq)
			break;
	}
	ASSERT_GT(10, i);
	EXPECT_EQ(0, r.status);
	ASSERT_EQ(0, srv_get(self->c, &self->srv, 6, &v));
	EXPECT_EQ((uint64_t)procs * n, v);
	EXPECT_EQ(1000 + (uint64_t)procs * n,
		  __atomic_load_n(&ours[1], __ATOMIC_SEQ_CST));
	EXPECT_EQ(0, ours[0]);
	EXPECT_EQ(0, ours[2]);
	free(seen);
	close(mr_fd);
	if (e0 >= 0) {
		TH_LOG("emulated %lld, retries %lld, exhausted %lld",
		       rds_counter("ib_atomic_emulated") - e0,
		       rds_counter("ib_atomic_emulated_retries") - r0,
		       rds_counter("ib_atomic_emulated_exhausted") - x0);
		EXPECT_EQ(masked ? (procs / 2) * n : 0,
			  rds_counter("ib_atomic_emulated") - e0);
		EXPECT_EQ(0, rds_counter("ib_atomic_emulated_exhausted") - x0);
	}
}

TEST_F_TIMEOUT(at, fadd_many, 900)
{
	many(_metadata, self, 4, 150, false, false);
}

/* Emulated masked FADDs racing plain ones on the same word. */
TEST_F_TIMEOUT(at, fadd_many_emulated, 900)
{
	many(_metadata, self, 4, 100, true, true);
}

/* No atomics on iWARP: EOPNOTSUPP at sendmsg(), nothing reported. */
TEST(siw_eopnotsupp)
{
	const char *l = getenv("RDS_SIW_LOCAL_ADDR"), *p = getenv("RDS_SIW_PEER_ADDR");
	static uint64_t res __attribute__((aligned(8)));
	struct sockaddr_storage ls, ps;
	struct rds_atomic_args at;
	int fd, one = 1;
	unsigned int i;

	if (!l || !p)
		SKIP(return, "no siw link (debug kernel only)");
	ASSERT_NE(0, rds_mkaddr(AF_INET, l, 0, &ls));
	ASSERT_NE(0, rds_mkaddr(AF_INET, p, SRV_PORT, &ps));
	fd = rds_socket();
	ASSERT_LE(0, fd);
	ASSERT_OK(bind(fd, (struct sockaddr *)&ls, rds_sslen(&ls)));
	ASSERT_OK(setsockopt(fd, SOL_RDS, RDS_RECVERR, &one, sizeof(one)));
	for (i = 0; i < 4; i++) {
		memset(&at, 0, sizeof(at));
		at.cookie = 0x100000001ULL;
		at.local_addr = (uintptr_t)&res;
		at.flags = RDS_RDMA_NOTIFY_ME;
		at.fadd.add = 1;
		res = 99;
		EXPECT_ERRNO(send_atomic(fd, &ps, atomic_types[i], &at, 8),
			     EOPNOTSUPP);
		at.flags = RDS_RDMA_SILENT;
		EXPECT_ERRNO(send_atomic(fd, &ps, atomic_types[i], &at, 0),
			     EOPNOTSUPP);
		EXPECT_EQ(99, res);
	}
	/* ordinary messages still go, and nothing was reported */
	EXPECT_EQ(1, rds_sendto(fd, "x", 1, 0, &ps));
	rds_msleep(500);
	EXPECT_TRUE(quiet(fd));
	close(fd);
}

/* Ask a server left by the cases to exit (best effort). */
static int stop_server(void)
{
	struct sreq q = { .op = OP_QUIT };
	struct sockaddr_storage srv;
	struct srep r;
	int fd, ret;

	if (!rds_have_peer() || rds_intree() ||
	    !strcmp(rds_env("RDS_PEER_MODS", "ours"), "intree"))
		return 0;
	fd = rds_bound_socket(AF_INET, 0, NULL);
	if (fd < 0 || !rds_mkaddr(AF_INET, rds_peer_str(AF_INET), SRV_PORT,
				  &srv))
		return 1;
	ret = srv_call(fd, &srv, &q, &r, 3000);
	close(fd);
	return ret ? 1 : 0;
}

static pid_t main_pid;

static void stop_at_exit(void)
{
	if (getpid() == main_pid)
		printf("# server on node 1 %s\n",
		       stop_server() ? "not stopped" : "stopped");
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 2 && !strcmp(argv[1], "stop"))
		return stop_server();
	rds_test_prepare();
	/* test_harness_run() exits; its socket keeps rds_rdma on node 1. */
	main_pid = getpid();
	atexit(stop_at_exit);
	return test_harness_run(argc, argv);
}
