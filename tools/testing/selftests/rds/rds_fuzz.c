// SPDX-License-Identifier: GPL-2.0
/*
 * rds_fuzz - a seeded syscall fuzzer for PF_RDS sockets.
 *
 * RDS_FUZZ_PROCS processes (fork) of RDS_FUZZ_THREADS threads each run
 * random sequences of socket(), bind(), connect(), sendmsg() with every
 * SOL_RDS cmsg (RDMA args/dest/map, the four atomics, zerocopy cookies,
 * bogus types, wrong cmsg_len, several at once) and hostile iovec shapes
 * (lengths at and around 0, 1, PAGE_SIZE, 1 MiB, huge; unmapped, kernel
 * and overlapping addresses; up to UIO_MAXIOV + 1 iovecs; stale, forged
 * and real cookies), recvmsg() (MSG_DONTWAIT, MSG_PEEK, tiny buffers),
 * SOL_RDS and SOL_SOCKET set/getsockopt() (MR sockopts, RDS_INFO_* with
 * random lengths), poll(), ioctl(), dup() and close().  The threads of a
 * process share one table of sockets, so close() races everything else.
 * Destinations: the peer (which answers pings on port 0), this node's own
 * addresses (delivered by loopback), 127.0.0.1/::1 and documentation
 * addresses nobody owns.  Every call is bounded: sends and receives are
 * MSG_DONTWAIT, poll() waits at most 20 ms, sockets get short timeouts.
 *
 * The oracle: every process finishes by itself (not killed by a signal),
 * no received message is longer than its buffer without MSG_TRUNC, no
 * getsockopt() succeeds with a longer length than it was given, and after
 * everything is closed a fresh socket still delivers a message to another
 * one on this node's address and gets a pong from the peer.  The VM
 * harness fails the run on any kernel splat (WARNING, BUG, KASAN, ...).
 *
 * Environment:
 *   RDS_FUZZ_SEED      seed (default: from the time); printed first
 *   RDS_FUZZ_SECONDS   run time (default 60)
 *   RDS_FUZZ_PROCS     processes (default 3)
 *   RDS_FUZZ_THREADS   threads per process (default 4)
 *   RDS_FUZZ_OPS       stop each worker after this many calls (0: no limit)
 *   RDS_FUZZ_WORKER=P.T  run only worker P.T of the seed (1 process, 1 thread)
 *   RDS_FUZZ_VERBOSE=1 log every call and its result on stderr
 *   RDS_LOCAL_ADDR(6), RDS_PEER_ADDR(6)   as for every test (README)
 *
 * Reproducing: each worker "p.t" draws from its own generator, seeded
 * from the run's seed and its index (both printed), so
 *   RDS_FUZZ_SEED=N RDS_FUZZ_PROCS=1 RDS_FUZZ_THREADS=1 RDS_FUZZ_VERBOSE=1
 * replays worker 0.0's calls exactly (RDS_FUZZ_WORKER=P.T: worker P.T's
 * own sequence, which is what P.T did in a multi-worker run only as far as
 * shared state did not steer it).  With more workers a worker's draws
 * depend on shared state (which sockets and binds other workers left, the
 * kernel's results), so its later calls diverge between runs: a failure of
 * a multi-worker run reproduces statistically, not call for call.  RDS_FUZZ_OPS bisects a failing sequence down to its last call.
 * In the cluster: put the variables on rds_fuzz's line in tests.txt.
 */
#include <pthread.h>
#include <stdarg.h>
#include <sys/time.h>

/* The harness is not used here (plain TAP); only rds_test.h's helpers. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "rds_test.h"
#pragma GCC diagnostic pop

#ifndef UIO_MAXIOV
#define UIO_MAXIOV	1024
#endif
#ifndef SO_RDS_MSG_RXPATH_LATENCY
#define SO_RDS_MSG_RXPATH_LATENCY	10
#endif
#ifndef MSG_CMSG_COMPAT
#define MSG_CMSG_COMPAT	0x80000000	/* kernel-internal: must be refused */
#endif
#ifndef SIOCINQ
#define SIOCINQ		FIONREAD
#endif
#ifndef SIOCOUTQ
#define SIOCOUTQ	TIOCOUTQ
#endif

#define PG		4096UL
#define MIB		(1UL << 20)
/* The kernel-writable scratch of a worker, then RESERVE_SZ of PROT_NONE. */
#define SCRATCH_SZ	(2 * MIB + 4 * PG)
#define RESERVE_SZ	(16 * MIB)
#define NSLOTS		16
#define NCOOKIES	64
#define NBOUND		16
#define PORT_BASE	40000
#define NPORTS		32
#define CTRL_SZ		8192
#define NRVEC		1100

static uint64_t seed;
static int seconds = 60;
static int nprocs = 3;
static int nthreads = 4;
static unsigned long max_ops;
static int only_proc = -1, only_thread = -1;	/* RDS_FUZZ_WORKER=P.T */
static bool verbose;
static struct timespec deadline;

/* Shared by the threads of one process. */
static int slots[NSLOTS];
static uint64_t cookies[NCOOKIES];
static struct sockaddr_storage bound[NBOUND];
static pthread_mutex_t bound_lock = PTHREAD_MUTEX_INITIALIZER;
static int anomalies;

struct worker {
	int proc, id;
	uint64_t seed, rng;
	unsigned long ops;
	pthread_t thread;
	char *buf;		/* SCRATCH_SZ, then a hole */
	char *hole;		/* RESERVE_SZ bytes no access may touch */
	struct iovec *iov;	/* UIO_MAXIOV + 2 */
	struct rds_iovec *rvec;	/* NRVEC */
	char *ctrl;		/* CTRL_SZ, aligned */
	char cdesc[96];		/* the last sendmsg's cmsg types, for the log */
};

static uint64_t rnd(struct worker *w)
{
	return rds_splitmix64(&w->rng);
}

/* Uniform in [0, n) (n > 0). */
static uint32_t rn(struct worker *w, uint32_t n)
{
	return (uint32_t)(rnd(w) % n);
}

/* True with probability 1/n. */
static bool one_in(struct worker *w, uint32_t n)
{
	return rn(w, n) == 0;
}

static bool past_deadline(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec > deadline.tv_sec ||
	       (t.tv_sec == deadline.tv_sec && t.tv_nsec >= deadline.tv_nsec);
}

/* Log one call (RDS_FUZZ_VERBOSE=1): one write() per line. */
static void __attribute__((format(printf, 3, 4)))
vlog(struct worker *w, long r, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, e = errno;

	if (!verbose)
		return;
	n = snprintf(line, sizeof(line), "[%d.%d #%lu] ", w->proc, w->id,
		     w->ops);
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 40)
		n = sizeof(line) - 40;
	if (r < 0)
		n += snprintf(line + n, sizeof(line) - n, " = -1 %s\n",
			      strerror(e));
	else
		n += snprintf(line + n, sizeof(line) - n, " = %ld\n", r);
	if (write(2, line, n) < 0)
		e = errno;	/* nowhere to say it */
	errno = e;
}

static void anomaly(struct worker *w, const char *what, long a, long b)
{
	__atomic_add_fetch(&anomalies, 1, __ATOMIC_RELAXED);
	printf("# anomaly in worker %d.%d op %lu: %s (%ld, %ld)\n",
	       w->proc, w->id, w->ops, what, a, b);
	fflush(stdout);
}

