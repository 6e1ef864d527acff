// SPDX-License-Identifier: GPL-2.0
/*
 * connection.c - the connection table and the path state machine.
 *
 * Theory of operation
 * ===================
 *
 * Connections live in a hash table keyed by (netns, local address, remote
 * address, interface, TOS, transport).  Lookups are RCU and lock-free; the
 * table lock is taken only to insert or remove, i.e. when a connection is
 * made or destroyed, never per message.  A socket caches the connection it
 * last sent on, so the common sendmsg() does not even hash.
 *
 * A destination that is an address of this host (RTN_LOCAL for IPv4,
 * ipv6_chk_addr() for IPv6) gets a loop-transport connection, so a local
 * peer needs no RDMA loopback QP, unless the socket pinned its transport
 * with SO_RDS_TRANSPORT: then it is a connection of that transport through
 * the device's loopback, as in-tree, if that transport can serve the
 * address (127/8 and ::1 always use loop).  An address sending to itself
 * always gets loop: both ends would be the one connection.
 *
 * The state machine is in rds.h.  The workers (threads.c, send.c) run on
 * rds_wq; one path's connect, send, receive and shutdown workers are
 * separate work items, so paths never wait for each other.  Shutdown runs
 * with cp_cm_lock held, waits until no sender is inside rds_send_xmit(),
 * asks the transport to quiesce, puts unacknowledged messages back on the
 * send queue and, when something is queued, reconnects with a randomised
 * exponential backoff bounded by net.rds.reconnect_max_delay_ms.  A path
 * with nothing to send stays down until the next sendmsg() (or until the
 * peer connects): no reconnect storms between idle peers.
 *
 * Lifetime: a connection is destroyed only when its transport unregisters,
 * when its netns exits, or when rds.ko unloads.  Sockets pin the module of
 * their transport, and the loop transport lives in rds.ko, so a socket never
 * sees its cached connection go away.  Destruction cancels the workers,
 * shuts the paths down, drops every queued message (telling its socket),
 * frees the transport's state and frees the connection after a grace
 * period.
 *
 * Drop reasons: rds_conn_path_drop_reason() records why a path went down
 * (enum rds_drop_reason, a number and a text from the transport), but only
 * from the call that moved the path to ERROR, so the first cause of a
 * teardown wins over its consequences (flushed completions, the peer's
 * disconnect).  The path also counts its drops and its reconnects (UP
 * again after a drop), and stats.c counts both by reason.  All of it is
 * written by the transition's winner only and read locklessly by debugfs
 * (rds/connections, rds_conn_debugfs_show()).  Every state change fires
 * the rds_conn_state tracepoint, every drop request rds_conn_drop.
 */
#include <linux/kernel.h>
#include <linux/delay.h>
#include <linux/slab.h>
#include <linux/jhash.h>
#include <linux/random.h>
#include <linux/timekeeping.h>
#include <linux/seq_file.h>
#include <linux/in.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <net/route.h>

#include "rds.h"
#include <trace/events/rds.h>

#define RDS_CONN_HASH_BITS	10
#define RDS_CONN_HASH_SIZE	(1 << RDS_CONN_HASH_BITS)

static struct hlist_head rds_conn_hash[RDS_CONN_HASH_SIZE];
static DEFINE_SPINLOCK(rds_conn_lock);
static u32 rds_conn_hash_seed __read_mostly;

/*
 * Test (0644, ours; 0 = off): a drop that is not the connection's destroy
 * busy-waits this long between moving the path to ERROR and queuing its
 * shutdown, so that a destroy racing with it (module unload while the
 * peer disconnects) meets the window (conn_drop_delay_ms).
 */
static unsigned int rds_conn_drop_delay_ms;
RDS_PARAM_UINT(conn_drop_delay_ms, rds_conn_drop_delay_ms, 0, 500, 0644,
	       " Test: wait this long between a drop and its queued shutdown (0..500 ms, default 0)");

static struct hlist_head *rds_conn_bucket(const struct net *net,
					  const struct in6_addr *laddr,
					  const struct in6_addr *faddr)
{
	u32 h;

	h = jhash2((const u32 *)laddr, 4, rds_conn_hash_seed);
	h = jhash2((const u32 *)faddr, 4, h ^ (u32)(unsigned long)net);
	return &rds_conn_hash[h & (RDS_CONN_HASH_SIZE - 1)];
}

static struct rds_connection *
rds_conn_lookup(struct hlist_head *head, struct net *net,
		const struct in6_addr *laddr, const struct in6_addr *faddr,
		struct rds_transport *trans, u8 tos, int dev_if)
{
	struct rds_connection *conn;

	hlist_for_each_entry_rcu(conn, head, c_hash_node) {
		if (ipv6_addr_equal(&conn->c_faddr, faddr) &&
		    ipv6_addr_equal(&conn->c_laddr, laddr) &&
		    conn->c_trans == trans && conn->c_tos == tos &&
		    conn->c_dev_if == dev_if && net_eq(rds_conn_net(conn), net))
			return conn;
	}
	return NULL;
}

