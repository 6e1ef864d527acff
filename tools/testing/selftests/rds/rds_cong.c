// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion (in-tree recv.c rds_recv_rcvbuf_delta(), cong.c):
 *  - a receiving socket whose queued bytes exceed rcvbuf/2 marks its port
 *    congested in the map of its address; a non-blocking send to that port
 *    then fails with ENOBUFS (a blocking one waits), other ports are not
 *    affected;
 *  - once the receiver drains below rcvbuf/4 the port is uncongested again;
 *  - a socket with RDS_CONG_MONITOR that hit ENOBUFS for a port gets one
 *    notification: POLLIN, and a recvmsg() returning 0 bytes with an
 *    RDS_CMSG_CONG_UPDATE cmsg (u64, bit port % 64).
 * Local destinations here; the same over the wire is exercised by the
 * peer variants.
 */
#include "rds_test.h"

FIXTURE(cg)
{
	int a, b, c;
	struct sockaddr_storage aa, ba, ca;
	char buf[2048];
};

FIXTURE_VARIANT(cg)
{
	int family;
	bool peer;	/* receivers on node 1 instead: not done here */
};

FIXTURE_VARIANT_ADD(cg, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(cg, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(cg)
{
	int v = 4096;

	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	self->c = rds_bound_socket(variant->family, 0, &self->ca);
	ASSERT_LE(0, self->c) TH_LOG("bind: %s", strerror(errno));
	/* a small receive buffer on b: rcvbuf/2 = 4096 payload bytes */
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v)));
}

FIXTURE_TEARDOWN(cg)
{
	close(self->a);
	close(self->b);
	close(self->c);
}

/*
 * Send 1000-byte messages a -> b (b does not read) until ENOBUFS.
 * Congestion is marked when b's queue grows, asynchronously to the send,
 * so pause briefly between sends.  Returns the number of messages sent.
 */
static int congest(struct __test_metadata *_metadata, FIXTURE_DATA(cg) *self)
{
	int n = 0, i;
	ssize_t r = 0;

	for (i = 0; i < 200; i++) {
		r = rds_sendto(self->a, self->buf, 1000, MSG_DONTWAIT, &self->ba);
		if (r < 0)
			break;
		n++;
		rds_msleep(20);
	}
	EXPECT_EQ(-1, r);
	EXPECT_EQ(ENOBUFS, errno) TH_LOG("after %d sends: %s", n, strerror(errno));
	EXPECT_LE(4, n);
	return n;
}

TEST_F(cg, enobufs_for_congested_port)
{
	int n = congest(_metadata, self), got;
	char ch;

	TH_LOG("%d messages before ENOBUFS", n);
	/* it stays congested while b does not read */
	rds_msleep(300);
	EXPECT_ERRNO(rds_sendto(self->a, self->buf, 10, MSG_DONTWAIT, &self->ba),
		     ENOBUFS);
	EXPECT_ERRNO(rds_sendto(self->a, NULL, 0, MSG_DONTWAIT, &self->ba), ENOBUFS);
	/* another port on the same address is fine */
	ASSERT_EQ(1, rds_sendto(self->a, "c", 1, MSG_DONTWAIT, &self->ca));
	ASSERT_EQ(1, rds_recv_wait(self->c, &ch, 1, 0, NULL, RDS_WAIT_MS));
	/* and so are other senders to other ports */
	ASSERT_EQ(1, rds_sendto(self->c, "a", 1, MSG_DONTWAIT, &self->aa));
	ASSERT_EQ(1, rds_recv_wait(self->a, &ch, 1, 0, NULL, RDS_WAIT_MS));
	/* every message queued before ENOBUFS is delivered */
	got = rds_drain(self->b, 1000);
	EXPECT_EQ(n, got);
}

TEST_F(cg, uncongested_after_drain)
{
	struct timespec t0;
	ssize_t r;

	congest(_metadata, self);
	rds_drain(self->b, 500);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = rds_sendto(self->a, "u", 1, MSG_DONTWAIT, &self->ba);
		if (r < 0)
			rds_msleep(50);
	} while (r < 0 && errno == ENOBUFS && rds_ms_since(&t0) < RDS_WAIT_MS);
	ASSERT_EQ(1, r) TH_LOG("still %s after drain", strerror(errno));
	ASSERT_EQ(1, rds_recv_wait(self->b, self->buf, 1, 0, NULL, RDS_WAIT_MS));
}

