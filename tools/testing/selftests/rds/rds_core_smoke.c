// SPDX-License-Identifier: GPL-2.0
/*
 * rds_core_smoke.c - smoke test of rds.ko's core over the loopback path
 * (written with the core, independent of the main selftests):
 *  - a 10,000-message burst between two processes, sizes 0..9000 bytes,
 *    with a small receive buffer so congestion and blocking sends are hit
 *    all the time, arriving complete, in order and with the right content;
 *  - 1 MiB messages with content checked;
 *  - net.rds.* sysctls: in-tree names and defaults, bad values refused;
 *  - rds.ko cannot be unloaded while a socket is open, and unloads cleanly
 *    (no splat, no leak) once it is closed, even with connections left.
 * Needs a bound address on an RDMA device: RDS_LOCAL_ADDR (default
 * 192.0.2.1).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/rds.h>

#include "kselftest_harness.h"

/* TCG, and the debug kernel (KASAN, lockdep) on top, are slow. */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 600

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define BURST	10000
#define MAXLEN	9000

static const char *local_addr(void)
{
	const char *a = getenv("RDS_LOCAL_ADDR");

	return a && *a ? a : "192.0.2.1";
}

static int bound_socket(struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		return -1;
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	inet_pton(AF_INET, local_addr(), &sin->sin_addr);
	if (bind(fd, (struct sockaddr *)sin, sizeof(*sin)) ||
	    getsockname(fd, (struct sockaddr *)sin, &len)) {
		close(fd);
		return -1;
	}
	return fd;
}

static uint32_t msg_len(uint32_t i)
{
	return (i * 2654435761u) % (MAXLEN + 1);
}

static void fill(unsigned char *buf, uint32_t i, uint32_t len)
{
	uint32_t j;

	for (j = 0; j < len; j++)
		buf[j] = (unsigned char)(i * 31 + j * 7);
	if (len >= 4)
		memcpy(buf, &i, 4);
}

