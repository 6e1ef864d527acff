// SPDX-License-Identifier: GPL-2.0
/*
 * recv.c - the receive path: from the transport to the socket, and
 * recvmsg().
 *
 * Theory of operation
 * ===================
 *
 * A transport reassembles a message in its own buffers, puts a struct
 * rds_incoming (embedded in its object) through rds_inc_init() and calls
 * rds_recv_incoming().  There, in the transport's context (softirq for IB,
 * the sender's thread for loop):
 *
 *  - a congestion map update (h_flags == CONG_BITMAP exactly, sequence 0,
 *    never acknowledged or retransmitted) is applied to the peer's map;
 *  - a sequence number below cp_next_rx_seq on a message marked
 *    RETRANSMITTED is a duplicate from before a reconnect and is dropped;
 *    anything else moves cp_next_rx_seq past it (a peer's new connection
 *    object starts from the wall clock, rds_conn_first_seq(), an in-tree
 *    peer's from 1);
 *  - destination port 0 is a ping: answered with a pong from port 0 when
 *    net.rds.ping_enable is set;
 *  - everything else is queued on the socket bound to (daddr, dport), found
 *    lock-free in the bind table, with a reference; the payload stays in the
 *    transport's buffers until recvmsg() copies it out.
 *
 * Socket receive accounting: rs_rcv_bytes counts payload bytes queued,
 * each message at least RDS_MSG_MIN_CHARGE (rds_msg_charge()), so that a
 * flood of empty messages congests the port like any other.  A pong
 * (source port 0) is not flow controlled by the map (the peer's kernel
 * sends it), so one that arrives for a socket already over sk_rcvbuf/2 is
 * dropped: a socket that pings and never reads cannot queue without bound.
 * Above sk_rcvbuf/2 the port is marked congested in the local map (which the
 * peers are sent); below sk_rcvbuf/4 it is cleared again and local senders
 * and monitors are told.  Bit changes happen under rs_recv_lock so they
 * stay ordered; the wakeups after it is dropped.
 *
 * recvmsg() returns pending congestion notifications first (monitoring
 * sockets), then the oldest message: payload, msg_name (the sender),
 * MSG_TRUNC, and cmsgs (SO_TIMESTAMP, RDS_CMSG_RXPATH_LATENCY, the RDMA
 * cookie).  MSG_PEEK leaves the message queued; a message dequeued by a
 * concurrent reader between the copy and the dequeue is retried.
 *
 * Busy polling.  A blocking recvmsg() on a socket with a busy-read time
 * (SO_BUSY_POLL, default net.core.busy_read) spins that long (at most its
 * receive timeout, which the spin uses up) for a message before it
 * sleeps.  poll() and select() on such a socket busy-loop with
 * net.core.busy_poll through the generic sock_poll().  Nothing is polled
 * on the transport's behalf: RDS messages arrive through completion
 * handlers, not a NAPI context; what spinning saves is the sleep and the
 * wake-up.  Off by default, as for every socket.
 */
#include <linux/kernel.h>
#include <linux/sched/clock.h>
#include <linux/time.h>
#include <net/sock.h>
#include <net/busy_poll.h>
#include <net/ipv6.h>

#include "rds.h"
#include <trace/events/rds.h>

void rds_inc_init(struct rds_incoming *inc, struct rds_conn_path *cp,
		  const struct in6_addr *saddr)
{
	refcount_set(&inc->i_refcount, 1);
	INIT_LIST_HEAD(&inc->i_item);
	inc->i_conn = cp->cp_conn;
	inc->i_conn_path = cp;
	inc->i_saddr = *saddr;
	inc->i_rx_jiffies = jiffies;
	inc->i_rx_tstamp = 0;
	inc->i_rdma_cookie = 0;
	atomic_set(&inc->i_holds, 0);
	inc->i_hold_rs = NULL;
	memset(inc->i_rx_lat_trace, 0, sizeof(inc->i_rx_lat_trace));
	inc->i_rx_lat_trace[RDS_MSG_RX_HDR] = local_clock();
}
EXPORT_SYMBOL_GPL(rds_inc_init);

void rds_inc_put(struct rds_incoming *inc)
{
	if (refcount_dec_and_test(&inc->i_refcount)) {
		WARN_ON_ONCE(!list_empty(&inc->i_item));
		inc->i_conn->c_trans->inc_free(inc);
	}
}
EXPORT_SYMBOL_GPL(rds_inc_put);

