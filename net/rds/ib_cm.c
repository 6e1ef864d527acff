// SPDX-License-Identifier: GPL-2.0
/*
 * ib_cm.c - rdma_cm connection set-up, negotiation and teardown.
 *
 * Theory of operation
 * ===================
 *
 * Endpoints.  Every connection attempt gets a fresh struct rds_ib_ep that
 * owns the cm_id, the QP, both CQs and both rings; cm_id->context points to
 * the endpoint, never to the connection.  The connection's transport half
 * (struct rds_ib_connection) points to its current endpoint (ic_ep).  An
 * endpoint that is no longer current is "dead": its CM events and its
 * completions only release resources, they never reach rds.ko.
 *
 * Active side (connect worker -> rds_ib_conn_path_connect()): create the
 * endpoint and its cm_id, resolve the address (port 18634 for IPv4, 16385
 * for IPv6), then the route; on ROUTE_RESOLVED build the QP, post the
 * receive ring (as much of it as max_recv_allocation allows, at least
 * three buffers; the refill worker posts the rest later) and send the REQ with
 * our private data; ESTABLISHED carries
 * the peer's REP private data, from which we take the version, the credits
 * and the capabilities, and then tell rds.ko the path is up.
 *
 * Passive side (listeners on 18634 and 16385 in init_net): a REQ is checked
 * (private data long enough, protocol 3.1 or 4.x, addresses that match the
 * cm_id's), the connection is found or created, and the request accepted
 * if the path is DOWN.  Simultaneous connects are resolved without a duel:
 *
 *   - peer is the in-tree module (no RDS_IB_CAP_EXT): it rejects our REQ
 *     while its own is outstanding, so we always yield and accept its REQ;
 *   - peer is ours: the side with the numerically lower local address
 *     yields (abandons its attempt and accepts); the higher side rejects
 *     the lower's REQ with RDS_IB_REJ_RACED, and the lower, on that reject,
 *     just waits for the higher's REQ (bounded by a timer).
 *
 * An incoming REQ for a path that is UP means the peer lost the connection
 * (e.g. it reloaded): like in-tree we drop ours and reject, the peer
 * retries and finds the path DOWN.
 *
 * Version: as the active side we propose 3.1, what the in-tree module
 * proposes, with the 4.0/4.1 minor mask; as the passive side we accept 3.1
 * and 4.x (4.0 plus one per common mask bit).  3.1 and 4.x are the same on
 * the wire.  Rejects carry a host-endian int: 1 (what in-tree checks for),
 * or RDS_IB_REJ_RACED to our own kind only.
 *
 * Recovery: there is one policy.  Any CM error, QP fatal event, failed
 * post or non-successful completion calls rds_ib_ep_fail() (or its
 * shorthands rds_ib_ep_error() and friends), which drops the path once and
 * tells rds.ko why: an enum rds_drop_reason, the wc status, CM/QP event
 * or errno, and a text (debugfs rds/connections, tracepoint rds_conn_drop).  rds.ko's shutdown worker then calls
 * rds_ib_conn_path_shutdown(): the endpoint is detached, disconnected,
 * drained (receive queue, then send queue, so that nothing a receive
 * completion posts is lost), every message and page it held is released and
 * it is destroyed.  The next connect builds a new endpoint.
 *
 * Locking: ic_mutex serialises CM events of a connection's endpoints,
 * connect and shutdown.  It is never held across rdma_destroy_id() (which
 * waits for running CM handlers that may want it), and the CM handler never
 * takes cp_cm_lock.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/hash.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_cache.h>
#include <net/ipv6.h>
#include <net/addrconf.h>

#include "ib.h"

/*
 * How long the loser of a connect race waits for the winner's REQ, and a
 * passive iWARP endpoint for the initiator's first frame.
 */
#define RDS_IB_RACE_WAIT		(5 * HZ)

/* How long a QP's teardown waits for the peer's side to be disconnected. */
#define RDS_IB_DISC_WAIT		HZ

/* A cm_id waiting for its port before it may be destroyed ("Parked cm_ids"). */
struct rds_ib_parked_id {
	struct list_head	pi_item;
	struct rdma_cm_id	*pi_id;
};

static struct rdma_cm_id *rds_ib_listen_id4;
/* Numbers the endpoints (e_gen); 0 is never one. */
static atomic64_t rds_ib_ep_gen = ATOMIC64_INIT(0);
static struct rdma_cm_id *rds_ib_listen_id6;

static void rds_ib_race_worker(struct work_struct *work);
static int rds_ib_cm_handler4(struct rdma_cm_id *id,
			      struct rdma_cm_event *event);
static int rds_ib_cm_handler6(struct rdma_cm_id *id,
			      struct rdma_cm_event *event);

/**
 * rds_ib_ep_fail - the endpoint failed: drop its path, once
 * @ep: endpoint
 * @reason: enum rds_drop_reason (rds_ib_ep_error(): RDS_DROP_TRANSPORT,
 *          rds_ib_ep_post_error(): RDS_DROP_POST_ERROR)
 * @detail: the wc status, CM or QP event, or errno that goes with it
 * @why: reason for the log, debugfs and the trace: a string constant
 *
 * The one recovery entry point.  Any context.  A dead (detached) endpoint
 * only records the error.
 */
void rds_ib_ep_fail(struct rds_ib_ep *ep, int reason, int detail,
		    const char *why)
{
	struct rds_ib_connection *ic = ep->e_ic;

	if (test_and_set_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return;
	if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		return;
	pr_debug("RDS/IB: <%pI6c,%pI6c,%u> dropped: %s\n",
		 &ic->ic_conn->c_laddr, &ic->ic_conn->c_faddr,
		 ic->ic_conn->c_tos, why);
	rds_conn_path_drop_reason(ic->ic_cp, reason, detail, why);
}

static void rds_ib_qp_event(struct ib_event *event, void *context)
{
	struct rds_ib_ep *ep = context;

	switch (event->event) {
	case IB_EVENT_COMM_EST:
		rdma_notify(ep->e_id, IB_EVENT_COMM_EST);
		break;
	case IB_EVENT_SQ_DRAINED:
	case IB_EVENT_QP_LAST_WQE_REACHED:
		break;
	default:
		rds_ib_ep_fail(ep, RDS_DROP_QP_EVENT, event->event,
			       ib_event_msg(event->event));
		break;
	}
}

static struct rds_ib_ep *rds_ib_ep_alloc(struct rds_ib_connection *ic,
					 bool active)
{
	struct rds_ib_ep *ep;

	if (rds_should_fail(RDS_FAULT_CONN))
		return NULL;
	ep = kzalloc(sizeof(*ep), GFP_KERNEL);
	if (!ep)
		return NULL;
	/* So that parking at teardown cannot fail (rds_ib_cm_id_park()). */
	ep->e_parked = kmalloc(sizeof(*ep->e_parked), GFP_KERNEL);
	if (!ep->e_parked) {
		kfree(ep);
		return NULL;
	}
	ep->e_ic = ic;
	ep->e_active = active;
	ep->e_isv6 = ic->ic_conn->c_isv6;
	ep->e_tos = ic->ic_conn->c_tos;
	INIT_LIST_HEAD(&ep->e_rid_item);
	spin_lock_init(&ep->e_recv_lock);
	spin_lock_init(&ep->e_ack_lock);
	ep->e_gen = atomic64_inc_return(&rds_ib_ep_gen);
	atomic_set(&ep->e_reg_avail, RDS_IB_REG_SQ);
	INIT_DELAYED_WORK(&ep->e_refill_work, rds_ib_refill_worker);
	INIT_DELAYED_WORK(&ep->e_race_work, rds_ib_race_worker);
	rds_ib_rdma_wd_init(ep);
	atomic64_set(&ep->e_ack_next, 0);
	atomic_set(&ep->e_credits, 0);
	/* The peer's first message needs our credits (ib_send.c). */
	set_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags);
	atomic_inc(&ic->ic_nr_eps);
	return ep;
}