TEST(burst_in_order)
{
	static unsigned char sbuf[MAXLEN], rbuf[MAXLEN + 1], want[MAXLEN];
	struct sockaddr_in a, b, from;
	int sa, sb, rcv = 64 * 1024, status;
	pid_t pid;
	uint32_t i;

	sa = bound_socket(&a);
	ASSERT_LE(0, sa) TH_LOG("bind %s: %s", local_addr(), strerror(errno));
	sb = bound_socket(&b);
	ASSERT_LE(0, sb);
	ASSERT_EQ(0, setsockopt(sb, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct timeval tv = { .tv_sec = 20 };

		alarm(550);
		setsockopt(sa, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		for (i = 0; i < BURST; i++) {
			uint32_t len = msg_len(i);

			fill(sbuf, i, len);
			if (sendto(sa, sbuf, len, 0, (struct sockaddr *)&b,
				   sizeof(b)) != (ssize_t)len)
				_exit(1);
		}
		_exit(0);
	}

	for (i = 0; i < BURST; i++) {
		struct pollfd pfd = { .fd = sb, .events = POLLIN };
		socklen_t fl = sizeof(from);
		uint32_t len = msg_len(i);
		ssize_t r;

		ASSERT_EQ(1, poll(&pfd, 1, 20000)) TH_LOG("message %u missing", i);
		r = recvfrom(sb, rbuf, sizeof(rbuf), MSG_DONTWAIT,
			     (struct sockaddr *)&from, &fl);
		ASSERT_EQ((ssize_t)len, r) TH_LOG("message %u: %s", i,
						 r < 0 ? strerror(errno) : "length");
		fill(want, i, len);
		ASSERT_EQ(0, memcmp(want, rbuf, len)) TH_LOG("message %u content", i);
		ASSERT_EQ(a.sin_port, from.sin_port);
		ASSERT_EQ(a.sin_addr.s_addr, from.sin_addr.s_addr);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(sa);
	close(sb);
}

TEST(one_mib)
{
	const size_t len = 1 << 20;
	struct sockaddr_in a, b;
	unsigned char *s, *r;
	int sa, sb, v = 4 << 20, k;
	size_t j;

	sa = bound_socket(&a);
	ASSERT_LE(0, sa);
	sb = bound_socket(&b);
	ASSERT_LE(0, sb);
	ASSERT_EQ(0, setsockopt(sa, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof(v)));
	ASSERT_EQ(0, setsockopt(sb, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof(v)));
	s = malloc(len + 1);
	r = malloc(len + 1);
	ASSERT_TRUE(s && r);
	for (k = 0; k < 4; k++) {
		struct pollfd pfd = { .fd = sb, .events = POLLIN };

		for (j = 0; j < len; j++)
			s[j] = (unsigned char)(j * 13 + k);
		ASSERT_EQ((ssize_t)len, sendto(sa, s, len, 0,
					       (struct sockaddr *)&b, sizeof(b)));
		ASSERT_EQ(1, poll(&pfd, 1, 20000));
		ASSERT_EQ((ssize_t)len, recv(sb, r, len + 1, MSG_DONTWAIT));
		ASSERT_EQ(0, memcmp(s, r, len));
	}
	/* over the limit */
	EXPECT_EQ(-1, sendto(sa, s, len + 1, 0, (struct sockaddr *)&b,
			     sizeof(b)));
	EXPECT_EQ(EMSGSIZE, errno);
	free(s);
	free(r);
	close(sa);
	close(sb);
}

static long read_sysctl(const char *name)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

static int write_sysctl(const char *name, const char *val)
{
	char path[128];
	int fd, ret;

	snprintf(path, sizeof(path), "/proc/sys/net/rds/%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

TEST(sysctls)
{
	long min = read_sysctl("reconnect_min_delay_ms");
	long max = read_sysctl("reconnect_max_delay_ms");

	EXPECT_LT(0, min);
	EXPECT_LE(min, 10);
	EXPECT_EQ(1000, max);
	EXPECT_EQ(8, read_sysctl("max_unacked_packets"));
	EXPECT_EQ(16 << 20, read_sysctl("max_unacked_bytes"));
	EXPECT_EQ(1, read_sysctl("ping_enable"));

	EXPECT_EQ(-EINVAL, write_sysctl("ping_enable", "2"));
	EXPECT_EQ(-EINVAL, write_sysctl("max_unacked_packets", "0"));
	EXPECT_EQ(-EINVAL, write_sysctl("max_unacked_bytes", "-1"));
	EXPECT_EQ(-EINVAL, write_sysctl("reconnect_min_delay_ms", "5000"));
	EXPECT_EQ(-EINVAL, write_sysctl("reconnect_max_delay_ms", "0"));
	EXPECT_EQ(0, write_sysctl("reconnect_max_delay_ms", "2000"));
	EXPECT_EQ(2000, read_sysctl("reconnect_max_delay_ms"));
	EXPECT_EQ(0, write_sysctl("reconnect_max_delay_ms", "1000"));
	EXPECT_EQ(0, write_sysctl("ping_enable", "0"));
	EXPECT_EQ(0, write_sysctl("ping_enable", "1"));
}

TEST(unload_busy_then_clean)
{
	struct sockaddr_in a, b;
	int sa, sb;

	sa = bound_socket(&a);
	ASSERT_LE(0, sa);
	sb = bound_socket(&b);
	ASSERT_LE(0, sb);
	/* leave a connection and a queued message behind */
	ASSERT_EQ(3, sendto(sa, "abc", 3, 0, (struct sockaddr *)&b, sizeof(b)));
	usleep(100000);
	EXPECT_NE(0, system("rmmod rds_rdma 2>/dev/null"));
	EXPECT_NE(0, system("rmmod rds 2>/dev/null"));
	close(sa);
	close(sb);
	usleep(100000);
	ASSERT_EQ(0, system("rds-mods unload"));
	ASSERT_EQ(0, system("rds-mods load ours"));
	sa = bound_socket(&a);
	ASSERT_LE(0, sa);
	close(sa);
}

TEST_HARNESS_MAIN