/* The congestion map of the address the message was sent to. */
static struct rds_cong_map *rds_inc_dest_map(struct rds_incoming *inc)
{
	struct rds_connection *conn = inc->i_conn;

	return conn->c_loopback ? conn->c_fcong : conn->c_lcong;
}

/*
 * Account a message of @len payload bytes, queued (@add) or dequeued, on
 * @rs (rs_recv_lock held), charged rds_msg_charge(), and flip the port's
 * congestion bit when a threshold is crossed.  Returns true when the port
 * became uncongested, so the caller can wake local waiters.
 */
static bool rds_recv_rcvbuf_delta(struct rds_sock *rs,
				  struct rds_cong_map *map, u32 len, bool add)
{
	u32 limit = rds_sk_rcvbuf(rs);

	if (add) {
		rs->rs_rcv_bytes += rds_msg_charge(len);
		rds_stats_add(s_recv_bytes_added_to_socket, len);
	} else {
		rs->rs_rcv_bytes -= rds_msg_charge(len);
		rds_stats_add(s_recv_bytes_removed_from_socket, len);
	}

	if (!rs->rs_congested && rs->rs_rcv_bytes > limit) {
		rs->rs_congested = true;
		rds_cong_set_bit(map, rs->rs_bound_port);
		rds_cong_queue_updates(map);
	} else if (rs->rs_congested && rs->rs_rcv_bytes < limit / 2) {
		rs->rs_congested = false;
		rds_cong_clear_bit(map, rs->rs_bound_port);
		rds_cong_queue_updates(map);
		return true;
	}
	return false;
}

static void rds_recv_uncongested(struct rds_cong_map *map, __be16 port)
{
	rds_cong_map_updated(map, RDS_CONG_MONITOR_MASK(be16_to_cpu(port)));
}

/* Answer a ping; for loop the answer goes on the reverse connection. */
static void rds_recv_ping(struct rds_conn_path *cp,
			  const struct in6_addr *saddr,
			  const struct in6_addr *daddr,
			  struct rds_incoming *inc, gfp_t gfp)
{
	struct rds_connection *conn = cp->cp_conn;
	__be16 sport = inc->i_hdr.h_sport;

	if (!sport || !READ_ONCE(rds_sysctl_ping_enable))
		return;
	rds_stats_inc(s_recv_ping);
	if (conn->c_loopback && !ipv6_addr_equal(&conn->c_laddr, daddr)) {
		struct rds_connection *rev;

		rev = rds_conn_create(rds_conn_net(conn), daddr, saddr,
				      &rds_loop_transport, conn->c_tos,
				      conn->c_dev_if, gfp);
		if (IS_ERR(rev))
			return;
		cp = rds_conn_path0(rev);
	}
	rds_send_pong(cp, sport, gfp);
}

/*
 * Extension headers that concern the receiving socket: the cookie of an
 * RDMA_DEST becomes the RDS_CMSG_RDMA_DEST of recvmsg(), an RDMA one tells
 * the MR code that the peer is done with a use-once key.
 */
static void rds_recv_exthdrs(struct rds_incoming *inc, struct rds_sock *rs)
{
	union {
		struct rds_ext_header_rdma rdma;
		struct rds_ext_header_rdma_dest dest;
		u8 raw[RDS_HEADER_EXT_SPACE];
	} buf;
	unsigned int pos = 0, len;
	int type;

	for (;;) {
		len = sizeof(buf);
		type = rds_message_next_extension(&inc->i_hdr, &pos, &buf, &len);
		if (type == RDS_EXTHDR_NONE)
			break;
		switch (type) {
		case RDS_EXTHDR_RDMA:
			rds_rdma_unuse_inc(rs, inc,
					   be32_to_cpu(buf.rdma.h_rdma_rkey));
			break;
		case RDS_EXTHDR_RDMA_DEST:
			inc->i_rdma_cookie =
				be32_to_cpu(buf.dest.h_rdma_rkey) |
				((u64)be32_to_cpu(buf.dest.h_rdma_offset) << 32);
			break;
		default:
			break;
		}
	}
}

