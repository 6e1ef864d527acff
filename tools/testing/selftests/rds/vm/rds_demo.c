// SPDX-License-Identifier: GPL-2.0
/*
 * rds_demo - what `make demo` runs inside the cluster.
 *
 *   rds_demo echo ADDR PORT SECONDS
 *	bind ADDR:PORT and send every message back to its sender, for SECONDS
 *   rds_demo ping LADDR PADDR PORT COUNT SIZE
 *	send COUNT messages of SIZE bytes to PADDR:PORT from LADDR, wait for
 *	each echo, check its content, print round-trip statistics
 *   rds_demo rdma-peer ADDR PORT SECONDS
 *	the peer of the two below: does the RDMA a request asks for on the
 *	key it carries and reports the outcome; exposes an 8-byte counter
 *	for atomics and shows its value
 *   rds_demo rdma LADDR PADDR PORT
 *	hand a use-once key for a buffer to the peer; it RDMA WRITEs into
 *	it, then tries the same key again: the second WRITE is refused
 *	(REMOTE_ERROR) and the buffer keeps the first data
 *   rds_demo atomic LADDR PADDR PORT
 *	fetch-and-add and compare-and-swap on the peer's counter, showing
 *	the old value each returns and the counter's memory after each
 *
 * Only the distribution's <linux/rds.h> is used: the same program runs on
 * the in-tree module.  The message and RDMA helpers are the selftests'
 * (../rdma_test.h).
 */
#include <arpa/inet.h>
#include <stdio.h>
#include "../rdma_test.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int rds_socket(const char *addr, int port, struct sockaddr_in *sin)
{
	int s = socket(AF_RDS, SOCK_SEQPACKET, 0);
	int bufsz = 8 << 20;

	if (s < 0) {
		fprintf(stderr, "socket(AF_RDS): %s%s\n", strerror(errno),
			errno == EAFNOSUPPORT ? " (rds.ko not loaded?)" : "");
		exit(1);
	}
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(port);
	if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", addr);
		exit(2);
	}
	/* Room for 1 MiB messages: RDS allows sndbuf/2 bytes in flight. */
	if (setsockopt(s, SOL_SOCKET, SO_SNDBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(s, SOL_SOCKET, SO_SNDBUF, &bufsz, sizeof(bufsz));
	if (setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &bufsz, sizeof(bufsz)))
		setsockopt(s, SOL_SOCKET, SO_RCVBUF, &bufsz, sizeof(bufsz));
	if (bind(s, (struct sockaddr *)sin, sizeof(*sin))) {
		fprintf(stderr, "bind %s:%d: %s%s\n", addr, port, strerror(errno),
			errno == EADDRNOTAVAIL ? " (no RDMA device has it?)" : "");
		exit(1);
	}
	return s;
}

static int echo(const char *addr, int port, int seconds)
{
	static char buf[1 << 20];
	struct sockaddr_storage from;
	struct sockaddr_in sin;
	double end = now_us() + seconds * 1e6;
	long n = 0;
	int s = rds_socket(addr, port, &sin);

	while (now_us() < end) {
		ssize_t len = rds_recv_wait(s, buf, sizeof(buf), 0, &from, 200);

		if (len < 0)
			continue;
		if (sendto(s, buf, len, 0, (struct sockaddr *)&from,
			   rds_sslen(&from)) < 0)
			perror("echo sendto");
		n++;
	}
	printf("echo: %ld messages echoed\n", n);
	return 0;
}