bool rds_addr_is_local(struct net *net, const struct in6_addr *addr,
		       int dev_if)
{
	if (ipv6_addr_v4mapped(addr))
		return inet_addr_type(net, addr->s6_addr32[3]) == RTN_LOCAL;
#if IS_ENABLED(CONFIG_IPV6)
	if (ipv6_mod_enabled()) {
		struct net_device *dev = NULL;
		bool local;

		rcu_read_lock();
		if (dev_if)
			dev = dev_get_by_index_rcu(net, dev_if);
		local = ipv6_chk_addr(net, addr, dev, 0);
		rcu_read_unlock();
		return local;
	}
#endif
	return false;
}

/* 2020-01-01 00:00:00 UTC: a wall clock before it was never set. */
#define RDS_SEQ_CLOCK_SANE	1577836800LL

/**
 * rds_conn_first_seq - sequence number of a new path's first message
 *
 * A peer's receiver keeps the next sequence number it expects from us
 * (cp_next_rx_seq) for as long as its connection object lives, across our
 * module reloads and connection objects, and drops a RETRANSMITTED message
 * below it as an old duplicate (rds_recv_incoming()).  Were a new path to
 * number from 1, the retransmissions of its first messages, sent before
 * any fresh message of ours had brought that number down, would be dropped
 * there and ACKed: lost without an error.  So a path starts at the wall
 * clock in nanoseconds, above every number an earlier path of this node
 * can have reached (one message per nanosecond is out of reach), unless
 * the clock was stepped back by more than the time in between.  Any u64
 * start is valid on the wire: in-tree receivers compare sequence numbers
 * as u64 and take the first one as it comes.
 *
 * Return: a sequence number, never 0 (ACK-only headers carry 0).
 */
static u64 rds_conn_first_seq(void)
{
	s64 ns = ktime_get_real_ns();

	/* A clock never set (no RTC, no NTP yet) protects nothing: say so. */
	if (ns < RDS_SEQ_CLOCK_SANE * NSEC_PER_SEC)
		pr_warn_once("RDS: the wall clock reads before 2020: a peer may drop this node's first retransmissions after a module reload as old\n");
	return ns > 0 ? ns : 1;
}

static void rds_conn_path_init(struct rds_connection *conn,
			       struct rds_conn_path *cp, unsigned int index)
{
	cp->cp_conn = conn;
	cp->cp_index = index;
	atomic_set(&cp->cp_state, RDS_CONN_DOWN);
	spin_lock_init(&cp->cp_lock);
	INIT_LIST_HEAD(&cp->cp_send_queue);
	INIT_LIST_HEAD(&cp->cp_retrans);
	INIT_LIST_HEAD(&cp->cp_reg_item);
	cp->cp_next_tx_seq = rds_conn_first_seq();
	cp->cp_next_rx_seq = 0;
	cp->cp_unacked_packets = READ_ONCE(rds_sysctl_max_unacked_packets);
	cp->cp_unacked_bytes = READ_ONCE(rds_sysctl_max_unacked_bytes);
	INIT_DELAYED_WORK(&cp->cp_send_w, rds_send_worker);
	INIT_DELAYED_WORK(&cp->cp_recv_w, rds_recv_worker);
	INIT_DELAYED_WORK(&cp->cp_conn_w, rds_connect_worker);
	INIT_WORK(&cp->cp_down_w, rds_shutdown_worker);
	spin_lock_init(&cp->cp_drop_lock);
	mutex_init(&cp->cp_cm_lock);
	init_waitqueue_head(&cp->cp_waitq);
}