void rds_recv_incoming(struct rds_conn_path *cp, const struct in6_addr *saddr,
		       const struct in6_addr *daddr, struct rds_incoming *inc,
		       gfp_t gfp)
{
	struct rds_connection *conn = cp->cp_conn;
	struct rds_cong_map *map;
	struct rds_sock *rs;
	unsigned long flags;
	struct sock *sk;
	u64 seq;

	inc->i_rx_lat_trace[RDS_MSG_RX_START] = local_clock();
	trace_rds_recv(cp, &inc->i_hdr);

	if (inc->i_hdr.h_flags == RDS_FLAG_CONG_BITMAP) {
		rds_cong_recv(cp, inc);
		return;
	}

	seq = be64_to_cpu(inc->i_hdr.h_sequence);
	if (seq < cp->cp_next_rx_seq &&
	    (inc->i_hdr.h_flags & RDS_FLAG_RETRANSMITTED)) {
		rds_stats_inc(s_recv_drop_old_seq);
		return;
	}
	cp->cp_next_rx_seq = seq + 1;

	if (inc->i_hdr.h_flags & RDS_FLAG_ACK_REQUIRED)
		rds_stats_inc(s_recv_ack_required);

	if (!inc->i_hdr.h_dport) {
		rds_recv_ping(cp, saddr, daddr, inc, gfp);
		return;
	}
	/* A pong to a multipath probe: we are single-path, nothing to do. */
	if (be16_to_cpu(inc->i_hdr.h_dport) == RDS_PROBE_PORT &&
	    !inc->i_hdr.h_sport)
		return;

	rs = rds_find_bound(rds_conn_net(conn), daddr, inc->i_hdr.h_dport,
			    conn->c_dev_if);
	if (!rs) {
		rds_stats_inc(s_recv_drop_no_sock);
		return;
	}
	sk = rds_rs_to_sk(rs);
	map = rds_inc_dest_map(inc);
	rds_recv_exthdrs(inc, rs);

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	if (!inc->i_hdr.h_sport && rs->rs_rcv_bytes >= rds_sk_rcvbuf(rs)) {
		/* A pong for a socket that does not read: drop it. */
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	} else if (!sock_flag(sk, SOCK_DEAD)) {
		rds_recv_rcvbuf_delta(rs, map, be32_to_cpu(inc->i_hdr.h_len),
				      true);
		if (sock_flag(sk, SOCK_RCVTSTAMP))
			inc->i_rx_tstamp = ktime_get_real();
		rds_inc_addref(inc);
		inc->i_rx_lat_trace[RDS_MSG_RX_END] = local_clock();
		list_add_tail(&inc->i_item, &rs->rs_recv_queue);
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
		rds_stats_inc(s_recv_queued);
		rds_wake_sk(rs);
	} else {
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
		rds_stats_inc(s_recv_drop_dead_sock);
	}
	sock_put(sk);
}
EXPORT_SYMBOL_GPL(rds_recv_incoming);

/* The head of the queue, unless its delivery is held (rdma.c). */
static struct rds_incoming *rds_recv_head(struct rds_sock *rs)
{
	struct rds_incoming *inc;

	inc = list_first_entry_or_null(&rs->rs_recv_queue,
				       struct rds_incoming, i_item);
	return inc && !rds_inc_held(inc) ? inc : NULL;
}

bool rds_recv_pending(struct rds_sock *rs)
{
	return rds_recv_head(rs) || READ_ONCE(rs->rs_cong_notify) ||
	       !list_empty(&rs->rs_notify_queue);
}

/* The oldest queued message, with a reference, or NULL. */
static struct rds_incoming *rds_next_incoming(struct rds_sock *rs)
{
	struct rds_incoming *inc = NULL;
	unsigned long flags;

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	inc = rds_recv_head(rs);
	if (inc)
		rds_inc_addref(inc);
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	return inc;
}

/*
 * Is @inc still queued?  With @drop, dequeue it.  False when a concurrent
 * reader took it first.
 */
static bool rds_still_queued(struct rds_sock *rs, struct rds_incoming *inc,
			     bool drop)
{
	struct rds_cong_map *map = rds_inc_dest_map(inc);
	bool queued = false, uncongested = false;
	unsigned long flags;

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	if (!list_empty(&inc->i_item)) {
		queued = true;
		if (drop) {
			uncongested = rds_recv_rcvbuf_delta(rs, map,
					be32_to_cpu(inc->i_hdr.h_len), false);
			list_del_init(&inc->i_item);
		}
	}
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);

	if (queued && drop)
		rds_inc_put(inc);	/* the queue's reference */
	if (uncongested)
		rds_recv_uncongested(map, rs->rs_bound_port);
	return queued;
}

/**
 * rds_clear_recv_queue - drop every queued message (close)
 * @rs: socket, already SOCK_DEAD
 */