/* ---- values --------------------------------------------------------- */

/* A length at or around one of the limits. */
static uint64_t pick_len(struct worker *w)
{
	static const uint64_t lens[] = {
		0, 1, 2, 7, 8, 63, 64, PG - 1, PG, PG + 1, 2 * PG,
		65535, 65536, 65537, MIB - 1, MIB, MIB + 1, 2 * MIB,
		0x7fffffffULL, 0x80000000ULL, 0xffffffffULL, 1ULL << 32,
		~0ULL, ~0ULL >> 1,
	};

	if (one_in(w, 3))
		return rn(w, 9000);
	return lens[rn(w, sizeof(lens) / sizeof(lens[0]))];
}

/* A length that stays inside the scratch (for buffers the kernel writes). */
static uint64_t pick_small_len(struct worker *w)
{
	static const uint64_t lens[] = {
		0, 1, 2, 7, 8, 16, 48, 64, 256, PG - 1, PG, PG + 1,
		65536, MIB - 1, MIB, MIB + 1,
	};

	if (one_in(w, 3))
		return rn(w, 5000);
	return lens[rn(w, sizeof(lens) / sizeof(lens[0]))];
}

/*
 * A user address the kernel may read or write len bytes at: mostly in the
 * scratch, else NULL, inaccessible memory, the kernel, non-canonical; never
 * our own state.
 */
static void *pick_ptr(struct worker *w, uint64_t len)
{
	uint64_t off;

	switch (rn(w, 16)) {
	case 0:
		return NULL;
	case 1:
		return w->hole;
	case 2:
		return RDS_KERNEL_PTR;
	case 3:		/* the last bytes, running into the hole */
		return w->buf + SCRATCH_SZ - 1 - rn(w, 64);
	case 4:
		return w->hole + rn(w, RESERVE_SZ);
	case 5:
		if (one_in(w, 2))
			return (void *)(uintptr_t)(rnd(w) | (1ULL << 47));
		return w->hole + rn(w, RESERVE_SZ);
	default:
		if (len >= SCRATCH_SZ)
			return w->buf;
		off = rn(w, (uint32_t)(SCRATCH_SZ - len));
		if (!one_in(w, 4))
			off &= ~7ULL;
		return w->buf + off;
	}
}

/* A pointer into the scratch with room for len bytes (len < SCRATCH_SZ). */
static void *scratch(struct worker *w, uint64_t len)
{
	return w->buf + (rn(w, (uint32_t)(SCRATCH_SZ - len)) & ~7U);
}

static uint64_t pick_cookie(struct worker *w)
{
	uint64_t c = __atomic_load_n(&cookies[rn(w, NCOOKIES)],
				     __ATOMIC_RELAXED);

	switch (rn(w, 8)) {
	case 0:
		return 0;
	case 1:
		return rnd(w);
	case 2:		/* forged: one bit off */
		return c ^ (1ULL << rn(w, 64));
	case 3:		/* another offset in the same key */
		return c + ((uint64_t)rn(w, 2 * MIB) << 32);
	case 4:
		return (uint32_t)c;
	default:	/* real, maybe freed (stale) or another socket's */
		return c;
	}
}

static void save_cookie(struct worker *w, uint64_t c)
{
	if (c)
		__atomic_store_n(&cookies[rn(w, NCOOKIES)], c, __ATOMIC_RELAXED);
}

static const char *const addrs4[] = {
	NULL /* local */, NULL /* peer */, "127.0.0.1", "127.0.0.2",
	"192.0.2.99", "198.51.100.7", "203.0.113.5", "0.0.0.0",
	"255.255.255.255", "224.0.0.1", "192.0.2.255",
};

static const char *const addrs6[] = {
	NULL, NULL, "::1", "2001:db8::63", "2001:db8:1::5", "::",
	"::ffff:192.0.2.1", "::ffff:127.0.0.1", "fe80::1", "ff02::1",
	"::ffff:255.255.255.255",
};

static uint16_t pick_port(struct worker *w)
{
	switch (rn(w, 8)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return (uint16_t)rnd(w);
	default:
		return PORT_BASE + rn(w, NPORTS);
	}
}

/*
 * The workers turn SO_TIMESTAMP* on and off on many sockets, and each time
 * the last one goes the kernel patches its code (the netstamp static key)
 * while the other vCPU runs the receive path.  Under QEMU's TCG that
 * patching is not coherent: on 2026-12-06 6.12 died of an int3 oops in
 * __netif_receive_skb_core() 10 s into a run, and 6.1 (debug, and stock
 * before) wedged looping in netif_receive_skb_list_internal().  A socket
 * of ours keeps timestamps on for the whole run, so the key never flips
 * back and forth; nothing of RDS is lost to the fuzzing.
 */
static void hold_timestamps(void)
{
	int one = 1;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_TIMESTAMP, &one,
				 sizeof(one)))
		printf("# could not hold SO_TIMESTAMP: %s\n", strerror(errno));
	/* fd stays open until exit, inherited by the worker processes */
}

/*
 * Random address bytes stay special (any, loopback, multicast, broadcast,
 * link-local: never routed off the node) or become a documentation
 * address (203.0.113.0/24, 2001:db8::/32): the VMs use no others.
 */
static void doc_addr(struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		uint8_t *a = (uint8_t *)&((struct sockaddr_in *)ss)->sin_addr;

		if (a[0] == 0 || a[0] == 127 || a[0] >= 224)
			return;
		a[0] = 203;
		a[1] = 0;
		a[2] = 113;
	} else if (ss->ss_family == AF_INET6) {
		uint8_t *a = ((struct sockaddr_in6 *)ss)->sin6_addr.s6_addr;

		if (a[0] == 0xff || (a[0] == 0xfe && (a[1] & 0xc0) == 0x80))
			return;
		a[0] = 0x20;
		a[1] = 0x01;
		a[2] = 0x0d;
		a[3] = 0xb8;
	}
}

/*
 * A socket address into *ss; returns the length to pass (sometimes
 * wrong).  Mostly this node's, the peer's or a bound socket's address.
 */
static socklen_t pick_addr(struct worker *w, struct sockaddr_storage *ss)
{
	int family = one_in(w, 2) ? AF_INET : AF_INET6;
	const char *a;
	socklen_t len;
	unsigned int i;

	memset(ss, 0, sizeof(*ss));
	if (one_in(w, 4)) {
		pthread_mutex_lock(&bound_lock);
		*ss = bound[rn(w, NBOUND)];
		pthread_mutex_unlock(&bound_lock);
		if (ss->ss_family)
			return rds_sslen(ss);
	}
	if (family == AF_INET) {
		i = rn(w, sizeof(addrs4) / sizeof(addrs4[0]));
		a = addrs4[i];
	} else {
		i = rn(w, sizeof(addrs6) / sizeof(addrs6[0]));
		a = addrs6[i];
	}
	if (i == 0)
		a = rds_local_str(family);
	else if (i == 1)
		a = rds_peer_str(family);
	len = rds_mkaddr(family, a, pick_port(w), ss);
	if (family == AF_INET6 && one_in(w, 4))
		((struct sockaddr_in6 *)ss)->sin6_scope_id = rn(w, 4);
	switch (rn(w, 24)) {
	case 0:
		return 0;
	case 1:
		return len - 1;
	case 2:
		return sizeof(struct sockaddr_in);
	case 3:
		return sizeof(*ss);
	case 4:
		return sizeof(*ss) + 1;
	case 5:
		return rn(w, 64);
	case 6:
		ss->ss_family = (sa_family_t)rn(w, 48);
		return len;
	case 7: {
		uint8_t *p = (uint8_t *)ss;

		for (i = 2; i < sizeof(*ss); i++)
			p[i] = (uint8_t)rnd(w);
		doc_addr(ss);
		return len;
	}
	default:
		return len;
	}
}

