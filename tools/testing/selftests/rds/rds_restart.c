// SPDX-License-Identifier: GPL-2.0
/*
 * rds_restart.c - sequence-numbered RDS traffic across restarts of the
 * receiving process, the sending process and the receiver's RDS modules
 * (issue 10, item 3).  ib_restart.sh drives it through rds-peer.  Run
 * without a mode it is a kselftest of its own checker (the selftest
 * mode below).
 *
 *   rds_restart send LADDR PADDR PORT STATUS RUN INC [RATE]
 *	Send to PADDR:PORT from LADDR (any port) until SIGTERM, RATE
 *	messages a second (default 200; 0: as fast as the socket takes
 *	them).  Each message carries RUN, the sender's incarnation INC, its
 *	sequence number (0, 1, ...), its length and an FNV-1a hash of its
 *	content, which is derived from (RUN, INC, seq).  A full send buffer
 *	or a congested or unreachable peer (EAGAIN, ENOBUFS, ENOTCONN) is
 *	retried for at most 60 s.  Progress goes to STATUS, a small shared
 *	mapping that survives SIGKILL: the number of messages sendmsg()
 *	accepted ("sent"), updated after each one.  Signals:
 *	  SIGUSR1  barrier: the next message sent is the first one sent
 *		   after the driver saw the restart complete (its seq is
 *		   recorded); also ends a pause
 *	  SIGUSR2  pause: stop, and count this socket's messages the peer
 *		   has not ACKed yet (RDS_INFO_RETRANS/SEND_MESSAGES) once the
 *		   count is stable; if it is 0, send single messages until
 *		   one stays unACKed (at most 16)
 *	  SIGHUP   burst: from the next message on, 16 KiB messages as fast
 *		   as the socket takes them
 *	  SIGTERM  finish: send an END marker, wait (60 s) for the
 *		   receiver's reply (the path is FIFO: every message before
 *		   the marker has been delivered), record the messages still
 *		   unACKed, exit 0
 *   rds_restart recv ADDR PORT RECFILE RUN [IDLE_S]
 *	Bind ADDR:PORT (retried for 60 s: the previous incarnation's socket
 *	may not be gone yet, or rds_rdma not loaded yet), then record every
 *	message as a line of RECFILE, one write(2) each (SIGKILL loses
 *	nothing recorded):
 *	  B PID TRIES            bound (TRIES bind attempts)
 *	  R INC SEQ LEN FLAG     a message; FLAG g good, c content or length
 *	                         wrong, x not ours (magic, run or size)
 *	  E INC SEQ              the END marker (answered, then exit 0)
 *	  I                      IDLE_S (default 60) without a message: exit 3
 *	With RDS_RESTART_ZCOPY=1 in its environment the data messages go
 *	with MSG_ZEROCOPY (cookie = seq) from a ring of ZC_SLOTS buffers, a
 *	buffer reused only once the cookie of its previous message came
 *	back (at most 60 s); after the END reply it waits (60 s) for every
 *	cookie and records zc=1, zc_missing (cookies that never came back)
 *	and zc_bad (duplicate or unknown cookies) in its status.
 *   rds_restart status STATUS
 *	Print the sender's status as one line of KEY=VALUE,... (inc, sent,
 *	end: 1 if it finished cleanly, barrier, burst, cap: its send buffer
 *	limit in bytes, paused: messages sent before the pause, unacked,
 *	unacked_end, stall_ms: longest sendmsg() retry, state, err).
 *   rds_restart check RUN FLOW... -- RECFILE...
 *	Judge the RECFILEs (one per receiver incarnation, in order).  A FLOW
 *	is a sender incarnation: the status line plus gap=window|tail|none
 *	and dups=N|any (later keys override earlier ones).  Prints one
 *	"PASS text" or "FAIL text" line per check, "INFO text" lines and
 *	"LOST INC N" / "DUPS INC N" for the driver; exits with the number of
 *	FAILs.  Checks: no corrupt or foreign message; each file strictly
 *	increasing in (INC, SEQ); every delivered seq was sent; every
 *	message from the barrier on delivered exactly once; the lost ones
 *	(never delivered) one contiguous window (gap=window), or all in the
 *	tail after the first lost one, fitting in the sender's send buffer
 *	(gap=tail: a closed socket's cancelled messages), or none; the
 *	duplicates (deliveries beyond the first) as expected.
 *   rds_restart selftest
 *	Run the checker on made-up files that break each rule (and on good
 *	ones); exit 0 if it judged each as it should.
 */
#include "rds_test.h"
#include <stdarg.h>
#include <sys/mman.h>

#define MAGIC		0x52445352u	/* "RDSR" */
#define HDR		32
#define BURST_LEN	16384
#define MAXMSG		(BURST_LEN + 8192)
#define T_DATA		0
#define T_END		1
#define T_ENDACK	2
#define RETRY_MS	60000

struct rhdr {
	uint32_t magic;
	uint32_t run;
	uint32_t inc;
	uint32_t seq;
	uint32_t len;		/* whole message, header included */
	uint32_t type;
	uint64_t hash;		/* FNV-1a of the content after the header */
};