void rds_clear_recv_queue(struct rds_sock *rs)
{
	struct rds_incoming *inc, *tmp;
	bool uncongested = false;
	struct rds_cong_map *map = NULL;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	list_for_each_entry_safe(inc, tmp, &rs->rs_recv_queue, i_item) {
		map = rds_inc_dest_map(inc);
		if (rds_recv_rcvbuf_delta(rs, map,
					  be32_to_cpu(inc->i_hdr.h_len), false))
			uncongested = true;
		list_move_tail(&inc->i_item, &list);
	}
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);

	list_for_each_entry_safe(inc, tmp, &list, i_item) {
		list_del_init(&inc->i_item);
		rds_inc_put(inc);
	}
	if (uncongested && map)
		rds_recv_uncongested(map, rs->rs_bound_port);
}

static int rds_recv_cmsgs(struct rds_incoming *inc, struct msghdr *msg,
			  struct rds_sock *rs)
{
	struct sock *sk = rds_rs_to_sk(rs);
	int ret;

	if (inc->i_rdma_cookie) {
		ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_DEST,
			       sizeof(inc->i_rdma_cookie), &inc->i_rdma_cookie);
		if (ret)
			return ret;
	}

	if (inc->i_rx_tstamp && sock_flag(sk, SOCK_RCVTSTAMP)) {
		struct __kernel_old_timeval tv =
			ns_to_kernel_old_timeval(ktime_to_ns(inc->i_rx_tstamp));

		if (!sock_flag(sk, SOCK_TSTAMP_NEW)) {
			ret = put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_OLD,
				       sizeof(tv), &tv);
		} else {
			struct __kernel_sock_timeval stv = {
				.tv_sec = tv.tv_sec,
				.tv_usec = tv.tv_usec,
			};

			ret = put_cmsg(msg, SOL_SOCKET, SO_TIMESTAMP_NEW,
				       sizeof(stv), &stv);
		}
		if (ret)
			return ret;
	}

	if (rs->rs_rx_traces) {
		struct rds_cmsg_rx_trace t;
		unsigned int i, n = min_t(unsigned int, rs->rs_rx_traces,
					  RDS_MSG_RX_DGRAM_TRACE_MAX);

		memset(&t, 0, sizeof(t));
		inc->i_rx_lat_trace[RDS_MSG_RX_CMSG] = local_clock();
		t.rx_traces = n;
		for (i = 0; i < n; i++) {
			unsigned int j = rs->rs_rx_trace[i];

			if (j >= RDS_MSG_RX_DGRAM_TRACE_MAX)
				continue;
			t.rx_trace_pos[i] = j;
			t.rx_trace[i] = inc->i_rx_lat_trace[j + 1] -
					inc->i_rx_lat_trace[j];
		}
		ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RXPATH_LATENCY,
			       sizeof(t), &t);
		if (ret)
			return ret;
	}
	return 0;
}

/* Report uncongested ports to a monitoring socket. */
static int rds_recv_notify_cong(struct rds_sock *rs, struct msghdr *msg)
{
	unsigned long flags;
	u64 notify;
	int ret;

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	notify = rs->rs_cong_notify;
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);

	ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_CONG_UPDATE, sizeof(notify),
		       &notify);
	if (ret)
		return ret;

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	rs->rs_cong_notify &= ~notify;
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	return 0;
}

static void rds_recv_fill_name(struct msghdr *msg, struct rds_sock *rs,
			       struct rds_incoming *inc)
{
	if (!msg->msg_name)
		return;
	if (ipv6_addr_v4mapped(&inc->i_saddr)) {
		DECLARE_SOCKADDR(struct sockaddr_in *, sin, msg->msg_name);

		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_port = inc->i_hdr.h_sport;
		sin->sin_addr.s_addr = inc->i_saddr.s6_addr32[3];
		msg->msg_namelen = sizeof(*sin);
	} else {
		DECLARE_SOCKADDR(struct sockaddr_in6 *, sin6, msg->msg_name);

		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = inc->i_hdr.h_sport;
		sin6->sin6_addr = inc->i_saddr;
		sin6->sin6_scope_id = rs->rs_bound_scope_id;
		msg->msg_namelen = sizeof(*sin6);
	}
}

/*
 * Busy read: spin up to the socket's busy-read time (SO_BUSY_POLL) for
 * something to receive, yielding the CPU to whoever needs it meanwhile
 * (as napi_busy_loop() does); the time spent comes off *@timeo (the
 * receive timeout, in jiffies).  Process context.  Return: true when
 * something is pending.
 */
