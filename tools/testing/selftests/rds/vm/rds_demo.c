// SPDX-License-Identifier: GPL-2.0
/*
 * rds_demo - what `make demo` runs inside the cluster.
 *
 *   rds_demo echo ADDR PORT SECONDS
 *	bind ADDR:PORT and send every message back to its sender, for SECONDS
 *   rds_demo ping LADDR PADDR PORT COUNT SIZE
 *	send COUNT messages of SIZE bytes to PADDR:PORT from LADDR, wait for
 *	each echo, check its content, print round-trip statistics
 *
 * Only the distribution's <linux/rds.h> is used: the same program runs on
 * the in-tree module.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

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

static int wait_in(int s, int ms)
{
	struct pollfd p = { .fd = s, .events = POLLIN };

	return poll(&p, 1, ms);
}

static int echo(const char *addr, int port, int seconds)
{
	static char buf[1 << 20];
	struct sockaddr_in sin, from;
	double end = now_us() + seconds * 1e6;
	long n = 0;
	int s = rds_socket(addr, port, &sin);

	while (now_us() < end) {
		socklen_t fl = sizeof(from);
		ssize_t len;

		if (wait_in(s, 200) <= 0)
			continue;
		len = recvfrom(s, buf, sizeof(buf), MSG_DONTWAIT,
			       (struct sockaddr *)&from, &fl);
		if (len < 0)
			continue;
		if (sendto(s, buf, len, 0, (struct sockaddr *)&from, fl) < 0)
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
		if (wait_in(s, 10000) > 0)
			len = recv(s, in, sizeof(in), MSG_DONTWAIT);
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

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "echo"))
		return echo(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 7 && !strcmp(argv[1], "ping"))
		return ping(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]),
			    strtoul(argv[6], NULL, 0));
	fprintf(stderr, "usage: rds_demo echo ADDR PORT SECONDS\n"
		"       rds_demo ping LADDR PADDR PORT COUNT SIZE\n");
	return 2;
}