struct status {
	uint32_t magic;
	uint32_t inc;
	uint32_t sent;		/* sendmsg() accepted seq 0 .. sent-1 */
	int32_t barrier;	/* first seq sent after SIGUSR1, -1: none */
	int32_t burst;		/* first seq of the burst, -1: none */
	uint32_t cap;		/* sk_sndbuf / 2: what the socket may hold */
	int32_t paused;		/* messages sent when paused, -1: never */
	int32_t unacked;	/* of ours unACKed once paused, -1: not asked */
	int32_t unacked_end;	/* of ours unACKed after the END reply */
	uint32_t stall_ms;	/* longest retried sendmsg() */
	uint32_t state;		/* 0 running, 1 paused, 2 ended, 3 failed */
	uint32_t end;		/* 1: finished cleanly */
	char err[96];
	uint32_t zc;		/* 1: MSG_ZEROCOPY sends */
	uint32_t zc_missing;	/* cookies not back after the END reply */
	uint32_t zc_bad;	/* duplicate or unknown cookies */
};

static const char *const state_name[] = { "running", "paused", "ended", "failed" };

/* Message length of (inc, seq), header included: mostly under a frame,
 * every 41st two or three 4 KiB fragments, 16 KiB in a burst. */
static uint32_t size_of(uint32_t inc, uint32_t seq, int32_t burst)
{
	uint32_t h = rds_mix32(inc * 7919u + seq);

	if (burst >= 0 && seq >= (uint32_t)burst)
		return BURST_LEN;
	if (seq % 41 == 7)
		return HDR + 4096 + h % 4000;
	return HDR + h % 1500;
}

static uint64_t seed_of(uint32_t run, uint32_t inc, uint32_t seq)
{
	return ((uint64_t)rds_mix32(run ^ (inc << 24)) << 32) | rds_mix32(seq * 2654435761u + inc);
}

/* Content: 64-bit words of a splitmix sequence (tail bytes from the last). */
static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed, z;
	size_t i;

	for (i = 0; i < len; i += 8) {
		z = rds_splitmix64(&x);
		memcpy(p + i, &z, len - i < 8 ? len - i : 8);
	}
}

static bool content_ok(const uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed, z;
	size_t i;

	for (i = 0; i < len; i += 8) {
		z = rds_splitmix64(&x);
		if (memcmp(p + i, &z, len - i < 8 ? len - i : 8))
			return false;
	}
	return true;
}

static uint64_t hash64(const uint8_t *p, size_t len)
{
	return rds_hash(RDS_HASH_INIT, p, len);
}

static int mkaddr4(const char *a, int port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	return inet_pton(AF_INET, a, &sin->sin_addr) == 1 ? 0 : -1;
}

/* ---- sender --------------------------------------------------------- */

static volatile sig_atomic_t f_barrier, f_pause, f_burst, f_end;

static void on_signal(int sig)
{
	switch (sig) {
	case SIGUSR1: f_barrier = 1; break;
	case SIGUSR2: f_pause = 1; break;
	case SIGHUP: f_burst = 1; break;
	default: f_end = 1; break;
	}
}

/*
 * Messages of ours (source port sport) on the path to faddr: with
 * retrans, those the peer has not ACKed (retransmit list plus send
 * queue), else those not handed to the transport yet (send queue).  -1
 * on error.
 */
static int queued(int fd, uint16_t sport, in_addr_t faddr, bool retrans)
{
	static const int opts[] = { RDS_INFO_SEND_MESSAGES, RDS_INFO_RETRANS_MESSAGES };
	int n = 0;
	unsigned int k;

	for (k = 0; k < (retrans ? 2u : 1u); k++) {
		struct rds_info_message *m;
		socklen_t len = 0;
		void *buf = NULL;
		int tries, each = -1;
		size_t i;

		for (tries = 0; tries < 8; tries++) {
			each = getsockopt(fd, SOL_RDS, opts[k], buf, &len);
			if (each >= 0)
				break;
			if (errno != ENOSPC) {
				free(buf);
				return -1;
			}
			free(buf);
			len += len / 4 + 1024;
			buf = calloc(1, len);
			if (!buf)
				return -1;
		}
		if (each < 0) {
			free(buf);
			return -1;
		}
		if (each > 0 && (size_t)each < sizeof(*m)) {
			free(buf);
			return -1;
		}
		for (i = 0; each > 0 && i + each <= len; i += each) {
			m = (struct rds_info_message *)((char *)buf + i);
			if (m->lport == htons(sport) && m->faddr == faddr)
				n++;
		}
		free(buf);
	}
	return n;
}

/* Settle (ACKs in flight land), then the count once two agree. */
static int unacked_stable(int fd, uint16_t sport, in_addr_t faddr)
{
	int prev = -2, cur = -1, i;

	for (i = 0; i < 30; i++) {
		rds_msleep(300);
		cur = queued(fd, sport, faddr, true);
		if (cur == prev)
			break;
		prev = cur;
	}
	return cur;
}