TEST_F(cg, blocking_send_waits)
{
	int status;
	pid_t pid;

	congest(_metadata, self);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		alarm(30);
		rds_msleep(500);
		/* read everything, up to the blocked message */
		for (;;) {
			ssize_t r = rds_recv_wait(self->b, self->buf, sizeof(self->buf),
						  0, NULL, RDS_WAIT_MS);

			if (r < 0)
				_exit(1);
			if (r == 1 && self->buf[0] == 'B')
				_exit(0);
		}
	}
	alarm(30);
	/* blocks until the child drained b */
	ASSERT_EQ(1, rds_sendto(self->a, "B", 1, 0, &self->ba));
	alarm(0);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

TEST_F(cg, monitor_gets_cong_update)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t)) + 32];
		struct cmsghdr align;
	} u;
	char data[16];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	uint16_t port = rds_port_of(&self->ba);
	struct cmsghdr *cm;
	uint64_t mask = 0;
	bool seen = false;
	ssize_t r;
	int one = 1;

	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, &one,
				sizeof(one)));
	congest(_metadata, self);
	/* nothing yet: the port is still congested */
	EXPECT_ERRNO(recv(self->a, data, sizeof(data), MSG_DONTWAIT), EAGAIN);
	rds_drain(self->b, 500);
	ASSERT_TRUE(rds_wait(self->a, POLLIN, RDS_WAIT_MS) & POLLIN)
		TH_LOG("no POLLIN for the congestion update");
	r = recvmsg(self->a, &m, MSG_DONTWAIT);
	ASSERT_EQ(0, r) TH_LOG("recvmsg: %zd %s", r, strerror(errno));
	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		if (cm->cmsg_level != SOL_RDS || cm->cmsg_type != RDS_CMSG_CONG_UPDATE)
			continue;
		ASSERT_EQ(CMSG_LEN(sizeof(mask)), cm->cmsg_len);
		memcpy(&mask, CMSG_DATA(cm), sizeof(mask));
		seen = true;
	}
	ASSERT_TRUE(seen) TH_LOG("no RDS_CMSG_CONG_UPDATE");
	EXPECT_TRUE(mask & RDS_CONG_MONITOR_MASK(port))
		TH_LOG("mask 0x%llx port %u", (unsigned long long)mask, port);
	/* one notification only */
	EXPECT_ERRNO(recv(self->a, data, sizeof(data), MSG_DONTWAIT), EAGAIN);
	/* and sending works again */
	ASSERT_EQ(1, rds_sendto(self->a, "m", 1, MSG_DONTWAIT, &self->ba));
}

TEST_F(cg, no_update_without_monitor)
{
	char data[16];

	congest(_metadata, self);
	rds_drain(self->b, 500);
	rds_msleep(500);
	/* a non-monitoring socket gets no RDS_CMSG_CONG_UPDATE message */
	EXPECT_ERRNO(recv(self->a, data, sizeof(data), MSG_DONTWAIT), EAGAIN);
}

TEST_F(cg, close_congested_receiver)
{
	uint16_t port = rds_port_of(&self->ba);
	struct timespec t0;
	ssize_t r;
	int fd;

	congest(_metadata, self);
	/* closing the congested socket uncongests its port */
	close(self->b);
	fd = rds_bound_socket(variant->family, port, NULL);
	ASSERT_LE(0, fd);
	self->b = fd;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		r = rds_sendto(self->a, "n", 1, MSG_DONTWAIT, &self->ba);
		if (r < 0)
			rds_msleep(50);
	} while (r < 0 && errno == ENOBUFS && rds_ms_since(&t0) < RDS_WAIT_MS);
	ASSERT_EQ(1, r) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(1, rds_recv_wait(self->b, self->buf, 1, 0, NULL, RDS_WAIT_MS));
}

/*
 * Across the wire: node 1 runs "rds_cong sink", a socket with a small
 * receive buffer on port P that does not read until a message arrives on
 * its control port P+1; then it drains P and answers on P+1 with the
 * number of messages it got.  The congestion of P must reach node 0 in a
 * congestion-map update, and its end in another one.
 */
#define SINK_BIN "/tests/rds_cong"

