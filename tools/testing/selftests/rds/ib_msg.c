// SPDX-License-Identifier: GPL-2.0
/*
 * ib_msg.c - two-node message test of the IB transport (rds_rdma).
 *
 *   ib_msg echo ADDR PORT SECONDS   peer side: echo messages back, check
 *                                   bursts, exit after SECONDS idle
 *   ib_msg client LADDR PADDR PORT  run the checks as a client (TAP lines
 *                                   prefixed "# peer: "), exit = failures
 *   ib_msg quick LADDR PADDR PORT S a few echoes, retried for S seconds
 *   ib_msg quit LADDR PADDR PORT    stop an echo server
 *   ib_msg reg LADDR PADDR PORT S   register and free MRs on LADDR's
 *                                   device for S seconds (ib_multidev.sh:
 *                                   registrations in flight while the
 *                                   device is removed)
 *   ib_msg [test]                   node 0: start echo servers on node 1
 *                                   (rds-peer), run the checks below over
 *                                   IPv4 and, when configured, IPv6
 *
 * The IPv4 connection is made by the peer (we are passive), IPv6 and siw
 * (debug kernel) by us.
 * Checks (TAP): ping (port 0) answered; messages of 0, 1, 4095, 4096,
 * 4097 bytes and 1 MiB echoed with their content intact; a burst of 10,000
 * messages arriving complete and in order.  Run with our modules or the
 * in-tree ones on the peer: that is the interop proof.  IB_MSG_TOS=n in the
 * environment puts the sockets on TOS n (a connection of its own).
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/ioctl.h>
#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

#define MAGIC		0x52445349u	/* "RDSI" */
#define OP_ECHO		1
#define OP_BURST	2
#define OP_BURST_END	3
#define OP_QUIT		4
#define ECHO_PORT	4000
#define BURST		10000
#define MAXMSG		(1 << 20)

struct mhdr {
	uint32_t magic, op, id, len;
};

/* The debug kernel under TCG is an order of magnitude slower. */
static int slow = 1;
static unsigned int burst = BURST;

static union {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
	struct sockaddr_storage ss;
} peer_sa;
static socklen_t peer_len;

static int mkaddr(const char *a, int port, struct sockaddr_storage *ss,
		  socklen_t *len)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, a, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		*len = sizeof(*in);
		return 0;
	}
	if (inet_pton(AF_INET6, a, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		*len = sizeof(*in6);
		return 0;
	}
	return -1;
}

static int rds_sock(const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, buf = 8 << 20;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		perror("socket");
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	if (mkaddr(addr, port, &ss, &len) || bind(fd, (void *)&ss, len)) {
		perror("bind");
		close(fd);
		return -1;
	}
	/* The TOS needs a bound socket (a transport). */
	if (getenv("IB_MSG_TOS")) {
		rds_tos_t tos = atoi(getenv("IB_MSG_TOS"));

		if (ioctl(fd, SIOCRDSSETTOS, &tos)) {
			perror("SIOCRDSSETTOS");
			close(fd);
			return -1;
		}
	}
	return fd;
}

static void fill(unsigned char *p, uint32_t len, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(id * 31 + i * 7 + (i >> 12));
}

static int check(const unsigned char *p, uint32_t len, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		if (p[i] != (unsigned char)(id * 31 + i * 7 + (i >> 12)))
			return -1;
	return 0;
}

/* Wait up to @ms for input. */
static int wait_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

/*
 * Receive one message within @ms.  poll() may report POLLIN for a
 * congestion map update alone (in-tree semantics), so the receive itself
 * never blocks.
 */
