// SPDX-License-Identifier: GPL-2.0
/*
 * Socket options (in-tree rds_setsockopt()/rds_getsockopt() and the generic
 * SOL_SOCKET code), IPv4 and IPv6 where it matters:
 *  SOL_SOCKET: SO_SNDBUF/SO_RCVBUF (the kernel doubles, RDS uses half as a
 *    payload limit), SO_RCVTIMEO (a timed-out recv fails with ETIMEDOUT),
 *    SO_TIMESTAMP (an SCM_TIMESTAMP cmsg on every received message);
 *  SOL_RDS: SO_TIMESTAMP{,_NEW} (optlen must be an int, else EFAULT),
 *    RDS_RECVERR (bool, set/get, optlen < int: EINVAL),
 *    RDS_CONG_MONITOR (bool, set only), SO_RDS_TRANSPORT (set once before
 *    bind, optlen == int, range checked; get gives RDS_TRANS_NONE unbound),
 *    SO_RDS_MSG_RXPATH_LATENCY (struct rds_rx_trace_so, any bad value:
 *    EFAULT; then an RDS_CMSG_RXPATH_LATENCY cmsg per message),
 *    RDS_CANCEL_SENT_TO argument checks (ENOTCONN unbound, EINVAL short),
 *    RDS_FREE_MR with a 0 cookie (flush: needs a transport that flushes,
 *    else EINVAL), the options of a loopback-bound socket;
 *  unknown SOL_RDS options and other levels: ENOPROTOOPT.
 */
#include <sys/time.h>
#include "rds_test.h"

FIXTURE(so)
{
	int a, b, u;
	struct sockaddr_storage aa, ba;
};

RDS_FAMILY_VARIANTS(so);

FIXTURE_SETUP(so)
{
	rds_setup_abu(_metadata, variant->family, &self->a, &self->aa,
		      &self->b, &self->ba, &self->u);
}

FIXTURE_TEARDOWN(so)
{
	close(self->a);
	close(self->b);
	close(self->u);
}

static int geti(int fd, int level, int opt, int *val)
{
	socklen_t len = sizeof(*val);
	int r = getsockopt(fd, level, opt, val, &len);

	if (r == 0 && len != sizeof(*val)) {
		errno = EPROTO;
		return -1;
	}
	return r;
}

static int seti(int fd, int level, int opt, int val)
{
	return setsockopt(fd, level, opt, &val, sizeof(val));
}

TEST_F(so, sndbuf_rcvbuf_doubled)
{
	int v = 0;

	ASSERT_EQ(0, seti(self->a, SOL_SOCKET, SO_SNDBUF, 32768));
	ASSERT_EQ(0, geti(self->a, SOL_SOCKET, SO_SNDBUF, &v));
	EXPECT_EQ(65536, v);
	ASSERT_EQ(0, seti(self->a, SOL_SOCKET, SO_RCVBUF, 32768));
	ASSERT_EQ(0, geti(self->a, SOL_SOCKET, SO_RCVBUF, &v));
	EXPECT_EQ(65536, v);
	/* force variants (root) go beyond the sysctl caps */
	ASSERT_EQ(0, seti(self->a, SOL_SOCKET, SO_SNDBUFFORCE, 4 << 20));
	ASSERT_EQ(0, geti(self->a, SOL_SOCKET, SO_SNDBUF, &v));
	EXPECT_EQ(8 << 20, v);
}

TEST_F(so, rcvtimeo)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 300000 };
	struct timespec t0;
	char c;
	long ms;

	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	alarm(20);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* RDS reports a timed-out receive as ETIMEDOUT, not EAGAIN */
	EXPECT_ERRNO(recv(self->b, &c, 1, 0), ETIMEDOUT);
	ms = rds_ms_since(&t0);
	alarm(0);
	EXPECT_LE(250, ms);
	EXPECT_GE(5000, ms);
	/* a message within the timeout is received normally */
	ASSERT_EQ(1, rds_sendto(self->a, "t", 1, 0, &self->ba));
	alarm(20);
	EXPECT_EQ(1, recv(self->b, &c, 1, 0));
	alarm(0);
}