static int sink(int family, const char *addr, int port, int secs)
{
	struct sockaddr_storage ds, cs, from;
	socklen_t len = rds_mkaddr(family, addr, port, &ds);
	int d = rds_socket(), c = rds_socket(), v = 4096, n = 0;
	char buf[4096];
	ssize_t r;

	alarm(secs + 10);
	rds_mkaddr(family, addr, port + 1, &cs);
	if (!len || d < 0 || c < 0 || bind(d, (struct sockaddr *)&ds, len) < 0 ||
	    bind(c, (struct sockaddr *)&cs, len) < 0) {
		perror("sink: bind");
		return 1;
	}
	setsockopt(d, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	close(open("/tmp/rds_sink.ready", O_CREAT | O_WRONLY, 0644));
	r = rds_recv_wait(c, buf, sizeof(buf), 0, &from, secs * 1000);
	if (r < 0)
		return 1;
	while (rds_recv_wait(d, buf, sizeof(buf), 0, NULL, 3000) >= 0)
		n++;
	snprintf(buf, sizeof(buf), "%d", n);
	rds_sendto(c, buf, strlen(buf), 0, &from);
	rds_msleep(1000);
	return 0;
}

static int run_quiet(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

FIXTURE(pc)
{
	int a;
	struct sockaddr_storage aa, data, ctl;
};

RDS_FAMILY_VARIANTS(pc);

FIXTURE_SETUP(pc)
{
	char cmd[256];
	int i, port, one = 1;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, &one,
				sizeof(one)));
	port = 20000 + 2 * (getpid() % 5000);
	rds_mkaddr(variant->family, rds_peer_str(variant->family), port, &self->data);
	rds_mkaddr(variant->family, rds_peer_str(variant->family), port + 1, &self->ctl);
	snprintf(cmd, sizeof(cmd),
		 "rds-peer -t 30 1 'rm -f /tmp/rds_sink.ready; %s sink %d %s %d 100 "
		 ">/tmp/rds_sink.log 2>&1 &' >/dev/null 2>&1", SINK_BIN,
		 variant->family == AF_INET6 ? 6 : 4, rds_peer_str(variant->family),
		 port);
	ASSERT_EQ(0, run_quiet(cmd)) TH_LOG("%s", cmd);
	for (i = 0; i < 60; i++) {
		if (run_quiet("rds-peer -t 10 1 'test -f /tmp/rds_sink.ready' "
			      ">/dev/null 2>&1") == 0)
			break;
		rds_msleep(500);
	}
	ASSERT_LT(i, 60) TH_LOG("sink did not start");
}

FIXTURE_TEARDOWN(pc)
{
	close(self->a);
}

TEST_F_TIMEOUT(pc, remote_congestion, 200)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t)) + 32];
		struct cmsghdr align;
	} u;
	char data[1000], reply[32];
	struct iovec iov = { .iov_base = reply, .iov_len = sizeof(reply) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	uint16_t port = rds_port_of(&self->data);
	uint64_t mask = 0;
	struct cmsghdr *cm;
	struct timespec t0;
	int n = 0, i, got_update = 0, drained = -1;
	ssize_t r = 0;

	memset(data, 'd', sizeof(data));
	/* the first message also brings the connection up */
	ASSERT_EQ(1000, rds_sendto(self->a, data, 1000, 0, &self->data));
	n = 1;
	for (i = 0; i < 400; i++) {
		r = rds_sendto(self->a, data, 1000, MSG_DONTWAIT, &self->data);
		if (r < 0 && errno == EAGAIN) {
			rds_wait(self->a, POLLOUT, 1000);
			continue;
		}
		if (r < 0)
			break;
		n++;
		rds_msleep(50);
	}
	ASSERT_EQ(-1, r) TH_LOG("no ENOBUFS after %d messages", n);
	ASSERT_EQ(ENOBUFS, errno) TH_LOG("after %d messages: %s", n, strerror(errno));
	TH_LOG("%d messages before ENOBUFS", n);
	/* let the sink drain */
	ASSERT_EQ(2, rds_sendto(self->a, "go", 2, 0, &self->ctl));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&t0) < 60000 && (drained < 0 || !got_update)) {
		m.msg_controllen = sizeof(u.buf);
		m.msg_flags = 0;
		r = rds_recvmsg_wait(self->a, &m, 0, 1000);
		if (r < 0)
			continue;
		for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
			if (cm->cmsg_level == SOL_RDS &&
			    cm->cmsg_type == RDS_CMSG_CONG_UPDATE) {
				memcpy(&mask, CMSG_DATA(cm), sizeof(mask));
				got_update = 1;
			}
		}
		if (r > 0) {
			reply[r < (ssize_t)sizeof(reply) ? r : (ssize_t)sizeof(reply) - 1] = 0;
			drained = atoi(reply);
		}
	}
	EXPECT_TRUE(got_update) TH_LOG("no RDS_CMSG_CONG_UPDATE");
	EXPECT_TRUE(mask & RDS_CONG_MONITOR_MASK(port))
		TH_LOG("mask 0x%llx port %u", (unsigned long long)mask, port);
	EXPECT_EQ(n, drained) TH_LOG("sink drained %d of %d", drained, n);
	/* uncongested: a send to P goes again (the sink has gone: dropped) */
	EXPECT_EQ(1000, rds_sendto(self->a, data, 1000, MSG_DONTWAIT, &self->data));
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "sink"))
		return sink(atoi(argv[2]) == 6 ? AF_INET6 : AF_INET, argv[3],
			    atoi(argv[4]), atoi(argv[5]));
	rds_test_prepare();
	return test_harness_run(argc, argv);
}