static struct rds_connection *
__rds_conn_create(struct net *net, const struct in6_addr *laddr,
		  const struct in6_addr *faddr, struct rds_transport *trans,
		  u8 tos, int dev_if, gfp_t gfp, bool outgoing, bool pinned)
{
	struct rds_connection *conn, *found;
	struct hlist_head *head;
	bool loop = false, check = false;
	unsigned long flags;
	unsigned int i;
	int ret;

	/*
	 * A pinned socket keeps its transport for another local address
	 * (not a loopback one); everything else local goes through loop.
	 */
	if (outgoing && trans && rds_addr_is_local(net, faddr, dev_if)) {
		if (!pinned || ipv6_addr_equal(laddr, faddr) ||
		    rds_addr_is_loopback(faddr))
			trans = &rds_loop_transport;
		else
			check = trans != &rds_loop_transport;
	}
	if (!trans)
		return ERR_PTR(-EADDRNOTAVAIL);
	head = rds_conn_bucket(net, laddr, faddr);
again:
	if (trans == &rds_loop_transport)
		loop = true;
	rcu_read_lock();
	found = rds_conn_lookup(head, net, laddr, faddr, trans, tos, dev_if);
	rcu_read_unlock();
	if (found)
		return found;
	if (check) {
		/*
		 * A new pinned connection to a local address: only if the
		 * transport can serve that address (it binds it: process
		 * context, sendmsg()); if it cannot, loop.
		 */
		might_sleep();
		check = false;
		ret = trans->laddr_check ?
		      trans->laddr_check(net, faddr, dev_if) : -EADDRNOTAVAIL;
		if (ret == -EADDRNOTAVAIL) {
			trans = &rds_loop_transport;
			goto again;
		}
		if (ret)
			return ERR_PTR(ret);
	}

	if (rds_should_fail(RDS_FAULT_CONN))
		return ERR_PTR(-ENOMEM);
	conn = kzalloc(sizeof(*conn), gfp);
	if (!conn)
		return ERR_PTR(-ENOMEM);
	conn->c_laddr = *laddr;
	conn->c_faddr = *faddr;
	conn->c_dev_if = dev_if;
	conn->c_tos = tos;
	conn->c_isv6 = !ipv6_addr_v4mapped(laddr);
	conn->c_loopback = loop;
	conn->c_trans = trans;
	write_pnet(&conn->c_net, net);
	conn->c_version = RDS_PROTOCOL_VERSION;
	conn->c_npaths = 1;
	INIT_LIST_HEAD(&conn->c_cong_item);
	for (i = 0; i < RDS_MAX_PATHS; i++)
		rds_conn_path_init(conn, &conn->c_path[i], i);

	conn->c_lcong = rds_cong_from_addr(net, laddr, gfp);
	conn->c_fcong = rds_cong_from_addr(net, faddr, gfp);
	if (!conn->c_lcong || !conn->c_fcong) {
		kfree(conn);
		return ERR_PTR(-ENOMEM);
	}

	if (trans->conn_alloc) {
		ret = trans->conn_alloc(conn, gfp);
		if (ret) {
			kfree(conn);
			return ERR_PTR(ret);
		}
	}

	spin_lock_irqsave(&rds_conn_lock, flags);
	found = rds_conn_lookup(head, net, laddr, faddr, trans, tos, dev_if);
	if (!found)
		hlist_add_head_rcu(&conn->c_hash_node, head);
	spin_unlock_irqrestore(&rds_conn_lock, flags);

	if (found) {
		if (trans->conn_free)
			for (i = 0; i < RDS_MAX_PATHS; i++)
				trans->conn_free(conn->c_path[i].cp_transport_data);
		kfree(conn);
		return found;
	}
	if (!loop)
		rds_cong_add_conn(conn);
	return conn;
}

struct rds_connection *rds_conn_create(struct net *net,
				       const struct in6_addr *laddr,
				       const struct in6_addr *faddr,
				       struct rds_transport *trans, u8 tos,
				       int dev_if, gfp_t gfp)
{
	return __rds_conn_create(net, laddr, faddr, trans, tos, dev_if, gfp,
				 false, false);
}
EXPORT_SYMBOL_GPL(rds_conn_create);

struct rds_connection *rds_conn_create_outgoing(struct net *net,
						const struct in6_addr *laddr,
						const struct in6_addr *faddr,
						struct rds_transport *trans,
						bool pinned, u8 tos, int dev_if,
						gfp_t gfp)
{
	return __rds_conn_create(net, laddr, faddr, trans, tos, dev_if, gfp,
				 true, pinned);
}
EXPORT_SYMBOL_GPL(rds_conn_create_outgoing);

/* The path came UP: a reconnect if it was ever dropped before. */
static void rds_conn_path_count_reconnect(struct rds_conn_path *cp)
{
	int reason = READ_ONCE(cp->cp_drop_reason);

	if (reason == RDS_DROP_NONE)
		return;
	WRITE_ONCE(cp->cp_reconnects, cp->cp_reconnects + 1);
	rds_stats_conn_reconnect(reason);
}

void rds_connect_path_complete(struct rds_conn_path *cp, int curr)
{
	struct rds_connection *conn = cp->cp_conn;

	if (!rds_conn_path_transition(cp, curr, RDS_CONN_UP)) {
		rds_conn_path_drop(cp, false);
		return;
	}
	WRITE_ONCE(cp->cp_reconnect_jiffies, 0);
	rds_conn_path_count_reconnect(cp);
	clear_bit(RDS_LL_SEND_FULL, &cp->cp_flags);
	/*
	 * Tell the peer which of our ports are congested, even none: what it
	 * holds may be stale (cong.c).
	 */
	if (!conn->c_loopback)
		set_bit(RDS_CONG_UPDATE_QUEUED, &cp->cp_flags);
	if (!rds_conn_path_destroy_pending(cp)) {
		mod_delayed_work(rds_wq, &cp->cp_send_w, 0);
		mod_delayed_work(rds_wq, &cp->cp_recv_w, 0);
	}
}
EXPORT_SYMBOL_GPL(rds_connect_path_complete);

void rds_connect_complete(struct rds_connection *conn)
{
	rds_connect_path_complete(rds_conn_path0(conn), RDS_CONN_CONNECTING);
}
EXPORT_SYMBOL_GPL(rds_connect_complete);