static void check_tstamp(struct __test_metadata *_metadata, FIXTURE_DATA(so) *self,
			 int want_type)
{
	union {
		char buf[CMSG_SPACE(64)];
		struct cmsghdr align;
	} u;
	char data[16];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	struct timeval now;
	bool seen = false;

	ASSERT_EQ(1, rds_sendto(self->a, "s", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recvmsg_wait(self->b, &m, 0, RDS_WAIT_MS));
	gettimeofday(&now, NULL);
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		long long sec;

		if (c->cmsg_level != SOL_SOCKET)
			continue;
		if (want_type == 0) {
			seen = true;
			continue;
		}
		ASSERT_EQ(want_type, c->cmsg_type);
		if (want_type == SO_TIMESTAMP_OLD) {
			struct timeval tv;

			ASSERT_EQ(CMSG_LEN(sizeof(tv)), c->cmsg_len);
			memcpy(&tv, CMSG_DATA(c), sizeof(tv));
			sec = tv.tv_sec;
		} else {
			long long tv[2];	/* __kernel_sock_timeval */

			ASSERT_EQ(CMSG_LEN(sizeof(tv)), c->cmsg_len);
			memcpy(tv, CMSG_DATA(c), sizeof(tv));
			sec = tv[0];
		}
		EXPECT_LE(now.tv_sec - 10, sec);
		EXPECT_GE(now.tv_sec + 1, sec);
		seen = true;
	}
	if (want_type) {
		EXPECT_TRUE(seen) TH_LOG("no timestamp cmsg");
	} else {
		EXPECT_FALSE(seen) TH_LOG("unexpected SOL_SOCKET cmsg");
	}
}

TEST_F(so, timestamp_sol_socket)
{
	ASSERT_EQ(0, seti(self->b, SOL_SOCKET, SO_TIMESTAMP_OLD, 1));
	check_tstamp(_metadata, self, SO_TIMESTAMP_OLD);
	ASSERT_EQ(0, seti(self->b, SOL_SOCKET, SO_TIMESTAMP_OLD, 0));
	check_tstamp(_metadata, self, 0);
}

TEST_F(so, timestamp_sol_rds)
{
	ASSERT_EQ(0, seti(self->b, SOL_RDS, SO_TIMESTAMP_OLD, 1));
	check_tstamp(_metadata, self, SO_TIMESTAMP_OLD);
	ASSERT_EQ(0, seti(self->b, SOL_RDS, SO_TIMESTAMP_OLD, 0));
	check_tstamp(_metadata, self, 0);
}

TEST_F(so, timestamp_new_sol_rds)
{
	ASSERT_EQ(0, seti(self->b, SOL_RDS, SO_TIMESTAMP_NEW, 1));
	check_tstamp(_metadata, self, SO_TIMESTAMP_NEW);
}

TEST_F(so, timestamp_sol_rds_bad_len)
{
	long long v = 1;

	EXPECT_ERRNO(setsockopt(self->b, SOL_RDS, SO_TIMESTAMP_OLD, &v, 8), EFAULT);
	EXPECT_ERRNO(setsockopt(self->b, SOL_RDS, SO_TIMESTAMP_OLD, &v, 2), EFAULT);
	EXPECT_ERRNO(setsockopt(self->b, SOL_RDS, SO_TIMESTAMP_OLD, NULL, 4), EFAULT);
	/* nothing got switched on */
	check_tstamp(_metadata, self, 0);
}

TEST_F(so, recverr)
{
	int v = -1;
	socklen_t len;

	ASSERT_EQ(0, geti(self->u, SOL_RDS, RDS_RECVERR, &v));
	EXPECT_EQ(0, v);
	ASSERT_EQ(0, seti(self->u, SOL_RDS, RDS_RECVERR, 5));
	ASSERT_EQ(0, geti(self->u, SOL_RDS, RDS_RECVERR, &v));
	EXPECT_EQ(1, v);
	ASSERT_EQ(0, seti(self->u, SOL_RDS, RDS_RECVERR, 0));
	ASSERT_EQ(0, geti(self->u, SOL_RDS, RDS_RECVERR, &v));
	EXPECT_EQ(0, v);
	/* short lengths */
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_RECVERR, &v, 2), EINVAL);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_RECVERR, &v, 0), EINVAL);
	len = 2;
	EXPECT_ERRNO(getsockopt(self->u, SOL_RDS, RDS_RECVERR, &v, &len), EINVAL);
	/* a longer buffer gets an int */
	{
		long long big = -1;

		len = sizeof(big);
		ASSERT_EQ(0, getsockopt(self->u, SOL_RDS, RDS_RECVERR, &big, &len));
		EXPECT_EQ(sizeof(int), len);
	}
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_RECVERR, NULL, 4), EFAULT);
	len = sizeof(v);
	EXPECT_ERRNO(getsockopt(self->u, SOL_RDS, RDS_RECVERR, NULL, &len), EFAULT);
	EXPECT_ERRNO(getsockopt(self->u, SOL_RDS, RDS_RECVERR, &v, NULL), EFAULT);
}

