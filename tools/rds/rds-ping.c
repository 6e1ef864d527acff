// SPDX-License-Identifier: GPL-2.0
/*
 * rds-ping - check that an RDS peer answers, and how fast.
 *
 * RDS answers a message sent to port 0 with an empty "pong" from port 0, in
 * the kernel (net.rds.ping_enable).  rds-ping sends empty messages to port 0
 * of the destination, round-robin from a few sockets (so that one lost pong
 * does not stall the rest), and prints the round trip of each pong.
 *
 *   rds-ping [-c count] [-i interval] [-I source] [-Q tos] [-n sockets] dest
 *
 * Only <linux/rds.h> of the distribution is used, so the same binary works
 * with the in-tree module.  Exit status: 0 every ping was answered, 1 some
 * were not, 2 usage or set-up error.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include "rds-common.h"

#define MAX_SOCKETS 64

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rds-ping [-c count] [-i interval] [-I source] [-Q tos] [-n sockets] destination\n"
		"  -c count     stop after count pings (default: until interrupted)\n"
		"  -i interval  seconds between pings, fractions allowed; suffixes ms, us (default 1)\n"
		"  -I source    local address to send from (default: the route's source)\n"
		"  -Q tos       RDS type of service (0-255)\n"
		"  -n sockets   sockets to rotate through (default 8)\n");
	exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* "1", "0.5", "200ms", "500us" -> microseconds; -1 when malformed. */
static double parse_interval(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || v < 0)
		return -1;
	if (!*end)
		return v * 1e6;
	if (!strcmp(end, "ms") || !strcmp(end, "msec"))
		return v * 1e3;
	if (!strcmp(end, "us") || !strcmp(end, "usec"))
		return v;
	if (!strcmp(end, "s") || !strcmp(end, "sec"))
		return v * 1e6;
	return -1;
}

static const char *explain(int err)
{
	switch (err) {
	case EAFNOSUPPORT:
		return " (is the rds module loaded?)";
	case EADDRNOTAVAIL:
		return " (no RDS transport serves that address: no RDMA device has it?)";
	case EPERM:
	case EACCES:
		return " (permission denied)";
	case EPROTOTYPE:
		return " (RDS over RDMA works only in the initial network namespace)";
	default:
		return "";
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_storage dst, src;
	socklen_t dlen, slen = 0;
	long count = -1, sent = 0, got = 0;
	double interval = 1e6, *sent_at;
	long *seq;
	const char *source = NULL;
	int nsock = 8, tos = -1, fds[MAX_SOCKETS], i, c;
	char name[INET6_ADDRSTRLEN];

	while ((c = getopt(argc, argv, "c:i:I:Q:n:h")) != -1) {
		switch (c) {
		case 'c':
			count = strtol(optarg, NULL, 0);
			if (count <= 0)
				usage();
			break;
		case 'i':
			interval = parse_interval(optarg);
			if (interval < 0)
				usage();
			break;
		case 'I':
			source = optarg;
			break;
		case 'Q':
			tos = atoi(optarg);
			if (tos < 0 || tos > 255)
				usage();
			break;
		case 'n':
			nsock = atoi(optarg);
			if (nsock < 1 || nsock > MAX_SOCKETS)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();
	if (rds_parse_addr("rds-ping", argv[optind], &dst, &dlen))
		return 2;
	if (source) {
		if (rds_parse_addr("rds-ping", source, &src, &slen))
			return 2;
	} else if (rds_route_source(&dst, dlen, &src, &slen)) {
		fprintf(stderr, "rds-ping: no route to %s; give a source with -I\n",
			argv[optind]);
		return 2;
	}
	if (src.ss_family != dst.ss_family) {
		fprintf(stderr, "rds-ping: source and destination families differ\n");
		return 2;
	}
	rds_set_port(&dst, 0);	/* port 0: ping */
	rds_set_port(&src, 0);	/* any local port */

	for (i = 0; i < nsock; i++) {
		fds[i] = socket(AF_RDS, SOCK_SEQPACKET, 0);
		if (fds[i] < 0) {
			fprintf(stderr, "rds-ping: socket: %s%s\n", strerror(errno),
				explain(errno));
			return 2;
		}
		if (bind(fds[i], (struct sockaddr *)&src, slen)) {
			fprintf(stderr, "rds-ping: bind: %s%s\n", strerror(errno),
				explain(errno));
			return 2;
		}
		/* The TOS can be set once bound (it needs the transport). */
		if (tos >= 0) {
			unsigned char t = tos;

			if (ioctl(fds[i], SIOCRDSSETTOS, &t)) {
				fprintf(stderr, "rds-ping: SIOCRDSSETTOS %d: %s\n",
					tos, strerror(errno));
				return 2;
			}
		}
	}

	sent_at = calloc(nsock, sizeof(*sent_at));
	seq = calloc(nsock, sizeof(*seq));
	if (!sent_at || !seq)
		return 2;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	rds_addr_name(&dst, name, sizeof(name));

	while (!stop && (count < 0 || sent < count)) {
		int s = sent % nsock;
		double deadline;

		sent_at[s] = now_us();
		seq[s] = sent + 1;
		if (sendto(fds[s], NULL, 0, 0, (struct sockaddr *)&dst, dlen) < 0) {
			printf("%4ld: send failed: %s%s\n", sent + 1, strerror(errno),
			       explain(errno));
			sent_at[s] = 0;
		}
		sent++;
		deadline = now_us() + interval;
		/*
		 * After the last ping, wait for the outstanding answers: up to
		 * 5 s, since the first ping also waits for the connection.
		 */
		if (count >= 0 && sent == count)
			deadline = now_us() + (interval > 5e6 ? interval : 5e6);
		for (;;) {
			struct pollfd p[MAX_SOCKETS];
			double left = deadline - now_us();
			int n;

			if (left <= 0 || stop)
				break;
			for (i = 0; i < nsock; i++) {
				p[i].fd = fds[i];
				p[i].events = POLLIN;
			}
			n = poll(p, nsock, (int)(left / 1000) + 1);
			if (n <= 0)
				continue;
			for (i = 0; i < nsock; i++) {
				struct sockaddr_storage from;
				socklen_t fl = sizeof(from);
				char buf[64];

				if (!(p[i].revents & POLLIN))
					continue;
				if (recvfrom(fds[i], buf, sizeof(buf), MSG_DONTWAIT,
					     (struct sockaddr *)&from, &fl) < 0)
					continue;
				if (!sent_at[i])
					continue;	/* a late pong of a counted ping */
				printf("%4ld: %.0f usec\n", seq[i], now_us() - sent_at[i]);
				fflush(stdout);
				sent_at[i] = 0;
				got++;
			}
			if (count >= 0 && sent == count && got == sent)
				break;
		}
	}
	printf("--- %s rds-ping statistics ---\n%ld sent, %ld received, %.0f%% lost\n",
	       name, sent, got, sent ? 100.0 * (sent - got) / sent : 0.0);
	return got == sent ? 0 : 1;
}