/*
 * Move @cp to ERROR and queue its shutdown.  ERROR means "cp_down_w is
 * queued or running": a later drop, the destroy's included, does nothing
 * more and relies on flushing cp_down_w.  So the winner queues the work
 * before anyone can read ERROR, under cp_drop_lock (a drop that finds
 * the path in ERROR takes the lock first, so it cannot run between the
 * transition and the queue_work()).  Any context.
 */
static void __rds_conn_path_drop(struct rds_conn_path *cp, bool destroy,
				 int reason, int detail, const char *why)
{
	bool dropped = false;
	unsigned long flags;
	unsigned int delay;
	int state;

	if (destroy)
		set_bit(RDS_DESTROY_PENDING, &cp->cp_flags);
	/* Test knob: only drops from process context wait (irqs off). */
	delay = destroy || in_interrupt() ? 0 : READ_ONCE(rds_conn_drop_delay_ms);
	spin_lock_irqsave(&cp->cp_drop_lock, flags);
	for (;;) {
		state = rds_conn_path_state(cp);
		/* Already shutting down, or nothing to shut down. */
		if (state == RDS_CONN_DISCONNECTING ||
		    state == RDS_CONN_ERROR)
			break;
		if (state == RDS_CONN_DOWN && !destroy)
			break;
		if (rds_conn_path_transition(cp, state, RDS_CONN_ERROR)) {
			dropped = true;
			break;
		}
	}
	trace_rds_conn_drop(cp, reason, detail, why, dropped);
	if (dropped) {
		/* Only the transition's winner writes; debugfs reads locklessly. */
		WRITE_ONCE(cp->cp_drop_reason, reason);
		WRITE_ONCE(cp->cp_drop_detail, detail);
		WRITE_ONCE(cp->cp_drop_why, why);
		WRITE_ONCE(cp->cp_drop_jiffies, jiffies);
		WRITE_ONCE(cp->cp_drops, cp->cp_drops + 1);
		rds_stats_conn_drop(reason);
		rds_stats_inc(s_conn_reset);
		/* Test: widen the window a lockless pair would leave open. */
		if (unlikely(delay))
			mdelay(delay);
		queue_work(rds_wq, &cp->cp_down_w);
	}
	spin_unlock_irqrestore(&cp->cp_drop_lock, flags);
}

void rds_conn_path_drop(struct rds_conn_path *cp, bool destroy)
{
	if (destroy)
		__rds_conn_path_drop(cp, true, RDS_DROP_LOCAL_SHUTDOWN, 0,
				     "connection destroyed");
	else
		__rds_conn_path_drop(cp, false, RDS_DROP_OTHER, 0, NULL);
}
EXPORT_SYMBOL_GPL(rds_conn_path_drop);

void rds_conn_path_drop_reason(struct rds_conn_path *cp, int reason,
			       int detail, const char *why)
{
	if (reason <= RDS_DROP_NONE || reason >= RDS_DROP_NR)
		reason = RDS_DROP_OTHER;
	__rds_conn_path_drop(cp, false, reason, detail, why);
}
EXPORT_SYMBOL_GPL(rds_conn_path_drop_reason);

void rds_conn_drop(struct rds_connection *conn)
{
	rds_conn_path_drop(rds_conn_path0(conn), false);
}
EXPORT_SYMBOL_GPL(rds_conn_drop);

void rds_conn_path_error(struct rds_conn_path *cp, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_warn_ratelimited("RDS: %pI6c -> %pI6c tos %u: %pV",
			    &cp->cp_conn->c_laddr, &cp->cp_conn->c_faddr,
			    cp->cp_conn->c_tos, &vaf);
	va_end(args);
	rds_conn_path_drop_reason(cp, RDS_DROP_XMIT_ERROR, 0, "xmit failed");
}
EXPORT_SYMBOL_GPL(rds_conn_path_error);

void rds_conn_path_connect_if_down(struct rds_conn_path *cp)
{
	if (rds_conn_path_state(cp) != RDS_CONN_DOWN ||
	    rds_conn_path_destroy_pending(cp))
		return;
	if (!test_and_set_bit(RDS_RECONNECT_PENDING, &cp->cp_flags))
		queue_delayed_work(rds_wq, &cp->cp_conn_w, 0);
}
EXPORT_SYMBOL_GPL(rds_conn_path_connect_if_down);

void rds_queue_reconnect(struct rds_conn_path *cp)
{
	unsigned long cur, max, delay = 0;

	if (rds_conn_path_destroy_pending(cp))
		return;
	if (test_and_set_bit(RDS_RECONNECT_PENDING, &cp->cp_flags))
		return;

	max = max(READ_ONCE(rds_sysctl_reconnect_max_jiffies), 1UL);
	cur = READ_ONCE(cp->cp_reconnect_jiffies);
	if (!cur) {
		/* First attempt after a good connection: right away. */
		cur = max(READ_ONCE(rds_sysctl_reconnect_min_jiffies), 1UL);
	} else {
		delay = get_random_u32_below(min(cur, (unsigned long)U32_MAX));
		cur = min(cur * 2, max);
	}
	WRITE_ONCE(cp->cp_reconnect_jiffies, min(cur, max));
	queue_delayed_work(rds_wq, &cp->cp_conn_w, delay);
}
EXPORT_SYMBOL_GPL(rds_queue_reconnect);