static ssize_t recv_from(int fd, void *buf, size_t len, int ms,
			 struct sockaddr_storage *from, socklen_t *flen)
{
	struct timespec t0, t;
	ssize_t n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct iovec iov = { .iov_base = buf, .iov_len = len };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = ms - ((t.tv_sec - t0.tv_sec) * 1000 +
			     (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || wait_in(fd, left) <= 0)
			return -ETIMEDOUT;
		m.msg_name = from;
		m.msg_namelen = from ? sizeof(*from) : 0;
		n = recvmsg(fd, &m, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (flen)
			*flen = m.msg_namelen;
		return n;
	}
}

static int send_to(int fd, const void *buf, size_t len,
		   const struct sockaddr *to, socklen_t tolen)
{
	int tries = 0;

	for (;;) {
		ssize_t n = sendto(fd, buf, len, 0, to, tolen);

		if (n == (ssize_t)len)
			return 0;
		if (n < 0 && (errno == ENOBUFS || errno == EAGAIN) &&
		    tries++ < 30000) {
			usleep(1000);
			continue;
		}
		return -1;
	}
}

/* ---------------------------------------------------------------- peer */

static int do_echo(const char *addr, int port, int idle)
{
	unsigned char *buf = malloc(MAXMSG);
	uint32_t expect = 0, bad = 0;
	int fd = rds_sock(addr, port);

	if (fd < 0 || !buf)
		return 1;
	for (;;) {
		struct sockaddr_storage from;
		socklen_t flen;
		struct mhdr *h = (struct mhdr *)buf;
		ssize_t n = recv_from(fd, buf, MAXMSG, idle * 1000, &from,
				      &flen);

		if (n < 0)
			break;
		if (n >= (ssize_t)sizeof(*h) && h->magic == MAGIC) {
			if (h->op == OP_QUIT)
				break;
			if (h->op == OP_BURST) {
				if (h->id != expect || h->len != n ||
				    check(buf + sizeof(*h), n - sizeof(*h),
					  h->id))
					bad++;
				expect = h->id + 1;
				continue;
			}
			if (h->op == OP_BURST_END) {
				h->id = expect;
				h->len = bad;
				expect = 0;
				bad = 0;
				n = sizeof(*h);
			}
		}
		if (send_to(fd, buf, n, (struct sockaddr *)&from, flen))
			fprintf(stderr, "echo: send failed: %s\n",
				strerror(errno));
	}
	close(fd);
	return 0;
}

/* ---------------------------------------------------------------- node 0 */

static int tap_n;
static int failed;
static const char *tap_prefix = "";

static void tap(int ok, const char *what)
{
	printf("%s%sok %d %s\n", tap_prefix, ok ? "" : "not ", ++tap_n, what);
	fflush(stdout);
	if (!ok)
		failed = 1;
}

static int echo_one(int fd, unsigned char *buf, unsigned char *rbuf,
		    uint32_t len, uint32_t id)
{
	struct mhdr *h = (struct mhdr *)buf;
	ssize_t n;

	fill(buf, len, id);
	if (len >= sizeof(*h)) {
		h->magic = MAGIC;
		h->op = OP_ECHO;
		h->id = id;
		h->len = len;
	}
	if (send_to(fd, buf, len, &peer_sa.sa, peer_len))
		return -1;
	n = recv_from(fd, rbuf, MAXMSG, 20000 * slow, NULL, NULL);
	if (n != (ssize_t)len)
		return -2;
	return memcmp(buf, rbuf, len) ? -3 : 0;
}

static int do_burst(int fd, unsigned char *buf, unsigned char *rbuf)
{
	struct mhdr *h = (struct mhdr *)buf;
	uint32_t i, len;
	ssize_t n;

	for (i = 0; i < burst; i++) {
		len = sizeof(*h) + (i * 37) % 600;
		fill(buf + sizeof(*h), len - sizeof(*h), i);
		h->magic = MAGIC;
		h->op = OP_BURST;
		h->id = i;
		h->len = len;
		if (send_to(fd, buf, len, &peer_sa.sa, peer_len))
			return -1;
	}
	h->magic = MAGIC;
	h->op = OP_BURST_END;
	h->id = 0;
	h->len = 0;
	if (send_to(fd, buf, sizeof(*h), &peer_sa.sa, peer_len))
		return -1;
	n = recv_from(fd, rbuf, MAXMSG, 60000 * slow, NULL, NULL);
	h = (struct mhdr *)rbuf;
	if (n != sizeof(*h) || h->magic != MAGIC)
		return -2;
	if (h->id != burst || h->len)
		return -3;
	return 0;
}

static int do_ping(int fd)
{
	struct sockaddr_storage to, from;
	socklen_t tolen, flen;
	char b[16];
	ssize_t n;
	int i;

	to = peer_sa.ss;
	tolen = peer_len;
	((struct sockaddr_in *)&to)->sin_port = 0;	/* same offset in v6 */
	for (i = 0; i < 3; i++) {
		if (sendto(fd, NULL, 0, 0, (void *)&to, tolen) < 0)
			return -1;
		n = recv_from(fd, b, sizeof(b), 10000 * slow, &from, &flen);
		if (n == 0 && ((struct sockaddr_in *)&from)->sin_port == 0)
			return 0;
	}
	return -2;
}

#define NSIZES 7
static const uint32_t sizes[NSIZES] = { 0, 1, 4095, 4096, 4097, 65536,
					MAXMSG };

static int start_echo(const char *pa)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd),
		 "rds-peer 1 '/tests/ib_msg echo %s %d %d >/dev/null 2>&1 &'",
		 pa, ECHO_PORT, 90 * slow);
	if (system(cmd))
		return -1;
	sleep(1);	/* let it bind */
	return 0;
}