/* The socket in a random slot (may be -1 or just closed by another). */
static int pick_fd(struct worker *w)
{
	int fd = __atomic_load_n(&slots[rn(w, NSLOTS)], __ATOMIC_RELAXED);

	if (fd < 0 && !one_in(w, 8)) {
		int i;

		for (i = 0; i < NSLOTS && fd < 0; i++)
			fd = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
	}
	return fd;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { 0, 100000 };

	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

static void put_slot(int i, int fd)
{
	int old = __atomic_exchange_n(&slots[i], fd, __ATOMIC_ACQ_REL);

	if (old >= 0)
		close(old);
}

/* ---- operations ------------------------------------------------------- */

static void op_socket(struct worker *w)
{
	static const int types[] = { SOCK_SEQPACKET, SOCK_DGRAM, SOCK_STREAM,
				     SOCK_RAW, 0, SOCK_SEQPACKET | SOCK_NONBLOCK };
	int type = SOCK_SEQPACKET, proto = 0, fd;

	if (one_in(w, 8)) {
		type = types[rn(w, sizeof(types) / sizeof(types[0]))];
		proto = one_in(w, 2) ? 0 : (int)rn(w, 300);
	}
	fd = socket(AF_RDS, type, proto);
	vlog(w, fd, "socket(PF_RDS, %d, %d)", type, proto);
	if (fd < 0)
		return;
	if (fd <= 2) {		/* never let a worker own stdio */
		close(fd);
		return;
	}
	if (!one_in(w, 16))
		set_timeouts(fd);
	put_slot(rn(w, NSLOTS), fd);
}

static void remember_bound(struct worker *w, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return;
	pthread_mutex_lock(&bound_lock);
	bound[rn(w, NBOUND)] = ss;
	pthread_mutex_unlock(&bound_lock);
}

static void op_bind(struct worker *w)
{
	struct sockaddr_storage ss;
	socklen_t len = pick_addr(w, &ss);
	int fd = pick_fd(w), r;
	void *p = one_in(w, 32) ? pick_ptr(w, len) : &ss;
	char b[80];

	r = bind(fd, p, len);
	vlog(w, r, "bind(%d, %s, %u)", fd,
	     p == &ss ? rds_ntop(&ss, b, sizeof(b)) : "ptr", len);
	if (!r)
		remember_bound(w, fd);
}

static void op_connect(struct worker *w)
{
	struct sockaddr_storage ss;
	socklen_t len = pick_addr(w, &ss);
	int fd = pick_fd(w), r;
	char b[80];

	if (one_in(w, 10)) {
		ss.ss_family = AF_UNSPEC;
		len = sizeof(ss.ss_family);
	}
	r = connect(fd, (struct sockaddr *)&ss, len);
	vlog(w, r, "connect(%d, %s, %u)", fd, rds_ntop(&ss, b, sizeof(b)), len);
}

/* Fill rvec[0..n) with local vectors (RDMA READ may write them). */
static void fill_rvec(struct worker *w, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n && i < NRVEC; i++) {
		uint64_t len = one_in(w, 2) ? pick_small_len(w) : pick_len(w);

		w->rvec[i].bytes = len;
		w->rvec[i].addr = (uintptr_t)pick_ptr(w, len);
	}
}

static uint64_t pick_rdma_flags(struct worker *w)
{
	uint64_t f = 0;

	if (one_in(w, 16))
		return rnd(w);
	if (one_in(w, 2))
		f |= RDS_RDMA_READWRITE;
	if (one_in(w, 3))
		f |= RDS_RDMA_NOTIFY_ME;
	if (one_in(w, 4))
		f |= RDS_RDMA_USE_ONCE;
	if (one_in(w, 4))
		f |= RDS_RDMA_INVALIDATE;
	if (one_in(w, 6))
		f |= RDS_RDMA_FENCE;
	if (one_in(w, 6))
		f |= RDS_RDMA_SILENT;
	if (one_in(w, 8))
		f |= RDS_RDMA_DONTWAIT;
	return f;
}

static unsigned int pick_nr(struct worker *w)
{
	static const unsigned int nr[] = { 0, 1, 1, 1, 2, 3, 16, 255, 256,
					   257, 1024, 1025, NRVEC, 1U << 20,
					   0xffffffffU };

	return nr[rn(w, sizeof(nr) / sizeof(nr[0]))];
}

/*
 * One cmsg payload of a type into data (at most 256 bytes); returns its
 * length.
 */
static size_t build_cmsg_data(struct worker *w, int type, void *data)
{
	switch (type) {
	case RDS_CMSG_RDMA_ARGS: {
		struct rds_rdma_args *a = data;
		unsigned int nr = pick_nr(w);

		fill_rvec(w, nr);
		memset(a, 0, sizeof(*a));
		a->cookie = pick_cookie(w);
		a->remote_vec.addr = one_in(w, 2) ? 0 : rnd(w) % (4 * MIB);
		a->remote_vec.bytes = pick_len(w);
		a->local_vec_addr = one_in(w, 8) ?
			(uintptr_t)pick_ptr(w, 16) : (uintptr_t)w->rvec;
		a->nr_local = nr;
		a->flags = pick_rdma_flags(w);
		a->user_token = rnd(w);
		return sizeof(*a);
	}
	case RDS_CMSG_RDMA_DEST: {
		uint64_t c = pick_cookie(w);

		memcpy(data, &c, sizeof(c));
		return sizeof(c);
	}
	case RDS_CMSG_RDMA_MAP: {
		struct rds_get_mr_args *a = data;
		uint64_t len = pick_len(w);

		a->vec.bytes = len;
		a->vec.addr = (uintptr_t)pick_ptr(w, len);
		a->cookie_addr = one_in(w, 4) ? (uintptr_t)pick_ptr(w, 8) :
						(uintptr_t)scratch(w, 8);
		a->flags = pick_rdma_flags(w);
		return sizeof(*a);
	}
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP: {
		struct rds_atomic_args *a = data;

		memset(a, 0, sizeof(*a));
		a->cookie = pick_cookie(w);
		a->local_addr = one_in(w, 4) ? (uintptr_t)pick_ptr(w, 8) :
					       (uintptr_t)scratch(w, 8);
		a->remote_addr = one_in(w, 2) ? (rnd(w) % (2 * MIB)) & ~7ULL :
						rnd(w);
		a->m_cswp.compare = rnd(w);
		a->m_cswp.swap = rnd(w);
		a->m_cswp.compare_mask = rnd(w);
		a->m_cswp.swap_mask = rnd(w);
		a->flags = pick_rdma_flags(w);
		a->user_token = rnd(w);
		return sizeof(*a);
	}
	case RDS_CMSG_ZCOPY_COOKIE: {
		uint32_t c = one_in(w, 2) ? rn(w, 16) : (uint32_t)rnd(w);

		memcpy(data, &c, sizeof(c));
		return one_in(w, 8) ? sizeof(uint64_t) : sizeof(c);
	}
	default: {
		size_t i, n = rn(w, 129);

		for (i = 0; i < n; i++)
			((uint8_t *)data)[i] = (uint8_t)rnd(w);
		return n;
	}
	}
}