TEST_F(so, cong_monitor_opt)
{
	int v = 1;
	socklen_t len = sizeof(v);

	EXPECT_EQ(0, seti(self->a, SOL_RDS, RDS_CONG_MONITOR, 1));
	EXPECT_EQ(0, seti(self->a, SOL_RDS, RDS_CONG_MONITOR, 0));
	EXPECT_EQ(0, seti(self->u, SOL_RDS, RDS_CONG_MONITOR, 1));
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, &v, 2), EINVAL);
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, NULL, 4), EFAULT);
	/* not readable */
	EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, RDS_CONG_MONITOR, &v, &len),
		     ENOPROTOOPT);
	/* a monitoring socket still sends and receives */
	ASSERT_EQ(0, seti(self->b, SOL_RDS, RDS_CONG_MONITOR, 1));
	ASSERT_EQ(1, rds_sendto(self->a, "m", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &v, 1, 0, NULL, RDS_WAIT_MS));
}

TEST_F(so, transport_get)
{
	int v = 12345;
	socklen_t len = 2;

	ASSERT_EQ(0, geti(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(RDS_TRANS_NONE, v);
	ASSERT_EQ(0, geti(self->a, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(RDS_TRANS_IB, v);
	EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, SO_RDS_TRANSPORT, &v, &len),
		     EINVAL);
}

TEST_F(so, transport_set_before_bind)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family, rds_local_str(variant->family),
				   0, &ss);
	int v = -7;

	ASSERT_EQ(0, seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB));
	ASSERT_EQ(0, geti(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(RDS_TRANS_IB, v);
	/* only once */
	EXPECT_ERRNO(seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB),
		     EOPNOTSUPP);
	ASSERT_EQ(0, bind(self->u, (struct sockaddr *)&ss, len));
	ASSERT_EQ(0, geti(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(RDS_TRANS_IB, v);
}

TEST_F(so, transport_set_after_bind)
{
	EXPECT_ERRNO(seti(self->a, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB),
		     EOPNOTSUPP);
}

TEST_F(so, transport_bad_values)
{
	long long v = RDS_TRANS_IB;

	EXPECT_ERRNO(seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_COUNT), EINVAL);
	EXPECT_ERRNO(seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, -1), EINVAL);
	EXPECT_ERRNO(seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, 1000), EINVAL);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v, 8), EINVAL);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v, 2), EINVAL);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_TRANSPORT, NULL, 4), EFAULT);
	/* the old iWARP slot has no transport */
	EXPECT_ERRNO(seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_GAP),
		     ENOPROTOOPT);
	/* none of it attached anything */
	ASSERT_EQ(0, seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB));
}

TEST_F(so, transport_ib_wrong_address)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(variant->family,
				   variant->family == AF_INET ? "192.0.2.200"
							      : "2001:db8::c8",
				   0, &ss);

	/* with the transport forced, an address it cannot use is ENOPROTOOPT */
	ASSERT_EQ(0, seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB));
	EXPECT_ERRNO(bind(self->u, (struct sockaddr *)&ss, len), ENOPROTOOPT);
}

TEST_F(so, rxpath_latency_opt)
{
	struct rds_rx_trace_so t = { 0 };
	char big[8] = { 0 };

	t.rx_traces = 3;
	t.rx_trace_pos[0] = RDS_MSG_RX_HDR_TO_DGRAM_START;
	t.rx_trace_pos[1] = RDS_MSG_RX_DGRAM_REASSEMBLE;
	t.rx_trace_pos[2] = RDS_MSG_RX_DGRAM_DELIVERED;
	ASSERT_EQ(4, sizeof(t));
	EXPECT_EQ(0, setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &t,
				sizeof(t)));
	t.rx_traces = 0;
	EXPECT_EQ(0, setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &t,
				sizeof(t)));
	/* any bad value is EFAULT (sic) */
	t.rx_traces = RDS_MSG_RX_DGRAM_TRACE_MAX + 1;
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &t,
				sizeof(t)), EFAULT);
	t.rx_traces = 1;
	t.rx_trace_pos[0] = RDS_MSG_RX_DGRAM_TRACE_MAX;
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &t,
				sizeof(t)), EFAULT);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, big,
				sizeof(big)), EFAULT);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, big, 3),
		     EFAULT);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, NULL,
				sizeof(t)), EFAULT);
}