void rds_connect_worker(struct work_struct *work)
{
	struct rds_conn_path *cp = container_of(to_delayed_work(work),
						struct rds_conn_path,
						cp_conn_w);
	struct rds_transport *trans = cp->cp_conn->c_trans;
	int ret;

	clear_bit(RDS_RECONNECT_PENDING, &cp->cp_flags);
	if (rds_conn_path_destroy_pending(cp))
		return;
	mutex_lock(&cp->cp_cm_lock);
	if (!rds_conn_path_transition(cp, RDS_CONN_DOWN, RDS_CONN_CONNECTING)) {
		mutex_unlock(&cp->cp_cm_lock);
		return;
	}
	/* A transport that cannot connect (yet) behaves like a dead peer. */
	ret = trans->conn_path_connect ? trans->conn_path_connect(cp) :
					 -EOPNOTSUPP;
	mutex_unlock(&cp->cp_cm_lock);
	if (ret) {
		/* Count the failure in the backoff and try again later. */
		if (!READ_ONCE(cp->cp_reconnect_jiffies))
			WRITE_ONCE(cp->cp_reconnect_jiffies,
				   max(READ_ONCE(rds_sysctl_reconnect_min_jiffies), 1UL));
		rds_conn_path_drop_reason(cp, RDS_DROP_CONNECT_FAILED, ret,
					  "connect failed");
	}
}

static bool rds_conn_path_has_work(struct rds_conn_path *cp)
{
	unsigned long flags;
	bool ret;

	spin_lock_irqsave(&cp->cp_lock, flags);
	ret = !list_empty(&cp->cp_send_queue) || !list_empty(&cp->cp_retrans);
	spin_unlock_irqrestore(&cp->cp_lock, flags);
	return ret;
}

/* Shut a path down; called by the shutdown worker. */
static void rds_conn_path_shutdown(struct rds_conn_path *cp)
{
	struct rds_connection *conn = cp->cp_conn;
	struct rds_message *rm;

	mutex_lock(&cp->cp_cm_lock);
	if (!rds_conn_path_transition(cp, RDS_CONN_ERROR,
				      RDS_CONN_DISCONNECTING)) {
		mutex_unlock(&cp->cp_cm_lock);
		return;
	}
	/* Senders see DISCONNECTING and stop; wait for the one inside. */
	wait_event(cp->cp_waitq, !test_bit(RDS_IN_XMIT, &cp->cp_flags));

	if (conn->c_trans->conn_path_shutdown)
		conn->c_trans->conn_path_shutdown(cp);

	rm = cp->cp_xmit_rm;
	cp->cp_xmit_rm = NULL;
	if (rm)
		rds_message_put(rm);
	rds_send_path_reset(cp);
	clear_bit(RDS_LL_SEND_FULL, &cp->cp_flags);

	/*
	 * A drop that raced with us found DISCONNECTING and did nothing:
	 * the transport was torn down anyway, so DOWN is right.
	 */
	atomic_set(&cp->cp_state, RDS_CONN_DOWN);
	if (tracepoint_enabled(rds_conn_state))
		rds_trace_conn_state(cp, RDS_CONN_DISCONNECTING, RDS_CONN_DOWN);
	mutex_unlock(&cp->cp_cm_lock);
	wake_up_all(&cp->cp_waitq);

	if (!rds_conn_path_destroy_pending(cp) && rds_conn_path_has_work(cp))
		rds_queue_reconnect(cp);
}

void rds_shutdown_worker(struct work_struct *work)
{
	struct rds_conn_path *cp = container_of(work, struct rds_conn_path,
						cp_down_w);

	rds_conn_path_shutdown(cp);
}

/*
 * The path must be DOWN and its shutdown finished before the transport
 * frees its half.  The destroy's drop and flush make it so: a drop that
 * finds ERROR knows the shutdown is queued (__rds_conn_path_drop()), and
 * no drop leaves DOWN once DESTROY_PENDING is set.  This checks it; should
 * it ever not hold, it warns and waits (bounded, about 10 s) rather than
 * let conn_free free what a shutdown still uses.
 *
 * Return: true when the path is quiet.
 */
static bool rds_conn_path_quiesce(struct rds_conn_path *cp)
{
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		int state = rds_conn_path_state(cp);

		if (state == RDS_CONN_DOWN && !work_busy(&cp->cp_down_w))
			return true;
		WARN_ONCE(!tries, "RDS: path %u still in state %d after its destroy\n",
			  cp->cp_index, state);
		rds_conn_path_drop(cp, true);
		flush_work(&cp->cp_down_w);
		if (rds_conn_path_state(cp) != RDS_CONN_DOWN)
			msleep(10);
	}
	return false;
}