static int pick_cmsg_type(struct worker *w)
{
	static const int types[] = {
		RDS_CMSG_RDMA_ARGS, RDS_CMSG_RDMA_ARGS, RDS_CMSG_RDMA_DEST,
		RDS_CMSG_RDMA_MAP, RDS_CMSG_RDMA_MAP, RDS_CMSG_ATOMIC_FADD,
		RDS_CMSG_ATOMIC_CSWP, RDS_CMSG_MASKED_ATOMIC_FADD,
		RDS_CMSG_MASKED_ATOMIC_CSWP, RDS_CMSG_ZCOPY_COOKIE,
		RDS_CMSG_ZCOPY_COOKIE, RDS_CMSG_RDMA_STATUS,
		RDS_CMSG_CONG_UPDATE, RDS_CMSG_RXPATH_LATENCY,
		RDS_CMSG_ZCOPY_COMPLETION, 0, 10, 14, -1,
	};

	if (one_in(w, 32))
		return (int)rnd(w);
	return types[rn(w, sizeof(types) / sizeof(types[0]))];
}

/* Build msg_control for sendmsg(); returns cmsg count (for the log). */
static int build_control(struct worker *w, struct msghdr *m)
{
	union {
		uint8_t b[256];
		uint64_t align;
	} data;
	size_t off = 0, dl = 0;
	int n, i;

	m->msg_control = NULL;
	m->msg_controllen = 0;
	w->cdesc[0] = 0;
	switch (rn(w, 10)) {
	case 0: case 1: case 2: case 3:
		return 0;
	case 4: case 5: case 6: case 7:
		n = 1;
		break;
	default:
		n = 2 + rn(w, 5);
		break;
	}
	memset(w->ctrl, 0, CTRL_SZ);
	for (i = 0; i < n; i++) {
		struct cmsghdr *c = (struct cmsghdr *)(w->ctrl + off);
		int type = pick_cmsg_type(w);
		size_t len = build_cmsg_data(w, type, data.b);

		if (off + CMSG_SPACE(len) > CTRL_SZ)
			break;
		if (dl < sizeof(w->cdesc) - 12)
			dl += snprintf(w->cdesc + dl, sizeof(w->cdesc) - dl,
				       "%s%d", i ? "," : "", type);
		c->cmsg_level = one_in(w, 16) ? (one_in(w, 2) ? SOL_SOCKET :
					(int)rnd(w)) : SOL_RDS;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(len);
		switch (rn(w, 16)) {
		case 0:
			c->cmsg_len = CMSG_LEN(len) - 1 - rn(w, 8);
			break;
		case 1:
			c->cmsg_len = CMSG_LEN(len) + 1 + rn(w, 64);
			break;
		case 2:
			c->cmsg_len = rn(w, 2) ? 0 : sizeof(struct cmsghdr) - 1;
			break;
		case 3:
			c->cmsg_len = CMSG_LEN(0);
			break;
		}
		memcpy(CMSG_DATA(c), data.b, len);
		off += CMSG_SPACE(len);
	}
	m->msg_control = w->ctrl;
	m->msg_controllen = off;
	switch (rn(w, 24)) {
	case 0:
		m->msg_controllen = off ? rn(w, (uint32_t)off) : 0;
		break;
	case 1:
		m->msg_controllen = off + rn(w, 64);
		break;
	case 2:
		m->msg_control = w->hole;
		break;
	case 3:
		m->msg_controllen = (size_t)1 << (31 + rn(w, 2));
		break;
	case 4:
		m->msg_control = NULL;
		break;
	}
	return i;
}

/* msg_iov: shapes at and around the limits. Returns the total length. */
static uint64_t build_iov(struct worker *w, struct msghdr *m, bool for_recv)
{
	uint64_t total = 0, len;
	unsigned int n, i;

	m->msg_iov = w->iov;
	switch (rn(w, 8)) {
	case 0: case 1: case 2: case 3:		/* one buffer */
		len = for_recv ? pick_small_len(w) : pick_len(w);
		w->iov[0].iov_len = len;
		w->iov[0].iov_base = one_in(w, 8) ? pick_ptr(w, len) :
			(len < SCRATCH_SZ ? scratch(w, len) : w->buf);
		m->msg_iovlen = 1;
		return len;
	case 4:					/* nothing */
		m->msg_iovlen = 0;
		m->msg_iov = one_in(w, 2) ? NULL : w->iov;
		return 0;
	case 5: {				/* many */
		static const unsigned int ns[] = { 2, 3, 16, 64, 1023,
						   UIO_MAXIOV, UIO_MAXIOV + 1 };

		n = ns[rn(w, sizeof(ns) / sizeof(ns[0]))];
		break;
	}
	case 6:
		if (one_in(w, 4)) {
			m->msg_iov = (struct iovec *)w->hole;
			m->msg_iovlen = 1 + rn(w, 4);
			return 0;
		}
		n = 2 + rn(w, 8);
		break;
	default:
		n = 2 + rn(w, 30);
		break;
	}
	for (i = 0; i < n; i++) {
		len = one_in(w, 16) ? pick_len(w) : rn(w, 3) ? rn(w, 4097) :
			pick_small_len(w);
		/* overlapping: all from the start of the scratch, sometimes */
		w->iov[i].iov_base = one_in(w, 3) ? w->buf :
				     one_in(w, 16) ? pick_ptr(w, len) :
				     len < SCRATCH_SZ ? scratch(w, len) : w->buf;
		w->iov[i].iov_len = len;
		total = total + len < total ? ~0ULL : total + len;
	}
	m->msg_iovlen = n;
	return total;
}

static void op_sendmsg(struct worker *w)
{
	struct sockaddr_storage ss;
	struct msghdr m = { 0 };
	socklen_t alen = pick_addr(w, &ss);
	int fd = pick_fd(w), flags = MSG_DONTWAIT, ncm;
	uint64_t total;
	ssize_t r;
	char b[80];

	switch (rn(w, 10)) {
	case 0:		/* the connected peer, if any */
		break;
	case 1:
		m.msg_name = one_in(w, 2) ? (void *)w->hole : (void *)&ss;
		m.msg_namelen = one_in(w, 2) ? alen : rn(w, 300);
		break;
	default:
		m.msg_name = &ss;
		m.msg_namelen = alen;
		break;
	}
	/* the peer's or a local ping port, now and then */
	if (m.msg_name == &ss && one_in(w, 16))
		rds_set_port(&ss, 0);
	total = build_iov(w, &m, false);
	ncm = build_control(w, &m);
	if (one_in(w, 8))
		flags |= MSG_ZEROCOPY;
	if (one_in(w, 32))
		flags |= one_in(w, 2) ? MSG_CMSG_COMPAT : (int)(rnd(w) & ~0x40000000U);
	flags |= MSG_DONTWAIT;
	if (one_in(w, 64))
		r = sendmsg(fd, (struct msghdr *)w->hole, flags);
	else
		r = sendmsg(fd, &m, flags);
	vlog(w, r, "sendmsg(%d, to %s/%u, iovlen %zu total %llu, %d cmsgs [%s] %zu bytes, flags %#x)",
	     fd, m.msg_name == &ss ? rds_ntop(&ss, b, sizeof(b)) :
	     m.msg_name ? "ptr" : "none", m.msg_namelen, (size_t)m.msg_iovlen,
	     (unsigned long long)total, ncm, w->cdesc,
	     (size_t)m.msg_controllen, flags);
}