/* Attach @ep to the device record of its cm_id. */
static int rds_ib_ep_attach_device(struct rds_ib_ep *ep)
{
	struct rds_ib_device *rid;
	int ret = 0;

	rid = rds_ib_device_get(ep->e_id->device);
	if (!rid)
		return -ENODEV;
	spin_lock(&rid->rid_lock);
	if (rid->rid_dead) {
		ret = -ENODEV;
	} else {
		list_add_tail(&ep->e_rid_item, &rid->rid_eps);
		set_bit(RDS_IB_EP_ON_DEVICE, &ep->e_flags);
	}
	spin_unlock(&rid->rid_lock);
	if (ret) {
		rds_ib_device_put(rid);
		return ret;
	}
	ep->e_rid = rid;
	return 0;
}

/**
 * rds_ib_ep_setup_qp - build the CQs, the QP and both rings of an endpoint
 * @ep: endpoint whose cm_id has a device
 *
 * Sizing, per connection: the send ring is net.rds.ib.max_send_wr, the
 * receive ring net.rds.ib.max_recv_wr, both clamped to the device.  The QP
 * adds one send WR for the ACK-only message, one per queue for
 * ib_drain_{sq,rq}().  The CQs match.  Completions are polled in softirq
 * context by the kernel CQ API, in batches, and dispatched per WR type
 * through ib_cqe.  Process context.
 *
 * Return: 0, or a negative errno (the caller drops the path).
 */
static int rds_ib_ep_setup_qp(struct rds_ib_ep *ep)
{
	struct rds_ib_device *rid = ep->e_rid;
	struct ib_device *dev = rid->rid_dev;
	struct ib_qp_init_attr attr = {};
	unsigned long nsend, nrecv;
	unsigned int rdma_sq, sge;
	int vector, ret;

	/*
	 * Room for RDMA WRs: at least RDS_IB_RDMA_SQ, and enough for two ops
	 * of RDS_MAX_MSG_SIZE in one unaligned iovec even where a READ takes
	 * a single SGE per WR (siw), so that such an op always fits.
	 */
	sge = min3(rid->rid_max_sge, (u32)RDS_IB_MAX_SGE, (u32)dev->attrs.max_sge_rd);
	sge = max(sge, 1U);
	rdma_sq = 2 * DIV_ROUND_UP((RDS_MAX_MSG_SIZE >> PAGE_SHIFT) + 1, sge);
	/*
	 * Or through the MRs of the RDMA core's pool (ib_rdma.c): at most
	 * LOCAL_INV, REG_MR and the READ or WRITE for each of them.  Its
	 * pool: see RDS_IB_RW_MRS.
	 */
	ep->e_rw_mr_pages = min_t(u32, dev->attrs.max_fast_reg_page_list_len,
				  RDS_IB_RW_MR_PAGES);
	ep->e_rw_mrs = RDS_IB_RW_MRS;
	if (dev->attrs.max_sgl_rd &&
	    !rdma_protocol_iwarp(dev, ep->e_id->port_num))
		ep->e_rw_mrs = 0;
	rdma_sq = max(rdma_sq, 3 * ep->e_rw_mrs);
	rdma_sq = max_t(unsigned int, rdma_sq, RDS_IB_RDMA_SQ);
	/* + the smallest send ring (2) and the entries beyond the rings */
	if (rdma_sq + 2 + RDS_IB_SQ_EXTRA > rid->rid_max_wrs ||
	    rdma_sq + 2 + RDS_IB_SQ_EXTRA > rid->rid_max_cqe)
		rdma_sq = RDS_IB_RDMA_SQ;
	ep->e_rdma_sq = rdma_sq;

	nsend = READ_ONCE(rds_ib_sysctl_max_send_wr);
	nrecv = READ_ONCE(rds_ib_sysctl_max_recv_wr);
	nsend = min_t(unsigned long, nsend, RDS_IB_MAX_RING_USED);
	nrecv = clamp_t(unsigned long, nrecv, RDS_IB_RECV_MIN,
			RDS_IB_MAX_RING_USED);
	nsend = min_t(unsigned long, nsend,
		      rid->rid_max_wrs - RDS_IB_SQ_EXTRA - rdma_sq);
	nsend = min_t(unsigned long, nsend,
		      rid->rid_max_cqe - RDS_IB_SQ_EXTRA - rdma_sq);
	nrecv = min_t(unsigned long, nrecv, rid->rid_max_wrs - 1);
	nrecv = min_t(unsigned long, nrecv, rid->rid_max_cqe - 1);
	if (nsend < 2 || nrecv < RDS_IB_RECV_SETUP_MIN)
		return -EINVAL;
	ep->e_send_nr = nsend;
	ep->e_recv_nr = nrecv;

	vector = dev->num_comp_vectors > 1 ?
		 (int)(hash_ptr(ep->e_ic, 8) % dev->num_comp_vectors) : 0;
	/* Fault injection (debugfs.c): each step below may fail. */
	if (rds_should_fail(RDS_FAULT_CONN))
		return -ENOMEM;
	ep->e_scq = ib_alloc_cq(dev, ep,
				ep->e_send_nr + RDS_IB_SQ_EXTRA + rdma_sq,
				vector,
				IB_POLL_SOFTIRQ);
	if (IS_ERR(ep->e_scq)) {
		ret = PTR_ERR(ep->e_scq);
		ep->e_scq = NULL;
		return ret;
	}
	if (rds_should_fail(RDS_FAULT_CONN))
		return -ENOMEM;
	ep->e_rcq = ib_alloc_cq(dev, ep, ep->e_recv_nr + 1, vector,
				IB_POLL_SOFTIRQ);
	if (IS_ERR(ep->e_rcq)) {
		ret = PTR_ERR(ep->e_rcq);
		ep->e_rcq = NULL;
		return ret;
	}

	attr.event_handler = rds_ib_qp_event;
	attr.qp_context = ep;
	attr.cap.max_send_wr = ep->e_send_nr + RDS_IB_SQ_EXTRA + rdma_sq;
	attr.cap.max_recv_wr = ep->e_recv_nr + 1;
	attr.cap.max_send_sge = min_t(u32, rid->rid_max_sge, RDS_IB_MAX_SGE);
	attr.cap.max_recv_sge = RDS_IB_RECV_SGE;
	/*
	 * The RDMA core's MR pool for RDMA READ/WRITE (ib_rdma.c), made only
	 * where the core may use MRs.  It also adds send queue entries for
	 * them (clamped to the device); we post no more than our own count
	 * above, so the CQ needs none.
	 */
	attr.cap.max_rdma_ctxs = ep->e_rw_mrs;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = ep->e_scq;
	attr.recv_cq = ep->e_rcq;
	if (rds_should_fail(RDS_FAULT_CONN))
		return -ENOMEM;
	ret = rdma_create_qp(ep->e_id, rid->rid_pd, &attr);
	if (ret)
		return ret;
	ep->e_qp = ep->e_id->qp;
	ep->e_max_send_sge = attr.cap.max_send_sge;

	if (rds_should_fail(RDS_FAULT_CONN))
		return -ENOMEM;
	ret = rds_ib_send_ring_alloc(ep);
	if (ret)
		return ret;
	if (rds_should_fail(RDS_FAULT_CONN))
		return -ENOMEM;
	ret = rds_ib_recv_ring_alloc(ep);
	if (ret)
		return ret;
	/*
	 * Receives go up before the REQ/REP so that credits are real.  Short
	 * of pages (memory, or max_recv_allocation reached) the connection
	 * still comes up with RDS_IB_RECV_SETUP_MIN buffers posted: rds.ko's
	 * receive worker queues the refill worker once the path is up, and
	 * that keeps trying until the ring is full.  Fewer are not enough:
	 * the peer's first message is a congestion update of
	 * RDS_CONG_MAP_BYTES (two fragments, the first held in reassembly,
	 * and counted against the limit, until the second is in), and with
	 * flow control a sender keeps its last credit for a credit update,
	 * so one or two credits let it send nothing of that (rds.rst,
	 * flow_control).  A connection up with fewer would be silently dead
	 * instead of visibly retrying.  Asking for more, say a refill batch,
	 * kept every new connection down for as long as the limit was below
	 * that.  rds.ko retries a connection that failed here.
	 */
	ret = rds_ib_recv_refill(ep, GFP_KERNEL);
	if (ret == -ENOMEM) {
		if (ep->e_recv_head - ep->e_recv_tail >= RDS_IB_RECV_SETUP_MIN)
			return 0;
		pr_notice_ratelimited("RDS/IB: <%pI6c,%pI6c> fewer than %u receive buffers could be posted (memory or net.rds.ib.max_recv_allocation %lu reached), retrying the connection\n",
				      &ep->e_ic->ic_conn->c_laddr,
				      &ep->e_ic->ic_conn->c_faddr,
				      RDS_IB_RECV_SETUP_MIN,
				      READ_ONCE(rds_ib_sysctl_max_recv_allocation));
	}
	return ret;
}

