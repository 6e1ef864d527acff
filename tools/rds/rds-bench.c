// SPDX-License-Identifier: GPL-2.0
/*
 * rds-bench - RDS benchmark: message rate, bandwidth, round trips, RDMA and
 * atomics between two nodes.
 *
 *   rds-bench -S [-p port] [-d seconds] address         the server
 *   rds-bench [options] peer                             the client
 *
 * Theory of operation
 * ===================
 *
 * The server binds one RDS socket and answers requests; the client runs
 * the tests one after another, each for -d seconds, from -t threads, each
 * thread with its own socket keeping -q requests in flight.  Every request
 * carries a header (struct bench_hdr) with the sender's timestamp, which
 * the answer echoes: the round trip of each request is measured, under
 * load too.  The tests:
 *
 *   rate        header-sized requests and answers: requests per second
 *   bw          requests of each -s size, header-sized answers: MB/s
 *   rtt         like rate with one request in flight: latency percentiles
 *   rdma_write  the client hands over a use-once key for a buffer of each
 *   rdma_read   -s size with each request; the server does an RDMA WRITE
 *               into it (READ from it) and answers in the same sendmsg, so
 *               the answer arrives once the data moved and it kills the key
 *   atomic      the server exposes an 8-byte counter (a key handed over
 *               once); the client issues fetch-and-adds of 1 on it and
 *               waits for their notifications; at the end the counter must
 *               equal the number of completed adds
 *   atomic_silent the same with RDS_RDMA_SILENT: no message reaches the
 *               server's socket, only the atomic goes out (not in the
 *               default set: -m atomic_silent, or -m all)
 *   bw_zc       bw with MSG_ZEROCOPY (SO_ZEROCOPY): each in-flight slot
 *               sends from its own buffer and is reused once both its
 *               answer and its completion cookie came back (not in the
 *               default set: -m bw_zc, or -m all; "unsupported" where
 *               the module refuses it, as in-tree does over IB)
 *
 * Keys are made by RDS_CMSG_RDMA_MAP on the request itself (-k map, the
 * default, which works with the in-tree module too) or by RDS_GET_MR with
 * RDS_RDMA_USE_ONCE then RDS_CMSG_RDMA_DEST (-k getmr; Debian's in-tree
 * module has no key without a connection and fails it with EOPNOTSUPP: the
 * test is then reported "unsupported").
 *
 * Only the distribution's <linux/rds.h> is used, so the same binary runs
 * with the in-tree module.  Exit status: 0 every test passed or is
 * unsupported here, 1 a test failed or the set-up failed (the message names
 * the cause), 2 usage error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include "rds-common.h"

#define BENCH_MAGIC	0x52425331u	/* "RBS1" */
#define MAX_SIZE	(1 << 20)	/* RDS payload and RDMA limit */
#define MAX_THREADS	64
#define MAX_DEPTH	256
#define MAX_SIZES	16
#define DEFAULT_PORT	18900

enum { OP_HELLO = 1, OP_REQ, OP_RDMA_WRITE, OP_RDMA_READ, OP_ATOMIC_SETUP,
	OP_ATOMIC_READ, OP_QUIT };

/* Every request and answer starts with this (both ends are one binary). */
struct bench_hdr {
	uint32_t magic;
	uint16_t op;
	uint16_t slot;		/* client: which in-flight slot */
	uint32_t seq;
	uint32_t reply_len;	/* bytes the answer should have */
	uint64_t stamp;		/* client's send time, echoed */
	uint64_t value;		/* RDMA length; counter value */
	int32_t err;		/* answer: server-side errno, 0 if fine */
	uint32_t tid;		/* client thread (atomic counter index) */
	uint32_t nonce;		/* client: per test and thread, echoed */
	uint32_t pad;
};

enum test_kind { T_RATE, T_BW, T_RTT, T_RDMA_WRITE, T_RDMA_READ, T_ATOMIC,
	T_ATOMIC_SILENT, T_BW_ZC, T_NR };
static const char *const test_names[T_NR] = {
	"rate", "bw", "rtt", "rdma_write", "rdma_read", "atomic",
	"atomic_silent", "bw_zc",
};

/* Both bandwidth tests: requests of each -s size. */
static bool is_bw(enum test_kind k)
{
	return k == T_BW || k == T_BW_ZC;
}

/* Both atomic tests: fetch-adds on the server's counter. */
static bool is_atomic(enum test_kind k)
{
	return k == T_ATOMIC || k == T_ATOMIC_SILENT;
}

enum status { ST_OK, ST_UNSUPPORTED, ST_FAILED };
static const char *const status_names[] = { "ok", "unsupported", "failed" };

/* Options. */
static struct sockaddr_storage peer_addr, local_addr;
static socklen_t peer_len, local_len;
static char peer_name[INET6_ADDRSTRLEN + 8], local_name[INET6_ADDRSTRLEN + 8];
static double duration = 5;
static int depth = 8, nthreads = 1, port = DEFAULT_PORT;
static double timeout_s = 10;
static bool json, quiet, stop_server, use_getmr, progress;
static unsigned int sizes[MAX_SIZES] = { 4096, 65536, 1048576 };
static int nsizes = 3;
static bool tests_on[T_NR] = { true, true, true, true, true, true };

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rds-bench [options] peer          run the tests against a server\n"
		"       rds-bench -S [-p port] [-d seconds] address   serve on address\n"
		"  -m tests     comma list of rate,bw,rtt,rdma_write,rdma_read,atomic,\n"
		"               atomic_silent,bw_zc (also rdma = both RDMA tests;\n"
		"               default all but atomic_silent and bw_zc)\n"
		"  -d seconds   per test (default 5; server: lifetime, default forever)\n"
		"  -s sizes     comma list of sizes for bw and RDMA, K/M suffixes\n"
		"               (default 4K,64K,1M; at most 1M)\n"
		"  -q depth     requests in flight per thread (default 8, max %d)\n"
		"  -t threads   client threads, one socket each (default 1, max %d)\n"
		"  -p port      server's RDS port (default %d)\n"
		"  -I source    local address (default: the route's source)\n"
		"  -k map|getmr how RDMA keys are made (default map)\n"
		"  -w seconds   give up on an answer after this long (default 10)\n"
		"  -P           progress every second (default for runs of 10 s and more)\n"
		"  -j, --json   machine-readable output (one JSON object)\n"
		"  -x, --stop   tell the server to exit when done\n"
		"  -Q, --quiet  no progress lines\n",
		MAX_DEPTH, MAX_THREADS, DEFAULT_PORT);
	exit(2);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Why a call failed, in words, for the errors a user can do something about. */