static void do_suite(const char *fam, const char *la, const char *pa,
		     int port, unsigned char *buf, unsigned char *rbuf)
{
	char what[96];
	unsigned int i;
	int fd, ret;

	mkaddr(pa, port, &peer_sa.ss, &peer_len);
	fd = rds_sock(la, 0);
	if (fd < 0) {
		for (i = 0; i < NSIZES + 2; i++)
			tap(0, "socket/bind");
		return;
	}
	ret = do_ping(fd);
	snprintf(what, sizeof(what), "%s: ping answered (%d)", fam, ret);
	tap(!ret, what);
	for (i = 0; i < NSIZES; i++) {
		int r, tries;

		/* The first message also waits for the connection. */
		for (tries = 0; tries < 3; tries++) {
			r = echo_one(fd, buf, rbuf, sizes[i], i + 1);
			if (r != -2 || i)
				break;
		}
		snprintf(what, sizeof(what), "%s: echo %u bytes (%d)", fam,
			 sizes[i], r);
		tap(!r, what);
	}
	ret = do_burst(fd, buf, rbuf);
	snprintf(what, sizeof(what), "%s: burst of %u in order (%d)", fam,
		 burst, ret);
	tap(!ret, what);

	((struct mhdr *)buf)->magic = MAGIC;
	((struct mhdr *)buf)->op = OP_QUIT;
	send_to(fd, buf, sizeof(struct mhdr), &peer_sa.sa, peer_len);
	close(fd);
}

/*
 * The peer connects first (we are the passive side), running the suite
 * against an echo server here; its exit status is the number of failures.
 */
static int do_reverse(const char *la, const char *pa)
{
	char cmd[256];
	pid_t pid;
	int ret;

	pid = fork();
	if (pid == 0)
		_exit(do_echo(la, ECHO_PORT + 1, 120 * slow));
	sleep(1);
	snprintf(cmd, sizeof(cmd),
		 "rds-peer -t %d 1 'RDS_KERNEL=%s /tests/ib_msg client %s %s %d'",
		 120 * slow, slow > 1 ? "debug" : "", pa, la, ECHO_PORT + 1);
	ret = system(cmd);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	return ret;
}

/* Node @node's RDS counter @name (rds-counter), or -1. */
static long long node_counter(int node, const char *name)
{
	char cmd[128];
	long long v = -1;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rds-counter -n %d %s", node, name);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	pclose(f);
	return v;
}

