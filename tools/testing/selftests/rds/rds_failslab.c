// SPDX-License-Identifier: GPL-2.0
/*
 * rds_failslab.c - slab and page allocation failures in our syscalls, then
 * (issue 10 item 4, the part task-filtered failslab reaches).
 *
 * Needs CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS (the debug
 * tier); skips where /sys/kernel/debug/failslab is missing (and the pages
 * case where CONFIG_FAIL_PAGE_ALLOC's fail_page_alloc is).  failslab is
 * scoped to the test process: task-filter=Y, ignore-gfp-wait=N, verbose=0,
 * and /proc/self/make-it-fail=1 only around the calls under test, so only
 * allocations made in this task's context fail (socket(), bind(),
 * setsockopt(), sendmsg() with and without RDMA, MAP and atomic cmsgs,
 * GET_MR, GET_MR_FOR_DEST, FREE_MR, recvmsg(), poll(), close(), and the
 * transmit that sendmsg() runs inline).  Connection set-up, receive refill
 * and completions run in workqueue, softirq or interrupt context, which
 * the task filter does not reach.
 *
 * One iteration, against a server on node 1 (this program, "serve"):
 * socket, RDS_RECVERR, SO_RCVBUF, SO_SNDBUF, bind, connect, an echo
 * request (echoed whole by the server), GET_MR, GET_MR_FOR_DEST, FREE_MR
 * of both, a use-once key sent with RDS_CMSG_RDMA_MAP for the server to
 * WRITE into, an RDMA WRITE (RDS_CMSG_RDMA_ARGS) and an atomic FADD into
 * the server's key with RDS_RDMA_NOTIFY_ME, poll, receive until every
 * accepted request is answered, close.  Every call succeeds or fails with
 * an errno of its allowed set; an accepted echo comes back exactly once
 * with its content; an accepted MAP either gets the server's data in
 * place when its completing message arrives, or (registration failed
 * after sendmsg) an RDS_RDMA_OTHER_ERROR notification; an accepted
 * WRITE/FADD gets exactly one notification, a refused one none; at the
 * end the server's counter word holds exactly the sum of the FADDs
 * notified SUCCESS.  Every wait is bounded.
 *
 *   random     failslab at 5%, 20% and 50% for this task, ITERS iterations
 *              each (RDS_FAILSLAB_ITERS, default 40); every other
 *              iteration injects only after connect()
 *   pages      fail_page_alloc at 20% and 50% for this task (every order,
 *              sleeping allocations too, not __GFP_HIGHMEM: user pages),
 *              failslab off; the same iterations and checks, and at
 *              least one call must have failed (CONFIG_FAIL_PAGE_ALLOC)
 *   nth        /proc/thread-self/fail-nth: for every call of an iteration,
 *              fail its 1st, 2nd, ... allocation until the call makes no
 *              more (each allocation site of each call once)
 *   recovery   injection off: fresh sockets exchange hashed messages both
 *              ways exactly once, a use-once key is written, the send and
 *              retransmit queues drain, the pinned-page accounting is back
 *              to what it was before the faults (RLIMIT_MEMLOCK fill) and
 *              no MR was unmapped under a live key (ib_rdma_mr_unmap_keyed)
 *
 *   rds_failslab serve ADDR PORT SECS   the server (node 1)
 */
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include "rds_test.h"

#define FS		"/sys/kernel/debug/failslab/"
#define FPA		"/sys/kernel/debug/fail_page_alloc/"
#define SELF		"/tests/rds_failslab"
#define PORT_RANDOM	18760
#define PORT_NTH	18762
#define PORT_RECOVERY	18764
#define PORT_PAGES	18766
#define SEND_MS		20000
#define WAIT_MS		20000
#define SRV_LEN		65536
#define SRV_WORD	32768	/* offset of the FADD word in the server key */
#define MAP_LEN		12000
#define MAX_MSG		24000

enum { OP_ECHO = 1, OP_MAPW, OP_KEY, OP_SINK, OP_REPORT, OP_BURST, OP_QUIT,
       REP_DONE = 20, REP_STATUS, REP_KEY, REP_REPORT, REP_BURST,
       REP_BURST_END };

struct fmsg {
	uint32_t op, id, len, seed;	/* len: whole message (OP_ECHO) */
	int32_t status;
	uint32_t count;
	uint64_t cookie, hash, word;
};

/* ---- server (node 1) ---------------------------------------------------- */

#define SLOTS 8