TEST_F(so, rxpath_latency_cmsg)
{
	struct rds_rx_trace_so t = { 0 };
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_cmsg_rx_trace)) + 64];
		struct cmsghdr align;
	} u;
	char data[16];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct rds_cmsg_rx_trace tr;
	struct cmsghdr *c;
	bool seen = false;

	t.rx_traces = 2;
	t.rx_trace_pos[0] = RDS_MSG_RX_HDR_TO_DGRAM_START;
	t.rx_trace_pos[1] = RDS_MSG_RX_DGRAM_DELIVERED;
	ASSERT_EQ(32, sizeof(tr));
	ASSERT_EQ(0, setsockopt(self->b, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &t,
				sizeof(t)));
	ASSERT_EQ(3, rds_sendto(self->a, "lat", 3, 0, &self->ba));
	ASSERT_EQ(3, rds_recvmsg_wait(self->b, &m, 0, RDS_WAIT_MS));
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_RDS || c->cmsg_type != RDS_CMSG_RXPATH_LATENCY)
			continue;
		ASSERT_EQ(CMSG_LEN(sizeof(tr)), c->cmsg_len);
		memcpy(&tr, CMSG_DATA(c), sizeof(tr));
		EXPECT_EQ(2, tr.rx_traces);
		EXPECT_EQ(RDS_MSG_RX_HDR_TO_DGRAM_START, tr.rx_trace_pos[0]);
		EXPECT_EQ(RDS_MSG_RX_DGRAM_DELIVERED, tr.rx_trace_pos[1]);
		seen = true;
	}
	EXPECT_TRUE(seen) TH_LOG("no RDS_CMSG_RXPATH_LATENCY");
}

TEST_F(so, cancel_sent_to_args)
{
	struct sockaddr_storage d = self->ba;
	char big[64] = { 0 };

	/* unbound: ENOTCONN, whatever the argument */
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_CANCEL_SENT_TO, &d,
				rds_sslen(&d)), ENOTCONN);
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_CANCEL_SENT_TO, &d, 0),
		     ENOTCONN);
	/* too short for a sockaddr_in */
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &d, 8), EINVAL);
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &d, 0), EINVAL);
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, NULL,
				rds_sslen(&d)), EFAULT);
	/* a valid one with nothing queued is a no-op */
	EXPECT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, &d,
				rds_sslen(&d)));
	memcpy(big, &d, rds_sslen(&d));
	EXPECT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, big,
				sizeof(big)));
	/* not readable */
	{
		socklen_t len = sizeof(big);

		EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, RDS_CANCEL_SENT_TO, big,
					&len), ENOPROTOOPT);
	}
	/* the socket still works */
	ASSERT_EQ(1, rds_sendto(self->a, "c", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, big, 1, 0, NULL, RDS_WAIT_MS));
}

/*
 * RDS_FREE_MR with cookie 0 flushes the transport's MRs: EINVAL without a
 * transport or with one that cannot (loopback), 0 on RDMA, bound or not;
 * the length must be exactly sizeof(struct rds_free_mr_args).
 */
TEST_F(so, free_mr_flush)
{
	struct rds_free_mr_args f = { .cookie = 0, .flags = 0 };
	char big[sizeof(f) + 8] = { 0 };
	int lo;

	ASSERT_EQ(16, sizeof(f));
	EXPECT_ERRNO(setsockopt(self->u, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)),
		     EINVAL);
	EXPECT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)));
	f.flags = RDS_RDMA_INVALIDATE;
	EXPECT_EQ(0, setsockopt(self->a, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)));
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_FREE_MR, &f, sizeof(f) - 1),
		     EINVAL);
	EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, RDS_FREE_MR, big, sizeof(big)),
		     EINVAL);

	lo = rds_bound_socket_at(variant->family, rds_loop_str(variant->family),
				 0, NULL);
	ASSERT_LE(0, lo) TH_LOG("bind %s: %s", rds_loop_str(variant->family),
				strerror(errno));
	EXPECT_ERRNO(setsockopt(lo, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)), EINVAL);
	close(lo);

	/* a transport chosen with SO_RDS_TRANSPORT is enough */
	ASSERT_EQ(0, seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB));
	EXPECT_EQ(0, setsockopt(self->u, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)));
}