static int do_test(void)
{
	const char *la = getenv("RDS_LOCAL_ADDR");
	const char *pa = getenv("RDS_PEER_ADDR");
	const char *la6 = getenv("RDS_LOCAL_ADDR6");
	const char *pa6 = getenv("RDS_PEER_ADDR6");
	const char *las = getenv("RDS_SIW_LOCAL_ADDR");
	const char *pas = getenv("RDS_SIW_PEER_ADDR");
	unsigned char *buf = malloc(MAXMSG), *rbuf = malloc(MAXMSG);
	int v6 = la6 && pa6 && *la6 && *pa6;
	int siw = las && pas && *las && *pas;
	long long w, w1;

	if (!la || !pa || !buf || !rbuf) {
		printf("1..0 # SKIP no cluster environment\n");
		return 4;
	}
	printf("1..%d\n", 1 + (NSIZES + 3) * (1 + v6 + siw) + siw);
	tap(!do_reverse(la, pa), "ipv4: peer-initiated suite (we are passive)");
	tap(!start_echo(pa), "ipv4: echo server started on the peer");
	do_suite("ipv4", la, pa, ECHO_PORT, buf, rbuf);
	if (v6) {
		tap(!start_echo(pa6), "ipv6: echo server started on the peer");
		do_suite("ipv6", la6, pa6, ECHO_PORT, buf, rbuf);
	}
	if (siw) {
		tap(!start_echo(pas), "siw: echo server started on the peer");
		do_suite("siw", las, pas, ECHO_PORT, buf, rbuf);
		/*
		 * The passive side of the siw connection (node 1 if it was
		 * made here, either node if an earlier test made it) went up
		 * only once the initiator's first frame had come (MPA: the
		 * responder never sends first).
		 */
		w = node_counter(0, "ib_iw_initiator_waits");
		w1 = node_counter(1, "ib_iw_initiator_waits");
		printf("# ib_iw_initiator_waits: node 0 %lld, node 1 %lld\n",
		       w, w1);
		tap(w >= 0 && w1 >= 0 && w + w1 > 0,
		    "siw: the passive side waited for the initiator's first frame");
	}
	return failed;
}

/*
 * Echo 0, 4097 and 65536 bytes through the echo server at @pa:@port,
 * retrying each for up to @secs in all (reconnects, device re-adds).
 */
static int do_quick(const char *la, const char *pa, int port, int secs)
{
	static const uint32_t qs[] = { 0, 4097, 65536 };
	unsigned char *buf = malloc(MAXMSG), *rbuf = malloc(MAXMSG);
	time_t end = time(NULL) + secs;
	unsigned int i;
	int fd;

	if (!buf || !rbuf || mkaddr(pa, port, &peer_sa.ss, &peer_len))
		return 1;
	fd = rds_sock(la, 0);
	if (fd < 0)
		return 1;
	for (i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		int r;

		while ((r = echo_one(fd, buf, rbuf, qs[i], i + 100)) &&
		       time(NULL) < end)
			sleep(1);
		if (r) {
			fprintf(stderr, "quick: %u bytes: %d\n", qs[i], r);
			return 1;
		}
		/* Drop stale echoes of retried sends. */
		while (recv_from(fd, rbuf, MAXMSG, 200, NULL, NULL) >= 0)
			;
	}
	close(fd);
	return 0;
}

/* Tell the echo server at @pa:@port to exit. */
static int do_quit(const char *la, const char *pa, int port)
{
	struct mhdr h = { .magic = MAGIC, .op = OP_QUIT };
	int fd;

	if (mkaddr(pa, port, &peer_sa.ss, &peer_len))
		return 1;
	fd = rds_sock(la, 0);
	if (fd < 0)
		return 1;
	send_to(fd, &h, sizeof(h), &peer_sa.sa, peer_len);
	sleep(1);
	close(fd);
	return 0;
}