static int serve(const char *addr, int port, int secs)
{
	static char target[SRV_LEN] __attribute__((aligned(4096)));
	static char local[SLOTS][SRV_LEN];
	static char buf[MAX_MSG + 64];
	struct { bool busy; uint32_t id; struct sockaddr_storage to; } slot[SLOTS] = {};
	struct sockaddr_storage me;
	uint64_t key = 0, sink_hash = RDS_HASH_INIT;
	uint32_t sink_count = 0;
	int fd, one = 1, big = 4 << 20;

	alarm(secs * 4 + 60);
	fd = rds_socket();
	if (fd < 0 || !rds_mkaddr(AF_INET, addr, port, &me) ||
	    bind(fd, (struct sockaddr *)&me, rds_sslen(&me)))
		return 1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	rds_big_sndbuf(fd, big);
	setsockopt(fd, SOL_RDS, RDS_RECVERR, &one, sizeof(one));
	if (rds_get_mr(fd, target, SRV_LEN, &key, RDS_RDMA_READWRITE))
		return 2;
	for (;;) {
		struct fmsg *q = (struct fmsg *)buf, r = {};
		struct rds_rx rx;
		ssize_t n = rds_recv_rx(fd, buf, sizeof(buf), &rx, secs * 1000);
		int i;

		if (n < 0)
			return 0;
		if (rx.is_note) {
			i = rx.note.user_token;
			if (i >= 0 && i < SLOTS && slot[i].busy) {
				r.op = REP_STATUS;
				r.id = slot[i].id;
				r.status = rx.note.status;
				rds_send_cmsg(fd, &slot[i].to, &r, sizeof(r), 0,
					      NULL, 0, SEND_MS);
				slot[i].busy = false;
			}
			continue;
		}
		if (n < (ssize_t)sizeof(*q))
			continue;
		switch (q->op) {
		case OP_QUIT:
			return 0;
		case OP_ECHO:
			rds_send_cmsg(fd, &rx.from, buf, n, 0, NULL, 0, SEND_MS);
			break;
		case OP_KEY:
			r.op = REP_KEY;
			r.cookie = key;
			rds_send_cmsg(fd, &rx.from, &r, sizeof(r), 0, NULL, 0,
				      SEND_MS);
			break;
		case OP_MAPW:
			for (i = 0; i < SLOTS && slot[i].busy; i++)
				;
			r.id = q->id;
			if (i == SLOTS || !rx.cookie || q->len > SRV_LEN) {
				r.op = REP_STATUS;
				r.status = -100;
				rds_send_cmsg(fd, &rx.from, &r, sizeof(r), 0,
					      NULL, 0, SEND_MS);
				break;
			}
			rds_fill(local[i], q->len, q->seed);
			slot[i].busy = true;
			slot[i].id = q->id;
			slot[i].to = rx.from;
			r.op = REP_DONE;
			if (rds_send_rdma(fd, &rx.from, &r, sizeof(r), rx.cookie,
					  0, local[i], q->len,
					  RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
					  i, SEND_MS) < 0) {
				slot[i].busy = false;
				r.op = REP_STATUS;
				r.status = -200 - errno;
				rds_send_cmsg(fd, &rx.from, &r, sizeof(r), 0,
					      NULL, 0, SEND_MS);
			}
			break;
		case OP_SINK:
			sink_count++;
			sink_hash = rds_hash(sink_hash, buf, n);
			break;
		case OP_REPORT:
			r.op = REP_REPORT;
			r.count = sink_count;
			r.hash = sink_hash;
			memcpy(&r.word, target + SRV_WORD, sizeof(r.word));
			sink_count = 0;
			sink_hash = RDS_HASH_INIT;
			rds_send_cmsg(fd, &rx.from, &r, sizeof(r), 0, NULL, 0,
				      SEND_MS);
			break;
		case OP_BURST: {
			uint32_t k, cnt = q->count, len = q->len, seed = q->seed;
			struct sockaddr_storage to = rx.from;

			if (len < sizeof(r) || len > MAX_MSG)
				break;
			for (k = 0; k < cnt; k++) {
				struct fmsg *m = (struct fmsg *)buf;

				rds_fill(buf, len, seed + k);
				m->op = REP_BURST;
				m->id = k;
				m->len = len;
				m->seed = seed + k;
				if (rds_send_cmsg(fd, &to, buf, len, 0, NULL,
						  0, SEND_MS) != len)
					break;
			}
			r.op = REP_BURST_END;
			r.count = k;
			rds_send_cmsg(fd, &to, &r, sizeof(r), 0, NULL, 0,
				      SEND_MS);
			break;
		}
		}
	}
}

/* ---- fault control ------------------------------------------------------ */

/* The knobs we set, in failslab and fail_page_alloc (the last two). */
static const char *fs_knobs[] = { "task-filter", "probability", "interval",
				  "times", "ignore-gfp-wait", "verbose",
				  "space", "ignore-gfp-highmem", "min-order" };
#define NKNOBS (sizeof(fs_knobs) / sizeof(fs_knobs[0]))
static char fs_saved[2][NKNOBS][32];
static pid_t main_pid;
static long long unmap_keyed0 = -1;
static int memlock0 = -1;
static bool have_fpa;

static int fi_set(const char *dir, const char *knob, const char *val)
{
	char p[128];

	snprintf(p, sizeof(p), "%s%s", dir, knob);
	return rds_write_file(p, val);
}

static int fs_set(const char *knob, const char *val)
{
	return fi_set(FS, knob, val);
}

static int fpa_set(const char *knob, const char *val)
{
	return fi_set(FPA, knob, val);
}

static void fs_save(void)
{
	const char *dirs[2] = { FS, FPA };
	unsigned int d, i;

	for (d = 0; d < 2; d++)
		for (i = 0; i < NKNOBS; i++) {
			char p[128];

			snprintf(p, sizeof(p), "%s%s", dirs[d], fs_knobs[i]);
			if (rds_read_file(p, fs_saved[d][i],
					  sizeof(fs_saved[d][i])))
				fs_saved[d][i][0] = 0;
		}
}

static void fs_restore(void)
{
	const char *dirs[2] = { FS, FPA };
	unsigned int d, i;

	if (getpid() != main_pid)
		return;
	fs_set("probability", "0");
	if (have_fpa)
		fpa_set("probability", "0");
	for (d = 0; d < 2; d++)
		for (i = 0; i < NKNOBS; i++)
			if (fs_saved[d][i][0])
				fi_set(dirs[d], fs_knobs[i], fs_saved[d][i]);
}

/* Open before injecting: opening a file allocates. */
static int mif_fd = -1, nth_fd = -1;

static void inject(bool on)
{
	if (pwrite(mif_fd, on ? "1" : "0", 1, 0) != 1)
		abort();
}

static void nth_arm(int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%d", n);

	if (pwrite(nth_fd, b, l, 0) != l)
		abort();
}