/* ------------------------------------------------------------------------
 * Parked cm_ids
 * ------------------------------------------------------------------------
 *
 * Destroying a cm_id that got as far as a QP sends a CM message (DREQ,
 * REJ or DREP) from the port's GSI QP.  While the port is down that send
 * fails, and rxe (6.1 and 6.12) then moves its GSI QP to the error state;
 * ib_mad restarts the send side but never the receive side, so the node
 * ignores every CM message until its device is deleted: no connection to
 * or from it can be made again (issue 10 item 3, an 8 s link flap).  So,
 * on ports that use the IB CM, an endpoint destroyed while its port is
 * down does not send: it leaves its cm_id, with no context and no QP, on
 * its device's list until the port is up again (the device's PORT_ACTIVE
 * event, and a recheck every RDS_IB_UNPARK_RECHECK while ids wait, since
 * an event can be lost), the device goes away, or the module unloads
 * (which first waits RDS_IB_UNPARK_UNLOAD_WAIT for the port).  The peer
 * loses nothing: its own QP fails on its own, and the DREQ could not have
 * reached it anyway.  Active connects do not start a REQ into a down port
 * either (rds_ib_route_resolved()).  What the CM already has in flight
 * (a REQ or REP it retransmits) is beyond our reach.
 *
 * "Down" is the cached port state or, on RoCE, the carrier of the bound
 * netdev: routes go (and rxe sends fail) as soon as the netdev goes down,
 * while the port cache is updated later from a work item that needs rtnl.
 */
#define RDS_IB_UNPARK_RECHECK		(5 * HZ)
#define RDS_IB_UNPARK_UNLOAD_WAIT	(10 * HZ)

static atomic_t rds_ib_parked_nr = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(rds_ib_parked_wait);

/* Can @id's port carry a CM message now?  Yes when we cannot tell. */
static bool rds_ib_cm_id_port_active(struct rdma_cm_id *id)
{
	enum ib_port_state state;
	struct net_device *ndev;
	bool up = true;

	if (!id->device ||
	    ib_get_cached_port_state(id->device, id->port_num, &state))
		return true;
	if (state != IB_PORT_ACTIVE)
		return false;
	if (!rdma_protocol_roce(id->device, id->port_num))
		return true;
	rcu_read_lock();
	ndev = dev_get_by_index_rcu(&init_net,
				    id->route.addr.dev_addr.bound_dev_if);
	if (ndev)
		up = netif_running(ndev) && netif_carrier_ok(ndev);
	rcu_read_unlock();
	return up;
}

/* Would destroying @id now send a CM message into a down port? */
static bool rds_ib_cm_id_must_park(struct rdma_cm_id *id)
{
	return id->device && rdma_cap_ib_cm(id->device, id->port_num) &&
	       !rds_ib_cm_id_port_active(id);
}

/*
 * Park @id on @rid, with @pi (preallocated by the endpoint).  Process
 * context; no handler of @id may be running in this thread
 * (rdma_lock_handler() takes the mutex rdma_cm holds around them).
 * Return: true if parked (@pi is the list's now), false if the caller must
 * destroy @id now.
 */
static bool rds_ib_cm_id_park(struct rds_ib_device *rid,
			      struct rdma_cm_id *id,
			      struct rds_ib_parked_id *pi)
{
	if (!rid || !pi)
		return false;
	pi->pi_id = id;
	/* Later events of @id find no endpoint and are ignored. */
	rdma_lock_handler(id);
	id->context = NULL;
	rdma_unlock_handler(id);

	spin_lock(&rid->rid_lock);
	if (rid->rid_dead) {
		/* ->remove() destroys what is parked: do it now instead. */
		spin_unlock(&rid->rid_lock);
		return false;
	}
	list_add_tail(&pi->pi_item, &rid->rid_parked);
	atomic_inc(&rds_ib_parked_nr);
	spin_unlock(&rid->rid_lock);
	rds_ib_stats_inc(s_ib_cm_id_parked);
	/* The port may have come back before the id was listed. */
	mod_delayed_work(rds_ib_wq, &rid->rid_unpark_work, 0);
	return true;
}

/**
 * rds_ib_cm_unpark - destroy parked cm_ids
 * @rid: device record
 * @all: every parked id (device removal, unload), not only those whose
 *	port is up again
 *
 * Context: process (rds_ib_wq, ->remove()); sleeps in rdma_destroy_id().
 * Return: true if ids are left parked (their port is still down).
 */
bool rds_ib_cm_unpark(struct rds_ib_device *rid, bool all)
{
	struct rds_ib_parked_id *pi, *tmp;
	LIST_HEAD(ready);
	bool left;

	spin_lock(&rid->rid_lock);
	list_for_each_entry_safe(pi, tmp, &rid->rid_parked, pi_item)
		if (all || rds_ib_cm_id_port_active(pi->pi_id))
			list_move_tail(&pi->pi_item, &ready);
	left = !list_empty(&rid->rid_parked);
	spin_unlock(&rid->rid_lock);

	list_for_each_entry_safe(pi, tmp, &ready, pi_item) {
		rdma_destroy_id(pi->pi_id);
		kfree(pi);
		rds_ib_stats_inc(s_ib_cm_id_unparked);
		if (atomic_dec_and_test(&rds_ib_parked_nr))
			wake_up_all(&rds_ib_parked_wait);
	}
	return left;
}

/* Recheck parked ids while some wait: a PORT_ACTIVE event can be lost. */
void rds_ib_unpark_worker(struct work_struct *work)
{
	struct rds_ib_device *rid = container_of(to_delayed_work(work),
						 struct rds_ib_device,
						 rid_unpark_work);

	if (rds_ib_cm_unpark(rid, false))
		queue_delayed_work(rds_ib_wq, &rid->rid_unpark_work,
				   RDS_IB_UNPARK_RECHECK);
}

/*
 * Module unload: give parked ids a moment to leave through an active port
 * before ->remove() destroys them whatever the port state.
 */
void rds_ib_cm_unpark_wait(void)
{
	if (!wait_event_timeout(rds_ib_parked_wait,
				!atomic_read(&rds_ib_parked_nr),
				RDS_IB_UNPARK_UNLOAD_WAIT))
		pr_warn("RDS/IB: unloading with %d connection(s) parked on a down port; their CM messages may stop rxe's CM on that device until it is re-added\n",
			atomic_read(&rds_ib_parked_nr));
}