/*
 * First step of a destroy: no path of @conn connects again, and every one
 * is dropped, its shutdown queued.  rds_conn_bury() takes this step for
 * every connection before it waits for any, so their shutdowns (each of
 * which may wait for its peer's disconnect) run side by side.
 */
static void rds_conn_start_destroy(struct rds_connection *conn)
{
	unsigned int i;

	for (i = 0; i < RDS_MAX_PATHS; i++) {
		struct rds_conn_path *cp = &conn->c_path[i];

		set_bit(RDS_DESTROY_PENDING, &cp->cp_flags);
		/* Registrations kick no more (later kicks see the bit). */
		rds_rdma_path_unwait(cp);
		cancel_delayed_work_sync(&cp->cp_conn_w);
		rds_conn_path_drop(cp, true);
	}
}

/*
 * Second step, once rds_conn_start_destroy() ran: wait for the shutdowns
 * and free.  Not again the first step: a path whose shutdown is done is
 * DOWN, and a destroy's drop would take it through another one.
 */
static void rds_conn_destroy_one(struct rds_connection *conn)
{
	struct rds_transport *trans = conn->c_trans;
	bool quiet = true;
	unsigned int i;

	for (i = 0; i < RDS_MAX_PATHS; i++) {
		struct rds_conn_path *cp = &conn->c_path[i];

		flush_work(&cp->cp_down_w);
		cancel_delayed_work_sync(&cp->cp_send_w);
		cancel_delayed_work_sync(&cp->cp_recv_w);
		cancel_delayed_work_sync(&cp->cp_conn_w);
		if (!rds_conn_path_quiesce(cp)) {
			/* Leak it rather than free it under a shutdown. */
			quiet = false;
			continue;
		}
		/* A send worker that ran meanwhile may have parked it again. */
		rds_rdma_path_unwait(cp);
		rds_send_path_purge(cp);
		if (trans->conn_free)
			trans->conn_free(cp->cp_transport_data);
		cp->cp_transport_data = NULL;
	}
	if (!quiet) {
		pr_err("RDS: connection %pI6c->%pI6c never went down; leaking it\n",
		       &conn->c_laddr, &conn->c_faddr);
		return;
	}
	if (!conn->c_loopback)
		rds_cong_remove_conn(conn);
	kfree_rcu(conn, c_rcu);
}

/*
 * Unhash every connection matching @match and destroy them.  The caller
 * guarantees no new matching connection can be created meanwhile (the
 * transport is off the list, the netns is dying, the module is leaving).
 */
static void rds_conn_bury(bool (*match)(struct rds_connection *, const void *),
			  const void *arg)
{
	struct rds_connection *conn, *next;
	struct hlist_node *tmp;
	unsigned long flags;
	LIST_HEAD(dead);
	unsigned int i;

	spin_lock_irqsave(&rds_conn_lock, flags);
	for (i = 0; i < RDS_CONN_HASH_SIZE; i++) {
		hlist_for_each_entry_safe(conn, tmp, &rds_conn_hash[i],
					  c_hash_node) {
			if (!match(conn, arg))
				continue;
			hlist_del_init_rcu(&conn->c_hash_node);
			list_add_tail(&conn->c_destroy_item, &dead);
		}
	}
	spin_unlock_irqrestore(&rds_conn_lock, flags);
	if (list_empty(&dead))
		return;
	synchronize_rcu();
	list_for_each_entry(conn, &dead, c_destroy_item)
		rds_conn_start_destroy(conn);
	list_for_each_entry_safe(conn, next, &dead, c_destroy_item) {
		list_del(&conn->c_destroy_item);
		rds_conn_destroy_one(conn);
	}
}

static bool rds_conn_match_trans(struct rds_connection *conn, const void *arg)
{
	return conn->c_trans == arg;
}

static bool rds_conn_match_net(struct rds_connection *conn, const void *arg)
{
	return net_eq(rds_conn_net(conn), arg);
}

static bool rds_conn_match_all(struct rds_connection *conn, const void *arg)
{
	return true;
}

/**
 * rds_conn_destroy_trans - destroy every connection of a transport
 * @trans: the transport, already off the transport list
 *
 * Process context, sleeps.
 */
void rds_conn_destroy_trans(struct rds_transport *trans)
{
	rds_conn_bury(rds_conn_match_trans, trans);
}

/* ------------------------------------------------------------------------
 * RDS_INFO_* tables of connections and their queues (see info.c)
 * ------------------------------------------------------------------------
 */

/**
 * rds_info_for_each_conn - call @visit for every connection of the caller
 * @it: the pass (its namespace selects the connections)
 * @visit: called under rcu_read_lock() for each connection; produces zero
 *	or more items; must not sleep
 *
 * Connections cannot be freed during the walk (RCU); their paths and
 * transport halves stay valid while the transport is registered.
 */
void rds_info_for_each_conn(struct rds_info_iter *it,
			    void (*visit)(struct rds_info_iter *it,
					  struct rds_connection *conn))
{
	struct net *net = rds_info_net(it);
	struct rds_connection *conn;
	unsigned int i;