/* Remaining count: 0 once the armed fault fired (or when not armed). */
static int nth_left(void)
{
	char b[16] = "";

	if (pread(nth_fd, b, sizeof(b) - 1, 0) <= 0)
		return -1;
	return atoi(b);
}

/* ---- the calls, their allowed errnos and a tally ------------------------- */

enum { C_SOCKET, C_SOCKOPT, C_BIND, C_CONNECT, C_SEND, C_GET_MR,
       C_GET_MR_DEST, C_FREE_MR, C_SEND_MAP, C_SEND_ARGS, C_SEND_FADD,
       C_POLL, C_RECV, C_CLOSE, C_NR };

static const char *c_name[C_NR] = {
	"socket", "setsockopt", "bind", "connect", "sendmsg", "GET_MR",
	"GET_MR_FOR_DEST", "FREE_MR", "sendmsg+MAP", "sendmsg+ARGS",
	"sendmsg+FADD", "poll", "recvmsg", "close",
};

/*
 * From net/rds and the socket layer:
 *  socket: sk_alloc() -ENOMEM (af_rds.c); sock_alloc() failing is -ENFILE
 *	(__sock_create), the file and fd -ENOMEM.
 *  bind: the bind table's rhashtable insert -ENOMEM (bind.c).
 *  sendmsg: rds_message_alloc(), connection, cmsg and RDMA op allocations
 *	-ENOMEM (send.c, rdma.c, connection.c); the socket layer's copy of a
 *	large msg_control -ENOBUFS (sock_kmalloc); a full send buffer or a
 *	path being destroyed -EAGAIN (MSG_DONTWAIT).
 *  GET_MR*, MAP: -ENOMEM (rdma.c, ib_mr.c), -EAGAIN (the registration QP
 *	failed: "try again", ib_mr.c).
 *  setsockopt (RDS_RECVERR, SO_RCVBUF, SO_SNDBUF), connect, FREE_MR, poll,
 *	recvmsg, close allocate nothing that may fail them: no errno allowed.
 */
static bool c_allowed(int c, int e)
{
	switch (c) {
	case C_SOCKET:
		return e == ENOMEM || e == ENFILE;
	case C_BIND:
		return e == ENOMEM;
	case C_SEND:
	case C_SEND_ARGS:
	case C_SEND_FADD:
		return e == ENOMEM || e == ENOBUFS || e == EAGAIN;
	case C_SEND_MAP:
		return e == ENOMEM || e == ENOBUFS || e == EAGAIN;
	case C_GET_MR:
	case C_GET_MR_DEST:
		return e == ENOMEM || e == EAGAIN;
	default:
		return false;
	}
}

struct tally {
	unsigned int calls[C_NR], fails[C_NR];
	unsigned int err[C_NR][8];	/* ENOMEM ENOBUFS EAGAIN ENFILE other */
	unsigned int accepted_rdma, notes, success, refused_rdma;
	unsigned int echoes, maps_done, maps_err, fadd_ok;
	unsigned int bad;		/* violations */
	char first_bad[8][160];
	uint64_t fadd_sum;		/* sum of FADDs notified SUCCESS */
};

static void bad(struct tally *t, const char *fmt, ...)
{
	va_list ap;

	if (t->bad < 8) {
		va_start(ap, fmt);
		vsnprintf(t->first_bad[t->bad], sizeof(t->first_bad[0]), fmt,
			  ap);
		va_end(ap);
	}
	t->bad++;
}

static int err_slot(int e)
{
	switch (e) {
	case ENOMEM: return 0;
	case ENOBUFS: return 1;
	case EAGAIN: return 2;
	case ENFILE: return 3;
	default: return 4;
	}
}

/* Record a call's result; false if it failed (errno kept). */
static bool rec(struct tally *t, int c, long r, int iter)
{
	int e = errno;

	t->calls[c]++;
	if (r >= 0)
		return true;
	t->fails[c]++;
	t->err[c][err_slot(e)]++;
	if (!c_allowed(c, e))
		bad(t, "iteration %d: %s failed with errno %d (%s)", iter,
		    c_name[c], e, strerror(e));
	errno = e;
	return false;
}

/* ---- one iteration ------------------------------------------------------ */

struct ctx {
	struct sockaddr_storage peer;	/* the server */
	uint64_t srv_key;
	char *map;			/* MAP_LEN + a page, pre-faulted */
	char *mr;			/* 4 pages for GET_MR*, pre-faulted */
	char *src;			/* WRITE source, pre-faulted */
	uint64_t *word;			/* FADD result */
	char *msg, *rbuf;		/* MAX_MSG + 64 */
	uint32_t next_id;
	/* -1: inject by make-it-fail around every call; else the call of
	 * this index gets fail-nth = nth and *fired says if it fired */
	int nth_call, nth;
	bool fired, reached;
};

/* Run call c of this iteration with its fault armed, if it is the one. */
#define CALL(cx, c, expr) ({						\
	long __r;							\
	bool __arm = (cx)->nth_call == (c);				\
	if (__arm) {							\
		(cx)->reached = true;					\
		nth_arm((cx)->nth);					\
	}								\
	__r = (long)(expr);						\
	if (__arm) {							\
		int __e = errno;					\
		(cx)->fired |= nth_left() == 0;			\
		nth_arm(0);						\
		errno = __e;						\
	}								\
	__r;								\
})

static void fill_msg(char *buf, uint32_t len, uint32_t op, uint32_t id,
		     uint32_t seed)
{
	struct fmsg *m = (struct fmsg *)buf;

	rds_fill(buf, len, seed);
	memset(m, 0, sizeof(*m));
	m->op = op;
	m->id = id;
	m->len = len;
	m->seed = seed;
}

