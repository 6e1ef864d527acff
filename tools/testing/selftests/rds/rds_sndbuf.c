// SPDX-License-Identifier: GPL-2.0
/*
 * A full send buffer, and what frees it (in-tree rds_send_queue_rm(),
 * rds_send_drop_to(), rds_release()).  Messages to an address on the rxe
 * subnet that nobody owns stay queued (no connection ever comes up, nothing
 * is acknowledged), so they keep counting against the socket's sndbuf:
 *  - a message is queued while the queued bytes are below sndbuf/2 (the
 *    last one may overshoot), then: MSG_DONTWAIT -> EAGAIN, blocking with
 *    SO_SNDTIMEO -> ETIMEDOUT, and poll() drops POLLOUT;
 *  - RDS_CANCEL_SENT_TO(that address:port) drops them and frees the space;
 *    cancelling another destination does not;
 *  - close() with queued messages (send side and receive side) is clean
 *    and quick, and the port is free again at once.
 */
#include "rds_test.h"

FIXTURE(sb)
{
	int a, b;
	struct sockaddr_storage aa, ba, dead;
	int limit;	/* payload bytes: SO_SNDBUF value / 2 */
	char buf[16384];
};

RDS_FAMILY_VARIANTS(sb);

FIXTURE_SETUP(sb)
{
	int v = 4096;
	socklen_t len = sizeof(v);

	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	ASSERT_NE(0, rds_mkaddr(variant->family, rds_unreach_str(variant->family),
				4000, &self->dead));
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &v, sizeof(v)));
	ASSERT_EQ(0, getsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &v, &len));
	self->limit = v / 2;
	ASSERT_LT(1000, self->limit);
	ASSERT_GT((int)sizeof(self->buf), self->limit);
}

FIXTURE_TEARDOWN(sb)
{
	close(self->a);
	close(self->b);
}

/* Queue 1000-byte messages to the dead address until EAGAIN. */
static int fill(struct __test_metadata *_metadata, FIXTURE_DATA(sb) *self)
{
	int n = 0;
	ssize_t r;

	for (;;) {
		r = rds_sendto(self->a, self->buf, 1000, MSG_DONTWAIT, &self->dead);
		if (r < 0)
			break;
		EXPECT_EQ(1000, r);
		n++;
		if (n > 1000)
			break;
	}
	EXPECT_EQ(-1, r);
	EXPECT_EQ(EAGAIN, errno) TH_LOG("after %d messages: %s", n, strerror(errno));
	/* below the limit a message is always taken; one may overshoot it */
	EXPECT_LE(self->limit / 1000, n);
	EXPECT_GE(self->limit / 1000 + 1, n);
	return n;
}

TEST_F(sb, eagain_when_full)
{
	int n = fill(_metadata, self);

	TH_LOG("limit %d bytes, %d messages queued", self->limit, n);
	/* the buffer is per socket: other destinations are refused too */
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, MSG_DONTWAIT, &self->ba), EAGAIN);
	EXPECT_ERRNO(rds_sendto(self->a, NULL, 0, MSG_DONTWAIT, &self->ba), EAGAIN);
	/* it stays full: nothing will ever ack these */
	rds_msleep(500);
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, MSG_DONTWAIT, &self->ba), EAGAIN);
	/* other sockets are not affected */
	ASSERT_EQ(1, rds_sendto(self->b, "y", 1, MSG_DONTWAIT, &self->aa));
	ASSERT_EQ(1, rds_recv_wait(self->a, self->buf, 1, 0, NULL, RDS_WAIT_MS));
}

TEST_F(sb, nonblocking_fd_eagain)
{
	int fl = fcntl(self->a, F_GETFL);

	ASSERT_EQ(0, fcntl(self->a, F_SETFL, fl | O_NONBLOCK));
	fill(_metadata, self);
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, 0, &self->ba), EAGAIN);
}

TEST_F(sb, pollout_cleared)
{
	struct pollfd p = { .fd = self->a, .events = POLLOUT };

	EXPECT_EQ(1, poll(&p, 1, 0));
	EXPECT_TRUE(p.revents & POLLOUT);
	fill(_metadata, self);
	p.revents = 0;
	poll(&p, 1, 300);
	EXPECT_FALSE(p.revents & POLLOUT) TH_LOG("revents 0x%x", p.revents);
}