/*
 * Before its QP is destroyed, let the peer stop sending to it.  The peer
 * moves its QP to the error state before it answers our DREQ or sends its
 * own (rdma_disconnect() does that first, on both kinds of peer), so once
 * the CM reported DISCONNECTED the peer sends nothing new (packets it sent
 * earlier may still be queued in our device).  A lead for the corrupted
 * kmalloc-2k freelists seen with rxe on 6.12, not a proven cause: rxe's QP
 * is such an object, and its task was once seen running on freed memory
 * when a packet arrived while the QP was being destroyed.  Only where the
 * IB CM carries the connection (on iWARP nothing arrives once the stream
 * is closed), and only after ESTABLISHED (before it, rdma_disconnect()
 * sends nothing that could be answered).  Bounded: a peer that crashed or
 * an unreachable port answers nothing, and teardown must go on.
 */
static void rds_ib_ep_wait_peer_quiet(struct rds_ib_ep *ep, bool port_down)
{
	struct rds_ib_connection *ic = ep->e_ic;

	if (port_down || !test_bit(RDS_IB_EP_WIRED, &ep->e_flags) ||
	    !rdma_cap_ib_cm(ep->e_id->device, ep->e_id->port_num))
		return;
	if (!wait_event_timeout(ic->ic_wait,
				test_bit(RDS_IB_EP_CM_DONE, &ep->e_flags),
				RDS_IB_DISC_WAIT))
		rds_ib_stats_inc(s_ib_disc_wait_timeouts);
}

/*
 * Release everything an endpoint owns.  Process context, no locks held:
 * rdma_lock_handler() and rdma_destroy_id() wait for the CM handlers of
 * this id, so never call this from one of them with e_id set.
 */
static void rds_ib_ep_destroy(struct rds_ib_ep *ep)
{
	struct rds_ib_connection *ic = ep->e_ic;
	struct rds_ib_device *rid = ep->e_rid;
	bool port_down = false;
	unsigned long flags;

	set_bit(RDS_IB_EP_DEAD, &ep->e_flags);
	/*
	 * ORDER: posts of receives and ACKs check DEAD under these locks, so
	 * after the empty critical sections nothing is posted behind the
	 * drain markers.
	 */
	spin_lock_bh(&ep->e_recv_lock);
	spin_unlock_bh(&ep->e_recv_lock);
	spin_lock_irq(&ep->e_ack_lock);
	spin_unlock_irq(&ep->e_ack_lock);
	cancel_delayed_work_sync(&ep->e_race_work);
	cancel_delayed_work_sync(&ep->e_refill_work);
	rds_ib_rdma_wd_stop(ep);

	if (ep->e_qp) {
		/*
		 * rdma_disconnect() sends a DREQ: not into a down port (see
		 * "Parked cm_ids").  The drains move the QP to the error
		 * state themselves.
		 */
		port_down = rds_ib_cm_id_must_park(ep->e_id);
		if (!port_down)
			rdma_disconnect(ep->e_id);
		/*
		 * ORDER: receives first.  A receive completion may still
		 * post an ACK on the send queue; draining the SQ afterwards
		 * flushes that one as well.
		 */
		ib_drain_rq(ep->e_qp);
		ib_drain_sq(ep->e_qp);
	}
	/*
	 * A receive completion that ran before the drain, past its DEAD
	 * check, may have queued the refill worker again (no memory); the
	 * CQs are quiet now, so this cancel is the last.  The same for the
	 * RDMA watchdog, which an xmit racing the teardown may have armed.
	 */
	cancel_delayed_work_sync(&ep->e_refill_work);
	rds_ib_rdma_wd_stop(ep);

	/* The CQs are quiet now: release what flushes did not. */
	rds_ib_send_ring_free(ep);
	rds_ib_recv_ring_free(ep);

	if (ep->e_qp) {
		rds_ib_ep_wait_peer_quiet(ep, port_down);
		rdma_destroy_qp(ep->e_id);
	}
	if (ep->e_scq)
		ib_free_cq(ep->e_scq);
	if (ep->e_rcq)
		ib_free_cq(ep->e_rcq);
	if (ep->e_id && port_down && rds_ib_cm_id_park(rid, ep->e_id,
						       ep->e_parked))
		ep->e_parked = NULL;
	else if (ep->e_id)
		rdma_destroy_id(ep->e_id);
	kfree(ep->e_parked);

	if (rid) {
		if (test_bit(RDS_IB_EP_ON_DEVICE, &ep->e_flags)) {
			spin_lock(&rid->rid_lock);
			list_del_init(&ep->e_rid_item);
			if (list_empty(&rid->rid_eps))
				wake_up_all(&rid->rid_wait);
			spin_unlock(&rid->rid_lock);
		}
		rds_ib_device_put(rid);
	}
	kfree(ep);

	/*
	 * Under the waitqueue's lock: the shutdown may see the count reach
	 * zero and let conn_free free @ic as soon as it can take that lock,
	 * so the wake-up must be done by then.
	 */
	spin_lock_irqsave(&ic->ic_wait.lock, flags);
	if (atomic_dec_and_test(&ic->ic_nr_eps))
		wake_up_all_locked(&ic->ic_wait);
	spin_unlock_irqrestore(&ic->ic_wait.lock, flags);
}

static void rds_ib_ep_destroy_worker(struct work_struct *work)
{
	rds_ib_ep_destroy(container_of(work, struct rds_ib_ep,
				       e_destroy_work));
}

/*
 * Make @ep (or NULL) the current endpoint of @ic.  Caller holds ic_mutex;
 * ic_ep_lock lets the info tables (ib_info.c) look at the endpoint from
 * atomic context: an endpoint is destroyed only after it was detached.
 */
static void rds_ib_ic_set_ep(struct rds_ib_connection *ic,
			     struct rds_ib_ep *ep)
{
	unsigned long flags;

	spin_lock_irqsave(&ic->ic_ep_lock, flags);
	ic->ic_ep = ep;
	spin_unlock_irqrestore(&ic->ic_ep_lock, flags);
}

/*
 * Detach the current endpoint from its connection.  Caller holds ic_mutex.
 * Return: the endpoint (now dead) or NULL.
 */
static struct rds_ib_ep *rds_ib_ep_detach(struct rds_ib_connection *ic)
{
	struct rds_ib_ep *ep = ic->ic_ep;

	if (ep) {
		set_bit(RDS_IB_EP_DEAD, &ep->e_flags);
		rds_ib_ic_set_ep(ic, NULL);
	}
	return ep;
}

/* Abandon the current endpoint (connect race); destroyed asynchronously. */
static void rds_ib_ep_abandon(struct rds_ib_connection *ic)
{
	struct rds_ib_ep *ep = rds_ib_ep_detach(ic);

	if (!ep)
		return;
	INIT_WORK(&ep->e_destroy_work, rds_ib_ep_destroy_worker);
	queue_work(rds_ib_wq, &ep->e_destroy_work);
}

static void rds_ib_race_worker(struct work_struct *work)
{
	struct rds_ib_ep *ep = container_of(to_delayed_work(work),
					    struct rds_ib_ep, e_race_work);
	bool iw = test_bit(RDS_IB_EP_IW_GATE, &ep->e_flags);

	/* An iWARP passive endpoint that went up meanwhile is fine. */
	if (iw && test_bit(RDS_IB_EP_UP, &ep->e_flags))
		return;
	rds_ib_ep_fail(ep, RDS_DROP_TIMEOUT, 0,
		       iw ? "iWARP initiator never sent its first frame" :
			    "winner of connect race never connected");
}

/* ------------------------------------------------------------------------
 * Private data
 * ------------------------------------------------------------------------
 */

static struct rds_ib_conn_priv_cmn *
rds_ib_priv_cmn(union rds_ib_conn_priv *dp, bool isv6)
{
	return isv6 ? &dp->ricp_v6.dp_cmn : &dp->ricp_v4.dp_cmn;
}

static unsigned int rds_ib_priv_len(bool isv6)
{
	return isv6 ? sizeof(struct rds6_ib_connect_private) :
		      sizeof(struct rds_ib_connect_private);
}

/*
 * Fill the private data and connection parameters for a REQ or REP.
 * Credits advertised are everything posted on the receive ring when flow
 * control is offered (active, sysctl on) or accepted (passive, both on).
 */