static char *chk_buf;	/* MAX_MSG + 64, pre-faulted (fixture memory) */

static bool msg_ok(const char *buf, ssize_t n)
{
	const struct fmsg *m = (const struct fmsg *)buf;
	char *tmp = chk_buf;

	if (n < (ssize_t)sizeof(*m) || m->len != n || n > MAX_MSG)
		return false;
	rds_fill(tmp, n, m->seed);
	return !memcmp(tmp + sizeof(*m), buf + sizeof(*m), n - sizeof(*m));
}

/*
 * One iteration; with cx->nth_call < 0 and inj, failslab is on for every
 * call (make-it-fail), from socket() on, or with late from the first call
 * after connect() on (at 20% and more few socket()s would succeed).
 */
static void iteration(struct ctx *cx, struct tally *t, int it, bool inj,
		      bool late)
{
	static const uint32_t lens[] = { 100, 5000, 20000 };
	uint32_t echo_id = 0, map_id = 0, elen = lens[it % 3];
	uint64_t c1 = 0, c2 = 0, map_cookie = 0, tok_w, tok_f;
	bool echo_acc = false, map_acc = false, w_acc = false, f_acc = false;
	bool got_w = false, got_f = false, map_note = false, map_done = false;
	bool map_status = false;
	int echoes = 0, fd, one = 1, rcv = 1 << 20, snd = 1 << 20;
	struct sockaddr_storage me;
	struct timespec t0;
	long r;

	memset(cx->map, 0, MAP_LEN + 4096);
	if (inj && !late)
		inject(true);
	fd = CALL(cx, C_SOCKET, socket(AF_RDS, SOCK_SEQPACKET, 0));
	if (!rec(t, C_SOCKET, fd, it))
		goto out_noclose;
	r = CALL(cx, C_SOCKOPT, setsockopt(fd, SOL_RDS, RDS_RECVERR, &one,
					   sizeof(one)));
	rec(t, C_SOCKOPT, r, it);
	r = CALL(cx, C_SOCKOPT, setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv,
					   sizeof(rcv)));
	rec(t, C_SOCKOPT, r, it);
	r = CALL(cx, C_SOCKOPT, setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &snd,
					   sizeof(snd)));
	rec(t, C_SOCKOPT, r, it);
	rds_mkaddr(AF_INET, rds_local_str(AF_INET), 0, &me);
	r = CALL(cx, C_BIND, bind(fd, (struct sockaddr *)&me, rds_sslen(&me)));
	if (!rec(t, C_BIND, r, it))
		goto out;
	r = CALL(cx, C_CONNECT, connect(fd, (struct sockaddr *)&cx->peer,
					rds_sslen(&cx->peer)));
	rec(t, C_CONNECT, r, it);
	if (inj && late)
		inject(true);

	/* echo */
	echo_id = ++cx->next_id;
	fill_msg(cx->msg, elen, OP_ECHO, echo_id, echo_id * 7);
	r = CALL(cx, C_SEND, rds_send_cmsg(fd, &cx->peer, cx->msg, elen, 0,
					   NULL, 0, 0));
	echo_acc = rec(t, C_SEND, r, it);
	if (echo_acc && r != elen)
		bad(t, "iteration %d: echo sendmsg returned %ld", it, r);

	/* MR sockopts */
	r = CALL(cx, C_GET_MR, rds_get_mr(fd, cx->mr + 100, 5000, &c1,
					  RDS_RDMA_READWRITE));
	if (!rec(t, C_GET_MR, r, it))
		c1 = 0;
	{
		struct rds_get_mr_for_dest_args d = {
			.vec = { (uintptr_t)(cx->mr + 8192 + 7), 3000 },
			.cookie_addr = (uintptr_t)&c2,
		};

		memcpy(&d.dest_addr, &cx->peer, sizeof(cx->peer));
		r = CALL(cx, C_GET_MR_DEST,
			 setsockopt(fd, SOL_RDS, RDS_GET_MR_FOR_DEST, &d,
				    sizeof(d)));
		if (!rec(t, C_GET_MR_DEST, r, it))
			c2 = 0;
	}
	if (c1) {
		r = CALL(cx, C_FREE_MR, rds_free_mr(fd, c1, 0));
		rec(t, C_FREE_MR, r, it);
	}
	if (c2) {
		r = CALL(cx, C_FREE_MR, rds_free_mr(fd, c2,
						    RDS_RDMA_INVALIDATE));
		rec(t, C_FREE_MR, r, it);
	}

	/* a use-once key for the server to WRITE into */
	{
		struct rds_get_mr_args mr = {
			.vec = { (uintptr_t)(cx->map + 333), MAP_LEN },
			.cookie_addr = (uintptr_t)&map_cookie,
			.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE,
		};
		struct fmsg q = { .op = OP_MAPW, .len = MAP_LEN };

		map_id = ++cx->next_id;
		q.id = map_id;
		q.seed = map_id * 13;
		r = CALL(cx, C_SEND_MAP,
			 rds_send_cmsg(fd, &cx->peer, &q, sizeof(q),
				       RDS_CMSG_RDMA_MAP, &mr, sizeof(mr), 0));
		map_acc = rec(t, C_SEND_MAP, r, it);
	}

	/* a WRITE and a FADD into the server's key */
	tok_w = ((uint64_t)it << 8) | 1;
	tok_f = ((uint64_t)it << 8) | 2;
	{
		struct rds_iovec v = { (uintptr_t)cx->src, 4096 };
		struct rds_rdma_args a = {
			.cookie = cx->srv_key,
			.remote_vec = { 0, 4096 },
			.local_vec_addr = (uintptr_t)&v,
			.nr_local = 1,
			.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
			.user_token = tok_w,
		};

		r = CALL(cx, C_SEND_ARGS,
			 rds_send_cmsg(fd, &cx->peer, NULL, 0,
				       RDS_CMSG_RDMA_ARGS, &a, sizeof(a), 0));
		w_acc = rec(t, C_SEND_ARGS, r, it);
	}
	{
		struct rds_atomic_args at = {
			.cookie = cx->srv_key,
			.local_addr = (uintptr_t)cx->word,
			.remote_addr = SRV_WORD,
			.fadd = { .add = 1 + (it & 3) },
			.flags = RDS_RDMA_NOTIFY_ME,
			.user_token = tok_f,
		};

		r = CALL(cx, C_SEND_FADD,
			 rds_send_cmsg(fd, &cx->peer, NULL, 0,
				       RDS_CMSG_ATOMIC_FADD, &at, sizeof(at),
				       0));
		f_acc = rec(t, C_SEND_FADD, r, it);
	}
	t->accepted_rdma += w_acc + f_acc;
	t->refused_rdma += !w_acc + !f_acc;

	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLOUT };

		r = CALL(cx, C_POLL, poll(&pfd, 1, 0));
	}
	rec(t, C_POLL, r, it);

	/* receive until everything accepted is answered */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		bool want = (echo_acc && !echoes) ||
			    (map_acc && !map_note && !(map_done && map_status)) ||
			    (w_acc && !got_w) || (f_acc && !got_f);
		long left = WAIT_MS - rds_ms_since(&t0);
		struct fmsg *m = (struct fmsg *)cx->rbuf;
		struct rds_rx rx;
		ssize_t n;

		/* then a short look for strays */
		if (!want)
			left = left < 200 ? left : 200;
		if (left <= 0) {
			if (want)
				bad(t, "iteration %d: no answer in %d ms (echo %d/%d map %d/%d/%d/%d write %d/%d fadd %d/%d)",
				    it, WAIT_MS, echo_acc, echoes, map_acc,
				    map_note, map_done, map_status, w_acc,
				    got_w, f_acc, got_f);
			break;
		}
		n = CALL(cx, C_RECV, rds_recv_rx(fd, cx->rbuf, MAX_MSG + 64,
						 &rx, left));
		if (n < 0 && errno == ETIME) {
			if (!want)
				break;
			continue;
		}
		if (!rec(t, C_RECV, n, it))
			break;
		if (rx.is_note) {
			uint64_t tok = rx.note.user_token;
			int st = rx.note.status;

			t->notes++;
			if (map_acc && tok == map_cookie && !map_note &&
			    st == RDS_RDMA_OTHER_ERROR && !map_done) {
				map_note = true;
				t->maps_err++;
			} else if (tok == tok_w && w_acc && !got_w) {
				got_w = true;
				t->success += st == RDS_RDMA_SUCCESS;
				if (st != RDS_RDMA_SUCCESS)
					bad(t, "iteration %d: WRITE status %d (%s)",
					    it, st, rds_rdma_status_name(st));
			} else if (tok == tok_f && f_acc && !got_f) {
				got_f = true;
				t->success += st == RDS_RDMA_SUCCESS;
				if (st == RDS_RDMA_SUCCESS) {
					t->fadd_ok++;
					t->fadd_sum += 1 + (it & 3);
				} else {
					bad(t, "iteration %d: FADD status %d (%s)",
					    it, st, rds_rdma_status_name(st));
				}
			} else {
				bad(t, "iteration %d: unexpected notification token %#llx status %d (w %d f %d map %d)",
				    it, (unsigned long long)tok, st, w_acc,
				    f_acc, map_acc);
			}
			continue;
		}
		if (m->op == OP_ECHO && n >= (ssize_t)sizeof(*m) &&
		    m->id == echo_id && echo_acc) {
			if (!msg_ok(cx->rbuf, n) || n != elen)
				bad(t, "iteration %d: echo %u of %zd bytes corrupt",
				    it, echo_id, n);
			if (++echoes > 1)
				bad(t, "iteration %d: echo %u came twice", it,
				    echo_id);
			t->echoes++;
		} else if (m->op == REP_DONE && n == sizeof(*m) &&
			   m->id == map_id && map_acc && !map_done) {
			/* the completing message: the data is in place */
			map_done = true;
			if (!rds_check(cx->map + 333, MAP_LEN, map_id * 13))
				bad(t, "iteration %d: MAP WRITE data not in place",
				    it);
		} else if (m->op == REP_STATUS && n == sizeof(*m) &&
			   m->id == map_id && map_acc && !map_status) {
			map_status = true;
			t->maps_done++;
			if (m->status != RDS_RDMA_SUCCESS || map_note)
				bad(t, "iteration %d: server's WRITE into our MAP key: status %d%s",
				    it, m->status,
				    map_note ? " after OTHER_ERROR" : "");
		} else {
			bad(t, "iteration %d: unexpected message op %u id %u len %zd",
			    it, m->op, m->id, n);
		}
	}
	if (map_status && !map_done)
		bad(t, "iteration %d: MAP status without the completing message", it);