/* Message (run, inc, seq) of len bytes and type into buf. */
static void build(uint8_t *buf, uint32_t run, uint32_t inc, uint32_t seq,
		  uint32_t len, uint32_t type)
{
	struct rhdr *h = (struct rhdr *)buf;

	fill(buf + HDR, len - HDR, seed_of(run, inc, seq));
	h->magic = MAGIC;
	h->run = run;
	h->inc = inc;
	h->seq = seq;
	h->len = len;
	h->type = type;
	h->hash = hash64(buf + HDR, len - HDR);
}

static int send_one(int fd, const void *to, uint8_t *buf,
		    uint32_t run, uint32_t inc, uint32_t seq, uint32_t len,
		    uint32_t type, uint32_t *stall)
{
	struct timespec t0;
	ssize_t r;
	long ms;

	build(buf, run, inc, seq, len, type);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = rds_sendmsg_cm(fd, to, buf, len, NULL, 0, RETRY_MS);
	ms = rds_ms_since(&t0);
	if (stall && ms > (long)*stall)
		*stall = ms;
	return r == (ssize_t)len ? 0 : -1;
}

/* ---- MSG_ZEROCOPY sends (RDS_RESTART_ZCOPY=1) ------------------------ */

#define ZC_SLOTS	256
static uint8_t *zc_bufs;		/* ZC_SLOTS x MAXMSG */
static int64_t zc_owner[ZC_SLOTS];	/* seq whose cookie is out, -1: free */
static uint32_t zc_pending;
static bool zc_endack;			/* zc_reap() received the END reply */
static uint32_t zc_run, zc_inc;

/*
 * Collect cookies (and notice the END reply, which arrives on the same
 * socket) for at most @ms; returns -1 on a receive error.
 */
static int zc_reap(int fd, struct status *st, int ms)
{
	static uint8_t data[MAXMSG];
	union {
		char b[CMSG_SPACE(sizeof(struct rds_zcopy_cookies)) + 256];
		struct cmsghdr align;
	} u;

	for (;;) {
		struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
		struct msghdr m = {
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.b, .msg_controllen = sizeof(u.b),
		};
		struct rhdr *h = (struct rhdr *)data;
		struct cmsghdr *c;
		ssize_t r;

		r = recvmsg(fd, &m, MSG_DONTWAIT);
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			if (ms <= 0)
				return 0;
			rds_wait(fd, POLLIN, ms);
			ms = 0;
			continue;
		}
		if (r >= (ssize_t)sizeof(*h) && h->magic == MAGIC &&
		    h->run == zc_run && h->type == T_ENDACK && h->inc == zc_inc)
			zc_endack = true;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
			struct rds_zcopy_cookies z;
			uint32_t i;

			if (c->cmsg_level != SOL_RDS ||
			    c->cmsg_type != RDS_CMSG_ZCOPY_COMPLETION ||
			    c->cmsg_len < CMSG_LEN(sizeof(z)))
				continue;
			memcpy(&z, CMSG_DATA(c), sizeof(z));
			for (i = 0; i < z.num && i < RDS_MAX_ZCOOKIES; i++) {
				uint32_t k = z.cookies[i] % ZC_SLOTS;

				if (zc_owner[k] != (int64_t)z.cookies[i]) {
					st->zc_bad++;
					continue;
				}
				zc_owner[k] = -1;
				zc_pending--;
			}
		}
	}
}

/* The buffer of @seq, once the cookie of its previous message is back. */
static uint8_t *zc_slot(int fd, struct status *st, uint32_t seq)
{
	struct timespec t0;
	uint32_t k = seq % ZC_SLOTS;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (zc_owner[k] >= 0) {
		if (rds_ms_since(&t0) >= RETRY_MS) {
			errno = ETIME;
			return NULL;
		}
		if (zc_reap(fd, st, 100))
			return NULL;
	}
	return zc_bufs + (size_t)k * MAXMSG;
}

static int send_one_zc(int fd, const void *to, struct status *st,
		       uint32_t run, uint32_t inc, uint32_t seq, uint32_t len,
		       uint32_t *stall)
{
	uint8_t *buf = zc_slot(fd, st, seq);
	struct rds_cm cm = {
		.type = RDS_CMSG_ZCOPY_COOKIE, .data = &seq, .len = sizeof(seq),
	};
	struct timespec t0;
	ssize_t r;
	long ms;

	if (!buf)
		return -1;
	build(buf, run, inc, seq, len, T_DATA);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = rds_sendmsg_cmf(fd, to, buf, len, &cm, 1, RETRY_MS, MSG_ZEROCOPY);
	ms = rds_ms_since(&t0);
	if (stall && ms > (long)*stall)
		*stall = ms;
	if (r != (ssize_t)len)
		return -1;
	zc_owner[seq % ZC_SLOTS] = seq;
	zc_pending++;
	zc_reap(fd, st, 0);
	return 0;
}

static struct status *map_status(const char *path, bool create)
{
	struct status *st;
	int fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDONLY, 0644);

	if (fd < 0)
		return NULL;
	if (create && ftruncate(fd, sizeof(*st))) {
		close(fd);
		return NULL;
	}
	st = mmap(NULL, sizeof(*st), create ? PROT_READ | PROT_WRITE : PROT_READ,
		  MAP_SHARED, fd, 0);
	close(fd);
	return st == MAP_FAILED ? NULL : st;
}