static void op_recvmsg(struct worker *w)
{
	static const int ctl_lens[] = { 0, 1, 8, 16, 24, 31, 32, 48, 64, 512 };
	struct msghdr m = { 0 };
	int fd = pick_fd(w), flags = MSG_DONTWAIT;
	uint64_t total = build_iov(w, &m, true);
	socklen_t nlen = 0;
	ssize_t r;

	if (!one_in(w, 3)) {
		nlen = one_in(w, 2) ? sizeof(struct sockaddr_storage) :
				      rn(w, 140);
		m.msg_name = scratch(w, 256);
		m.msg_namelen = nlen;
	}
	if (!one_in(w, 3)) {
		m.msg_controllen = ctl_lens[rn(w, sizeof(ctl_lens) /
						sizeof(ctl_lens[0]))];
		m.msg_control = one_in(w, 16) ? w->hole : scratch(w, 1024);
	}
	if (one_in(w, 3))
		flags |= MSG_PEEK;
	if (one_in(w, 6))
		flags |= MSG_TRUNC;
	if (one_in(w, 10))
		flags |= MSG_ERRQUEUE;
	if (one_in(w, 10))
		flags |= MSG_CMSG_CLOEXEC;
	if (one_in(w, 20))
		flags |= MSG_OOB | MSG_WAITALL;
	r = recvmsg(fd, &m, flags);
	vlog(w, r, "recvmsg(%d, iovlen %zu total %llu, namelen %u, ctl %zu, flags %#x)",
	     fd, (size_t)m.msg_iovlen, (unsigned long long)total, nlen,
	     (size_t)m.msg_controllen, flags);
	if (r > 0 && (uint64_t)r > total && !(flags & MSG_TRUNC) &&
	    !(flags & MSG_ERRQUEUE))
		anomaly(w, "recvmsg returned more than the buffer", r,
			(long)total);
	if (r >= 0 && m.msg_name && m.msg_namelen > sizeof(struct sockaddr_storage))
		anomaly(w, "recvmsg msg_namelen too long", m.msg_namelen, nlen);
}

static void op_setsockopt_rds(struct worker *w)
{
	static const int names[] = {
		RDS_CANCEL_SENT_TO, RDS_GET_MR, RDS_GET_MR, RDS_FREE_MR,
		RDS_FREE_MR, 4, RDS_RECVERR, RDS_CONG_MONITOR,
		RDS_GET_MR_FOR_DEST, SO_RDS_TRANSPORT, 9,
		SO_RDS_MSG_RXPATH_LATENCY, 0, 11, RDS_INFO_COUNTERS,
	};
	union {
		struct rds_get_mr_args mr;
		struct rds_get_mr_for_dest_args md;
		struct rds_free_mr_args fr;
		struct sockaddr_storage ss;
		int i;
		uint8_t b[512];
	} u;
	int name = names[rn(w, sizeof(names) / sizeof(names[0]))];
	int fd = pick_fd(w), r;
	uint64_t *cookie_at = NULL;
	socklen_t len;
	void *p = &u;

	memset(&u, 0, sizeof(u));
	if (one_in(w, 32))
		name = (int)rnd(w);
	switch (name) {
	case RDS_GET_MR:
		u.mr.vec.bytes = pick_len(w);
		u.mr.vec.addr = (uintptr_t)pick_ptr(w, u.mr.vec.bytes);
		if (!one_in(w, 6)) {
			cookie_at = scratch(w, 8);
			u.mr.cookie_addr = (uintptr_t)cookie_at;
		} else {
			u.mr.cookie_addr = (uintptr_t)pick_ptr(w, 8);
		}
		u.mr.flags = pick_rdma_flags(w);
		len = sizeof(u.mr);
		break;
	case RDS_GET_MR_FOR_DEST:
		pick_addr(w, (struct sockaddr_storage *)&u.md.dest_addr);
		u.md.vec.bytes = pick_len(w);
		u.md.vec.addr = (uintptr_t)pick_ptr(w, u.md.vec.bytes);
		cookie_at = scratch(w, 8);
		u.md.cookie_addr = (uintptr_t)cookie_at;
		u.md.flags = pick_rdma_flags(w);
		len = sizeof(u.md);
		break;
	case RDS_FREE_MR:
		u.fr.cookie = pick_cookie(w);
		u.fr.flags = one_in(w, 2) ? RDS_RDMA_INVALIDATE :
			     one_in(w, 2) ? 0 : rnd(w);
		len = sizeof(u.fr);
		break;
	case RDS_CANCEL_SENT_TO:
		len = pick_addr(w, &u.ss);
		break;
	default:
		u.i = one_in(w, 2) ? (int)rn(w, 4) - 1 : (int)rnd(w);
		len = sizeof(int);
		break;
	}
	if (cookie_at)
		*cookie_at = 0;
	switch (rn(w, 12)) {
	case 0:
		len = rn(w, sizeof(u));
		break;
	case 1:
		len = len ? len - 1 : 1;
		break;
	case 2:
		len++;
		break;
	case 3:
		p = pick_ptr(w, len);
		cookie_at = NULL;
		break;
	case 4:
		len = 0x80000000U + rn(w, 4);
		p = w->buf;
		cookie_at = NULL;
		break;
	}
	r = setsockopt(fd, SOL_RDS, name, p, len);
	vlog(w, r, "setsockopt(%d, SOL_RDS, %d, len %u)", fd, name, len);
	if (!r && cookie_at)
		save_cookie(w, *cookie_at);
}

static void op_getsockopt_rds(struct worker *w)
{
	static const socklen_t lens[] = {
		0, 1, 3, 4, 7, 8, 16, 40, 56, 64, 68, 72, 80, 84, 96, 112,
		128, 4096, 65536, MIB, 0x7fffffff, 0x80000000U, 0xffffffffU,
	};
	int fd = pick_fd(w), name, r;
	socklen_t len, in;
	void *p;

	if (rn(w, 4))
		name = RDS_INFO_FIRST + rn(w, RDS_INFO_LAST - RDS_INFO_FIRST + 1);
	else if (rn(w, 2))
		name = rn(w, 12);
	else
		name = one_in(w, 2) ? RDS_INFO_FIRST - 1 - rn(w, 2) :
				      RDS_INFO_LAST + 1 + rn(w, 20);
	len = one_in(w, 3) ? rn(w, 9000) : lens[rn(w, sizeof(lens) /
						      sizeof(lens[0]))];
	/* the buffer ends at the scratch's end (hole behind), or anywhere */
	if (len < SCRATCH_SZ && rn(w, 2))
		p = w->buf + SCRATCH_SZ - len;
	else if (len < SCRATCH_SZ && rn(w, 2))
		p = scratch(w, len);
	else
		p = one_in(w, 4) ? pick_ptr(w, 8) : w->buf;
	in = len;
	if (one_in(w, 32))
		r = getsockopt(fd, SOL_RDS, name, p, (socklen_t *)w->hole);
	else
		r = getsockopt(fd, SOL_RDS, name, p, &len);
	vlog(w, r, "getsockopt(%d, SOL_RDS, %d, len %u -> %u)", fd, name, in,
	     len);
	if (r >= 0 && (int)in >= 0 && len > in)
		anomaly(w, "getsockopt succeeded with a longer length", len, in);
}