static void rds_ib_fill_conn_param(struct rds_ib_ep *ep,
				   struct rdma_conn_param *param,
				   union rds_ib_conn_priv *dp, u16 version,
				   bool offer_credits, u32 resp_res,
				   u32 init_depth)
{
	struct rds_connection *conn = ep->e_ic->ic_conn;
	struct rds_ib_conn_priv_cmn *cmn = rds_ib_priv_cmn(dp, ep->e_isv6);
	struct rds_ib_device *rid = ep->e_rid;

	memset(param, 0, sizeof(*param));
	memset(dp, 0, sizeof(*dp));
	param->responder_resources = min(rid->rid_max_rd_atom, resp_res);
	param->initiator_depth = min(rid->rid_max_init_rd_atom, init_depth);
	param->retry_count = min_t(unsigned int, READ_ONCE(rds_ib_retry_count),
				   7);
	param->rnr_retry_count = 7;

	if (ep->e_isv6) {
		dp->ricp_v6.dp_saddr = conn->c_laddr;
		dp->ricp_v6.dp_daddr = conn->c_faddr;
	} else {
		dp->ricp_v4.dp_saddr = conn->c_laddr.s6_addr32[3];
		dp->ricp_v4.dp_daddr = conn->c_faddr.s6_addr32[3];
	}
	cmn->ricpc_protocol_major = RDS_PROTOCOL_MAJOR(version);
	cmn->ricpc_protocol_minor = RDS_PROTOCOL_MINOR(version);
	cmn->ricpc_protocol_minor_mask = cpu_to_be16(RDS_IB_MINOR_MASK);
	cmn->ricpc_dp_toss = conn->c_tos;
	cmn->ricpc_caps = RDS_IB_CAP_EXT | rds_ib_inv_local_caps(rid);
	if (rid->rid_iwarp && ep->e_active)
		cmn->ricpc_caps |= RDS_IB_CAP_IW_FIRST;
	/*
	 * ack_seq stays 0, as in-tree sends it in practice: an ACK from an
	 * earlier incarnation of the connection could cover messages of a
	 * peer that restarted its sequence numbers.
	 */

	if (offer_credits) {
		unsigned int posted;

		posted = RDS_IB_POST_CREDITS(atomic_read(&ep->e_credits));
		if (posted) {
			atomic_sub(RDS_IB_SET_POST_CREDITS(posted),
				   &ep->e_credits);
			cmn->ricpc_credit = cpu_to_be32(posted);
			set_bit(RDS_IB_EP_ADV_CREDITS, &ep->e_flags);
		}
	}
	param->private_data = dp;
	param->private_data_len = rds_ib_priv_len(ep->e_isv6);
}

/* Flow control and ACK seq from the peer's private data. */
static void rds_ib_apply_peer_cmn(struct rds_ib_ep *ep,
				  const struct rds_ib_conn_priv_cmn *cmn)
{
	u32 credit = be32_to_cpu(cmn->ricpc_credit);
	__be64 ack_be;
	u64 ack;

	/* The private data need not be 8-byte aligned. */
	memcpy(&ack_be, &cmn->ricpc_ack_seq, sizeof(ack_be));
	ack = be64_to_cpu(ack_be);

	ep->e_peer_caps = cmn->ricpc_caps & RDS_IB_CAP_MASK_OURS;
	if (credit && READ_ONCE(rds_ib_sysctl_flow_control)) {
		set_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags);
		rds_ib_send_add_credits(ep, credit);
	}
	if (ack)
		rds_send_drop_acked(ep->e_ic->ic_cp, ack, NULL);
}

/*
 * Version of a REQ: 4.0 + one per common minor bit for major 4, 3.1 for
 * 3.1, 0 (reject) for anything else.
 */
static u16 rds_ib_req_version(const struct rds_ib_conn_priv_cmn *cmn)
{
	u16 common = be16_to_cpu(cmn->ricpc_protocol_minor_mask) &
		     RDS_IB_MINOR_MASK;
	u16 version;

	if (cmn->ricpc_protocol_major == 4 && common) {
		version = RDS_PROTOCOL_4_0;
		while ((common >>= 1) != 0)
			version++;
		return version;
	}
	if (RDS_PROTOCOL(cmn->ricpc_protocol_major,
			 cmn->ricpc_protocol_minor) == RDS_PROTOCOL_3_1)
		return RDS_PROTOCOL_3_1;
	return 0;
}

static bool rds_ib_version_ok(u16 v)
{
	return v == RDS_PROTOCOL_3_1 || v == RDS_PROTOCOL_4_0 ||
	       v == RDS_PROTOCOL_4_1;
}

/* ------------------------------------------------------------------------
 * Active side
 * ------------------------------------------------------------------------
 */

static void rds_ib_fill_sockaddrs(struct rds_connection *conn,
				  struct sockaddr_storage *src,
				  struct sockaddr_storage *dst)
{
	memset(src, 0, sizeof(*src));
	memset(dst, 0, sizeof(*dst));
	if (!conn->c_isv6) {
		struct sockaddr_in *s = (struct sockaddr_in *)src;
		struct sockaddr_in *d = (struct sockaddr_in *)dst;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = conn->c_laddr.s6_addr32[3];
		d->sin_family = AF_INET;
		d->sin_addr.s_addr = conn->c_faddr.s6_addr32[3];
		d->sin_port = htons(RDS_IB_PORT);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)src;
		struct sockaddr_in6 *d = (struct sockaddr_in6 *)dst;

		s->sin6_family = AF_INET6;
		s->sin6_addr = conn->c_laddr;
		s->sin6_scope_id = conn->c_dev_if;
		d->sin6_family = AF_INET6;
		d->sin6_addr = conn->c_faddr;
		d->sin6_port = htons(RDS_IB_CM_PORT6);
		d->sin6_scope_id = conn->c_dev_if;
	}
}

/**
 * rds_ib_conn_path_connect - start an active connection attempt
 * @cp: path, CONNECTING
 *
 * Connect worker, process context, cp_cm_lock held.  If a passive request
 * was accepted in the meantime (the path is already being connected by the
 * peer), there is nothing to do.
 *
 * Return: 0 when the attempt is under way, or a negative errno.
 */
int rds_ib_conn_path_connect(struct rds_conn_path *cp)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_connection *conn = cp->cp_conn;
	struct sockaddr_storage src, dst;
	struct rds_ib_ep *ep;
	int ret;

	mutex_lock(&ic->ic_mutex);
	if (ic->ic_ep) {
		mutex_unlock(&ic->ic_mutex);
		return 0;
	}
	ep = rds_ib_ep_alloc(ic, true);
	if (!ep) {
		mutex_unlock(&ic->ic_mutex);
		return -ENOMEM;
	}
	ep->e_id = rdma_create_id(&init_net,
				  conn->c_isv6 ? rds_ib_cm_handler6 :
						 rds_ib_cm_handler4,
				  ep, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(ep->e_id)) {
		ret = PTR_ERR(ep->e_id);
		ep->e_id = NULL;
		goto fail;
	}
	rds_ib_ic_set_ep(ic, ep);

	rds_ib_fill_sockaddrs(conn, &src, &dst);
	ret = rdma_resolve_addr(ep->e_id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst,
				RDS_IB_RESOLVE_TIMEOUT_MS);
	if (ret) {
		rds_ib_ep_detach(ic);
		goto fail;
	}
	mutex_unlock(&ic->ic_mutex);
	return 0;

fail:
	mutex_unlock(&ic->ic_mutex);
	rds_ib_ep_destroy(ep);
	return ret;
}