static void fill(char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (char)(seed * 131 + i * 7);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int ping(const char *laddr, const char *paddr, int port, int count,
		size_t size)
{
	static char out[1 << 20], in[1 << 20];
	struct sockaddr_in sin, dst;
	double *rtt, sum = 0;
	int s, i, bad = 0, lost = 0;

	if (size > sizeof(out))
		size = sizeof(out);
	s = rds_socket(laddr, 0, &sin);
	memset(&dst, 0, sizeof(dst));
	dst.sin_family = AF_INET;
	dst.sin_port = htons(port);
	inet_pton(AF_INET, paddr, &dst.sin_addr);
	rtt = calloc(count, sizeof(*rtt));
	for (i = 0; i < count; i++) {
		double t0 = now_us();
		ssize_t len = -1;
		int tries;

		fill(out, size, i);
		/* The first send starts the connection: retry while it comes up. */
		for (tries = 0; tries < 100; tries++) {
			if (sendto(s, out, size, 0, (struct sockaddr *)&dst,
				   sizeof(dst)) >= 0)
				break;
			if (errno != EAGAIN && errno != ENOBUFS) {
				perror("sendto");
				return 1;
			}
			usleep(50000);
		}
		len = rds_recv_wait(s, in, sizeof(in), 0, NULL, 10000);
		if (len < 0) {
			lost++;
			continue;
		}
		rtt[i] = now_us() - t0;
		sum += rtt[i];
		if ((size_t)len != size || memcmp(in, out, size))
			bad++;
	}
	if (lost == count) {
		printf("ping %s -> %s:%d: all %d messages lost\n", laddr, paddr,
		       port, count);
		return 1;
	}
	qsort(rtt, count, sizeof(*rtt), cmp_double);
	printf("ping %s -> %s:%d: %d x %zu bytes, %d lost, %d corrupt, "
	       "rtt min %.0f us, median %.0f us, max %.0f us\n",
	       laddr, paddr, port, count, size, lost, bad,
	       rtt[lost], rtt[lost + (count - lost) / 2], rtt[count - 1]);
	return lost || bad;
}

/* ---- RDMA and atomics ------------------------------------------------ */

enum { RQ_WRITE_TWICE = 1, RQ_EXPOSE, RQ_SHOW, RQ_QUIT };
enum { RP_DONE = 1, RP_STATUS, RP_KEY, RP_VALUE };

struct demo_msg {
	uint32_t kind;
	int32_t status;
	uint64_t value;
	char text[48];
};

/* The first send starts the connection (MAP needs it): retried, bounded. */
static ssize_t send_cmsg(int s, const void *to, const void *buf, size_t len,
			 int type, const void *d, size_t dlen)
{
	return rds_send_cmsg(s, to, buf, len, type, d, dlen, 10000);
}

/* Wait for a message of @kind, skipping notifications; -1 on timeout. */
static int wait_msg(int s, struct demo_msg *m, uint32_t kind, uint64_t *cookie)
{
	int i;

	for (i = 0; i < 20; i++) {
		struct rds_rx rx;
		ssize_t r = rds_recv_rx(s, m, sizeof(*m), &rx, 30000);

		if (r < 0)
			return -1;
		if (cookie)
			*cookie = rx.cookie;
		if (r == sizeof(*m) && m->kind == kind)
			return 0;
	}
	return -1;
}

/* Peer: RDMA WRITE @text into @cookie with a DONE message, wait for the
 * notification; returns the RDMA status (or -1 when none came). */
static int peer_write(int s, const void *to, uint64_t cookie,
		      const char *text)
{
	static char local[64];
	struct demo_msg done = { .kind = RP_DONE };
	int st;

	memset(local, 0, sizeof(local));
	snprintf(local, sizeof(local), "%s", text);
	st = rds_do_rdma(s, to, &done, sizeof(done), cookie, local,
			 sizeof(local), true, 7, 30000);
	return st < 0 ? -1 : st;
}

static int rdma_peer(const char *addr, int port, int seconds)
{
	static uint64_t counter __attribute__((aligned(64))) = 100;
	struct sockaddr_in sin;
	struct sockaddr_storage from;
	double end = now_us() + seconds * 1e6;
	uint64_t cookie, counter_cookie = 0;
	int s = rds_socket(addr, port, &sin);

	while (now_us() < end) {
		struct demo_msg q, r = { 0 };
		struct rds_get_mr_args mr;
		struct rds_rx rx;

		if (rds_recv_rx(s, &q, sizeof(q), &rx, 200) != sizeof(q))
			continue;
		from = rx.from;
		cookie = rx.cookie;
		switch (q.kind) {
		case RQ_WRITE_TWICE:
			r.kind = RP_STATUS;
			r.status = peer_write(s, &from, cookie, q.text);
			send_cmsg(s, &from, &r, sizeof(r), 0, NULL, 0);
			r.status = peer_write(s, &from, cookie,
					      "a second write on the same key");
			send_cmsg(s, &from, &r, sizeof(r), 0, NULL, 0);
			break;
		case RQ_EXPOSE:
			counter = q.value;
			r.kind = RP_KEY;
			r.value = counter;
			mr = (struct rds_get_mr_args){
				.vec = { (uintptr_t)&counter, sizeof(counter) },
				.cookie_addr = (uintptr_t)&counter_cookie,
				.flags = RDS_RDMA_READWRITE,
			};
			if (send_cmsg(s, &from, &r, sizeof(r), RDS_CMSG_RDMA_MAP,
				      &mr, sizeof(mr)) < 0)
				perror("rdma-peer: map");
			break;
		case RQ_SHOW:
			r.kind = RP_VALUE;
			r.value = __atomic_load_n(&counter, __ATOMIC_SEQ_CST);
			send_cmsg(s, &from, &r, sizeof(r), 0, NULL, 0);
			break;
		case RQ_QUIT:
			return 0;
		}
	}
	return 0;
}

static void peer_addr(struct sockaddr_in *dst, const char *paddr, int port)
{
	memset(dst, 0, sizeof(*dst));
	dst->sin_family = AF_INET;
	dst->sin_port = htons(port);
	inet_pton(AF_INET, paddr, &dst->sin_addr);
}

static int rdma(const char *laddr, const char *paddr, int port)
{
	static char buf[64] __attribute__((aligned(64)));
	struct sockaddr_in sin, dst;
	struct demo_msg q = { .kind = RQ_WRITE_TWICE }, r;
	uint64_t cookie = 0;
	struct rds_get_mr_args mr = {
		.vec = { (uintptr_t)buf, sizeof(buf) },
		.cookie_addr = (uintptr_t)&cookie,
		.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE,
	};
	int s = rds_socket(laddr, 0, &sin), bad = 0;

	peer_addr(&dst, paddr, port);
	memset(buf, 0, sizeof(buf));
	snprintf(buf, sizeof(buf), "(empty)");
	snprintf(q.text, sizeof(q.text), "hello from node 1, by RDMA WRITE");
	printf("node 0: buffer \"%s\"; registering a use-once key for it\n", buf);
	if (send_cmsg(s, &dst, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
		      sizeof(mr)) < 0) {
		perror("sendmsg RDS_CMSG_RDMA_MAP");
		return 1;
	}
	printf("node 0: key cookie 0x%016llx sent to node 1 with the request\n",
	       (unsigned long long)cookie);
	if (wait_msg(s, &r, RP_STATUS, NULL)) {
		printf("node 0: no report from node 1\n");
		return 1;
	}
	printf("node 1: RDMA WRITE with the key: %s\n",
	       rds_rdma_status_name(r.status));
	printf("node 0: buffer now \"%s\"\n", buf);
	bad |= r.status != RDS_RDMA_SUCCESS || strcmp(buf, q.text);
	if (wait_msg(s, &r, RP_STATUS, NULL)) {
		printf("node 0: no report from node 1\n");
		return 1;
	}
	printf("node 1: second RDMA WRITE with the same key: %s%s\n",
	       rds_rdma_status_name(r.status), r.status == RDS_RDMA_REMOTE_ERROR ?
	       " (the key died with its first use)" : "");
	printf("node 0: buffer still \"%s\"\n", buf);
	bad |= r.status != RDS_RDMA_REMOTE_ERROR || strcmp(buf, q.text);
	return bad;
}

/* One atomic on the exposed counter; the old value, or -1 on failure. */
static int one_atomic(int s, struct sockaddr_in *dst, int type,
		      struct rds_atomic_args *a, uint64_t *old)
{
	int st;

	a->local_addr = (uintptr_t)old;
	a->flags = RDS_RDMA_NOTIFY_ME;
	a->user_token = 9;
	if (send_cmsg(s, dst, NULL, 0, type, a, sizeof(*a)) < 0) {
		perror("sendmsg atomic");
		return -1;
	}
	st = rds_wait_note(s, NULL, 30000);
	if (st < 0) {
		printf("node 0: no completion for the atomic\n");
		return -1;
	}
	if (st != RDS_RDMA_SUCCESS)
		printf("node 0: the atomic completed with %s\n",
		       rds_rdma_status_name(st));
	return st == RDS_RDMA_SUCCESS ? 0 : -1;
}

static int show(int s, struct sockaddr_in *dst, uint64_t *v)
{
	struct demo_msg q = { .kind = RQ_SHOW }, r;

	if (send_cmsg(s, dst, &q, sizeof(q), 0, NULL, 0) < 0 ||
	    wait_msg(s, &r, RP_VALUE, NULL))
		return -1;
	*v = r.value;
	return 0;
}

static int atomic(const char *laddr, const char *paddr, int port)
{
	static uint64_t old __attribute__((aligned(8)));
	struct sockaddr_in sin, dst;
	struct demo_msg q = { .kind = RQ_EXPOSE, .value = 100 }, r;
	struct rds_atomic_args a;
	uint64_t cookie, mem;
	int s = rds_socket(laddr, 0, &sin), bad = 0;

	peer_addr(&dst, paddr, port);
	if (send_cmsg(s, &dst, &q, sizeof(q), 0, NULL, 0) < 0 ||
	    wait_msg(s, &r, RP_KEY, &cookie) || !cookie) {
		printf("node 0: node 1 did not expose its counter\n");
		return 1;
	}
	printf("node 1: exposes an 8-byte counter = %llu, key cookie 0x%016llx\n",
	       (unsigned long long)r.value, (unsigned long long)cookie);

	a = (struct rds_atomic_args){ .cookie = cookie, .fadd = { .add = 5 } };
	old = 0;
	if (one_atomic(s, &dst, RDS_CMSG_ATOMIC_FADD, &a, &old) || show(s, &dst, &mem))
		return 1;
	printf("node 0: fetch-and-add 5:            old value %llu, node 1's memory now %llu\n",
	       (unsigned long long)old, (unsigned long long)mem);
	bad |= old != 100 || mem != 105;

	a = (struct rds_atomic_args){ .cookie = cookie,
				      .cswp = { .compare = 105, .swap = 1000 } };
	if (one_atomic(s, &dst, RDS_CMSG_ATOMIC_CSWP, &a, &old) || show(s, &dst, &mem))
		return 1;
	printf("node 0: compare 105, swap 1000:     old value %llu, node 1's memory now %llu (swapped)\n",
	       (unsigned long long)old, (unsigned long long)mem);
	bad |= old != 105 || mem != 1000;

	a = (struct rds_atomic_args){ .cookie = cookie,
				      .cswp = { .compare = 7, .swap = 1 } };
	if (one_atomic(s, &dst, RDS_CMSG_ATOMIC_CSWP, &a, &old) || show(s, &dst, &mem))
		return 1;
	printf("node 0: compare 7, swap 1:          old value %llu, node 1's memory now %llu (not equal: unchanged)\n",
	       (unsigned long long)old, (unsigned long long)mem);
	bad |= old != 1000 || mem != 1000;

	q.kind = RQ_QUIT;
	send_cmsg(s, &dst, &q, sizeof(q), 0, NULL, 0);
	usleep(100000);
	return bad;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return echo(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 7 && !strcmp(argv[1], "ping"))
		return ping(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]),
			    strtoul(argv[6], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "rdma-peer"))
		return rdma_peer(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "rdma"))
		return rdma(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "atomic"))
		return atomic(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr, "usage: rds_demo echo ADDR PORT SECONDS\n"
		"       rds_demo ping LADDR PADDR PORT COUNT SIZE\n"
		"       rds_demo rdma-peer ADDR PORT SECONDS\n"
		"       rds_demo rdma|atomic LADDR PADDR PORT\n");
	return 2;
}