TEST_F(sb, sndtimeo)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
	struct timespec t0;
	long ms;

	fill(_metadata, self);
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)));
	alarm(20);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, 0, &self->ba), ETIMEDOUT);
	ms = rds_ms_since(&t0);
	alarm(0);
	EXPECT_LE(250, ms);
	EXPECT_GE(5000, ms);
}

TEST_F(sb, cancel_frees_space)
{
	struct sockaddr_storage other = self->dead;
	char c;

	fill(_metadata, self);
	/* another port on the dead address, or another address: no effect */
	rds_set_port(&other, 4001);
	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &other,
				rds_sslen(&other)));
	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &self->ba,
				rds_sslen(&self->ba)));
	EXPECT_ERRNO(rds_sendto(self->a, "x", 1, MSG_DONTWAIT, &self->ba), EAGAIN);
	/* the right one frees everything */
	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &self->dead,
				rds_sslen(&self->dead)));
	EXPECT_TRUE(rds_wait(self->a, POLLOUT, 2000) & POLLOUT);
	ASSERT_EQ(1, rds_sendto(self->a, "x", 1, MSG_DONTWAIT, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('x', c);
	/* and the buffer fills up again to the same level */
	fill(_metadata, self);
	ASSERT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &self->dead,
				rds_sslen(&self->dead)));
}

TEST_F(sb, space_returns_after_ack)
{
	int n = 0, i;
	ssize_t r;

	/* to a live socket: the space comes back once messages are acked */
	for (i = 0; i < 2000; i++) {
		r = rds_sendto(self->a, self->buf, 1000, MSG_DONTWAIT, &self->ba);
		if (r < 0) {
			ASSERT_TRUE(errno == EAGAIN || errno == ENOBUFS)
				TH_LOG("send: %s", strerror(errno));
			if (!(rds_wait(self->a, POLLOUT, RDS_WAIT_MS) & POLLOUT))
				break;
			/* ENOBUFS: b is congested; let it read */
			rds_drain(self->b, 0);
			continue;
		}
		n++;
		if (n >= 50)
			break;
	}
	EXPECT_EQ(50, n);
}

TEST_F(sb, close_with_queued_sends)
{
	struct timespec t0;
	uint16_t port = rds_port_of(&self->aa);
	int fd;

	fill(_metadata, self);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, close(self->a));
	EXPECT_GE(2000, rds_ms_since(&t0));
	/* the port is free again */
	fd = rds_bound_socket(variant->family, port, NULL);
	ASSERT_LE(0, fd) TH_LOG("rebind %u: %s", port, strerror(errno));
	self->a = fd;
	ASSERT_EQ(1, rds_sendto(self->a, "n", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, self->buf, 1, 0, NULL, RDS_WAIT_MS));
}