static const char *explain(int err, const char *call)
{
	switch (err) {
	case EAFNOSUPPORT:
		return "RDS is not available: the rds module is not loaded (modprobe rds_rdma)";
	case EADDRNOTAVAIL:
		return "no RDS transport serves that address: no RDMA device has it (rds_rdma not loaded, or no IB/RoCE/rxe link on it?)";
	case EPERM:
	case EACCES:
		if (!strcmp(call, "RDS_GET_MR") || !strncmp(call, "sendmsg", 7))
			return "permission denied: pinning memory for RDMA needs root or a large enough RLIMIT_MEMLOCK";
		return "permission denied (run as root)";
	case EPROTOTYPE:
		return "RDS over RDMA works only in the initial network namespace";
	case EOPNOTSUPP:
		return "not supported by this RDS module or device";
	case EMSGSIZE:
		return "message too large for the socket buffers (raise net.core.wmem_max/rmem_max or run as root)";
	case ENODEV:
		return "no RDMA device for this socket's address";
	default:
		return NULL;
	}
}

static void die(int code, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rds-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

/* "4096", "64K", "1M" -> bytes; 0 when malformed or out of range. */
static unsigned int parse_size(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (end == s || errno || *s == '-')
		return 0;
	if (*end == 'k' || *end == 'K') {
		v <<= 10;
		end++;
	} else if (*end == 'm' || *end == 'M') {
		v <<= 20;
		end++;
	}
	if (*end || v == 0 || v > MAX_SIZE)
		return 0;
	return v;
}

static int parse_int(const char *s, int lo, int hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < lo || v > hi)
		usage();
	return v;
}

static double parse_seconds(const char *s, double lo)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v >= lo) || v > 86400)
		usage();
	return v;
}

/**
 * rds_sock - an RDS socket bound to @addr:@p with room for @bytes in flight
 * @addr: local address
 * @alen: its length
 * @p: local port, 0 for any
 * @bytes: payload bytes that may be queued in each direction
 * @err: on failure, the errno; @what names the call that failed
 *
 * RDS counts sk_sndbuf/2 and sk_rcvbuf/2 as the payload limits; the FORCE
 * variants exceed net.core.[wr]mem_max where we may.
 */