out:
	r = CALL(cx, C_CLOSE, close(fd));
	rec(t, C_CLOSE, r, it);
out_noclose:
	if (inj)
		inject(false);
}

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(fs)
{
	struct ctx cx;
	char *mem;
	int port;
};

FIXTURE_SETUP(fs)
{
	size_t sz = 64 * 4096;
	struct fmsg q = { .op = OP_KEY }, r;
	char cmd[256];
	int fd, i;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	/*
	 * fail_page_alloc as booted, whatever an earlier test left armed
	 * (its child may have died before putting it back): fail-nth counts
	 * what its filters let through.
	 */
	if (have_fpa) {
		fpa_set("probability", "0");
		for (i = 0; i < (int)NKNOBS; i++)
			if (fs_saved[1][i][0])
				fpa_set(fs_knobs[i], fs_saved[1][i]);
	}
	self->port = strstr(_metadata->name, "random") ? PORT_RANDOM :
		     strstr(_metadata->name, "pages") ? PORT_PAGES :
		     strstr(_metadata->name, "nth") ? PORT_NTH : PORT_RECOVERY;
	self->mem = mmap(NULL, sz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	memset(self->mem, 0x5a, sz);	/* faulted in: no fault allocates later */
	self->cx.map = self->mem;			/* 4 pages */
	self->cx.mr = self->mem + 8 * 4096;		/* 4 pages */
	self->cx.src = self->mem + 16 * 4096;		/* 1 page */
	self->cx.word = (uint64_t *)(self->mem + 18 * 4096);
	self->cx.msg = self->mem + 20 * 4096;		/* 8 pages */
	self->cx.rbuf = self->mem + 30 * 4096;		/* 8 pages */
	chk_buf = self->mem + 40 * 4096;		/* 8 pages */
	self->cx.nth_call = -1;
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), self->port, &self->cx.peer);

	snprintf(cmd, sizeof(cmd),
		 "rds-peer 1 '%s serve %s %d 90 >/tmp/rds_failslab.log 2>&1 &'",
		 SELF, rds_peer_str(AF_INET), self->port);
	ASSERT_EQ(0, system(cmd));
	/* The server's key; the connection comes up on the way. */
	fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, fd);
	for (i = 0; i < 30; i++) {
		if (rds_send_cmsg(fd, &self->cx.peer, &q, sizeof(q), 0, NULL,
				  0, SEND_MS) == sizeof(q) &&
		    rds_recv_wait(fd, &r, sizeof(r), 0, NULL, 2000) ==
		    sizeof(r) && r.op == REP_KEY)
			break;
	}
	close(fd);
	ASSERT_GT(30, i) TH_LOG("no key from the server on node 1");
	self->cx.srv_key = r.cookie;
	mif_fd = open("/proc/self/make-it-fail", O_WRONLY);
	ASSERT_LE(0, mif_fd);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	ASSERT_LE(0, nth_fd);
}