static int fail_status(struct status *st, const char *what)
{
	snprintf(st->err, sizeof(st->err), "%s: %s", what, strerror(errno));
	st->state = 3;
	fprintf(stderr, "rds_restart send: %s\n", st->err);
	return 1;
}

static int send_mode(int argc, char **argv)
{
	struct sockaddr_in src, dst;
	struct sockaddr_storage from;
	uint32_t run, inc, seq = 0;
	static uint8_t buf[MAXMSG];
	struct sigaction sa;
	struct status *st;
	struct timespec next, now, t0;
	long period_ns;
	int fd, big = 8 << 20, rate = 200, v;
	socklen_t sl;
	uint16_t sport;
	bool paused = false;
	const char *zce = getenv("RDS_RESTART_ZCOPY");
	bool zc = zce && atoi(zce);

	/* Handlers first: the driver signals once the status is there. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	alarm(900);	/* bounded whatever the driver does */

	if (mkaddr4(argv[2], 0, &src) || mkaddr4(argv[3], atoi(argv[4]), &dst)) {
		fprintf(stderr, "rds_restart send: bad address\n");
		return 2;
	}
	run = strtoul(argv[6], NULL, 0);
	inc = strtoul(argv[7], NULL, 0);
	if (argc > 8)
		rate = atoi(argv[8]);
	st = map_status(argv[5], true);
	if (!st) {
		perror("rds_restart send: status file");
		return 1;
	}
	memset(st, 0, sizeof(*st));
	st->magic = MAGIC;
	st->inc = inc;
	st->barrier = st->burst = st->paused = st->unacked = st->unacked_end = -1;


	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return fail_status(st, "socket");
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	if (bind(fd, (struct sockaddr *)&src, sizeof(src)))
		return fail_status(st, "bind");
	sl = sizeof(src);
	if (getsockname(fd, (struct sockaddr *)&src, &sl))
		return fail_status(st, "getsockname");
	sport = ntohs(src.sin_port);
	if (zc) {
		int one = 1, i;

		if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)))
			return fail_status(st, "SO_ZEROCOPY");
		zc_bufs = mmap(NULL, (size_t)ZC_SLOTS * MAXMSG,
			       PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (zc_bufs == MAP_FAILED)
			return fail_status(st, "mmap");
		for (i = 0; i < ZC_SLOTS; i++)
			zc_owner[i] = -1;
		zc_run = run;
		zc_inc = inc;
		st->zc = 1;
	}
	sl = sizeof(v);
	if (!getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &sl))
		st->cap = (uint32_t)v / 2;
	printf("sender %u: port %u, send buffer %u bytes, %d msg/s\n", inc, sport,
	       st->cap, rate);
	fflush(stdout);

	period_ns = rate > 0 ? 1000000000L / rate : 0;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!f_end) {
		if (f_barrier) {
			f_barrier = 0;
			if (st->barrier < 0)
				st->barrier = seq;
			paused = false;
			st->state = 0;
			clock_gettime(CLOCK_MONOTONIC, &next);
		}
		if (f_burst) {
			f_burst = 0;
			if (st->burst < 0)
				st->burst = seq;
		}
		if (f_pause) {
			int u, i;

			f_pause = 0;
			u = unacked_stable(fd, sport, dst.sin_addr.s_addr);
			for (i = 0; u == 0 && i < 16; i++) {
				if (zc ? send_one_zc(fd, &dst, st, run, inc, seq,
						     size_of(inc, seq, st->burst),
						     &st->stall_ms) :
				    send_one(fd, &dst, buf, run, inc, seq,
					     size_of(inc, seq, st->burst), T_DATA,
					     &st->stall_ms))
					return fail_status(st, "sendmsg");
				st->sent = ++seq;
				u = unacked_stable(fd, sport, dst.sin_addr.s_addr);
			}
			st->paused = seq;
			st->unacked = u;
			st->state = 1;
			paused = true;
			printf("sender %u: paused after %u messages, %d unACKed\n",
			       inc, seq, u);
			fflush(stdout);
		}
		if (paused) {
			if (zc)
				zc_reap(fd, st, 10);
			else
				rds_msleep(10);
			continue;
		}
		if (period_ns && st->burst < 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if (now.tv_sec < next.tv_sec ||
			    (now.tv_sec == next.tv_sec && now.tv_nsec < next.tv_nsec)) {
				long left = (next.tv_sec - now.tv_sec) * 1000000000L +
					    next.tv_nsec - now.tv_nsec;

				if (left > 10000000L)
					left = 10000000L;
				rds_msleep((int)(left / 1000000L) + 1);
				continue;
			}
			next.tv_nsec += period_ns;
			while (next.tv_nsec >= 1000000000L) {
				next.tv_nsec -= 1000000000L;
				next.tv_sec++;
			}
			/* Fell behind by more than a second: no catch-up burst. */
			if (now.tv_sec > next.tv_sec + 1)
				next = now;
		}
		if (zc ? send_one_zc(fd, &dst, st, run, inc, seq,
				     size_of(inc, seq, st->burst), &st->stall_ms) :
		    send_one(fd, &dst, buf, run, inc, seq, size_of(inc, seq, st->burst),
			     T_DATA, &st->stall_ms))
			return fail_status(st, "sendmsg");
		st->sent = ++seq;
	}

	/* END marker, then the receiver's reply: everything before it arrived. */
	if (send_one(fd, &dst, buf, run, inc, seq, HDR + 8, T_END, NULL))
		return fail_status(st, "sendmsg END");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = RETRY_MS - rds_ms_since(&t0);
		struct rhdr *h = (struct rhdr *)buf;
		ssize_t r;

		if (left <= 0) {
			errno = ETIME;
			return fail_status(st, "no reply to END");
		}
		if (zc) {
			/* The reply and the cookies share the socket. */
			if (zc_reap(fd, st, 200))
				return fail_status(st, "recvmsg");
			if (zc_endack)
				break;
			continue;
		}
		r = rds_recv_wait(fd, buf, sizeof(buf), 0, &from, (int)left);
		if (r < 0 && errno == ETIME)
			continue;
		if (r < 0)
			return fail_status(st, "recvmsg");
		if (r >= (ssize_t)sizeof(*h) && h->magic == MAGIC && h->run == run &&
		    h->type == T_ENDACK && h->inc == inc)
			break;
	}
	st->unacked_end = queued(fd, sport, dst.sin_addr.s_addr, true);
	/* Every message was delivered: every cookie must come back. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (zc && zc_pending && rds_ms_since(&t0) < RETRY_MS)
		if (zc_reap(fd, st, 200))
			break;
	st->zc_missing = zc_pending;
	st->end = 1;
	st->state = 2;
	printf("sender %u: %u messages, barrier %d, burst from %d, longest send wait %u ms, unACKed at the end %d%s\n",
	       inc, st->sent, st->barrier, st->burst, st->stall_ms, st->unacked_end,
	       zc ? " (MSG_ZEROCOPY)" : "");
	return 0;
}

static int status_mode(const char *path)
{
	struct status *st = map_status(path, false);

	if (!st || st->magic != MAGIC) {
		fprintf(stderr, "rds_restart status: %s: no status\n", path);
		return 1;
	}
	printf("inc=%u,sent=%u,end=%u,barrier=%d,burst=%d,cap=%u,paused=%d,unacked=%d,unacked_end=%d,stall_ms=%u,state=%s",
	       st->inc, st->sent, st->end, st->barrier, st->burst, st->cap,
	       st->paused, st->unacked, st->unacked_end, st->stall_ms,
	       state_name[st->state & 3]);
	if (st->zc)
		printf(",zc=1,zc_missing=%u,zc_bad=%u", st->zc_missing, st->zc_bad);
	if (st->err[0]) {
		char e[sizeof(st->err)];
		size_t i;

		memcpy(e, st->err, sizeof(e));
		e[sizeof(e) - 1] = 0;
		for (i = 0; e[i]; i++)
			if (e[i] == ' ' || e[i] == ',')
				e[i] = '_';
		printf(",err=%s", e);
	}
	printf("\n");
	return 0;
}

/* ---- receiver ------------------------------------------------------- */