static int rds_ib_route_resolved(struct rds_ib_ep *ep)
{
	struct rds_connection *conn = ep->e_ic->ic_conn;
	struct rdma_conn_param param;
	union rds_ib_conn_priv dp;
	int ret;

	/* No REQ into a down port (see "Parked cm_ids"); nothing to park. */
	if (rds_ib_cm_id_must_park(ep->e_id))
		return -ENETDOWN;
	if (ep->e_id->route.path_rec)
		ep->e_id->route.path_rec[0].sl = conn->c_tos & 0xf;
	ret = rds_ib_ep_setup_qp(ep);
	if (ret)
		return ret;
	rds_ib_fill_conn_param(ep, &param, &dp, RDS_IB_PROPOSED_VERSION,
			       READ_ONCE(rds_ib_sysctl_flow_control),
			       UINT_MAX, UINT_MAX);
	return rdma_connect_locked(ep->e_id, &param);
}

/*
 * QP timers of a new connection, set on its cm_id before the connect or
 * the accept: the RNR timer, and the local ACK timeout when the
 * administrator chose one (rds_ib_ack_timeout).  Not on iWARP.
 */
static void rds_ib_set_qp_timers(struct rds_ib_ep *ep, struct rdma_cm_id *id)
{
	unsigned int ack = READ_ONCE(rds_ib_ack_timeout);

	if (ep->e_rid->rid_iwarp)
		return;
	rdma_set_min_rnr_timer(id, IB_RNR_TIMER_000_32);
	if (ack)
		rdma_set_ack_timeout(id, ack);
}

static int rds_ib_addr_resolved(struct rds_ib_ep *ep)
{
	int ret;

	ret = rds_ib_ep_attach_device(ep);
	if (ret)
		return ret;
	rdma_set_service_type(ep->e_id, ep->e_tos);
	rds_ib_set_qp_timers(ep, ep->e_id);
	return rdma_resolve_route(ep->e_id, RDS_IB_RESOLVE_TIMEOUT_MS);
}

/**
 * rds_ib_ep_go_up - the endpoint may send: tell rds.ko the path is up
 * @ep: endpoint, ESTABLISHED handled
 *
 * From the CM handler (ic_mutex held), or for an iWARP passive endpoint
 * from the receive completion that brought the initiator's first frame
 * after ESTABLISHED (softirq).  A path no longer CONNECTING (dropped
 * meanwhile) stays dropped.
 */
static void rds_ib_ep_go_up(struct rds_ib_ep *ep)
{
	if (test_bit(RDS_IB_EP_IW_GATE, &ep->e_flags)) {
		rds_ib_stats_inc(s_ib_iw_initiator_waits);
		cancel_delayed_work(&ep->e_race_work);
	}
	set_bit(RDS_IB_EP_UP, &ep->e_flags);
	rds_connect_path_complete(ep->e_ic->ic_cp, RDS_CONN_CONNECTING);
	/* Credits or an ACK may have been waiting for the path. */
	rds_ib_attempt_ack(ep);
}

/* The REP arrived (active) or the RTU (passive): the path is up. */
static void rds_ib_established(struct rds_ib_ep *ep,
			       struct rdma_cm_event *event)
{
	struct rds_ib_connection *ic = ep->e_ic;
	struct rds_connection *conn = ic->ic_conn;
	bool wait;

	if (ep->e_active) {
		const union rds_ib_conn_priv *dp = event->param.conn.private_data;
		const struct rds_ib_conn_priv_cmn *cmn;
		u16 version;

		if (!dp || event->param.conn.private_data_len <
			   rds_ib_priv_len(ep->e_isv6)) {
			rds_ib_ep_proto_error(ep, "short private data in REP");
			return;
		}
		cmn = ep->e_isv6 ? &dp->ricp_v6.dp_cmn : &dp->ricp_v4.dp_cmn;
		version = RDS_PROTOCOL(cmn->ricpc_protocol_major,
				       cmn->ricpc_protocol_minor);
		if (!rds_ib_version_ok(version)) {
			pr_notice_ratelimited("RDS/IB: <%pI6c,%pI6c> peer chose unsupported version %u.%u\n",
					      &conn->c_laddr, &conn->c_faddr,
					      RDS_PROTOCOL_MAJOR(version),
					      RDS_PROTOCOL_MINOR(version));
			rds_ib_ep_fail(ep, RDS_DROP_PROTOCOL, version,
				       "bad version in REP");
			return;
		}
		ep->e_version = version;
		rds_ib_apply_peer_cmn(ep, cmn);
	}
	conn->c_version = ep->e_version;
	/*
	 * iWARP passive side: wait for the initiator's first frame if it has
	 * not come yet (rds_ib_ep_iw_heard() then goes up).
	 */
	wait = test_bit(RDS_IB_EP_IW_GATE, &ep->e_flags) &&
	       !test_and_set_bit(RDS_IB_EP_IW_HALF, &ep->e_flags);
	pr_info("RDS/IB: %s conn connected <%pI6c,%pI6c,%u> version %u.%u%s%s%s\n",
		ep->e_active ? "Active" : "Passive",
		&conn->c_laddr, &conn->c_faddr, conn->c_tos,
		RDS_PROTOCOL_MAJOR(ep->e_version),
		RDS_PROTOCOL_MINOR(ep->e_version),
		test_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags) ?
			", flow control" : "",
		ep->e_peer_caps & RDS_IB_CAP_EXT ? ", ext" : "",
		wait ? ", up at the initiator's first frame" : "");
	/*
	 * iWARP: our initiator frame (an ACK-only message, carrying the
	 * credits to advertise), which releases a passive side waiting for
	 * it.
	 */
	if (ep->e_active && ep->e_rid->rid_iwarp)
		set_bit(RDS_IB_EP_ACK_REQUESTED, &ep->e_flags);
	if (wait) {
		/* Bounded: a peer gone before its first frame is not heard. */
		queue_delayed_work(rds_ib_wq, &ep->e_race_work,
				   RDS_IB_RACE_WAIT);
		return;
	}
	rds_ib_ep_go_up(ep);
}

/**
 * rds_ib_ep_iw_heard - a frame arrived on an iWARP passive endpoint
 * @ep: endpoint, neither dead nor failed
 *
 * MPA without RTR forbids the responder to send before the initiator
 * did: a passive iWARP endpoint whose peer promised to send first
 * (RDS_IB_CAP_IW_FIRST) goes up at the later of ESTABLISHED and its
 * first successful receive; until then neither rds.ko nor the ring
 * sends on it (RDS_IB_EP_UP clear, path CONNECTING).  Softirq.
 */
void rds_ib_ep_iw_heard(struct rds_ib_ep *ep)
{
	if (test_and_set_bit(RDS_IB_EP_IW_HEARD, &ep->e_flags))
		return;
	if (test_and_set_bit(RDS_IB_EP_IW_HALF, &ep->e_flags))
		rds_ib_ep_go_up(ep);
}

static void rds_ib_rejected(struct rds_ib_ep *ep, struct rdma_cm_id *id,
			    struct rdma_cm_event *event)
{
	const void *data;
	u8 len = 0;
	int reason = 0;

	data = rdma_consumer_reject_data(id, event, &len);
	if (data && len >= sizeof(int))
		memcpy(&reason, data, sizeof(int));
	if (reason == RDS_IB_REJ_RACED) {
		/* The peer is connecting to us; wait for its REQ. */
		rds_ib_stats_inc(s_ib_connect_raced);
		queue_delayed_work(rds_ib_wq, &ep->e_race_work,
				   RDS_IB_RACE_WAIT);
		return;
	}
	rds_ib_ep_fail(ep, RDS_DROP_REJECTED, reason, "connection rejected");
}

/* ------------------------------------------------------------------------
 * Passive side
 * ------------------------------------------------------------------------
 */

static bool rds_ib_addr_ok(const struct in6_addr *a)
{
	int type = ipv6_addr_type(a);

	if (ipv6_addr_v4mapped(a)) {
		__be32 v4 = a->s6_addr32[3];

		return !ipv4_is_zeronet(v4) && !ipv4_is_multicast(v4) &&
		       !ipv4_is_lbcast(v4) && !ipv4_is_loopback(v4);
	}
	return !(type & (IPV6_ADDR_ANY | IPV6_ADDR_MULTICAST |
			 IPV6_ADDR_LOOPBACK | IPV6_ADDR_MAPPED));
}