FIXTURE_TEARDOWN(fs)
{
	struct fmsg q = { .op = OP_QUIT };
	int fd;

	if (mif_fd >= 0)
		inject(false);
	if (nth_fd >= 0)
		nth_arm(0);
	fd = rds_bound_socket(AF_INET, 0, NULL);
	if (fd >= 0) {
		rds_send_cmsg(fd, &self->cx.peer, &q, sizeof(q), 0, NULL, 0,
			      SEND_MS);
		close(fd);
	}
}

static void report(struct __test_metadata *_metadata, const char *what,
		   struct tally *t)
{
	char line[512];
	int c, n;

	for (c = 0; c < C_NR; c++) {
		if (!t->fails[c])
			continue;
		n = snprintf(line, sizeof(line),
			     "%s: %s %u calls, %u failed (ENOMEM %u ENOBUFS %u EAGAIN %u ENFILE %u other %u)",
			     what, c_name[c], t->calls[c], t->fails[c],
			     t->err[c][0], t->err[c][1], t->err[c][2],
			     t->err[c][3], t->err[c][4]);
		(void)n;
		TH_LOG("%s", line);
	}
	TH_LOG("%s: echoes %u, MAP writes %u (OTHER_ERROR %u), RDMA accepted %u refused %u, notes %u, SUCCESS %u",
	       what, t->echoes, t->maps_done, t->maps_err, t->accepted_rdma,
	       t->refused_rdma, t->notes, t->success);
	for (c = 0; c < (int)t->bad && c < 8; c++)
		TH_LOG("%s: %s", what, t->first_bad[c]);
	EXPECT_EQ(0, t->bad);
}

/* The server's FADD word holds exactly the FADDs notified SUCCESS. */
static void check_word(struct __test_metadata *_metadata,
		       FIXTURE_DATA(fs) *self, uint64_t sum)
{
	struct fmsg q = { .op = OP_REPORT }, r = {};
	int fd = rds_bound_socket(AF_INET, 0, NULL);

	ASSERT_LE(0, fd);
	ASSERT_EQ(sizeof(q), rds_send_cmsg(fd, &self->cx.peer, &q, sizeof(q),
					   0, NULL, 0, SEND_MS));
	ASSERT_EQ(sizeof(r), rds_recv_wait(fd, &r, sizeof(r), 0, NULL,
					   WAIT_MS));
	EXPECT_EQ(REP_REPORT, r.op);
	EXPECT_EQ(sum, r.word) TH_LOG("server word %llu, FADDs notified SUCCESS sum %llu",
				      (unsigned long long)r.word,
				      (unsigned long long)sum);
	close(fd);
}

/*
 * Arm one fault capability (@dir: failslab or fail_page_alloc) for this
 * task (make-it-fail, set around each call by iteration()), sleeping
 * allocations too.  Pages: every order, but not __GFP_HIGHMEM ones: user
 * pages (the test's own faults, the pages GET_MR pins in) come from
 * those, and a failed user fault is retried, not an errno of a call.
 */