static int recv_mode(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	struct sockaddr_storage from;
	struct sockaddr_in me;
	struct rhdr *h = (struct rhdr *)buf;
	int fd = -1, out, tries = 0, big = 8 << 20, idle = 60, i;
	struct timespec t0;
	uint32_t run;

	if (mkaddr4(argv[2], atoi(argv[3]), &me)) {
		fprintf(stderr, "rds_restart recv: bad address\n");
		return 2;
	}
	run = strtoul(argv[5], NULL, 0);
	if (argc > 6)
		idle = atoi(argv[6]);
	alarm(900);
	signal(SIGPIPE, SIG_IGN);
	out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (out < 0) {
		perror("rds_restart recv: record file");
		return 1;
	}
	/*
	 * The old incarnation's socket may still be going away (EADDRINUSE),
	 * rds.ko may be loaded without rds_rdma yet (EADDRNOTAVAIL: no
	 * transport serves the address) or not at all (EAFNOSUPPORT).
	 */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		tries++;
		fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
		if (fd >= 0) {
			setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
			if (!bind(fd, (struct sockaddr *)&me, sizeof(me)))
				break;
			close(fd);
		}
		if (rds_ms_since(&t0) > 60000) {
			perror("rds_restart recv: bind");
			return 1;
		}
		usleep(1000);
	}
	dprintf(out, "B %d %d\n", (int)getpid(), tries);

	for (;;) {
		ssize_t r = rds_recv_wait(fd, buf, sizeof(buf), 0, &from,
					  idle * 1000);
		char flag = 'g';

		if (r < 0 && errno == ETIME) {
			dprintf(out, "I\n");
			return 3;
		}
		if (r < 0) {
			perror("rds_restart recv: recvmsg");
			return 1;
		}
		if (r < HDR || h->magic != MAGIC || h->run != run || h->len < HDR ||
		    h->len > MAXMSG) {
			dprintf(out, "R 0 0 %zd x\n", r);
			continue;
		}
		if (h->len != (uint32_t)r || h->hash != hash64(buf + HDR, r - HDR) ||
		    !content_ok(buf + HDR, r - HDR, seed_of(run, h->inc, h->seq)))
			flag = 'c';
		if (h->type == T_END && flag == 'g') {
			uint32_t inc = h->inc, seq = h->seq;

			dprintf(out, "E %u %u\n", inc, seq);
			if (send_one(fd, &from, buf, run, inc, seq, HDR + 8, T_ENDACK,
				     NULL)) {
				perror("rds_restart recv: reply to END");
				return 1;
			}
			/*
			 * close() would cancel the reply if it were still on
			 * the path's send queue: stay (10 s at most) until the
			 * transport has it.
			 */
			for (i = 0; i < 100 && queued(fd, ntohs(me.sin_port),
						      ((struct sockaddr_in *)&from)->sin_addr.s_addr,
						      false) != 0; i++)
				rds_msleep(100);
			return 0;
		}
		if (h->type != T_DATA)
			flag = 'x';
		dprintf(out, "R %u %u %zd %c\n", h->inc, h->seq, r, flag);
	}
}