static void op_sockopt_socket(struct worker *w)
{
	static const int names[] = {
		SO_RCVBUF, SO_SNDBUF, SO_RCVBUFFORCE, SO_SNDBUFFORCE,
		SO_TIMESTAMP_OLD, SO_TIMESTAMP_NEW, SO_TIMESTAMPNS,
		SO_ZEROCOPY, SO_PRIORITY, SO_REUSEADDR, SO_RCVLOWAT,
		SO_MARK, SO_KEEPALIVE, SO_LINGER, SO_SNDTIMEO, SO_RCVTIMEO,
		SO_ERROR, SO_TYPE, SO_PROTOCOL, SO_DOMAIN, SO_BINDTODEVICE,
		SO_PEEK_OFF, SO_BUSY_POLL, SO_TXTIME,
	};
	static const int vals[] = { 0, 1, -1, 2, 255, 256, 2048, 4096,
				    65536, 212992, 1 << 20, 4 << 20,
				    0x7fffffff, (int)0x80000000 };
	int name = names[rn(w, sizeof(names) / sizeof(names[0]))];
	int fd = pick_fd(w), r;
	union {
		int i;
		struct timeval tv;
		struct linger l;
		char dev[IFNAMSIZ];
		uint8_t b[64];
	} u;
	socklen_t len = sizeof(int);

	memset(&u, 0, sizeof(u));
	u.i = vals[rn(w, sizeof(vals) / sizeof(vals[0]))];
	if ((name == SO_SNDBUFFORCE || name == SO_RCVBUFFORCE) &&
	    (u.i < 0 || u.i > 4 << 20))
		u.i = 4 << 20;		/* bounded: no kernel memory hog */
	if (name == SO_SNDTIMEO || name == SO_RCVTIMEO) {
		u.tv.tv_sec = 0;	/* never unbounded */
		u.tv.tv_usec = 1 + rn(w, 200000);
		len = sizeof(u.tv);
	} else if (name == SO_LINGER) {
		u.l.l_onoff = rn(w, 2);
		u.l.l_linger = rn(w, 2);
		len = sizeof(u.l);
	} else if (name == SO_BINDTODEVICE) {
		snprintf(u.dev, sizeof(u.dev), "%s",
			 one_in(w, 2) ? "lo" : one_in(w, 2) ? "eth0" : "nope");
		len = one_in(w, 2) ? strlen(u.dev) : rn(w, IFNAMSIZ + 1);
	}
	if (rn(w, 2)) {
		if (one_in(w, 8) && name != SO_SNDTIMEO && name != SO_RCVTIMEO)
			len = rn(w, 17);
		r = setsockopt(fd, SOL_SOCKET, name, &u, len);
		vlog(w, r, "setsockopt(%d, SOL_SOCKET, %d, %d, len %u)", fd,
		     name, u.i, len);
	} else {
		socklen_t in = one_in(w, 4) ? rn(w, 64) : sizeof(u);

		len = in;
		r = getsockopt(fd, SOL_SOCKET, name, &u, &len);
		vlog(w, r, "getsockopt(%d, SOL_SOCKET, %d, len %u -> %u)", fd,
		     name, in, len);
		if (r >= 0 && len > in)
			anomaly(w, "SOL_SOCKET getsockopt length grew", len, in);
	}
}

static void op_poll(struct worker *w)
{
	struct pollfd p[4];
	int n = 1 + rn(w, 4), i, r;

	for (i = 0; i < n; i++) {
		p[i].fd = pick_fd(w);
		p[i].events = one_in(w, 8) ? (short)rnd(w) :
			(POLLIN | (rn(w, 2) ? POLLOUT : 0) |
			 (rn(w, 4) ? 0 : POLLPRI));
		p[i].revents = 0;
	}
	r = poll(p, n, rn(w, 21));
	vlog(w, r, "poll(%d fds, first %d)", n, p[0].fd);
}

static void op_ioctl(struct worker *w)
{
	static const unsigned long cmds[] = {
		SIOCRDSSETTOS, SIOCRDSSETTOS, SIOCRDSGETTOS, SIOCINQ,
		SIOCOUTQ, SIOCPROTOPRIVATE + 2, SIOCPROTOPRIVATE + 15,
		FIONBIO, SIOCGSTAMP_OLD,
	};
	unsigned long cmd = cmds[rn(w, sizeof(cmds) / sizeof(cmds[0]))];
	int fd = pick_fd(w), r;
	void *arg = scratch(w, 64);

	if (one_in(w, 16)) {
		/* a random command, outside the 0x89 socket ioctls */
		cmd = (unsigned long)(uint32_t)rnd(w);
		if (((cmd >> 8) & 0xff) == 0x89 || ((cmd >> 8) & 0xff) == 0x8b ||
		    ((cmd >> 8) & 0xff) == 'T')
			cmd = SIOCPROTOPRIVATE + 3;
	}
	if (one_in(w, 8))
		arg = pick_ptr(w, 8);
	else
		*(int *)arg = one_in(w, 2) ? (int)rn(w, 256) : (int)rnd(w);
	if (cmd == FIONBIO)
		*(int *)scratch(w, 8) = 1;	/* harmless: all is nonblocking */
	r = ioctl(fd, cmd, arg);
	vlog(w, r, "ioctl(%d, %#lx)", fd, cmd);
}

static void op_close(struct worker *w)
{
	int i = rn(w, NSLOTS), fd, r;

	if (one_in(w, 4)) {
		/* close without clearing the slot: the number may be reused */
		fd = __atomic_load_n(&slots[i], __ATOMIC_RELAXED);
		if (fd <= 2)
			return;
		r = close(fd);
		vlog(w, r, "close(%d) (slot kept)", fd);
		if (!r)
			__atomic_compare_exchange_n(&slots[i], &fd, -1, false,
						    __ATOMIC_ACQ_REL,
						    __ATOMIC_RELAXED);
		return;
	}
	fd = __atomic_exchange_n(&slots[i], -1, __ATOMIC_ACQ_REL);
	if (fd < 0)
		return;
	r = close(fd);
	vlog(w, r, "close(%d)", fd);
}

static void op_misc(struct worker *w)
{
	struct sockaddr_storage ss;
	socklen_t len = rn(w, 2) ? sizeof(ss) : rn(w, 40);
	int fd = pick_fd(w), r;

	switch (rn(w, 5)) {
	case 0:
		r = getsockname(fd, (struct sockaddr *)&ss, &len);
		vlog(w, r, "getsockname(%d)", fd);
		break;
	case 1:
		r = getpeername(fd, (struct sockaddr *)&ss, &len);
		vlog(w, r, "getpeername(%d)", fd);
		break;
	case 2:
		r = shutdown(fd, rn(w, 4));
		vlog(w, r, "shutdown(%d)", fd);
		break;
	case 3:
		r = dup(fd);
		vlog(w, r, "dup(%d)", fd);
		if (r > 2)
			put_slot(rn(w, NSLOTS), r);
		else if (r >= 0)
			close(r);
		break;
	default:
		r = listen(fd, 1);
		vlog(w, r, "listen(%d)", fd);
		break;
	}
}

