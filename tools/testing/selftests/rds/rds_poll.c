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
 *
 * busy_read and busy_poll (ours only: in-tree does not busy-read): with
 * SO_BUSY_POLL (net.core.busy_read's per-socket form) a blocking recvmsg()
 * that a message ends within that time never sleeps, and with
 * net.core.busy_poll as well neither does a poll() (the generic
 * sock_poll() busy-loops every socket with a busy-read time, so that half
 * passes on in-tree too).  Measured as the caller's voluntary context
 * switches, with the sender pinned to another CPU (skipped on one CPU);
 * time-outs after the busy time behave as before.
 */
#include <sched.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/time.h>
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

/* This thread's voluntary context switches (each sleep is one). */
static long voluntary_switches(void)
{
	char line[128];
	long n = -1;
	FILE *f = fopen("/proc/thread-self/status", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	fclose(f);
	return n;
}

/* SO_BUSY_POLL: @fd's busy-read time in microseconds. */
static int set_busy_read(int fd, int usec)
{
	return setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &usec, sizeof(usec));
}

static int write_sysctl(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fputs(val, f) < 0 ? -1 : 0;
	return fclose(f) ? -1 : ret;
}

/*
 * Pin this process to CPU 0 and fork a child on CPU 1 that sends one byte
 * from @a to @to after @ms.  Returns once the child runs on CPU 1 (so its
 * start does not preempt us later).  Return: its pid, 0 with one CPU, -1
 * on error.
 */
static pid_t pinned_sender(int a, const struct sockaddr_storage *to, int ms)
{
	cpu_set_t set;
	int fds[2];
	char c;
	pid_t pid;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return 0;
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || pipe(fds))
		return -1;
	pid = fork();
	if (pid < 0 || (pid > 0 && read(fds[0], &c, 1) != 1)) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid) {
		close(fds[0]);
		close(fds[1]);
		return pid;
	}
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    write(fds[1], "r", 1) != 1)
		_exit(2);
	rds_msleep(ms);
	_exit(rds_sendto(a, "b", 1, 0, to) == 1 ? 0 : 1);
}

static void unpin(void)
{
	cpu_set_t set;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&set);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * One busy wait for a byte sent from another CPU 50 ms later, through
 * poll() (@use_poll) or a blocking recv().  Return: how often the wait
 * slept, -1 on error, -2 with one CPU.
 */
static long busy_attempt(int a, int b, const struct sockaddr_storage *ba,
			 bool use_poll)
{
	struct pollfd p = { .fd = b, .events = POLLIN };
	long before, after;
	int status, r = -1;
	pid_t pid;
	char c = 0;

	poll_now(b, POLLIN);
	pid = pinned_sender(a, ba, 50);
	if (pid <= 0) {
		unpin();
		return pid ? -1 : -2;
	}
	before = voluntary_switches();
	if (use_poll) {
		r = poll(&p, 1, RDS_WAIT_MS) == 1 && p.revents == POLLIN;
		after = voluntary_switches();
		if (r == 1)
			r = recv(b, &c, 1, MSG_DONTWAIT) == 1 && c == 'b';
	} else {
		r = recv(b, &c, 1, 0) == 1 && c == 'b';
		after = voluntary_switches();
	}
	unpin();
	if (waitpid(pid, &status, 0) != pid || status || r != 1 ||
	    before < 0 || after < 0)
		return -1;
	return after - before;
}

/*
 * Busy waits that a message ends must not sleep; a kernel thread woken on
 * our CPU can end one early (need_resched()), so three tries are allowed.
 * Without busy polling every try sleeps once.
 */
static long busy_tries(int a, int b, const struct sockaddr_storage *ba,
		       bool use_poll)
{
	long slept = -1;
	int i;

	for (i = 0; i < 3 && slept != 0; i++) {
		slept = busy_attempt(a, b, ba, use_poll);
		if (slept < 0)
			break;
	}
	return slept;
}