/* ---- checker -------------------------------------------------------- */

#define MAXFLOWS	4

struct flow {
	uint32_t inc, sent, cap;
	int32_t barrier, burst;
	int end;
	int gap;		/* 0 window, 1 tail, 2 none */
	int dups;		/* -1: any */
	uint8_t *cnt;		/* deliveries per seq, 0 .. sent */
};

static int nfail;
static FILE *cout;

static void verdict(bool ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void verdict(bool ok, const char *fmt, ...)
{
	va_list ap;

	fputs(ok ? "PASS " : "FAIL ", cout);
	va_start(ap, fmt);
	vfprintf(cout, fmt, ap);
	va_end(ap);
	fputc('\n', cout);
	if (!ok)
		nfail++;
}

static int parse_flow(const char *spec, struct flow *f)
{
	char buf[512], *tok, *save;

	memset(f, 0, sizeof(*f));
	f->barrier = f->burst = -1;
	f->end = 1;
	f->dups = 0;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return -1;
		*eq++ = 0;
		if (!strcmp(tok, "inc"))
			f->inc = strtoul(eq, NULL, 0);
		else if (!strcmp(tok, "sent"))
			f->sent = strtoul(eq, NULL, 0);
		else if (!strcmp(tok, "end"))
			f->end = atoi(eq);
		else if (!strcmp(tok, "barrier"))
			f->barrier = atoi(eq);
		else if (!strcmp(tok, "burst"))
			f->burst = atoi(eq);
		else if (!strcmp(tok, "cap"))
			f->cap = strtoul(eq, NULL, 0);
		else if (!strcmp(tok, "gap"))
			f->gap = !strcmp(eq, "tail") ? 1 : !strcmp(eq, "none") ? 2 : 0;
		else if (!strcmp(tok, "dups"))
			f->dups = !strcmp(eq, "any") ? -1 : atoi(eq);
		/* other keys of the status line are for the reader */
	}
	if (f->barrier > (int32_t)f->sent)
		return -1;
	f->cnt = calloc(f->sent + 2, 1);
	return f->cnt ? 0 : -1;
}