	rcu_read_lock();
	for (i = 0; i < RDS_CONN_HASH_SIZE; i++)
		hlist_for_each_entry_rcu(conn, &rds_conn_hash[i], c_hash_node)
			if (net_eq(rds_conn_net(conn), net))
				visit(it, conn);
	rcu_read_unlock();
}
EXPORT_SYMBOL_GPL(rds_info_for_each_conn);

/* The in-tree flags: sending, connecting, connected (path 0 only). */
static u8 rds_info_conn_flags(struct rds_conn_path *cp)
{
	int state = rds_conn_path_state(cp);
	u8 flags = 0;

	if (test_bit(RDS_IN_XMIT, &cp->cp_flags))
		flags |= RDS_INFO_CONNECTION_FLAG_SENDING;
	if (state == RDS_CONN_CONNECTING)
		flags |= RDS_INFO_CONNECTION_FLAG_CONNECTING;
	if (state == RDS_CONN_UP)
		flags |= RDS_INFO_CONNECTION_FLAG_CONNECTED;
	return flags;
}

static void rds_info_conn_cmn(struct rds_info_iter *it,
			      struct rds_connection *conn, bool v6)
{
	struct rds_conn_path *cp = rds_conn_path0(conn);
	unsigned long flags;
	u64 tx;

	spin_lock_irqsave(&cp->cp_lock, flags);
	tx = cp->cp_next_tx_seq;
	spin_unlock_irqrestore(&cp->cp_lock, flags);

	if (v6) {
		struct rds6_info_connection *c = rds_info_item_begin(it);

		c->next_tx_seq = tx;
		c->next_rx_seq = READ_ONCE(cp->cp_next_rx_seq);
		c->laddr = conn->c_laddr;
		c->faddr = conn->c_faddr;
		strscpy((char *)c->transport, conn->c_trans->t_name,
			sizeof(c->transport));
		c->flags = rds_info_conn_flags(cp);
	} else {
		struct rds_info_connection *c;

		if (conn->c_isv6)
			return;
		c = rds_info_item_begin(it);
		c->next_tx_seq = tx;
		c->next_rx_seq = READ_ONCE(cp->cp_next_rx_seq);
		c->laddr = conn->c_laddr.s6_addr32[3];
		c->faddr = conn->c_faddr.s6_addr32[3];
		strscpy((char *)c->transport, conn->c_trans->t_name,
			sizeof(c->transport));
		c->flags = rds_info_conn_flags(cp);
		c->tos = conn->c_tos;
	}
	rds_info_item_end(it);
}

static void rds_info_conn_v4(struct rds_info_iter *it,
			     struct rds_connection *conn)
{
	rds_info_conn_cmn(it, conn, false);
}

static void rds_info_conn_v6(struct rds_info_iter *it,
			     struct rds_connection *conn)
{
	rds_info_conn_cmn(it, conn, true);
}

/* Messages on a path's send queue (@retrans false) or retransmit list. */
static void rds_info_conn_msgs(struct rds_info_iter *it,
			       struct rds_connection *conn, bool retrans,
			       bool v6)
{
	struct rds_conn_path *cp = rds_conn_path0(conn);
	struct rds_message *rm;
	struct list_head *list;
	unsigned long flags;

	if (!v6 && conn->c_isv6)
		return;
	list = retrans ? &cp->cp_retrans : &cp->cp_send_queue;
	spin_lock_irqsave(&cp->cp_lock, flags);
	list_for_each_entry(rm, list, m_conn_item)
		rds_info_message(it, &rm->m_inc.i_hdr, &conn->c_laddr,
				 &conn->c_faddr, rm->m_inc.i_hdr.h_sport,
				 rm->m_inc.i_hdr.h_dport, conn->c_tos, v6);
	spin_unlock_irqrestore(&cp->cp_lock, flags);
}

static void rds_info_send_v4(struct rds_info_iter *it,
			     struct rds_connection *conn)
{
	rds_info_conn_msgs(it, conn, false, false);
}

static void rds_info_send_v6(struct rds_info_iter *it,
			     struct rds_connection *conn)
{
	rds_info_conn_msgs(it, conn, false, true);
}

static void rds_info_retrans_v4(struct rds_info_iter *it,
				struct rds_connection *conn)
{
	rds_info_conn_msgs(it, conn, true, false);
}

static void rds_info_retrans_v6(struct rds_info_iter *it,
				struct rds_connection *conn)
{
	rds_info_conn_msgs(it, conn, true, true);
}

static void rds_info_conns(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_conn_v4);
}

static void rds6_info_conns(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_conn_v6);
}

static void rds_info_send(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_send_v4);
}

static void rds6_info_send(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_send_v6);
}

static void rds_info_retrans(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_retrans_v4);
}

static void rds6_info_retrans(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_info_retrans_v6);
}