TEST_F(pl, busy_poll)
{
	struct pollfd p = { .fd = self->b, .events = POLLIN };
	struct timespec t0;
	int r, usec = 3000000;
	long slept;

	ASSERT_EQ(0, set_busy_read(self->b, usec))
		TH_LOG("SO_BUSY_POLL: %s", strerror(errno));
	ASSERT_EQ(0, write_sysctl("/proc/sys/net/core/busy_poll", "3000000"));
	slept = busy_tries(self->a, self->b, &self->ba, true);
	write_sysctl("/proc/sys/net/core/busy_poll", "0");
	if (slept == -2)
		SKIP(return, "one CPU");
	EXPECT_EQ(0, slept) TH_LOG("poll() slept (%ld)", slept);

	/* After the busy time a poll() sleeps and times out as before. */
	ASSERT_EQ(0, write_sysctl("/proc/sys/net/core/busy_poll", "1000"));
	poll_now(self->b, POLLIN);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = poll(&p, 1, 200);
	write_sysctl("/proc/sys/net/core/busy_poll", "0");
	EXPECT_EQ(0, r);
	EXPECT_LE(150, rds_ms_since(&t0));
}

TEST_F(pl, busy_read)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
	int usec = 3000000;
	struct timespec t0;
	long slept;
	char c;

	if (rds_intree())
		SKIP(return, "in-tree RDS does not busy-poll");
	ASSERT_EQ(0, set_busy_read(self->b, usec))
		TH_LOG("SO_BUSY_POLL: %s", strerror(errno));
	slept = busy_tries(self->a, self->b, &self->ba, false);
	if (slept == -2)
		SKIP(return, "one CPU");
	EXPECT_EQ(0, slept) TH_LOG("recv() slept (%ld)", slept);

	/* Past the busy time it sleeps until SO_RCVTIMEO (ETIMEDOUT, as in-tree). */
	ASSERT_EQ(0, set_busy_read(self->b, 1000));
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-1, recv(self->b, &c, 1, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(250, rds_ms_since(&t0));

	/* A busy time longer than SO_RCVTIMEO ends with the timeout. */
	ASSERT_EQ(0, set_busy_read(self->b, usec));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_EQ(-1, recv(self->b, &c, 1, 0));
	EXPECT_EQ(ETIMEDOUT, errno);
	EXPECT_LE(250, rds_ms_since(&t0));
	EXPECT_GT(2000, rds_ms_since(&t0));
}

static void on_alarm(int sig)
{
	(void)sig;
}

/*
 * Blocking recv() interrupted by a signal handled with SA_RESTART (200 ms;
 * the message comes at 500 ms): without a receive timeout it is restarted
 * and gets the message, as in-tree (this returned EINTR before
 * 2026-12-06); with SO_RCVTIMEO it fails with EINTR (signal(7); in-tree
 * restarts it).
 */
TEST_F(pl, recv_signal)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { .it_value = { .tv_usec = 200000 } };
	struct timeval tv = { .tv_sec = 5 };
	int pass, status;
	ssize_t n;
	pid_t pid;
	char c;

	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	for (pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			if (rds_intree())
				break;
			ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVTIMEO,
						&tv, sizeof(tv)));
		}
		poll_now(self->b, POLLIN);
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			rds_msleep(500);
			_exit(rds_sendto(self->a, "s", 1, 0, &self->ba) == 1 ? 0 : 1);
		}
		ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
		n = recv(self->b, &c, 1, 0);
		if (pass == 0) {
			EXPECT_EQ(1, n) TH_LOG("no timeout: %s", strerror(errno));
		} else {
			EXPECT_EQ(-1, n);
			EXPECT_EQ(EINTR, errno);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_EQ(0, status);
		if (n < 0)
			rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS);
	}
	signal(SIGALRM, SIG_DFL);
}

RDS_TEST_MAIN