static int check_run(int argc, char **argv, FILE *o)
{
	struct flow fl[MAXFLOWS];
	int nfl = 0, i, nfiles = 0, first_file = 0;
	unsigned long records = 0, bad = 0, beyond = 0, unknown = 0, unordered = 0;
	char order_where[160] = "";

	cout = o;
	nfail = 0;
	/* argv[1] "check", argv[2] RUN (informational: files hold no foreign run) */
	for (i = 3; i < argc && strcmp(argv[i], "--"); i++) {
		if (nfl == MAXFLOWS || parse_flow(argv[i], &fl[nfl])) {
			fprintf(o, "FAIL bad flow spec %s\n", argv[i]);
			return 1;
		}
		nfl++;
	}
	first_file = i + 1;
	nfiles = argc - first_file;
	if (!nfl || nfiles <= 0) {
		fprintf(o, "FAIL usage: check RUN FLOW... -- RECFILE...\n");
		return 1;
	}

	for (i = first_file; i < argc; i++) {
		FILE *f = fopen(argv[i], "r");
		char line[256];
		long long last_inc = -1, last_seq = -1;
		unsigned long n = 0;
		/* per flow: first and last seq seen in this file */
		long long lo[MAXFLOWS], hi[MAXFLOWS];
		unsigned long cnt[MAXFLOWS];
		int k;

		for (k = 0; k < nfl; k++) {
			lo[k] = hi[k] = -1;
			cnt[k] = 0;
		}
		if (!f) {
			verdict(false, "cannot read %s", argv[i]);
			continue;
		}
		while (fgets(line, sizeof(line), f)) {
			unsigned int inc, seq, len;
			char flag;

			if (line[0] != 'R')
				continue;
			if (sscanf(line, "R %u %u %u %c", &inc, &seq, &len, &flag) != 4) {
				bad++;
				continue;
			}
			records++;
			n++;
			if (flag != 'g') {
				bad++;
				continue;
			}
			if ((long long)inc < last_inc ||
			    ((long long)inc == last_inc && (long long)seq <= last_seq)) {
				if (!unordered++)
					snprintf(order_where, sizeof(order_where),
						 "%s: (%lld,%lld) then (%u,%u)",
						 argv[i], last_inc, last_seq, inc, seq);
			}
			last_inc = inc;
			last_seq = seq;
			for (k = 0; k < nfl && fl[k].inc != inc; k++)
				;
			if (k == nfl) {
				unknown++;
				continue;
			}
			if (seq > fl[k].sent || (seq == fl[k].sent && fl[k].end)) {
				beyond++;
				continue;
			}
			if (fl[k].cnt[seq] < 255)
				fl[k].cnt[seq]++;
			if (lo[k] < 0)
				lo[k] = seq;
			hi[k] = seq;
			cnt[k]++;
		}
		fclose(f);
		for (k = 0; k < nfl; k++)
			if (cnt[k])
				fprintf(o, "INFO %s: sender %u seq %lld..%lld, %lu messages\n",
					argv[i], fl[k].inc, lo[k], hi[k], cnt[k]);
			else
				fprintf(o, "INFO %s: nothing from sender %u\n", argv[i],
					fl[k].inc);
		(void)n;
	}
	verdict(!bad, "no corrupt, truncated or foreign message (%lu records, %lu bad)",
		records, bad);
	verdict(!unordered,
		"each receiver incarnation saw strictly increasing (sender incarnation, seq)%s%s",
		unordered ? ": " : "", order_where);
	verdict(!beyond && !unknown,
		"every delivered message was sent (%lu beyond a sender's count, %lu of no sender given)",
		beyond, unknown);

	for (i = 0; i < nfl; i++) {
		struct flow *f = &fl[i];
		uint32_t s, top = f->end ? f->sent : f->sent + 1;
		unsigned long delivered = 0, dups = 0, lost = 0, inside = 0, after_bad = 0;
		unsigned long long bytes = 0;
		long long lo = -1, hi = -1;

		for (s = 0; s < top; s++) {
			if (f->cnt[s]) {
				delivered++;
				dups += f->cnt[s] - 1;
			} else if (s < f->sent) {
				lost++;
				if (lo < 0)
					lo = s;
				hi = s;
			}
			if (f->barrier >= 0 && s >= (uint32_t)f->barrier && s < f->sent &&
			    f->cnt[s] != 1)
				after_bad++;
		}
		fprintf(o, "INFO sender %u: sent %u%s, delivered %lu distinct, %lu duplicates, %lu lost",
			f->inc, f->sent, f->end ? "" : " (killed; one more may have been accepted)",
			delivered, dups, lost);
		if (lost)
			fprintf(o, " (seq %lld..%lld)", lo, hi);
		fputc('\n', o);
		fprintf(o, "LOST %u %lu\nDUPS %u %lu\n", f->inc, lost, f->inc, dups);
		if (f->barrier >= 0)
			verdict(!after_bad,
				"sender %u: the %u messages from the barrier on (seq %d..%u) arrived exactly once (%lu did not)",
				f->inc, f->sent - f->barrier, f->barrier, f->sent - 1, after_bad);
		if (f->gap == 2) {
			verdict(!lost, "sender %u: no message lost (%lu)", f->inc, lost);
		} else if (f->gap == 0) {
			bool one = true;

			for (s = lo < 0 ? 0 : lo; lost && s <= (uint32_t)hi; s++)
				if (f->cnt[s])
					one = false;
			verdict(one && (f->barrier < 0 || hi < f->barrier),
				"sender %u: the %lu lost messages are one contiguous window%s (seq %lld..%lld, barrier %d)",
				f->inc, lost, lost ? " before the barrier" : "", lo, hi, f->barrier);
		} else {
			uint32_t maxlen = 0;

			for (s = lo < 0 ? f->sent : lo; s < f->sent; s++) {
				uint32_t len = size_of(f->inc, s, f->burst);

				bytes += len > 48 ? len : 48;	/* rds_msg_charge() */
				if (len > maxlen)
					maxlen = len;
				if (f->cnt[s])
					inside++;
			}
			verdict(!lost || bytes <= (unsigned long long)f->cap + maxlen,
				"sender %u: the %lu lost messages all lie in the tail seq %lld..%u (%lu delivered inside it), %llu bytes, within the socket's %u-byte send buffer",
				f->inc, lost, lo, f->sent - 1, inside, bytes, f->cap);
		}
		if (f->dups >= 0)
			verdict(dups == (unsigned long)f->dups,
				"sender %u: %lu duplicate deliveries (expected %d)", f->inc,
				dups, f->dups);
		free(f->cnt);
	}
	return nfail;
}

/* ---- checker self-test ---------------------------------------------- */

static int selftest_one(const char *name, bool want_pass, const char *flow,
			const char *f1, const char *f2)
{
	const char *p1 = "/tmp/rds_restart.st1", *p2 = "/tmp/rds_restart.st2";
	char *argv[8];
	FILE *null = fopen("/dev/null", "w"), *f;
	int argc = 0, r;

	f = fopen(p1, "w");
	fputs(f1, f);
	fclose(f);
	if (f2) {
		f = fopen(p2, "w");
		fputs(f2, f);
		fclose(f);
	}
	argv[argc++] = "rds_restart";
	argv[argc++] = "check";
	argv[argc++] = "1";
	argv[argc++] = (char *)flow;
	argv[argc++] = "--";
	argv[argc++] = (char *)p1;
	if (f2)
		argv[argc++] = (char *)p2;
	argv[argc] = NULL;
	r = check_run(argc, argv, null ? null : stderr);
	if (null)
		fclose(null);
	unlink(p1);
	unlink(p2);
	printf("# selftest %s: %s (%d failed checks)\n", name,
	       (r == 0) == want_pass ? "judged right" : "JUDGED WRONG", r);
	return (r == 0) == want_pass ? 0 : 1;
}