static int fi_on(const char *dir, int prob)
{
	bool pages = !strcmp(dir, FPA);
	char p[16];

	snprintf(p, sizeof(p), "%d", prob);
	if (fi_set(dir, "task-filter", "Y") ||
	    fi_set(dir, "ignore-gfp-wait", "N") ||
	    fi_set(dir, "verbose", "0") || fi_set(dir, "interval", "1") ||
	    fi_set(dir, "times", "-1") || fi_set(dir, "space", "0"))
		return -1;
	if (pages && (fi_set(dir, "ignore-gfp-highmem", "Y") ||
		      fi_set(dir, "min-order", "0")))
		return -1;
	return fi_set(dir, "probability", p);
}

/*
 * RDS_FAILSLAB_ITERS iterations at each probability of @probs through
 * @dir; every call's errno checked (report()).  Return: the FADDs notified
 * SUCCESS, summed; *@failed (if set) gets the calls that failed.
 */
static uint64_t fi_rounds(struct __test_metadata *_metadata,
			  FIXTURE_DATA(fs) *self, const char *dir,
			  const char *label, const int *probs,
			  unsigned int nprobs, unsigned int *failed)
{
	int iters = atoi(rds_env("RDS_FAILSLAB_ITERS", "40"));
	struct timespec t0;
	uint64_t sum = 0;
	unsigned int p, c;
	int i;

	for (p = 0; p < nprobs; p++) {
		struct tally t = {};
		char what[32];

		EXPECT_EQ(0, fi_on(dir, probs[p]));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < iters; i++)
			iteration(&self->cx, &t, i + 1000 * p, true, i & 1);
		EXPECT_EQ(0, fi_set(dir, "probability", "0"));
		snprintf(what, sizeof(what), "%s%d%%", label, probs[p]);
		TH_LOG("%s: %d iterations in %ld ms", what, iters,
		       rds_ms_since(&t0));
		report(_metadata, what, &t);
		for (c = 0; failed && c < C_NR; c++)
			*failed += t.fails[c];
		sum += t.fadd_sum;
	}
	return sum;
}

TEST_F_TIMEOUT(fs, random, 900)
{
	static const int probs[] = { 5, 20, 50 };

	check_word(_metadata, self,
		   fi_rounds(_metadata, self, FS, "", probs,
			     ARRAY_SIZE(probs), NULL));
}

/*
 * Page allocation faults (fail_page_alloc, task-filtered) in the same
 * calls: message payload pages, registration QP queues, large kmallocs.
 * The same allowed errnos; some calls must have failed.
 */
TEST_F_TIMEOUT(fs, pages, 900)
{
	static const int probs[] = { 20, 50 };
	unsigned int c, failed = 0;
	uint64_t sum;

	if (!have_fpa)
		SKIP(return, "no fail_page_alloc (CONFIG_FAIL_PAGE_ALLOC)");
	ASSERT_EQ(0, fs_set("probability", "0"));
	sum = fi_rounds(_metadata, self, FPA, "pages ", probs,
			ARRAY_SIZE(probs), &failed);
	/* Back to the boot defaults, so that fail-nth counts as before. */
	for (c = 0; c < NKNOBS; c++)
		if (fs_saved[1][c][0])
			fpa_set(fs_knobs[c], fs_saved[1][c]);
	EXPECT_LT(0, failed) TH_LOG("no call met a page allocation fault");
	check_word(_metadata, self, sum);
}

TEST_F_TIMEOUT(fs, nth, 900)
{
	struct tally t = {};
	struct timespec t0;
	int c, n, it = 0, fired;

	/* fail-nth works without failslab's probability: keep it 0 */
	ASSERT_EQ(0, fs_set("probability", "0"));
	ASSERT_EQ(0, fs_set("ignore-gfp-wait", "N"));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (c = 0; c < C_NR; c++) {
		fired = 0;
		for (n = 1; n <= 200; n++) {
			self->cx.nth_call = c;
			self->cx.nth = n;
			self->cx.fired = false;
			self->cx.reached = false;
			iteration(&self->cx, &t, it++, false, false);
			self->cx.nth_call = -1;
			if (!self->cx.fired)
				break;
			fired++;
		}
		TH_LOG("nth: %s: %d allocation(s) failed in turn%s", c_name[c],
		       fired, n > 200 ? " (stopped at 200)" : "");
	}
	TH_LOG("nth: %d iterations in %ld ms", it, rds_ms_since(&t0));
	report(_metadata, "nth", &t);
	check_word(_metadata, self, t.fadd_sum);
}

/* Messages queued for sending (RDS_INFO_SEND_MESSAGES or RETRANS). */
static int info_count(int opt)
{
	static char buf[1 << 16];
	socklen_t len = sizeof(buf);
	int fd = rds_socket(), r;

	if (fd < 0)
		return -1;
	r = getsockopt(fd, SOL_RDS, opt, buf, &len);
	close(fd);
	if (r < 0)
		return -1;
	return len / sizeof(struct rds_info_message);
}

/*
 * One-page GET_MRs that fit in a child without CAP_IPC_LOCK under an
 * RLIMIT_MEMLOCK of 32 pages (rdma_pool.c's memlock case): the pinned
 * page accounting of this user.  -1 on error.
 */
static int memlock_fill(void)
{
	int status, pfd[2];
	pid_t pid;
	int n = -1;

	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		struct rlimit rl = { 32 * 4096, 32 * 4096 };
		char *b = mmap(NULL, 64 * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t ck[64];
		int fd, i, best = 0, k, n;

		alarm(60);
		if (b == MAP_FAILED || rds_drop_ipc_lock() ||
		    setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(1);
		memset(b, 1, 64 * 4096);
		fd = rds_bound_socket(AF_INET, 0, NULL);
		if (fd < 0)
			_exit(1);
		/* the unaccounting of freed MRs runs from a work item */
		for (k = 0; k < 30; k++) {
			for (i = 0; i < 64; i++)
				if (rds_get_mr(fd, b + i * 4096, 4096, &ck[i],
					       0))
					break;
			n = i;
			if (n > best)
				best = n;
			while (i--)
				rds_free_mr(fd, ck[i], 0);
			if (k >= 2 && best == n)
				break;
			rds_msleep(200);
		}
		if (write(pfd[1], &best, sizeof(best)) != sizeof(best))
			_exit(1);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &n, sizeof(n)) != sizeof(n))
		n = -1;
	close(pfd[0]);
	waitpid(pid, &status, 0);
	return n;
}