/*
 * Check that the addresses claimed in the private data are those the
 * request really came between: src_addr of the cm_id is ours.
 */
static bool rds_ib_req_addrs_match(struct rdma_cm_id *id, bool isv6,
				   const struct in6_addr *laddr,
				   const struct in6_addr *faddr)
{
	const struct sockaddr *ls = (struct sockaddr *)&id->route.addr.src_addr;
	const struct sockaddr *rs = (struct sockaddr *)&id->route.addr.dst_addr;

	if (!isv6) {
		if (ls->sa_family != AF_INET || rs->sa_family != AF_INET)
			return false;
		return ((struct sockaddr_in *)ls)->sin_addr.s_addr ==
			laddr->s6_addr32[3] &&
		       ((struct sockaddr_in *)rs)->sin_addr.s_addr ==
			faddr->s6_addr32[3];
	}
	if (ls->sa_family != AF_INET6 || rs->sa_family != AF_INET6)
		return false;
	return ipv6_addr_equal(&((struct sockaddr_in6 *)ls)->sin6_addr, laddr) &&
	       ipv6_addr_equal(&((struct sockaddr_in6 *)rs)->sin6_addr, faddr);
}

static int rds_ib_reject(struct rdma_cm_id *id, int reason)
{
	rdma_reject(id, &reason, sizeof(reason), IB_CM_REJ_CONSUMER_DEFINED);
	/* Non-zero: rdma_cm destroys the request's id. */
	return 1;
}

/* Accept @id into a fresh endpoint for @ic.  Caller holds ic_mutex. */
static int rds_ib_accept(struct rds_ib_connection *ic, struct rdma_cm_id *id,
			 struct rdma_cm_event *event,
			 const struct rds_ib_conn_priv_cmn *cmn, u16 version)
{
	struct rdma_conn_param param;
	union rds_ib_conn_priv dp;
	struct rds_ib_ep *ep;
	bool offer;
	int ret;

	ep = rds_ib_ep_alloc(ic, false);
	if (!ep)
		return -ENOMEM;
	ep->e_id = id;
	ep->e_version = version;
	ret = rds_ib_ep_attach_device(ep);
	if (ret)
		goto fail;
	ret = rds_ib_ep_setup_qp(ep);
	if (ret)
		goto fail;

	/* From here on the endpoint owns the id. */
	id->context = ep;
	rds_ib_ic_set_ep(ic, ep);
	rds_ib_apply_peer_cmn(ep, cmn);
	/* Before the accept: the initiator's first frame may come at once. */
	if (ep->e_rid->rid_iwarp && (ep->e_peer_caps & RDS_IB_CAP_IW_FIRST))
		set_bit(RDS_IB_EP_IW_GATE, &ep->e_flags);
	offer = test_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags);
	rds_ib_fill_conn_param(ep, &param, &dp, version, offer,
			       event->param.conn.responder_resources,
			       event->param.conn.initiator_depth);
	rds_ib_set_qp_timers(ep, id);
	ret = rdma_accept(id, &param);
	if (ret)
		rds_ib_ep_error(ep, "rdma_accept failed");
	return 0;

fail:
	/* The id is still the CM's: it destroys it when we return 1. */
	ep->e_id = NULL;
	if (ep->e_qp) {
		rdma_destroy_qp(id);
		ep->e_qp = NULL;
	}
	rds_ib_ep_destroy(ep);
	return ret;
}

static int rds_ib_handle_connect(struct rdma_cm_id *id,
				 struct rdma_cm_event *event, bool isv6)
{
	const union rds_ib_conn_priv *dp = event->param.conn.private_data;
	const struct rds_ib_conn_priv_cmn *cmn;
	struct in6_addr laddr, faddr;
	struct rds_connection *conn;
	struct rds_ib_connection *ic;
	struct rds_conn_path *cp;
	struct rds_ib_device *rid;
	bool peer_ours, yield;
	int dev_if = 0;
	u16 version;
	int ret;

	if (!dp || event->param.conn.private_data_len < rds_ib_priv_len(isv6)) {
		pr_notice_ratelimited("RDS/IB: connection request with short private data, rejecting\n");
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	}
	rid = rds_ib_device_get(id->device);
	if (!rid)
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	rds_ib_device_put(rid);

	if (isv6) {
		cmn = &dp->ricp_v6.dp_cmn;
		laddr = dp->ricp_v6.dp_daddr;
		faddr = dp->ricp_v6.dp_saddr;
		if (ipv6_addr_v4mapped(&laddr) || ipv6_addr_v4mapped(&faddr))
			return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		if ((ipv6_addr_type(&laddr) | ipv6_addr_type(&faddr)) &
		    IPV6_ADDR_LINKLOCAL) {
			dev_if = id->route.addr.dev_addr.bound_dev_if;
			if (!dev_if)
				return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		}
	} else {
		cmn = &dp->ricp_v4.dp_cmn;
		ipv6_addr_set_v4mapped(dp->ricp_v4.dp_daddr, &laddr);
		ipv6_addr_set_v4mapped(dp->ricp_v4.dp_saddr, &faddr);
	}

	version = rds_ib_req_version(cmn);
	if (!version) {
		pr_notice_ratelimited("RDS/IB: connection from %pI6c using incompatible protocol version %u.%u\n",
				      &faddr, cmn->ricpc_protocol_major,
				      cmn->ricpc_protocol_minor);
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	}
	if (!rds_ib_addr_ok(&laddr) || !rds_ib_addr_ok(&faddr) ||
	    ipv6_addr_equal(&laddr, &faddr) ||
	    !rds_ib_req_addrs_match(id, isv6, &laddr, &faddr)) {
		pr_notice_ratelimited("RDS/IB: connection request with bad addresses <%pI6c,%pI6c>, rejecting\n",
				      &faddr, &laddr);
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	}
	peer_ours = cmn->ricpc_caps & RDS_IB_CAP_EXT;

	conn = rds_conn_create(&init_net, &laddr, &faddr, &rds_ib_transport,
			       cmn->ricpc_dp_toss, dev_if, GFP_KERNEL);
	if (IS_ERR(conn))
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	if (conn->c_trans != &rds_ib_transport)
		return rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
	cp = rds_conn_path0(conn);
	ic = cp->cp_transport_data;

	mutex_lock(&ic->ic_mutex);
	if (rds_conn_path_destroy_pending(cp)) {
		ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		goto out;
	}
	if (rds_conn_path_transition(cp, RDS_CONN_DOWN, RDS_CONN_CONNECTING)) {
		ret = rds_ib_accept(ic, id, event, cmn, version);
		if (ret) {
			rds_conn_path_drop(cp, false);
			ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		}
		goto out;
	}

	switch (rds_conn_path_state(cp)) {
	case RDS_CONN_CONNECTING:
		rds_ib_stats_inc(s_ib_connect_raced);
		if (ic->ic_ep && !ic->ic_ep->e_active) {
			/* A passive attempt is already under way. */
			ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
			break;
		}
		yield = !peer_ours ||
			memcmp(&conn->c_laddr, &conn->c_faddr,
			       sizeof(conn->c_laddr)) < 0;
		if (!yield) {
			ret = rds_ib_reject(id, RDS_IB_REJ_RACED);
			break;
		}
		rds_ib_ep_abandon(ic);
		ret = rds_ib_accept(ic, id, event, cmn, version);
		if (ret) {
			rds_conn_path_drop(cp, false);
			ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		}
		break;
	case RDS_CONN_UP:
		/* The peer lost its side: drop ours, it will retry. */
		rds_ib_stats_inc(s_ib_listen_closed_stale);
		rds_conn_path_drop_reason(cp, RDS_DROP_PEER_RESTART, 0,
					  "connection request while up");
		ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		break;
	default:
		ret = rds_ib_reject(id, RDS_IB_REJ_INCOMPAT);
		break;
	}
out:
	mutex_unlock(&ic->ic_mutex);
	return ret;
}