static int selftest(void)
{
	int bad = 0;
	/* 10 sent, receiver 1 got 0..3, receiver 2 got 7..9 (barrier 7) */
	const char *a = "B 1 1\nR 1 0 40 g\nR 1 1 40 g\nR 1 2 40 g\nR 1 3 40 g\n";
	const char *b = "B 2 1\nR 1 7 40 g\nR 1 8 40 g\nR 1 9 40 g\nE 1 10\n";

	bad += selftest_one("window loss", true,
			    "inc=1,sent=10,barrier=7,gap=window,dups=0", a, b);
	bad += selftest_one("loss after the barrier", false,
			    "inc=1,sent=10,barrier=6,gap=window,dups=0", a, b);
	bad += selftest_one("two loss windows", false,
			    "inc=1,sent=10,barrier=7,gap=window,dups=0",
			    "R 1 0 40 g\nR 1 2 40 g\nR 1 3 40 g\n", b);
	bad += selftest_one("reordered", false, "inc=1,sent=10,gap=window,dups=any",
			    "R 1 0 40 g\nR 1 2 40 g\nR 1 1 40 g\n", NULL);
	bad += selftest_one("duplicate within one receiver", false,
			    "inc=1,sent=10,gap=window,dups=any",
			    "R 1 0 40 g\nR 1 1 40 g\nR 1 1 40 g\n", NULL);
	bad += selftest_one("corrupt", false, "inc=1,sent=10,gap=window,dups=any",
			    "R 1 0 40 g\nR 1 1 40 c\n", NULL);
	bad += selftest_one("duplicate across receivers, none expected", false,
			    "inc=1,sent=10,barrier=7,gap=window,dups=0", a,
			    "R 1 3 40 g\nR 1 7 40 g\nR 1 8 40 g\nR 1 9 40 g\n");
	bad += selftest_one("duplicate across receivers, one expected", true,
			    "inc=1,sent=10,barrier=7,gap=window,dups=1", a,
			    "R 1 3 40 g\nR 1 7 40 g\nR 1 8 40 g\nR 1 9 40 g\n");
	bad += selftest_one("message never sent", false,
			    "inc=1,sent=3,gap=none,dups=0",
			    "R 1 0 40 g\nR 1 1 40 g\nR 1 2 40 g\nR 1 3 40 g\n", NULL);
	bad += selftest_one("killed sender: one more accepted", true,
			    "inc=1,sent=3,end=0,gap=tail,cap=100000,dups=0",
			    "R 1 0 40 g\nR 1 1 40 g\nR 1 2 40 g\nR 1 3 40 g\n", NULL);
	bad += selftest_one("tail loss within the send buffer", true,
			    "inc=1,sent=10,end=0,gap=tail,cap=100000,dups=0",
			    "R 1 0 40 g\nR 1 1 40 g\nR 1 3 40 g\n", NULL);
	bad += selftest_one("tail loss beyond the send buffer", false,
			    "inc=1,sent=10,end=0,gap=tail,cap=100,dups=0",
			    "R 1 0 40 g\nR 1 1 40 g\nR 1 3 40 g\n", NULL);
	bad += selftest_one("second sender before the first", false,
			    "inc=1,sent=2,gap=none,dups=0",
			    "R 2 0 40 g\nR 1 0 40 g\nR 1 1 40 g\n", NULL);
	printf("# checker self-test: %s\n", bad ? "FAILED" : "all judged right");
	return bad ? 1 : 0;
}

/* Run by itself (no mode), it is a kselftest of its checker. */
TEST(checker_selftest)
{
	ASSERT_EQ(0, selftest());
}

int main(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[1], "send"))
		return send_mode(argc, argv);
	if (argc >= 6 && !strcmp(argv[1], "recv"))
		return recv_mode(argc, argv);
	if (argc == 3 && !strcmp(argv[1], "status"))
		return status_mode(argv[2]);
	if (argc >= 6 && !strcmp(argv[1], "check")) {
		int r = check_run(argc, argv, stdout);

		return r > 100 ? 100 : r;
	}
	if (argc == 2 && !strcmp(argv[1], "selftest"))
		return selftest();
	if (argc == 1 || argv[1][0] == '-')
		return test_harness_run(argc, argv);
	fprintf(stderr,
		"usage: rds_restart send LADDR PADDR PORT STATUS RUN INC [RATE]\n"
		"       rds_restart recv ADDR PORT RECFILE RUN [IDLE_S]\n"
		"       rds_restart status STATUS\n"
		"       rds_restart check RUN FLOW... -- RECFILE...\n"
		"       rds_restart selftest\n");
	return 2;
}