TEST_F_TIMEOUT(fs, recovery, 600)
{
	const int N = atoi(rds_env("RDS_FAILSLAB_MSGS", "300"));
	struct tally t = {};
	struct fmsg q = {}, r = {};
	uint64_t h = RDS_HASH_INIT;
	int fd, i, got, sendq = -1, retrans = -1, ml;
	struct timespec t0;
	struct sockaddr_storage peer0;

	ASSERT_EQ(0, fs_set("probability", "0"));
	fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, fd);
	rds_big_sndbuf(fd, 4 << 20);
	i = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &i, sizeof(i));

	/* node 0 -> node 1: N hashed messages, each once */
	for (i = 0; i < N; i++) {
		uint32_t len = sizeof(struct fmsg) + (i * 977) % 9000;

		fill_msg(self->cx.msg, len, OP_SINK, i, 5000 + i);
		ASSERT_EQ(len, rds_send_cmsg(fd, &self->cx.peer, self->cx.msg,
					     len, 0, NULL, 0, SEND_MS))
			TH_LOG("send %d: %s", i, strerror(errno));
		h = rds_hash(h, self->cx.msg, len);
	}
	q.op = OP_REPORT;
	ASSERT_EQ(sizeof(q), rds_send_cmsg(fd, &self->cx.peer, &q, sizeof(q),
					   0, NULL, 0, SEND_MS));
	ASSERT_EQ(sizeof(r), rds_recv_wait(fd, &r, sizeof(r), 0, NULL, 60000));
	EXPECT_EQ(REP_REPORT, r.op);
	EXPECT_EQ(N, r.count);
	EXPECT_EQ(h, r.hash) TH_LOG("node 1 got %u messages, hash differs",
				    r.count);

	/* node 1 -> node 0: N hashed messages, in order, each once */
	q = (struct fmsg){ .op = OP_BURST, .count = N, .len = 3000,
			   .seed = 90000 };
	ASSERT_EQ(sizeof(q), rds_send_cmsg(fd, &self->cx.peer, &q, sizeof(q),
					   0, NULL, 0, SEND_MS));
	for (got = 0;;) {
		ssize_t n = rds_recv_wait(fd, self->cx.rbuf, MAX_MSG + 64, 0,
					  NULL, 60000);
		struct fmsg *m = (struct fmsg *)self->cx.rbuf;

		ASSERT_LE(0, n) TH_LOG("burst: %d of %d, then nothing", got,
				       N);
		if (m->op == REP_BURST_END) {
			EXPECT_EQ(N, m->count);
			break;
		}
		ASSERT_EQ(REP_BURST, m->op);
		EXPECT_EQ(got, m->id) TH_LOG("burst out of order");
		EXPECT_TRUE(msg_ok(self->cx.rbuf, n));
		got++;
	}
	EXPECT_EQ(N, got);
	close(fd);

	/* the full iteration (use-once key written, WRITE, FADD) works */
	for (i = 0; i < 5; i++)
		iteration(&self->cx, &t, i, false, false);
	report(_metadata, "recovery", &t);
	EXPECT_EQ(5, t.maps_done);
	EXPECT_EQ(5, t.echoes);
	EXPECT_EQ(10, t.success);
	check_word(_metadata, self, t.fadd_sum);

	/* nothing left queued: send and retransmit queues drain */
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), 0, &peer0);
	fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&t0) < 30000) {
		char c;

		sendq = info_count(RDS_INFO_SEND_MESSAGES);
		retrans = info_count(RDS_INFO_RETRANS_MESSAGES);
		if (!sendq && !retrans)
			break;
		/* a ping: its pong carries an ACK */
		rds_sendto(fd, NULL, 0, 0, &peer0);
		rds_recv_wait(fd, &c, 1, 0, NULL, 500);
	}
	close(fd);
	EXPECT_EQ(0, sendq);
	EXPECT_EQ(0, retrans);

	/* pinned pages given back; no MR unmapped under a live key */
	ml = memlock_fill();
	TH_LOG("memlock: %d one-page MRs fit now, %d before the faults", ml,
	       memlock0);
	EXPECT_LT(0, ml);
	EXPECT_EQ(memlock0, ml);
	if (unmap_keyed0 >= 0)
		EXPECT_EQ(unmap_keyed0, rds_counter("ib_rdma_mr_unmap_keyed"));
	TH_LOG("conn_reset now %lld", rds_counter("conn_reset"));
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (access(FS "probability", W_OK) ||
	    access("/proc/self/make-it-fail", W_OK) ||
	    access("/proc/thread-self/fail-nth", W_OK)) {
		printf("TAP version 13\n1..0 # SKIP no failslab (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)\n");
		return KSFT_SKIP;
	}
	rds_test_prepare();
	main_pid = getpid();
	have_fpa = !access(FPA "probability", W_OK);
	fs_save();
	atexit(fs_restore);
	fs_set("probability", "0");
	if (have_fpa)
		fpa_set("probability", "0");
	unmap_keyed0 = rds_counter("ib_rdma_mr_unmap_keyed");
	if (rds_have_peer())
		memlock0 = memlock_fill();
	return test_harness_run(argc, argv);
}