static int rds_sock(const struct sockaddr_storage *addr, socklen_t alen, int p,
		    long bytes, int *err, const char **what)
{
	struct sockaddr_storage a = *addr;
	int buf = bytes * 2 > (1L << 30) ? (1 << 30) : (int)(bytes * 2);
	int s = socket(AF_RDS, SOCK_SEQPACKET, 0), one = 1;

	if (s < 0) {
		*err = errno;
		*what = "socket";
		return -1;
	}
	if (buf < (1 << 20))
		buf = 1 << 20;
	if (setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(s, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	rds_set_port(&a, p);
	if (bind(s, (struct sockaddr *)&a, alen)) {
		*err = errno;
		*what = "bind";
		close(s);
		return -1;
	}
	/* Failed RDMA and atomics are reported even without NOTIFY_ME. */
	setsockopt(s, SOL_RDS, RDS_RECVERR, &one, sizeof(one));
	return s;
}

/* sendmsg with at most one SOL_RDS cmsg (type 0: none), blocking. */
static ssize_t send_msg(int s, const struct sockaddr_storage *to,
			const void *buf, size_t len, int type, const void *data,
			size_t dlen)
{
	return rds_send_cmsg(s, to, buf, len, type, data, dlen, -1);
}

/* recvmsg waiting at most @ms; 0 on success, -1 on timeout or error. */
static int recv_msg(int s, void *buf, size_t len, struct rds_rx *rx, int ms)
{
	return rds_recv_rx(s, buf, len, rx, ms) < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * Server
 */

#define MAX_COUNTERS 512
static uint64_t counters[MAX_COUNTERS] __attribute__((aligned(4096)));
static uint64_t counter_cookie[MAX_COUNTERS];

static void free_key(int s, uint64_t *cookie)
{
	struct rds_free_mr_args f = { .cookie = *cookie };

	if (*cookie)
		setsockopt(s, SOL_RDS, RDS_FREE_MR, &f, sizeof(f));
	*cookie = 0;
}

/**
 * serve - answer requests on @addr until the lifetime ends or OP_QUIT
 * @addr: local address
 * @alen: its length
 *
 * Return: exit status.
 */
static int serve(const struct sockaddr_storage *addr, socklen_t alen)
{
	static char buf[MAX_SIZE + 4096], rbuf[MAX_SIZE];
	/* WRITEs send the pattern the client checks; READs land elsewhere. */
	static char write_src[MAX_SIZE] __attribute__((aligned(4096)));
	static char read_dst[MAX_SIZE] __attribute__((aligned(4096)));
	double end = duration > 0 ? now_s() + duration : 0;
	const char *what;
	long served = 0, rdma_failed = 0;
	int s, err, i;

	s = rds_sock(addr, alen, port, 64L << 20, &err, &what);
	if (s < 0 && !strcmp(what, "socket"))
		die(1, "socket(AF_RDS): %s: %s", strerror(err), explain(err, what));
	if (s < 0)
		die(1, "bind %s port %d: %s%s%s", local_name, port, strerror(err),
		    explain(err, what) ? ": " : "", explain(err, what) ?: "");
	memset(write_src, 0x5a, sizeof(write_src));
	if (!quiet)
		fprintf(stderr, "rds-bench: serving on %s port %d\n", local_name, port);
	while (!interrupted && (!end || now_s() < end)) {
		struct bench_hdr *h = (struct bench_hdr *)buf, *r = (struct bench_hdr *)rbuf;
		struct rds_rx rx;
		size_t rlen;
		ssize_t n;
		int type = 0;
		const void *cm = NULL;
		size_t cmlen = 0;
		struct rds_iovec v;
		struct rds_rdma_args ra;
		struct rds_get_mr_args mr;

		if (recv_msg(s, buf, sizeof(buf), &rx, 500))
			continue;
		if (rx.is_note) {
			if (rx.note.status != RDS_RDMA_SUCCESS) {
				rdma_failed++;
				fprintf(stderr, "rds-bench: server: an RDMA/atomic failed: %s\n",
					rds_rdma_status_name(rx.note.status));
			}
			continue;
		}
		if (rx.len < (ssize_t)sizeof(*h) || h->magic != BENCH_MAGIC)
			continue;	/* atomics carry empty messages */
		served++;
		rlen = h->reply_len;
		if (rlen < sizeof(*r))
			rlen = sizeof(*r);
		if (rlen > sizeof(rbuf))
			rlen = sizeof(rbuf);
		memcpy(r, h, sizeof(*r));
		r->err = 0;
		switch (h->op) {
		case OP_QUIT:
			if (!quiet)
				fprintf(stderr, "rds-bench: told to stop after %ld requests\n",
					served);
			close(s);
			return 0;
		case OP_RDMA_WRITE:
		case OP_RDMA_READ:
			if (!rx.cookie || h->value == 0 || h->value > MAX_SIZE) {
				r->err = EINVAL;
				break;
			}
			v = (struct rds_iovec){
				.addr = (uintptr_t)(h->op == OP_RDMA_WRITE ?
						    write_src : read_dst),
				.bytes = h->value,
			};
			ra = (struct rds_rdma_args){
				.cookie = rx.cookie,
				.remote_vec = { .addr = 0, .bytes = h->value },
				.local_vec_addr = (uintptr_t)&v,
				.nr_local = 1,
				.flags = h->op == OP_RDMA_WRITE ? RDS_RDMA_READWRITE : 0,
				.user_token = h->seq,
			};
			type = RDS_CMSG_RDMA_ARGS;
			cm = &ra;
			cmlen = sizeof(ra);
			break;
		case OP_ATOMIC_SETUP:
			i = h->tid % MAX_COUNTERS;
			free_key(s, &counter_cookie[i]);
			counters[i] = 0;
			mr = (struct rds_get_mr_args){
				.vec = { (uintptr_t)&counters[i], sizeof(counters[i]) },
				.cookie_addr = (uintptr_t)&counter_cookie[i],
				.flags = RDS_RDMA_READWRITE,
			};
			type = RDS_CMSG_RDMA_MAP;
			cm = &mr;
			cmlen = sizeof(mr);
			break;
		case OP_ATOMIC_READ:
			i = h->tid % MAX_COUNTERS;
			r->value = __atomic_load_n(&counters[i], __ATOMIC_SEQ_CST);
			free_key(s, &counter_cookie[i]);
			break;
		default:
			break;
		}
		for (i = 0; i < 100; i++) {
			n = send_msg(s, &rx.from, rbuf, rlen, type, cm, cmlen);
			if (n >= 0 || (errno != EAGAIN && errno != ENOBUFS &&
				       errno != EINTR))
				break;
			usleep(1000);
		}
		if (n < 0 && type) {
			/* Tell the client why its RDMA or key did not happen. */
			r->err = errno;
			n = send_msg(s, &rx.from, rbuf, rlen, 0, NULL, 0);
		}
		if (n < 0 && !quiet)
			fprintf(stderr, "rds-bench: server: answer failed: %s\n",
				strerror(errno));
	}
	for (i = 0; i < MAX_COUNTERS; i++)
		free_key(s, &counter_cookie[i]);
	close(s);
	if (!quiet)
		fprintf(stderr, "rds-bench: served %ld requests (%ld RDMA/atomic failures)\n",
			served, rdma_failed);
	return 0;
}

/* ------------------------------------------------------------------------
 * Client
 */

/* One thread's share of a test. */
struct worker {
	pthread_t thread;
	int tid;
	enum test_kind kind;
	unsigned int size;	/* payload (bw) or RDMA bytes */
	int depth;
	double end;		/* absolute time the test stops */
	double t_start, t_stop;	/* when the measured part began and ended */
	/* results */
	volatile long ops;	/* completed, read by the progress loop */
	uint64_t bytes;
	uint64_t *lat;		/* ns, one per completed op */
	long nlat, cap;
	enum status status;
	char reason[200];
	bool verified;		/* atomic: counter matched */
	int done;		/* the thread finished */
	uint32_t nonce;		/* tells our answers from late ones to an
				 * earlier socket that had the same port */
};

struct slot {
	char *buf;		/* RDMA buffer; bw_zc: the request */
	bool zc_pending;	/* bw_zc: its cookie has not come back */
	bool answered;		/* bw_zc: answered, waiting for the cookie */
	uint64_t cookie;
	uint64_t sent;		/* ns; 0 = free */
	uint32_t seq;
	uint64_t result;	/* atomic: old value */
};

static void fail(struct worker *w, enum status st, const char *fmt, ...)
{
	va_list ap;

	if (w->status != ST_OK)
		return;		/* keep the first cause */
	w->status = st;
	va_start(ap, fmt);
	vsnprintf(w->reason, sizeof(w->reason), fmt, ap);
	va_end(ap);
}

static void fail_errno(struct worker *w, const char *call, int err)
{
	const char *why = explain(err, call);
	enum status st = (err == EOPNOTSUPP) ? ST_UNSUPPORTED : ST_FAILED;

	fail(w, st, "%s: %s%s%s", call, strerror(err), why ? ": " : "", why ?: "");
}

static void add_lat(struct worker *w, uint64_t ns)
{
	if (w->nlat == w->cap) {
		long cap = w->cap ? w->cap * 2 : 4096;
		uint64_t *p = realloc(w->lat, cap * sizeof(*p));

		if (!p)
			return;
		w->lat = p;
		w->cap = cap;
	}
	w->lat[w->nlat++] = ns;
}

/* Send, retrying while the connection comes up or the peer is congested. */
static int send_retry_f(struct worker *w, int s, const void *buf, size_t len,
			int type, const void *d, size_t dlen, const char *what,
			int flags)
{
	double give_up = now_s() + timeout_s;
	struct rds_cm cm = { .type = type, .data = d, .len = dlen };

	for (;;) {
		if (rds_sendmsg_cmf(s, &peer_addr, buf, len, &cm, type ? 1 : 0,
				    -1, flags) >= 0)
			return 0;
		if ((errno != EAGAIN && errno != ENOBUFS && errno != EINTR &&
		     errno != ENOTCONN) || now_s() > give_up || interrupted) {
			fail_errno(w, what, errno);
			return -1;
		}
		usleep(errno == ENOBUFS ? 200 : 2000);
	}
}

static int send_retry(struct worker *w, int s, const void *buf, size_t len,
		      int type, const void *d, size_t dlen, const char *what)
{
	return send_retry_f(w, s, buf, len, type, d, dlen, what, 0);
}

/* Wait for the answer to op @op (any slot); -1 on timeout or a bad answer. */
static int wait_answer(struct worker *w, int s, char *buf, size_t len, struct rds_rx *rx,
		       uint16_t op)
{
	double give_up = now_s() + timeout_s;
	struct bench_hdr *h = (struct bench_hdr *)buf;

	while (now_s() < give_up && !interrupted) {
		if (recv_msg(s, buf, len, rx, 200))
			continue;
		if (rx->is_note) {
			if (rx->note.status != RDS_RDMA_SUCCESS) {
				fail(w, ST_FAILED, "operation %" PRIu64 " completed with %s",
				     (uint64_t)rx->note.user_token,
				     rds_rdma_status_name(rx->note.status));
				return -1;
			}
			return 1;	/* a notification, not an answer */
		}
		if (rx->len >= (ssize_t)sizeof(*h) && h->magic == BENCH_MAGIC &&
		    h->nonce == w->nonce && h->op == op)
			return 0;
	}
	fail(w, ST_FAILED, "no answer from %s port %d within %g s (is `rds-bench -S` running there?)",
	     peer_name, port, timeout_s);
	return -1;
}

/* The first exchange also sets up the RDS connection. */
static int hello(struct worker *w, int s, char *buf, size_t len)
{
	struct bench_hdr h = { .magic = BENCH_MAGIC, .op = OP_HELLO, .tid = w->tid,
			       .nonce = w->nonce };
	double give_up = now_s() + timeout_s;
	struct bench_hdr *a = (struct bench_hdr *)buf;
	struct rds_rx rx;

	while (now_s() < give_up && !interrupted) {
		if (send_msg(s, &peer_addr, &h, sizeof(h), 0, NULL, 0) < 0) {
			if (errno != EAGAIN && errno != ENOBUFS && errno != ENOTCONN &&
			    errno != EINTR) {
				fail_errno(w, "sendmsg", errno);
				return -1;
			}
			usleep(20000);
			continue;
		}
		if (recv_msg(s, buf, len, &rx, 1000) == 0 &&
		    rx.len >= (ssize_t)sizeof(h) && a->magic == BENCH_MAGIC &&
		    a->op == OP_HELLO && a->nonce == w->nonce)
			return 0;
	}
	fail(w, ST_FAILED, "no answer from %s port %d within %g s (is `rds-bench -S` running there?)",
	     peer_name, port, timeout_s);
	return -1;
}

/* Issue the request of slot @i. */
static int issue(struct worker *w, int s, struct slot *sl, int i, char *req,
		 uint32_t seq)
{
	struct bench_hdr *h = (struct bench_hdr *)req;
	size_t len = sizeof(*h);
	struct rds_get_mr_args mr;
	int type = 0;
	const void *cm = NULL;
	size_t cmlen = 0;
	uint32_t zc_cookie;

	memset(h, 0, sizeof(*h));
	h->magic = BENCH_MAGIC;
	h->slot = i;
	h->seq = seq;
	h->tid = w->tid;
	h->nonce = w->nonce;
	h->reply_len = sizeof(*h);
	switch (w->kind) {
	case T_BW_ZC:
		/* The slot's own buffer, free again since its cookie came. */
		len = w->size > sizeof(*h) ? w->size : sizeof(*h);
		h->op = OP_REQ;
		sl[i].seq = seq;
		sl[i].sent = now_ns();
		h->stamp = sl[i].sent;
		memcpy(sl[i].buf, h, sizeof(*h));
		sl[i].zc_pending = true;
		zc_cookie = i;
		return send_retry_f(w, s, sl[i].buf, len, RDS_CMSG_ZCOPY_COOKIE,
				    &zc_cookie, sizeof(zc_cookie),
				    "sendmsg with MSG_ZEROCOPY", MSG_ZEROCOPY);
	case T_BW:
		len = w->size > sizeof(*h) ? w->size : sizeof(*h);
		/* fall through */
	case T_RATE:
	case T_RTT:
		h->op = OP_REQ;
		break;
	case T_RDMA_WRITE:
	case T_RDMA_READ:
		h->op = w->kind == T_RDMA_WRITE ? OP_RDMA_WRITE : OP_RDMA_READ;
		h->value = w->size;
		if (w->kind == T_RDMA_WRITE) {
			sl[i].buf[0] = 0;
			sl[i].buf[w->size - 1] = 0;
		}
		mr = (struct rds_get_mr_args){
			.vec = { (uintptr_t)sl[i].buf, w->size },
			.cookie_addr = (uintptr_t)&sl[i].cookie,
			.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE,
		};
		if (use_getmr) {
			if (setsockopt(s, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr))) {
				fail_errno(w, "RDS_GET_MR", errno);
				return -1;
			}
			type = RDS_CMSG_RDMA_DEST;
			cm = &sl[i].cookie;
			cmlen = sizeof(sl[i].cookie);
		} else {
			type = RDS_CMSG_RDMA_MAP;
			cm = &mr;
			cmlen = sizeof(mr);
		}
		break;
	default:
		return -1;
	}
	sl[i].seq = seq;
	sl[i].sent = now_ns();
	h->stamp = sl[i].sent;
	return send_retry(w, s, req, len, type, cm, cmlen,
			  type == RDS_CMSG_RDMA_MAP ? "sendmsg with RDS_CMSG_RDMA_MAP" : "sendmsg");
}

/**
 * run_requests - the request/answer tests (rate, bw, rtt, RDMA)
 * @w: this thread's share
 * @s: its socket, connection up
 * @buf: receive buffer of MAX_SIZE + 4096 bytes
 */
static void run_requests(struct worker *w, int s, char *buf)
{
	static const size_t rxlen = MAX_SIZE + 4096;
	struct slot *sl = calloc(w->depth, sizeof(*sl));
	char *req = calloc(1, MAX_SIZE + 4096);
	bool rdma = w->kind == T_RDMA_WRITE || w->kind == T_RDMA_READ;
	bool zc = w->kind == T_BW_ZC;
	uint16_t op = w->kind == T_RDMA_WRITE ? OP_RDMA_WRITE :
		      w->kind == T_RDMA_READ ? OP_RDMA_READ : OP_REQ;
	uint32_t seq = 1;
	/* bw_zc: slots answered whose cookie has not come back */
	int i, inflight = 0, waiting = 0;

	if (!sl || !req) {
		fail(w, ST_FAILED, "out of memory");
		goto out;
	}
	for (i = 0; (rdma || zc) && i < w->depth; i++) {
		sl[i].buf = aligned_alloc(4096, (w->size + 4095) & ~4095u);
		if (!sl[i].buf) {
			fail(w, ST_FAILED, "out of memory");
			goto out;
		}
		memset(sl[i].buf, 0, w->size);
	}
	if (zc) {
		int one = 1;

		if (setsockopt(s, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one))) {
			fail(w, ST_UNSUPPORTED, "SO_ZEROCOPY: %s", strerror(errno));
			goto out;
		}
	}
	for (i = 0; i < w->depth; i++) {
		if (issue(w, s, sl, i, req, seq++))
			goto drain;
		inflight++;
	}
	while (inflight || waiting) {
		struct bench_hdr *h = (struct bench_hdr *)buf;
		double give_up = now_s() + timeout_s;
		struct rds_rx rx;
		int k;

		for (;;) {
			if (interrupted || now_s() > give_up) {
				fail(w, ST_FAILED, "%d answer(s) and %d zerocopy cookie(s) from %s missing after %g s",
				     inflight, waiting, peer_name, timeout_s);
				goto drain;
			}
			if (recv_msg(s, buf, rxlen, &rx, 200))
				continue;
			/* Cookies: slots answered already can go again. */
			for (k = 0; k < (int)rx.nzc; k++) {
				uint32_t c = rx.zc[k];

				if (c >= (uint32_t)w->depth || !sl[c].zc_pending)
					continue;
				sl[c].zc_pending = false;
				if (!sl[c].answered)
					continue;
				sl[c].answered = false;
				waiting--;
				if (now_s() < w->end && !interrupted) {
					if (issue(w, s, sl, c, req, seq++))
						goto drain;
					inflight++;
				}
			}
			if (!inflight && !waiting)
				goto out;
			if (rx.is_note) {
				if (rx.note.status != RDS_RDMA_SUCCESS) {
					fail(w, ST_FAILED, "RDMA completed with %s",
					     rds_rdma_status_name(rx.note.status));
					goto drain;
				}
				continue;
			}
			if (rx.len >= (ssize_t)sizeof(*h) && h->magic == BENCH_MAGIC &&
			    h->nonce == w->nonce && h->op == op &&
			    h->slot < w->depth && sl[h->slot].sent &&
			    h->seq == sl[h->slot].seq)
				break;
		}
		k = h->slot;
		inflight--;
		if (h->err) {
			const char *why = explain(h->err, "sendmsg");

			fail(w, h->err == EOPNOTSUPP ? ST_UNSUPPORTED : ST_FAILED,
			     "the server's RDMA failed: %s%s%s", strerror(h->err),
			     why ? ": " : "", why ?: "");
			goto drain;
		}
		add_lat(w, now_ns() - sl[k].sent);
		sl[k].sent = 0;
		if (w->kind == T_RDMA_WRITE &&
		    ((uint8_t)sl[k].buf[0] != 0x5a ||
		     (uint8_t)sl[k].buf[w->size - 1] != 0x5a)) {
			fail(w, ST_FAILED, "RDMA WRITE answered but the data is not in place (first byte 0x%02x, last 0x%02x, want 0x5a)",
			     (uint8_t)sl[k].buf[0], (uint8_t)sl[k].buf[w->size - 1]);
			goto drain;
		}
		w->bytes += is_bw(w->kind) ? (w->size > sizeof(*h) ? w->size : sizeof(*h)) :
			    rdma ? w->size : sizeof(*h);
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
		if (zc && sl[k].zc_pending) {
			/* Its buffer is still the kernel's: wait for the cookie. */
			sl[k].answered = true;
			waiting++;
			continue;
		}
		if (now_s() < w->end && !interrupted) {
			if (issue(w, s, sl, k, req, seq++))
				goto drain;
			inflight++;
		}
	}
	goto out;
drain:
	/* Give the answers in flight a moment, so the next test starts clean. */
	for (i = 0; inflight > 0 && i < 10; i++) {
		struct rds_rx rx;

		if (recv_msg(s, buf, rxlen, &rx, 100) == 0 && !rx.is_note)
			inflight--;
	}
out:
	for (i = 0; sl && i < w->depth; i++)
		free(sl[i].buf);
	free(sl);
	free(req);
}

/**
 * run_atomics - fetch-and-add of 1 on the server's counter, @depth in flight
 * @w: this thread's share
 * @s: its socket, connection up
 * @buf: receive buffer
 *
 * The completion of each is its RDS_CMSG_RDMA_STATUS (NOTIFY_ME, the slot
 * as token); its old value lands in the slot.  The server reads the
 * counter back at the end: it must equal the number of completed adds.
 */
static void run_atomics(struct worker *w, int s, char *buf)
{
	static const size_t rxlen = MAX_SIZE + 4096;
	struct bench_hdr h = { .magic = BENCH_MAGIC, .op = OP_ATOMIC_SETUP, .tid = w->tid,
			       .nonce = w->nonce };
	struct slot *sl = calloc(w->depth, sizeof(*sl));
	uint64_t cookie, done = 0;
	int i, inflight = 0;
	struct rds_rx rx;
	int r;

	if (!sl) {
		fail(w, ST_FAILED, "out of memory");
		return;
	}
	if (send_retry(w, s, &h, sizeof(h), 0, NULL, 0, "sendmsg"))
		goto out;
	do {
		r = wait_answer(w, s, buf, rxlen, &rx, OP_ATOMIC_SETUP);
	} while (r == 1);
	if (r)
		goto out;
	if (((struct bench_hdr *)buf)->err || !rx.cookie) {
		int e = ((struct bench_hdr *)buf)->err;

		if (e)
			fail_errno(w, "the server's RDS_CMSG_RDMA_MAP", e);
		else
			fail(w, ST_FAILED, "the server's answer carries no key");
		goto out;
	}
	cookie = rx.cookie;
	for (;;) {
		/* Keep @depth atomics in flight until the end. */
		for (i = 0; i < w->depth && now_s() < w->end && !interrupted; i++) {
			struct rds_atomic_args a;

			if (sl[i].sent)
				continue;
			a = (struct rds_atomic_args){
				.cookie = cookie,
				.local_addr = (uintptr_t)&sl[i].result,
				.remote_addr = 0,
				.fadd = { .add = 1 },
				.flags = RDS_RDMA_NOTIFY_ME |
					 (w->kind == T_ATOMIC_SILENT ?
					  RDS_RDMA_SILENT : 0),
				.user_token = i,
			};
			sl[i].sent = now_ns();
			if (send_retry(w, s, NULL, 0, RDS_CMSG_ATOMIC_FADD, &a, sizeof(a),
				       "sendmsg with RDS_CMSG_ATOMIC_FADD")) {
				sl[i].sent = 0;
				goto drain;
			}
			inflight++;
		}
		if (!inflight)
			break;
		r = wait_answer(w, s, buf, rxlen, &rx, 0xffff);
		if (r != 1)
			goto drain;
		i = rx.note.user_token;
		if (i < 0 || i >= w->depth || !sl[i].sent)
			continue;
		add_lat(w, now_ns() - sl[i].sent);
		sl[i].sent = 0;
		inflight--;
		done++;
		w->bytes += 8;
		__atomic_add_fetch(&w->ops, 1, __ATOMIC_RELAXED);
	}
	/* Read the counter back (this also frees the server's key). */
	h.op = OP_ATOMIC_READ;
	if (send_retry(w, s, &h, sizeof(h), 0, NULL, 0, "sendmsg"))
		goto out;
	do {
		r = wait_answer(w, s, buf, rxlen, &rx, OP_ATOMIC_READ);
	} while (r == 1);
	if (r)
		goto out;
	w->verified = ((struct bench_hdr *)buf)->value == done;
	if (!w->verified)
		fail(w, ST_FAILED, "the counter is %" PRIu64 " after %" PRIu64 " adds",
		     (uint64_t)((struct bench_hdr *)buf)->value, done);
	goto out;
drain:
	if (w->status == ST_FAILED && !w->ops) {
		/*
		 * Not one atomic worked: this pair of modules and devices
		 * cannot do them (Debian's in-tree RDS posts only masked
		 * atomics, which rxe does not have, and registers keys
		 * without remote atomic access).
		 */
		char why[sizeof(w->reason)];

		snprintf(why, sizeof(why), "%s", w->reason);
		w->status = ST_UNSUPPORTED;
		snprintf(w->reason, sizeof(w->reason),
			 "no atomic completed (%.120s): the modules or devices cannot do them here",
			 why);
	}
	for (i = 0; inflight > 0 && i < 20; i++)
		if (recv_msg(s, buf, rxlen, &rx, 100) == 0 && rx.is_note)
			inflight--;
	/* Best effort: free the key. */
	h.op = OP_ATOMIC_READ;
	send_msg(s, &peer_addr, &h, sizeof(h), 0, NULL, 0);
out:
	free(sl);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char *buf = malloc(MAX_SIZE + 4096);
	long inflight = (long)w->depth * ((is_bw(w->kind) ? w->size : 0) + 4096);
	const char *what;
	int s, err;

	if (!buf) {
		fail(w, ST_FAILED, "out of memory");
		__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	s = rds_sock(&local_addr, local_len, 0, inflight, &err, &what);
	if (s < 0) {
		fail_errno(w, what, err);
		free(buf);
		__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	if (hello(w, s, buf, MAX_SIZE + 4096) == 0) {
		/* The clock starts once the connection is up. */
		w->t_start = now_s();
		w->end = w->t_start + duration;
		if (is_atomic(w->kind))
			run_atomics(w, s, buf);
		else
			run_requests(w, s, buf);
	}
	w->t_stop = now_s();
	close(s);
	free(buf);
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct result {
	enum test_kind kind;
	unsigned int size;
	enum status status;
	char reason[200];
	long ops;
	double secs, ops_s, mb_s;
	double p50, p90, p99, max;	/* us */
	bool verified;
};

static struct result results[T_NR * MAX_SIZES];
static int nresults;

/* Run one test on all threads and fold their results. */
static void run_test(enum test_kind kind, unsigned int size)
{
	struct worker *w = calloc(nthreads, sizeof(*w));
	struct result *r = &results[nresults++];
	double start = now_s(), last = start;
	uint64_t *all = NULL, bytes = 0;
	long n = 0, k = 0;
	int i, running;

	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->size = size;
	if (!w) {
		r->status = ST_FAILED;
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		return;
	}
	for (i = 0; i < nthreads; i++) {
		w[i].tid = i;
		w[i].nonce = (uint32_t)random();
		w[i].kind = kind;
		w[i].size = size;
		w[i].depth = kind == T_RTT ? 1 : depth;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]))
			die(1, "pthread_create: %s", strerror(errno));
	}
	/* Progress once a second while the threads work. */
	do {
		usleep(20000);
		running = 0;
		for (i = 0; i < nthreads; i++)
			running += !__atomic_load_n(&w[i].done, __ATOMIC_ACQUIRE);
		if (progress && !quiet && now_s() - last >= 1 && running) {
			long ops = 0;

			for (i = 0; i < nthreads; i++)
				ops += __atomic_load_n(&w[i].ops, __ATOMIC_RELAXED);
			fprintf(stderr, "rds-bench: %s %u: %.0f/%g s, %ld ops, %.0f ops/s\n",
				test_names[kind], size, now_s() - start, duration, ops,
				ops / (now_s() - start));
			last = now_s();
		}
	} while (running);
	for (i = 0; i < nthreads; i++)
		pthread_join(w[i].thread, NULL);
	r->verified = is_atomic(kind);
	{
		double first = 0, last_stop = 0;

		for (i = 0; i < nthreads; i++) {
			if (!w[i].t_start)
				continue;
			if (!first || w[i].t_start < first)
				first = w[i].t_start;
			if (w[i].t_stop > last_stop)
				last_stop = w[i].t_stop;
		}
		r->secs = first ? last_stop - first : now_s() - start;
		if (r->secs <= 0)
			r->secs = 1e-6;
	}
	for (i = 0; i < nthreads; i++) {
		n += w[i].nlat;
		r->ops += w[i].ops;
		bytes += w[i].bytes;
		if (w[i].status > r->status) {
			r->status = w[i].status;
			snprintf(r->reason, sizeof(r->reason), "%s", w[i].reason);
		}
		if (is_atomic(kind) && !w[i].verified)
			r->verified = false;
	}
	if (n)
		all = malloc(n * sizeof(*all));
	for (i = 0; i < nthreads; i++) {
		if (all)
			memcpy(all + k, w[i].lat, w[i].nlat * sizeof(*all));
		k += w[i].nlat;
		free(w[i].lat);
	}
	if (all) {
		qsort(all, n, sizeof(*all), cmp_u64);
		r->p50 = all[(n - 1) * 50 / 100] / 1e3;
		r->p90 = all[(n - 1) * 90 / 100] / 1e3;
		r->p99 = all[(n - 1) * 99 / 100] / 1e3;
		r->max = all[n - 1] / 1e3;
		free(all);
	}
	if (r->status == ST_OK && !r->ops) {
		r->status = ST_FAILED;
		snprintf(r->reason, sizeof(r->reason), "no operation completed");
	}
	r->ops_s = r->ops / r->secs;
	r->mb_s = bytes / r->secs / 1e6;
	free(w);
}

/* JSON string: the reasons are ours, but quote them properly anyway. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_json(void)
{
	int i;

	printf("{\"tool\": \"rds-bench\", \"version\": 1, \"local\": ");
	json_str(local_name);
	printf(", \"peer\": ");
	json_str(peer_name);
	printf(", \"port\": %d, \"threads\": %d, \"depth\": %d, \"duration\": %g, \"key_mode\": \"%s\", \"results\": [",
	       port, nthreads, depth, duration, use_getmr ? "getmr" : "map");
	for (i = 0; i < nresults; i++) {
		struct result *r = &results[i];

		printf("%s\n  {\"test\": \"%s\", \"size\": %u, \"status\": \"%s\"",
		       i ? "," : "", test_names[r->kind], r->size, status_names[r->status]);
		if (r->reason[0]) {
			printf(", \"reason\": ");
			json_str(r->reason);
		}
		printf(", \"ops\": %ld, \"seconds\": %.3f, \"ops_per_sec\": %.1f, \"mb_per_sec\": %.3f",
		       r->ops, r->secs, r->ops_s, r->mb_s);
		if (r->ops)
			printf(", \"latency_us\": {\"p50\": %.1f, \"p90\": %.1f, \"p99\": %.1f, \"max\": %.1f}",
			       r->p50, r->p90, r->p99, r->max);
		if (is_atomic(r->kind))
			printf(", \"verified\": %s", r->verified ? "true" : "false");
		printf("}");
	}
	printf("\n]}\n");
}

static void print_human(void)
{
	int i;

	printf("rds-bench: %s -> %s port %d, %d thread(s), depth %d, %g s per test, keys by %s\n",
	       local_name, peer_name, port, nthreads, depth, duration,
	       use_getmr ? "RDS_GET_MR" : "RDS_CMSG_RDMA_MAP");
	printf("%-11s %8s %10s %9s %9s %9s %9s %9s  %s\n", "test", "size", "ops/s",
	       "MB/s", "p50 us", "p90 us", "p99 us", "max us", "status");
	for (i = 0; i < nresults; i++) {
		struct result *r = &results[i];

		if (r->ops)
			printf("%-11s %8u %10.0f %9.2f %9.0f %9.0f %9.0f %9.0f  %s",
			       test_names[r->kind], r->size, r->ops_s, r->mb_s,
			       r->p50, r->p90, r->p99, r->max, status_names[r->status]);
		else
			printf("%-11s %8u %10s %9s %9s %9s %9s %9s  %s",
			       test_names[r->kind], r->size, "-", "-", "-", "-", "-", "-",
			       status_names[r->status]);
		if (r->reason[0])
			printf(": %s", r->reason);
		printf("\n");
	}
}

static void parse_tests(char *list)
{
	char *t, *save = NULL;
	int k;

	memset(tests_on, 0, sizeof(tests_on));
	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "all")) {
			for (k = 0; k < T_NR; k++)
				tests_on[k] = true;
			continue;
		}
		if (!strcmp(t, "rdma")) {
			tests_on[T_RDMA_WRITE] = tests_on[T_RDMA_READ] = true;
			continue;
		}
		for (k = 0; k < T_NR; k++)
			if (!strcmp(t, test_names[k]))
				break;
		if (k == T_NR) {
			fprintf(stderr, "rds-bench: unknown test %s\n", t);
			usage();
		}
		tests_on[k] = true;
	}
}

static void parse_sizes(char *list)
{
	char *t, *save = NULL;

	nsizes = 0;
	for (t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (nsizes == MAX_SIZES) {
			fprintf(stderr, "rds-bench: at most %d sizes\n", MAX_SIZES);
			usage();
		}
		sizes[nsizes] = parse_size(t);
		if (!sizes[nsizes]) {
			fprintf(stderr, "rds-bench: bad size %s (1 byte to 1M)\n", t);
			usage();
		}
		nsizes++;
	}
	if (!nsizes)
		usage();
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "stop", no_argument, NULL, 'x' },
		{ "quiet", no_argument, NULL, 'Q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *source = NULL, *what;
	bool server = false, dur_set = false;
	int c, i, k, s, err, rc = 0;

	while ((c = getopt_long(argc, argv, "Sm:d:s:q:t:p:I:k:w:PjxQh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'S':
			server = true;
			break;
		case 'm':
			parse_tests(optarg);
			break;
		case 'd':
			duration = parse_seconds(optarg, 0);
			dur_set = true;
			break;
		case 's':
			parse_sizes(optarg);
			break;
		case 'q':
			depth = parse_int(optarg, 1, MAX_DEPTH);
			break;
		case 't':
			nthreads = parse_int(optarg, 1, MAX_THREADS);
			break;
		case 'p':
			port = parse_int(optarg, 2, 65535);
			break;
		case 'I':
			source = optarg;
			break;
		case 'k':
			if (!strcmp(optarg, "map"))
				use_getmr = false;
			else if (!strcmp(optarg, "getmr"))
				use_getmr = true;
			else
				usage();
			break;
		case 'w':
			timeout_s = parse_seconds(optarg, 0.1);
			break;
		case 'P':
			progress = true;
			break;
		case 'j':
			json = true;
			break;
		case 'x':
			stop_server = true;
			break;
		case 'Q':
			quiet = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	srandom(now_ns() ^ getpid());

	if (server) {
		if (!dur_set)
			duration = 0;
		if (rds_parse_addr("rds-bench", argv[optind], &local_addr, &local_len))
			return 2;
		rds_addr_name(&local_addr, local_name, sizeof(local_name));
		return serve(&local_addr, local_len);
	}
	if (duration <= 0) {
		fprintf(stderr, "rds-bench: -d must be more than 0 for the client\n");
		usage();
	}
	if (rds_parse_addr("rds-bench", argv[optind], &peer_addr, &peer_len))
		return 2;
	if (source) {
		if (rds_parse_addr("rds-bench", source, &local_addr, &local_len))
			return 2;
	} else if (rds_route_source(&peer_addr, peer_len, &local_addr, &local_len)) {
		fprintf(stderr, "rds-bench: no route to %s; give a source with -I\n",
			argv[optind]);
		return 2;
	}
	if (local_addr.ss_family != peer_addr.ss_family) {
		fprintf(stderr, "rds-bench: source and peer address families differ\n");
		return 2;
	}
	rds_set_port(&peer_addr, port);
	rds_addr_name(&peer_addr, peer_name, sizeof(peer_name));
	rds_addr_name(&local_addr, local_name, sizeof(local_name));
	if (duration >= 10)
		progress = true;

	/* Set-up errors are the same for every test: report them once. */
	s = rds_sock(&local_addr, local_len, 0, 0, &err, &what);
	if (s < 0) {
		const char *why = explain(err, what);

		if (!strcmp(what, "socket"))
			die(1, "socket(AF_RDS): %s: %s", strerror(err), why);
		die(1, "bind %s: %s%s%s", local_name, strerror(err),
		    why ? ": " : "", why ?: "");
	}
	close(s);

	for (k = 0; k < T_NR && !interrupted; k++) {
		if (!tests_on[k])
			continue;
		if (is_bw(k) || k == T_RDMA_WRITE || k == T_RDMA_READ) {
			for (i = 0; i < nsizes && !interrupted; i++)
				run_test(k, sizes[i]);
		} else {
			run_test(k, is_atomic(k) ? 8 : sizeof(struct bench_hdr));
		}
		if (!quiet && !json)
			fprintf(stderr, "rds-bench: %s done\n", test_names[k]);
	}
	if (stop_server) {
		struct bench_hdr h = { .magic = BENCH_MAGIC, .op = OP_QUIT };

		s = rds_sock(&local_addr, local_len, 0, 0, &err, &what);
		if (s >= 0) {
			send_msg(s, &peer_addr, &h, sizeof(h), 0, NULL, 0);
			usleep(100000);
			close(s);
		}
	}
	if (json)
		print_json();
	else
		print_human();
	for (i = 0; i < nresults; i++)
		if (results[i].status == ST_FAILED)
			rc = 1;
	if (interrupted)
		rc = 1;
	return rc;
}