/*
 * Traffic that should work: a socket bound to this node's address (or
 * loopback) sends to a bound socket's address, the peer's ping port or
 * with an RDMA_MAP cmsg; receives are drained now and then.
 */
static void op_traffic(struct worker *w)
{
	struct sockaddr_storage to;
	int family = rn(w, 2) ? AF_INET : AF_INET6;
	int fd = pick_fd(w), r;
	size_t len = rn(w, 3) ? rn(w, 2000) : pick_small_len(w);
	char b[80];

	if (len > MIB)
		len = MIB;
	switch (rn(w, 4)) {
	case 0:
		rds_mkaddr(family, rds_peer_str(family), 0, &to);
		break;
	case 1:
		rds_mkaddr(family, rds_local_str(family),
			   PORT_BASE + rn(w, NPORTS), &to);
		break;
	default:
		pthread_mutex_lock(&bound_lock);
		to = bound[rn(w, NBOUND)];
		pthread_mutex_unlock(&bound_lock);
		if (!to.ss_family)
			rds_mkaddr(family, rds_local_str(family), 0, &to);
		break;
	}
	if (one_in(w, 4)) {
		struct rds_get_mr_args a = {
			.vec = { .addr = (uintptr_t)scratch(w, 65536),
				 .bytes = 1 + rn(w, 65536) },
			.cookie_addr = (uintptr_t)scratch(w, 8),
			.flags = pick_rdma_flags(w),
		};

		r = rds_send_cmsg(fd, &to, w->buf, len, RDS_CMSG_RDMA_MAP,
				  &a, sizeof(a), 0);
	} else {
		r = rds_sendto(fd, scratch(w, len), len, MSG_DONTWAIT, &to);
	}
	vlog(w, r, "traffic sendto(%d, %s, %zu)", fd,
	     rds_ntop(&to, b, sizeof(b)), len);
	if (one_in(w, 2)) {
		char *rb = scratch(w, 65536);

		r = recv(fd, rb, 65536, MSG_DONTWAIT);
		vlog(w, r, "recv(%d, 65536)", fd);
	}
}

/* A fresh socket bound to this node's address (or loopback). */
static void op_fresh(struct worker *w)
{
	int family = rn(w, 2) ? AF_INET : AF_INET6;
	const char *a = rn(w, 4) ? rds_local_str(family) : rds_loop_str(family);
	int fd = rds_socket(), r, t;

	if (fd < 0)
		return;
	if (fd <= 2) {
		close(fd);
		return;
	}
	set_timeouts(fd);
	if (one_in(w, 4)) {
		t = one_in(w, 2) ? RDS_TRANS_IB : (int)rn(w, 4);
		setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, sizeof(t));
	}
	if (one_in(w, 4)) {
		t = 1;
		setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &t, sizeof(t));
	}
	if (one_in(w, 4)) {
		t = 1;
		setsockopt(fd, SOL_RDS, RDS_RECVERR, &t, sizeof(t));
	}
	{
		struct sockaddr_storage ss;
		socklen_t len = rds_mkaddr(family, a, rn(w, 3) ?
					   PORT_BASE + rn(w, NPORTS) : 0, &ss);

		r = bind(fd, (struct sockaddr *)&ss, len);
		vlog(w, r, "fresh socket %d bind %s", fd,
		     rds_ntop(&ss, (char[80]){ 0 }, 80));
	}
	if (!r)
		remember_bound(w, fd);
	put_slot(rn(w, NSLOTS), fd);
}

static void one_op(struct worker *w)
{
	switch (rn(w, 40)) {
	case 0: case 1: case 2:
		op_socket(w);
		break;
	case 3: case 4: case 5:
		op_fresh(w);
		break;
	case 6: case 7:
		op_bind(w);
		break;
	case 8:
		op_connect(w);
		break;
	case 9: case 10: case 11: case 12: case 13: case 14: case 15:
	case 16:
		op_sendmsg(w);
		break;
	case 17: case 18: case 19: case 20:
		op_traffic(w);
		break;
	case 21: case 22: case 23: case 24:
		op_recvmsg(w);
		break;
	case 25: case 26: case 27: case 28:
		op_setsockopt_rds(w);
		break;
	case 29: case 30:
		op_getsockopt_rds(w);
		break;
	case 31: case 32:
		op_sockopt_socket(w);
		break;
	case 33:
		op_poll(w);
		break;
	case 34:
		op_ioctl(w);
		break;
	case 35: case 36:
		op_close(w);
		break;
	default:
		op_misc(w);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	while (!past_deadline() && (!max_ops || w->ops < max_ops)) {
		w->ops++;
		one_op(w);
	}
	return NULL;
}

static int worker_init(struct worker *w, int proc, int id)
{
	char *p = mmap(NULL, SCRATCH_SZ + RESERVE_SZ, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	/*
	 * The scratch, then a PROT_NONE reservation: every access there
	 * faults (EFAULT for the kernel), and no later mapping can take
	 * its place, so a hostile address never hits our own memory.
	 */
	if (mprotect(p + SCRATCH_SZ, RESERVE_SZ, PROT_NONE))
		return -1;
	memset(p, 0x5a, SCRATCH_SZ);
	w->buf = p;
	w->hole = p + SCRATCH_SZ;
	w->iov = calloc(UIO_MAXIOV + 2, sizeof(*w->iov));
	w->rvec = calloc(NRVEC, sizeof(*w->rvec));
	w->ctrl = aligned_alloc(64, CTRL_SZ);
	if (!w->iov || !w->rvec || !w->ctrl)
		return -1;
	w->proc = proc;
	w->id = id;
	w->rng = w->seed = seed ^ ((uint64_t)(proc + 1) << 40) ^
			   ((uint64_t)(id + 1) << 20);
	rds_splitmix64(&w->rng);
	return 0;
}

/* One fuzzing process: its threads, then everything closed. */
static int child_main(int proc)
{
	struct worker *ws = calloc(nthreads, sizeof(*ws));
	unsigned long total = 0;
	int i;

	/* a hang in user space or in an interruptible kernel wait */
	alarm(seconds + 20);
	for (i = 0; i < NSLOTS; i++)
		slots[i] = -1;
	if (!ws)
		return 2;
	for (i = 0; i < nthreads; i++) {
		if (worker_init(&ws[i], only_proc >= 0 ? only_proc : proc,
				only_thread >= 0 ? only_thread : i))
			return 2;
		printf("# worker %d.%d seed %llu\n", ws[i].proc, ws[i].id,
		       (unsigned long long)ws[i].seed);
	}
	fflush(stdout);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i]))
			return 2;
	for (i = 0; i < nthreads; i++) {
		pthread_join(ws[i].thread, NULL);
		total += ws[i].ops;
	}
	for (i = 0; i < NSLOTS; i++)
		put_slot(i, -1);
	/* slot-kept closes and dups may leave some: close them all */
	for (i = 3; i < 1024; i++)
		close(i);
	printf("# process %d: %lu calls, %d anomalies\n", proc, total,
	       anomalies);
	fflush(stdout);
	return anomalies ? 1 : 0;
}

/* ---- the end: the stack still works -------------------------------------- */

