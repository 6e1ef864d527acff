// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile_rx.c - the victim's socket of rds_hostile.sh (not a test of
 * its own: rds_hostile.sh runs it in the background on node 0).
 *
 *   rds_hostile_rx LADDR PORT SECONDS
 *
 * Binds an RDS socket to LADDR:PORT and receives for SECONDS (or until
 * SIGTERM), one line per message on stdout, flushed:
 *
 *   G SCEN MSGNO LEN FROM     a well-formed message of rds_hostile.ko
 *   B WHY SCEN MSGNO LEN FROM a message that must not have been delivered:
 *                             magic "EVIL", a payload that does not match
 *                             its pattern or length, a truncation, a
 *                             duplicate (SCEN, MSGNO)
 *
 * The payload format is rds_hostile.ko's: be32 magic "RDSH" (or "EVIL"),
 * scenario, msgno, length, then bytes (msgno * 7 + i) & 0xff.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
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

#define MAGIC	0x52445348u
#define EVIL	0x4556494cu
#define MAXLEN	(2 << 20)
#define NSCEN	64
#define NMSG	8192

static volatile sig_atomic_t stop;
static unsigned char seen[NSCEN][NMSG / 8];

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static uint32_t be32at(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | p[2] << 8 | p[3];
}

int main(int argc, char **argv)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd, secs, rcvbuf = 8 << 20;
	unsigned char *buf;
	time_t end;

	if (argc != 4) {
		fprintf(stderr, "usage: rds_hostile_rx LADDR PORT SECONDS\n");
		return 2;
	}
	secs = atoi(argv[3]);
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	buf = malloc(MAXLEN);
	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (!buf || fd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	inet_pton(AF_INET, argv[1], &sin.sin_addr);
	sin.sin_port = htons(atoi(argv[2]));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		perror("bind");
		return 1;
	}
	printf("READY\n");
	fflush(stdout);
	end = time(NULL) + secs;
	while (!stop && time(NULL) < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct sockaddr_in from;
		struct iovec iov = { buf, MAXLEN };
		struct msghdr msg = {
			.msg_name = &from, .msg_namelen = sizeof(from),
			.msg_iov = &iov, .msg_iovlen = 1,
		};
		char fs[64];
		uint32_t magic, scen, no, len, i;
		const char *why = NULL;
		ssize_t n;

		if (poll(&pfd, 1, 500) <= 0)
			continue;
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			/* RDMA notifications and the like: not ours. */
			printf("E errno %d\n", errno);
			fflush(stdout);
			continue;
		}
		snprintf(fs, sizeof(fs), "%s:%u", inet_ntoa(from.sin_addr),
			 ntohs(from.sin_port));
		if (n < 16) {
			printf("B short - - %zd %s\n", n, fs);
			fflush(stdout);
			continue;
		}
		magic = be32at(buf);
		scen = be32at(buf + 4);
		no = be32at(buf + 8);
		len = be32at(buf + 12);
		if (magic == EVIL)
			why = "evil";
		else if (magic != MAGIC)
			why = "magic";
		else if (msg.msg_flags & MSG_TRUNC)
			why = "trunc";
		else if (len != (uint32_t)n)
			why = "length";
		for (i = 16; !why && i < (uint32_t)n; i++)
			if (buf[i] != ((no * 7 + i) & 0xff))
				why = "content";
		if (!why && scen < NSCEN && no < NMSG) {
			if (seen[scen][no / 8] & (1 << (no % 8)))
				why = "duplicate";
			seen[scen][no / 8] |= 1 << (no % 8);
		}
		if (why)
			printf("B %s %u %u %zd %s\n", why, scen, no, n, fs);
		else
			printf("G %u %u %zd %s\n", scen, no, n, fs);
		fflush(stdout);
	}
	close(fd);
	return 0;
}