/* A socket bound to loopback: bound, but no RDMA. */
TEST_F(so, loopback_bound)
{
	struct sockaddr_storage la, d = self->ba;
	struct rds_get_mr_args g;
	char buf[64];
	int lo, v = -7;

	lo = rds_bound_socket_at(variant->family, rds_loop_str(variant->family),
				 0, &la);
	ASSERT_LE(0, lo) TH_LOG("bind %s: %s", rds_loop_str(variant->family),
				strerror(errno));
	ASSERT_EQ(0, geti(lo, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(3, v);	/* in-tree RDS_TRANS_LOOP */
	EXPECT_ERRNO(seti(lo, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB),
		     EOPNOTSUPP);
	/* bound: CANCEL_SENT_TO takes any destination */
	EXPECT_EQ(0, setsockopt(lo, SOL_RDS, RDS_CANCEL_SENT_TO, &d,
				rds_sslen(&d)));
	EXPECT_EQ(0, setsockopt(lo, SOL_RDS, RDS_CANCEL_SENT_TO, &la,
				rds_sslen(&la)));
	EXPECT_ERRNO(setsockopt(lo, SOL_RDS, RDS_CANCEL_SENT_TO, &d, 8), EINVAL);
	/* no MRs on loopback */
	memset(&g, 0, sizeof(g));
	g.vec.addr = (uintptr_t)buf;
	g.vec.bytes = sizeof(buf);
	EXPECT_ERRNO(setsockopt(lo, SOL_RDS, RDS_GET_MR, &g, sizeof(g)),
		     EOPNOTSUPP);
	/* the booleans work as on any socket */
	EXPECT_EQ(0, seti(lo, SOL_RDS, RDS_RECVERR, 1));
	EXPECT_EQ(0, seti(lo, SOL_RDS, RDS_CONG_MONITOR, 1));
	close(lo);
}

/*
 * Deliberate difference: a bind that fails in rds_add_bound() (port in
 * use, port 1) keeps the transport set with SO_RDS_TRANSPORT.  In-tree it
 * is forgotten (RDS_TRANS_NONE afterwards) and its module reference leaked.
 */
TEST_F(so, transport_kept_after_failed_bind)
{
	int v = -7;

	ASSERT_EQ(0, seti(self->u, SOL_RDS, SO_RDS_TRANSPORT, RDS_TRANS_IB));
	EXPECT_ERRNO(bind(self->u, (struct sockaddr *)&self->aa,
			  rds_sslen(&self->aa)), EADDRINUSE);
	ASSERT_EQ(0, geti(self->u, SOL_RDS, SO_RDS_TRANSPORT, &v));
	EXPECT_EQ(rds_intree() ? RDS_TRANS_NONE : RDS_TRANS_IB, v);
}

TEST_F(so, unknown_options)
{
	static const int opts[] = { 0, 4, 9, 11, 12, 100, 9999, -1,
				    RDS_INFO_LAST + 1 };
	int v = 1;
	unsigned int i;
	socklen_t len;

	for (i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
		TH_LOG("option %d", opts[i]);
		EXPECT_ERRNO(setsockopt(self->a, SOL_RDS, opts[i], &v, sizeof(v)),
			     ENOPROTOOPT);
		len = sizeof(v);
		EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, opts[i], &v, &len),
			     ENOPROTOOPT);
	}
	/* set-only options are not readable */
	len = sizeof(v);
	EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, SO_TIMESTAMP_OLD, &v, &len),
		     ENOPROTOOPT);
	len = sizeof(v);
	EXPECT_ERRNO(getsockopt(self->a, SOL_RDS, SO_RDS_MSG_RXPATH_LATENCY, &v,
				&len), ENOPROTOOPT);
}

TEST_F(so, other_levels)
{
	static const int levels[] = { SOL_IP, SOL_IPV6, 6 /* SOL_TCP */, 17 /* SOL_UDP */, 275, 277 };
	int v = 1;
	unsigned int i;
	socklen_t len;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		TH_LOG("level %d", levels[i]);
		EXPECT_ERRNO(setsockopt(self->a, levels[i], 1, &v, sizeof(v)),
			     ENOPROTOOPT);
		len = sizeof(v);
		EXPECT_ERRNO(getsockopt(self->a, levels[i], 1, &v, &len),
			     ENOPROTOOPT);
	}
}

RDS_TEST_MAIN