/* A message from a fresh socket to another on this node's address. */
static int loop_check(int family, int ms)
{
	struct sockaddr_storage aa, ba;
	struct timespec t0;
	char msg[64], got[64];
	int a, b, ok = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	a = rds_bound_socket(family, 0, &aa);
	b = rds_bound_socket(family, 0, &ba);
	if (a < 0 || b < 0)
		goto out;
	snprintf(msg, sizeof(msg), "rds_fuzz loop %llu", (unsigned long long)seed);
	while (!ok && rds_ms_since(&t0) < ms) {
		ssize_t r;

		if (rds_sendto(a, msg, sizeof(msg), MSG_DONTWAIT, &ba) < 0) {
			rds_msleep(100);
			continue;
		}
		r = rds_recv_wait(b, got, sizeof(got), 0, NULL, 1000);
		ok = r == sizeof(msg) && !memcmp(msg, got, sizeof(msg));
	}
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return ok ? 0 : -1;
}

/* A ping to the peer's port 0 gets a pong (0 bytes) from it. */
static int peer_check(int family, int ms)
{
	struct sockaddr_storage aa, to, from;
	struct timespec t0;
	int a, ok = 0;
	char c;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	a = rds_bound_socket(family, 0, &aa);
	if (a < 0)
		return -1;
	rds_mkaddr(family, rds_peer_str(family), 0, &to);
	while (!ok && rds_ms_since(&t0) < ms) {
		if (rds_sendto(a, "ping", 4, MSG_DONTWAIT, &to) < 0) {
			rds_msleep(100);
			continue;
		}
		ok = rds_recv_wait(a, &c, 1, 0, &from, 1000) == 0;
	}
	close(a);
	return ok ? 0 : -1;
}

/* After a failed final check: both nodes' connections, queues, counters. */
static void dump_state(void)
{
	fflush(stdout);
	if (system("rds-info -n -s -t -c 2>&1 | sed 's/^/# node0: /'; "
		   "rds-info -6 -n 2>&1 | sed 's/^/# node0: /'"))
		printf("# rds-info failed on node 0\n");
	if (rds_have_peer() &&
	    system("rds-peer -t 20 1 'rds-info -n -s -t -c; rds-info -6 -n' 2>&1 | "
		   "sed 's/^/# node1: /'"))
		printf("# rds-info failed on node 1\n");
	fflush(stdout);
}

static void show_stuck(pid_t pid)
{
	char path[64], buf[4096];

	snprintf(path, sizeof(path), "/proc/%d/stack", pid);
	if (!rds_read_file(path, buf, sizeof(buf)))
		printf("# pid %d kernel stack:\n%s", pid, buf);
	snprintf(path, sizeof(path), "/proc/%d/wchan", pid);
	if (!rds_read_file(path, buf, sizeof(buf)))
		printf("# pid %d wchan %s\n", pid, buf);
}

int main(void)
{
	pid_t pids[64];
	int i, st, fails = 0, left;
	struct timespec t0, now;
	const char *s = getenv("RDS_FUZZ_SEED");

	if (s && *s)
		seed = strtoull(s, NULL, 0);
	else
		seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 16);
	printf("# seed %llu\n", (unsigned long long)seed);
	seconds = atoi(rds_env("RDS_FUZZ_SECONDS", "60"));
	nprocs = atoi(rds_env("RDS_FUZZ_PROCS", "3"));
	nthreads = atoi(rds_env("RDS_FUZZ_THREADS", "4"));
	max_ops = strtoul(rds_env("RDS_FUZZ_OPS", "0"), NULL, 0);
	verbose = !strcmp(rds_env("RDS_FUZZ_VERBOSE", "0"), "1");
	s = getenv("RDS_FUZZ_WORKER");
	if (s && sscanf(s, "%d.%d", &only_proc, &only_thread) == 2 &&
	    only_proc >= 0 && only_thread >= 0) {
		nprocs = 1;
		nthreads = 1;
	} else {
		only_proc = only_thread = -1;
	}
	if (seconds < 1)
		seconds = 1;
	hold_timestamps();
	if (nprocs < 1 || nprocs > 64)
		nprocs = 3;
	if (nthreads < 1 || nthreads > 64)
		nthreads = 4;
	fflush(stdout);
	rds_test_prepare();	/* SKIPs without PF_RDS */
	printf("TAP version 13\n1..1\n");
	printf("# %d s, %d processes x %d threads, verbose %d, ops %lu\n",
	       seconds, nprocs, nthreads, verbose, max_ops);
	fflush(stdout);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	deadline = t0;
	deadline.tv_sec += seconds;
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			printf("# fork: %s\n", strerror(errno));
			nprocs = i;
			fails++;
			break;
		}
		if (!pids[i]) {
			fflush(stdout);
			_exit(child_main(i));
		}
	}

	/* Reap: each child must end by itself shortly after the deadline. */
	left = nprocs;
	while (left > 0) {
		pid_t p = waitpid(-1, &st, WNOHANG);

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (p > 0) {
			for (i = 0; i < nprocs; i++)
				if (pids[i] == p)
					break;
			if (i < nprocs)
				pids[i] = 0;
			left--;
			if (WIFSIGNALED(st)) {
				printf("# process %d (pid %d) killed by signal %d (%s)\n",
				       i, p, WTERMSIG(st), strsignal(WTERMSIG(st)));
				fails++;
			} else if (WEXITSTATUS(st)) {
				printf("# process %d (pid %d) exited %d\n", i, p,
				       WEXITSTATUS(st));
				fails++;
			}
			continue;
		}
		if (now.tv_sec - t0.tv_sec > seconds + 15)
			break;
		rds_msleep(50);
	}
	if (left > 0) {
		printf("# %d process(es) did not finish within %d s\n", left,
		       seconds + 15);
		fails++;
		for (i = 0; i < nprocs; i++) {
			if (!pids[i])
				continue;
			show_stuck(pids[i]);
			kill(pids[i], SIGKILL);
		}
		for (i = 0; i < 100 && left > 0; i++) {
			while (left > 0 && waitpid(-1, &st, WNOHANG) > 0)
				left--;
			rds_msleep(100);
		}
		if (left > 0)
			printf("# %d process(es) not reaped 10 s after SIGKILL (stuck in the kernel)\n",
			       left);
	}
	fflush(stdout);

	/* Everything is closed: a fresh socket must still work. */
	if (loop_check(AF_INET, 10000)) {
		printf("# IPv4 message between two fresh sockets on %s not delivered in 10 s\n",
		       rds_local_str(AF_INET));
		fails++;
	}
	if (loop_check(AF_INET6, 10000)) {
		printf("# IPv6 message between two fresh sockets on %s not delivered in 10 s\n",
		       rds_local_str(AF_INET6));
		fails++;
	}
	if (rds_have_peer()) {
		if (peer_check(AF_INET, 10000)) {
			printf("# no pong from %s in 10 s\n", rds_peer_str(AF_INET));
			fails++;
		}
		if (peer_check(AF_INET6, 10000)) {
			printf("# no pong from %s in 10 s\n", rds_peer_str(AF_INET6));
			fails++;
		}
	}
	if (fails)
		dump_state();
	clock_gettime(CLOCK_MONOTONIC, &now);
	printf("%sok 1 fuzz # seed %llu, %ld s\n", fails ? "not " : "",
	       (unsigned long long)seed, (long)(now.tv_sec - t0.tv_sec));
	return fails ? 1 : 0;
}