TEST_F(sb, close_with_queued_receives)
{
	uint16_t port = rds_port_of(&self->ba);
	int i, fd;
	char c;

	for (i = 0; i < 20; i++)
		ASSERT_EQ(100, rds_sendto(self->a, self->buf, 100, 0, &self->ba));
	/* wait until they are there */
	ASSERT_TRUE(rds_wait(self->b, POLLIN, RDS_WAIT_MS) & POLLIN);
	rds_msleep(300);
	ASSERT_EQ(0, close(self->b));
	/* a new socket on the port starts empty and works */
	fd = rds_bound_socket(variant->family, port, NULL);
	ASSERT_LE(0, fd) TH_LOG("rebind %u: %s", port, strerror(errno));
	self->b = fd;
	rds_msleep(300);
	EXPECT_ERRNO(recv(self->b, &c, 1, MSG_DONTWAIT), EAGAIN);
	ASSERT_EQ(1, rds_sendto(self->a, "z", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('z', c);
}

TEST_F(sb, close_in_flight_many)
{
	int i, j, fd;
	struct sockaddr_storage me;

	/* sockets that die with traffic queued both ways */
	for (i = 0; i < 20; i++) {
		fd = rds_bound_socket(variant->family, 0, &me);
		ASSERT_LE(0, fd);
		for (j = 0; j < 5; j++) {
			rds_sendto(fd, self->buf, 500, MSG_DONTWAIT, &self->ba);
			rds_sendto(fd, self->buf, 500, MSG_DONTWAIT, &self->dead);
			rds_sendto(self->b, self->buf, 500, MSG_DONTWAIT, &me);
		}
		close(fd);
	}
	rds_drain(self->b, 500);
	ASSERT_EQ(1, rds_sendto(self->a, "q", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, self->buf, 1, 0, NULL, RDS_WAIT_MS));
}

/*
 * Empty messages and pongs are not free (issue 9): each message counts at
 * least MIN_CHARGE bytes (RDS_MSG_MIN_CHARGE) against the sender's
 * sndbuf and the receiver's rcvbuf, so a loop of empty sends meets EAGAIN
 * (dead peer) or ENOBUFS (a receiver that does not read) like any other,
 * and pongs for a socket that does not read stop at its rcvbuf.  In-tree
 * charges their payload, nothing.
 */
#define MIN_CHARGE	48	/* sizeof(struct rds_header) */
#define FLOOD		5000

TEST_F(sb, zero_bytes_fill_sndbuf)
{
	ssize_t r = 0;
	int n, e = 0;

	if (rds_intree())
		SKIP(return, "in-tree: empty messages are free");
	for (n = 0; n < FLOOD; n++) {
		r = rds_sendto(self->a, NULL, 0, MSG_DONTWAIT, &self->dead);
		if (r < 0) {
			e = errno;
			break;
		}
	}
	EXPECT_EQ(-1, r);
	EXPECT_EQ(EAGAIN, e) TH_LOG("%s", strerror(e));
	TH_LOG("%d empty messages queued (limit %d)", n, self->limit);
	EXPECT_LE(self->limit / MIN_CHARGE, n);
	EXPECT_GE(self->limit / MIN_CHARGE + 1, n);
	/* and cancelling gives the room back */
	ASSERT_OK(setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &self->dead,
			     rds_sslen(&self->dead)));
	EXPECT_EQ(0, rds_sendto(self->a, NULL, 0, MSG_DONTWAIT, &self->dead));
}

TEST_F(sb, zero_bytes_congest_receiver)
{
	int v, n, got;
	socklen_t len = sizeof(v);
	ssize_t r = 0;

	if (rds_intree())
		SKIP(return, "in-tree: empty messages are free");
	ASSERT_OK(getsockopt(self->b, SOL_SOCKET, SO_RCVBUF, &v, &len));
	/* room to send: the receiver is what must say no */
	ASSERT_OK(rds_big_sndbuf(self->a, 1 << 20));
	for (n = 0; n < FLOOD; n++) {
		r = rds_sendto(self->a, NULL, 0, MSG_DONTWAIT, &self->ba);
		if (r < 0)
			break;
	}
	EXPECT_TRUE(r < 0 && (errno == ENOBUFS || errno == EAGAIN))
		TH_LOG("%d empty messages sent: %s", n, strerror(errno));
	TH_LOG("%d empty messages before %s (rcvbuf %d)", n, strerror(errno),
	       v);
	EXPECT_GE(v / 2 / MIN_CHARGE + 2, n);
	got = rds_drain(self->b, 500);
	EXPECT_EQ(n, got);
	/* drained: b is no longer congested */
	EXPECT_EQ(0, rds_send_cmsg(self->a, &self->ba, NULL, 0, 0, NULL, 0,
				   RDS_WAIT_MS)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, rds_recv_wait(self->b, NULL, 0, 0, NULL, RDS_WAIT_MS));
}

TEST_F(sb, pongs_bounded)
{
	struct sockaddr_storage me0 = self->aa;
	int v, n, got;
	socklen_t len = sizeof(v);

	if (rds_intree())
		SKIP(return, "in-tree: pongs are free");
	ASSERT_OK(getsockopt(self->b, SOL_SOCKET, SO_RCVBUF, &v, &len));
	/* b pings its own node FLOOD times and never reads */
	if (me0.ss_family == AF_INET)
		((struct sockaddr_in *)&me0)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&me0)->sin6_port = 0;
	for (n = 0; n < FLOOD; n++)
		if (rds_send_cmsg(self->b, &me0, NULL, 0, 0, NULL, 0,
				  RDS_WAIT_MS) < 0)
			break;
	EXPECT_EQ(FLOOD, n) TH_LOG("ping %d: %s", n, strerror(errno));
	rds_msleep(500);
	got = rds_drain(self->b, 500);
	TH_LOG("%d pongs queued for %d pings (rcvbuf %d)", got, n, v);
	EXPECT_LE(1, got);
	EXPECT_GE(v / 2 / MIN_CHARGE + 1, got);
	/* read: pongs come again */
	ASSERT_EQ(0, rds_sendto(self->b, NULL, 0, 0, &me0));
	EXPECT_EQ(0, rds_recv_wait(self->b, NULL, 0, 0, NULL, RDS_WAIT_MS));
}

RDS_TEST_MAIN