/* ------------------------------------------------------------------------
 * Event dispatch
 * ------------------------------------------------------------------------
 */

/* How a CM event that ends the endpoint is recorded. */
static int rds_ib_cm_drop_reason(enum rdma_cm_event_type event)
{
	switch (event) {
	case RDMA_CM_EVENT_DISCONNECTED:
		return RDS_DROP_PEER_DISCONNECT;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return RDS_DROP_DEVICE_REMOVAL;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return RDS_DROP_ADDR_CHANGE;
	default:
		return RDS_DROP_CM_EVENT;
	}
}

/*
 * What rds_ib_ep_destroy() waits for, noted for dead endpoints as well:
 * whether the peer's QP may still send to ours (WIRED), and whether the
 * connection is over for the CM (CM_DONE).
 */
static void rds_ib_cm_note(struct rds_ib_ep *ep, enum rdma_cm_event_type ev)
{
	switch (ev) {
	case RDMA_CM_EVENT_ESTABLISHED:
		set_bit(RDS_IB_EP_WIRED, &ep->e_flags);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		break;
	default:
		return;
	}
	set_bit(RDS_IB_EP_CM_DONE, &ep->e_flags);
	wake_up_all(&ep->e_ic->ic_wait);
}

static int rds_ib_cm_handler(struct rdma_cm_id *id,
			     struct rdma_cm_event *event, bool isv6)
{
	struct rds_ib_ep *ep = id->context;
	struct rds_ib_connection *ic;
	int ret = 0;

	rds_ib_stats_inc(s_ib_evt_handler_call);
	if (!ep) {
		if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST)
			return rds_ib_handle_connect(id, event, isv6);
		/* Listener events (device removal etc.): nothing to do. */
		return 0;
	}

	ic = ep->e_ic;
	rds_ib_cm_note(ep, event->event);
	mutex_lock(&ic->ic_mutex);
	/*
	 * A dead endpoint only waits for its destruction; one in error waits
	 * for the path's shutdown: moving either forward would only start a
	 * connect nobody wants or complete a path being dropped.
	 */
	if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		goto out;

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rds_ib_addr_resolved(ep);
		if (ret)
			rds_ib_ep_error(ep, "address resolved, route failed");
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rds_ib_route_resolved(ep);
		if (ret)
			rds_ib_ep_error(ep, "connect failed");
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		rds_ib_established(ep, event);
		break;
	case RDMA_CM_EVENT_REJECTED:
		rds_ib_rejected(ep, id, event);
		break;
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
	case RDMA_CM_EVENT_ADDR_CHANGE:
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		rds_ib_ep_fail(ep, rds_ib_cm_drop_reason(event->event),
			       event->event, rdma_event_msg(event->event));
		break;
	default:
		break;
	}
out:
	mutex_unlock(&ic->ic_mutex);
	/* Endpoints destroy their ids themselves. */
	return 0;
}

static int rds_ib_cm_handler4(struct rdma_cm_id *id,
			      struct rdma_cm_event *event)
{
	return rds_ib_cm_handler(id, event, false);
}

static int rds_ib_cm_handler6(struct rdma_cm_id *id,
			      struct rdma_cm_event *event)
{
	return rds_ib_cm_handler(id, event, true);
}

/**
 * rds_ib_conn_path_shutdown - tear the path's endpoints down
 * @cp: path, DISCONNECTING
 *
 * Shutdown worker, process context, cp_cm_lock held; or conn_free, should
 * an endpoint have survived the shutdown (path DOWN, destroy pending, no
 * lock held: nothing can attach a new one).  Returns once no
 * endpoint of the path exists any more: every completion has run, every
 * message reference and receive page is released.
 */
void rds_ib_conn_path_shutdown(struct rds_conn_path *cp)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep;

	mutex_lock(&ic->ic_mutex);
	ep = rds_ib_ep_detach(ic);
	mutex_unlock(&ic->ic_mutex);
	if (ep)
		rds_ib_ep_destroy(ep);
	/* Endpoints abandoned by connect races go away on rds_ib_wq. */
	wait_event(ic->ic_wait, atomic_read(&ic->ic_nr_eps) == 0);
	/* The last rds_ib_ep_destroy() is out of its wake-up (@ic lives on). */
	spin_lock_irq(&ic->ic_wait.lock);
	spin_unlock_irq(&ic->ic_wait.lock);
}

/**
 * rds_ib_device_drop_eps - drop every path that uses a departing device
 * @rid: device record, already marked dead
 *
 * Called from the ib_client's remove, process context; returns when every
 * endpoint on the device has been destroyed by its path's shutdown.
 */
void rds_ib_device_drop_eps(struct rds_ib_device *rid)
{
	struct rds_ib_ep *ep;

	spin_lock(&rid->rid_lock);
	list_for_each_entry(ep, &rid->rid_eps, e_rid_item)
		rds_ib_ep_fail(ep, RDS_DROP_DEVICE_REMOVAL, 0,
			       "device removed");
	spin_unlock(&rid->rid_lock);
	wait_event(rid->rid_wait, ({
		bool empty;

		spin_lock(&rid->rid_lock);
		empty = list_empty(&rid->rid_eps);
		spin_unlock(&rid->rid_lock);
		empty;
	}));
}

/* ------------------------------------------------------------------------
 * Listeners
 * ------------------------------------------------------------------------
 */

static int rds_ib_listen_one(rdma_cm_event_handler handler,
			     struct sockaddr *sa, bool v6only,
			     struct rdma_cm_id **out)
{
	struct rdma_cm_id *id;
	int ret;

	id = rdma_create_id(&init_net, handler, NULL, RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return PTR_ERR(id);
	if (v6only) {
		ret = rdma_set_afonly(id, 1);
		if (ret)
			goto fail;
	}
	ret = rdma_bind_addr(id, sa);
	if (ret)
		goto fail;
	ret = rdma_listen(id, RDS_IB_BACKLOG);
	if (ret)
		goto fail;
	*out = id;
	return 0;
fail:
	rdma_destroy_id(id);
	return ret;
}

/**
 * rds_ib_listen_init - listen on 18634 (IPv4) and 16385 (IPv6) in init_net
 *
 * The IPv6 listener is optional (IPv6 may be disabled).
 *
 * Return: 0 or the IPv4 listener's error.
 */
int rds_ib_listen_init(void)
{
	struct sockaddr_in sin = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_ANY),
		.sin_port = htons(RDS_IB_PORT),
	};
	struct sockaddr_in6 sin6 = {
		.sin6_family = AF_INET6,
		.sin6_addr = IN6ADDR_ANY_INIT,
		.sin6_port = htons(RDS_IB_CM_PORT6),
	};
	int ret;

	ret = rds_ib_listen_one(rds_ib_cm_handler4, (struct sockaddr *)&sin,
				false, &rds_ib_listen_id4);
	if (ret) {
		pr_err("RDS/IB: cannot listen on port %u: %d\n",
		       RDS_IB_PORT, ret);
		return ret;
	}
	if (IS_ENABLED(CONFIG_IPV6) && ipv6_mod_enabled()) {
		ret = rds_ib_listen_one(rds_ib_cm_handler6,
					(struct sockaddr *)&sin6, true,
					&rds_ib_listen_id6);
		if (ret)
			pr_notice("RDS/IB: no IPv6 listener: %d\n", ret);
	}
	return 0;
}

/**
 * rds_ib_listen_stop - destroy the listeners
 *
 * Waits for connect-request handlers in progress (rdma_destroy_id()).
 */
void rds_ib_listen_stop(void)
{
	if (rds_ib_listen_id4)
		rdma_destroy_id(rds_ib_listen_id4);
	rds_ib_listen_id4 = NULL;
	if (rds_ib_listen_id6)
		rdma_destroy_id(rds_ib_listen_id6);
	rds_ib_listen_id6 = NULL;
}