static const struct {
	int		optname;
	size_t		each;
	rds_info_fn	fn;
} rds_conn_info_tables[] = {
	{ RDS_INFO_CONNECTIONS, sizeof(struct rds_info_connection),
	  rds_info_conns },
	{ RDS6_INFO_CONNECTIONS, sizeof(struct rds6_info_connection),
	  rds6_info_conns },
	{ RDS_INFO_SEND_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_send },
	{ RDS6_INFO_SEND_MESSAGES, sizeof(struct rds6_info_message),
	  rds6_info_send },
	{ RDS_INFO_RETRANS_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_retrans },
	{ RDS6_INFO_RETRANS_MESSAGES, sizeof(struct rds6_info_message),
	  rds6_info_retrans },
};

void rds_conn_info_exit(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rds_conn_info_tables); i++)
		rds_info_unregister(rds_conn_info_tables[i].optname,
				    rds_conn_info_tables[i].fn);
}

int rds_conn_info_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rds_conn_info_tables); i++) {
		ret = rds_info_register(rds_conn_info_tables[i].optname,
					rds_conn_info_tables[i].each,
					rds_conn_info_tables[i].fn);
		if (ret) {
			rds_conn_info_exit();
			return ret;
		}
	}
	return 0;
}

static void __net_exit rds_conn_net_exit(struct net *net)
{
	rds_conn_bury(rds_conn_match_net, net);
}

static struct pernet_operations rds_conn_net_ops = {
	.exit = rds_conn_net_exit,
};

static const char *const rds_conn_state_names[] = {
	[RDS_CONN_DOWN]		 = "DOWN",
	[RDS_CONN_CONNECTING]	 = "CONNECTING",
	[RDS_CONN_DISCONNECTING] = "DISCONNECTING",
	[RDS_CONN_UP]		 = "UP",
	[RDS_CONN_ERROR]	 = "ERROR",
};

static void rds_conn_show_addr(struct seq_file *m, const struct in6_addr *a)
{
	if (ipv6_addr_v4mapped(a))
		seq_printf(m, "%pI4", &a->s6_addr32[3]);
	else
		seq_printf(m, "%pI6c", a);
}

static void rds_conn_path_show(struct seq_file *m, struct rds_conn_path *cp)
{
	struct rds_connection *conn = cp->cp_conn;
	int state = rds_conn_path_state(cp);
	int reason = READ_ONCE(cp->cp_drop_reason);
	const char *why = READ_ONCE(cp->cp_drop_why);

	rds_conn_show_addr(m, &conn->c_laddr);
	seq_puts(m, " ");
	rds_conn_show_addr(m, &conn->c_faddr);
	seq_printf(m,
		   " tos=%u netns=%u trans=%s state=%s drops=%lu reconnects=%lu last_drop=%s",
		   conn->c_tos, rds_conn_net(conn)->ns.inum,
		   conn->c_trans->t_name,
		   state >= 0 && state < ARRAY_SIZE(rds_conn_state_names) ?
		   rds_conn_state_names[state] : "?",
		   READ_ONCE(cp->cp_drops), READ_ONCE(cp->cp_reconnects),
		   rds_drop_reason_name(reason));
	if (reason != RDS_DROP_NONE)
		seq_printf(m, " detail=%d age=%lus why=\"%s\"",
			   READ_ONCE(cp->cp_drop_detail),
			   (jiffies - READ_ONCE(cp->cp_drop_jiffies)) / HZ,
			   why ?: "");
	seq_putc(m, '\n');
}

/**
 * rds_conn_debugfs_show - list every path (debugfs "connections")
 * @m: the seq_file
 *
 * One line per path of every network namespace, in table order: the file
 * is root's and global, so each line names its namespace by inode number
 * (netns=, what /proc/PID/ns/net links to; the netns outlives the line,
 * its exit destroys its connections first).  Lockless (RCU): the counters
 * are read without a snapshot.  A connection being destroyed is already
 * off the table, and a transport's strings outlive its connections.
 */
void rds_conn_debugfs_show(struct seq_file *m)
{
	struct rds_connection *conn;
	unsigned int i, p;

	rcu_read_lock();
	for (i = 0; i < RDS_CONN_HASH_SIZE; i++) {
		hlist_for_each_entry_rcu(conn, &rds_conn_hash[i], c_hash_node)
			for (p = 0; p < min_t(unsigned int, conn->c_npaths,
					       RDS_MAX_PATHS); p++)
				rds_conn_path_show(m, &conn->c_path[p]);
	}
	rcu_read_unlock();
}

int rds_conn_init(void)
{
	unsigned int i;

	rds_conn_hash_seed = get_random_u32();
	for (i = 0; i < RDS_CONN_HASH_SIZE; i++)
		INIT_HLIST_HEAD(&rds_conn_hash[i]);
	return register_pernet_subsys(&rds_conn_net_ops);
}

void rds_conn_exit(void)
{
	unregister_pernet_subsys(&rds_conn_net_ops);
	rds_conn_bury(rds_conn_match_all, NULL);
	rcu_barrier();	/* kfree_rcu() of the last connections */
}