/* sendmsg() to peer_sa with one RDS_CMSG_RDMA_MAP, without blocking. */
static ssize_t send_map(int fd, const void *buf, size_t len,
			const struct rds_get_mr_args *mr)
{
	union {
		char b[CMSG_SPACE(sizeof(*mr))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_name = &peer_sa.sa, .msg_namelen = peer_len,
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;

	memset(&u, 0, sizeof(u));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(*mr));
	memcpy(CMSG_DATA(c), mr, sizeof(*mr));
	return sendmsg(fd, &m, MSG_DONTWAIT);
}

/*
 * For @secs seconds, as fast as it goes, on a socket bound to @la: an
 * RDS_GET_MR (it waits for its REG_MR) freed again at once, every other
 * time with RDS_RDMA_INVALIDATE, and every fourth time a message to
 * @pa:@port mapping a use-once key (RDS_CMSG_RDMA_MAP: it does not wait;
 * the key lives until the socket closes; an echo server ignores the
 * message).  Failures are expected once the device goes and only counted.
 * Return: 0 if at least one registration succeeded.
 */
static int do_reg(const char *la, const char *pa, int port, int secs)
{
	static unsigned char buf[3 * 4096] __attribute__((aligned(4096)));
	struct mhdr h = { .magic = 0 };
	time_t end = time(NULL) + secs;
	unsigned long ok = 0, err = 0, maps = 0, i;
	int fd;

	if (mkaddr(pa, port, &peer_sa.ss, &peer_len))
		return 1;
	fd = rds_sock(la, 0);
	if (fd < 0)
		return 1;
	for (i = 0; time(NULL) < end; i++) {
		uint64_t cookie = 0, mcookie = 0;
		struct rds_get_mr_args a = {
			.vec = { (uintptr_t)buf, sizeof(buf) },
			.cookie_addr = (uintptr_t)&cookie,
			.flags = RDS_RDMA_READWRITE,
		};
		struct rds_free_mr_args f = { 0 };

		if (setsockopt(fd, SOL_RDS, RDS_GET_MR, &a, sizeof(a)))
			err++;
		else
			ok++;
		if (cookie) {
			f.cookie = cookie;
			f.flags = (i & 1) ? RDS_RDMA_INVALIDATE : 0;
			setsockopt(fd, SOL_RDS, RDS_FREE_MR, &f, sizeof(f));
		}
		if (i % 4 || maps >= 1000)
			continue;
		a.cookie_addr = (uintptr_t)&mcookie;
		a.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE;
		if (send_map(fd, &h, sizeof(h), &a) < 0) {
			err++;
		} else {
			ok++;
			maps++;
		}
	}
	close(fd);
	fprintf(stderr, "# reg on %s: %lu registrations, %lu failed\n", la, ok,
		err);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *k = getenv("RDS_KERNEL");

	if (k && !strcmp(k, "debug")) {
		slow = 4;
		burst = 3000;
	}
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return do_echo(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "client")) {
		unsigned char *buf = malloc(MAXMSG), *rbuf = malloc(MAXMSG);

		tap_prefix = "# peer: ";
		if (!buf || !rbuf)
			return 1;
		do_suite("client", argv[2], argv[3], atoi(argv[4]), buf, rbuf);
		return failed;
	}
	if (argc == 6 && !strcmp(argv[1], "quick"))
		return do_quick(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc == 5 && !strcmp(argv[1], "quit"))
		return do_quit(argv[2], argv[3], atoi(argv[4]));
	if (argc == 6 && !strcmp(argv[1], "reg"))
		return do_reg(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
	if (argc == 1 || (argc == 2 && !strcmp(argv[1], "test")))
		return do_test();
	fprintf(stderr, "usage: ib_msg echo ADDR PORT IDLE | ib_msg [test]\n");
	return 2;
}