static bool rds_recv_busy_wait(struct sock *sk, struct rds_sock *rs,
			       long *timeo)
{
#ifdef CONFIG_NET_RX_BUSY_POLL
	unsigned long start, j0 = jiffies;
	bool found = false;

	if (!READ_ONCE(sk->sk_ll_usec))
		return false;
	start = busy_loop_current_time();
	do {
		if (rds_recv_pending(rs)) {
			found = true;
			break;
		}
		if (need_resched())
			cond_resched();
		else
			cpu_relax();
	} while (!signal_pending(current) && !sk_busy_loop_timeout(sk, start) &&
		 (*timeo == MAX_SCHEDULE_TIMEOUT ||
		  time_before(jiffies, j0 + *timeo)));
	if (*timeo != MAX_SCHEDULE_TIMEOUT)
		*timeo = max_t(long, *timeo - (long)(jiffies - j0), 0);
	return found;
#else
	return false;
#endif
}

int rds_recvmsg(struct socket *sock, struct msghdr *msg, size_t size,
		int msg_flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	int nonblock = msg_flags & MSG_DONTWAIT;
	struct rds_incoming *inc = NULL;
	long timeo, timeo0;
	int ret = 0;

	if (msg_flags & MSG_OOB)
		return 0;
	if (msg_flags & MSG_ERRQUEUE)
		return sock_recv_errqueue(sk, msg, size, SOL_IP, IP_RECVERR);

	timeo = sock_rcvtimeo(sk, nonblock);
	timeo0 = timeo;
	for (;;) {
		/* RDMA notifications first, each alone and without data. */
		if (!list_empty(&rs->rs_notify_queue)) {
			ret = rds_notify_recv(rs, msg);
			if (ret != -EAGAIN)
				break;
			ret = 0;
		}
		if (READ_ONCE(rs->rs_cong_notify)) {
			ret = rds_recv_notify_cong(rs, msg);
			break;
		}

		inc = rds_next_incoming(rs);
		if (!inc) {
			if (nonblock) {
				/* As in-tree: cookies only, without blocking. */
				ret = rds_zcopy_recv(rs, msg) ? 0 : -EAGAIN;
				break;
			}
			if (rds_recv_busy_wait(sk, rs, &timeo))
				continue;
			timeo = wait_event_interruptible_timeout(*sk_sleep(sk),
					rds_recv_pending(rs), timeo);
			if (timeo > 0 || timeo == MAX_SCHEDULE_TIMEOUT)
				continue;
			/*
			 * A signal: -ERESTARTSYS without a receive timeout
			 * (as in-tree), -EINTR with one (signal(7)).
			 */
			ret = timeo ? sock_intr_errno(timeo0) : -ETIMEDOUT;
			break;
		}

		ret = inc->i_conn->c_trans->inc_copy_to_user(inc,
							     &msg->msg_iter);
		if (ret < 0)
			break;

		if (!rds_still_queued(rs, inc, !(msg_flags & MSG_PEEK))) {
			rds_stats_inc(s_recv_deliver_raced);
			iov_iter_revert(&msg->msg_iter, ret);
			rds_inc_put(inc);
			inc = NULL;
			continue;
		}

		if (ret < (int)be32_to_cpu(inc->i_hdr.h_len)) {
			if (msg_flags & MSG_TRUNC)
				ret = be32_to_cpu(inc->i_hdr.h_len);
			msg->msg_flags |= MSG_TRUNC;
		}

		if (rds_recv_cmsgs(inc, msg, rs)) {
			ret = -EFAULT;
			break;
		}
		rds_zcopy_recv(rs, msg);
		rds_stats_inc(s_recv_delivered);
		rds_recv_fill_name(msg, rs, inc);
		break;
	}

	if (inc)
		rds_inc_put(inc);
	return ret;
}

void rds_recv_worker(struct work_struct *work)
{
	struct rds_conn_path *cp = container_of(to_delayed_work(work),
						struct rds_conn_path,
						cp_recv_w);
	struct rds_transport *trans = cp->cp_conn->c_trans;
	int ret;

	if (!trans->recv_path || !rds_conn_path_up(cp) ||
	    rds_conn_path_destroy_pending(cp))
		return;
	ret = trans->recv_path(cp);
	if (ret == -ENOMEM || ret == -EAGAIN) {
		rds_stats_inc(s_recv_delayed_retry);
		queue_delayed_work(rds_wq, &cp->cp_recv_w, 2);
	}
}
