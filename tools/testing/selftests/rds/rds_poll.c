// SPDX-License-Identifier: GPL-2.0
/*
 * poll() on PF_RDS sockets (in-tree rds_poll()): POLLOUT while the socket's
 * queued send bytes are below sndbuf/2 (so on any fresh socket, bound or
 * not), POLLIN|POLLRDNORM while a message (or notification) is queued,
 * POLLERR only on a socket error.  POLLOUT disappearing when the send
 * buffer is full is covered in rds_sndbuf.
 *
 * In-tree quirk: a socket that does not monitor congestion also sees one
 * POLLIN|POLLWRBAND after any congestion-map update anywhere ("historical
 * reasons"); the tests therefore poll once to consume it before they check
 * that POLLIN is absent.
 */
#include <sys/epoll.h>
#include "rds_test.h"

FIXTURE(pl)
{
	int a, b;
	struct sockaddr_storage aa, ba;
};

FIXTURE_VARIANT(pl)
{
	int family;
};

FIXTURE_VARIANT_ADD(pl, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(pl, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(pl)
{
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
}

FIXTURE_TEARDOWN(pl)
{
	close(self->a);
	close(self->b);
}

static short poll_now(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (poll(&p, 1, 0) < 0)
		return -1;
	return p.revents;
}

TEST_F(pl, idle)
{
	short r;

	poll_now(self->b, POLLIN | POLLOUT);	/* consume the historical bit */
	r = poll_now(self->b, POLLIN | POLLOUT | POLLPRI);
	EXPECT_TRUE(r & POLLOUT) TH_LOG("revents 0x%x", r);
	EXPECT_FALSE(r & POLLIN) TH_LOG("revents 0x%x", r);
	EXPECT_FALSE(r & (POLLERR | POLLHUP | POLLNVAL)) TH_LOG("revents 0x%x", r);
}

TEST_F(pl, unbound)
{
	int fd = rds_socket();
	short r;

	ASSERT_LE(0, fd);
	poll_now(fd, POLLIN | POLLOUT);
	r = poll_now(fd, POLLIN | POLLOUT);
	EXPECT_TRUE(r & POLLOUT) TH_LOG("revents 0x%x", r);
	EXPECT_FALSE(r & (POLLIN | POLLERR | POLLHUP)) TH_LOG("revents 0x%x", r);
	/* a timed poll on it really waits and returns nothing */
	{
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct timespec t0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		EXPECT_EQ(0, poll(&p, 1, 200));
		EXPECT_LE(150, rds_ms_since(&t0));
	}
	close(fd);
}

TEST_F(pl, pollin_on_message)
{
	char buf[64];
	short r;

	poll_now(self->b, POLLIN);
	ASSERT_EQ(5, rds_sendto(self->a, "hello", 5, 0, &self->ba));
	r = rds_wait(self->b, POLLIN, RDS_WAIT_MS);
	EXPECT_TRUE(r & POLLIN) TH_LOG("revents 0x%x", r);
	r = poll_now(self->b, POLLIN | POLLRDNORM | POLLOUT);
	EXPECT_TRUE(r & POLLRDNORM) TH_LOG("revents 0x%x", r);
	EXPECT_TRUE(r & POLLOUT) TH_LOG("revents 0x%x", r);
	/* MSG_PEEK leaves it readable */
	ASSERT_EQ(5, recv(self->b, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT));
	EXPECT_TRUE(poll_now(self->b, POLLIN) & POLLIN);
	ASSERT_EQ(5, recv(self->b, buf, sizeof(buf), MSG_DONTWAIT));
	poll_now(self->b, POLLIN);
	EXPECT_FALSE(poll_now(self->b, POLLIN) & POLLIN);
}

TEST_F(pl, pollin_counts_messages)
{
	char buf[64];
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, rds_sendto(self->a, "x", 1, 0, &self->ba));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(1, rds_recv_wait(self->b, buf, sizeof(buf), 0, NULL,
					   RDS_WAIT_MS)) TH_LOG("message %d", i);
	}
	poll_now(self->b, POLLIN);
	EXPECT_FALSE(poll_now(self->b, POLLIN) & POLLIN);
}

TEST_F(pl, wakes_blocked_poller)
{
	struct pollfd p = { .fd = self->b, .events = POLLIN };
	struct timespec t0;
	int status, r;
	pid_t pid;

	poll_now(self->b, POLLIN);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		rds_msleep(300);
		_exit(rds_sendto(self->a, "w", 1, 0, &self->ba) == 1 ? 0 : 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* may return early once for the historical bit: loop */
	do {
		r = poll(&p, 1, RDS_WAIT_MS);
	} while (r == 1 && recv(self->b, (char[1]){0}, 1, MSG_PEEK | MSG_DONTWAIT) < 0 &&
		 rds_ms_since(&t0) < RDS_WAIT_MS);
	EXPECT_EQ(1, r);
	EXPECT_TRUE(p.revents & POLLIN);
	EXPECT_LE(200, rds_ms_since(&t0));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

TEST_F(pl, epoll)
{
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = 7 };
	char c;
	int n;

	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->b, &ev));
	ASSERT_EQ(1, rds_sendto(self->a, "e", 1, 0, &self->ba));
	n = epoll_wait(ep, &ev, 1, RDS_WAIT_MS);
	ASSERT_EQ(1, n);
	EXPECT_EQ(7, ev.data.u32);
	EXPECT_TRUE(ev.events & EPOLLIN);
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	close(ep);
}

RDS_TEST_MAIN
