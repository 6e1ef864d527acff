// SPDX-License-Identifier: GPL-2.0
/*
 * ib_regqp.c - the registration QP: where REG_MR and LOCAL_INV are posted.
 *
 * Theory of operation
 * ===================
 *
 * Every device with registrations has one RC QP on its PD for them (made by the
 * first registration, rds_ib_mr_qp_get()), connected through rdma_cm to a
 * second QP on the same device: a listener on the socket's bound address and an
 * ephemeral port, and an active cm_id dialling it.  The connection requests the
 * listener accepts are only our own active side's (its source address, and port
 * except on iWARP where the port mapper may remap it, and md_nonce, a random
 * number of each incarnation, as private data: the listener is reachable from
 * the network).  The active QP's send queue (RDS_IB_REGQP_SQ entries, one kept
 * free for the drain) is shared by every registration and the invalidation
 * worker through rds_ib_mr_sq_get()/_put(); completions go to the handlers of
 * ib_mr.c and ib_inv.c through wr_cqe.
 *
 * Users post with md_qp_sem held for reading; making and destroying the
 * QP take it for writing.  Any failed or flushed completion, a fatal QP
 * event, a disconnect, a failed LOCAL_INV post or a REG_MR that timed out
 * calls rds_ib_mr_qp_error() (any context, no lock), which marks the QP
 * broken and queues the recovery work (every call does, so MRs given up
 * after one run are reaped by the next; queue_work() ignores a pending
 * one): it disconnects, drains
 * (every posted WR completes, most as flushed) and destroys the QPs and
 * cm_ids, then runs ib_mr.c's recycle step, rds_ib_mr_reap_list(), for
 * the MRs whose key state the failure left unknown.  The next user of the
 * QP (a registration, or the invalidation worker on md_laddr) makes a
 * fresh self-connection.  Device removal destroys the QP the same way
 * (rds_ib_mr_device_remove() in ib_mr.c).
 */
#include <linux/kernel.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <net/ipv6.h>

#include "ib.h"

/*
 * Test knob: the next N attempts to make a registration QP, on any
 * device, fail, as when the device is out of QPs or the address went
 * away meanwhile.
 */
static unsigned int rds_ib_mr_qp_fail_next;

RDS_PARAM_UINT(rds_ib_mr_qp_fail_next, rds_ib_mr_qp_fail_next, 0, 1000000,
	       0644,
	       " Test: fail the next N makings of a registration QP (0..1000000, default 0)");

/* ---- send queue accounting of the registration QP ---- */

/**
 * rds_ib_mr_sq_get - reserve send queue entries without sleeping
 * @md: device state
 * @n: entries
 *
 * Return: true if @n entries were reserved.
 */
bool rds_ib_mr_sq_get(struct rds_ib_mr_dev *md, unsigned int n)
{
	if (atomic_sub_return(n, &md->md_sq_avail) >= 0)
		return true;
	atomic_add(n, &md->md_sq_avail);
	return false;
}

/**
 * rds_ib_mr_sq_put - return send queue entries
 * @md: device state
 * @n: entries
 */
void rds_ib_mr_sq_put(struct rds_ib_mr_dev *md, unsigned int n)
{
	atomic_add(n, &md->md_sq_avail);
	wake_up(&md->md_sq_wait);
}

/* ---- the registration QP: an rdma_cm connection to ourselves ---- */

static void rds_ib_mr_qp_event(struct ib_event *event, void *context)
{
	struct rds_ib_mr_dev *md = context;

	if (event->event == IB_EVENT_QP_FATAL ||
	    event->event == IB_EVENT_QP_REQ_ERR ||
	    event->event == IB_EVENT_QP_ACCESS_ERR)
		rds_ib_mr_qp_error(md, ib_event_msg(event->event));
}

static int rds_ib_mr_create_qp(struct rds_ib_mr_dev *md,
			       struct rdma_cm_id *id, bool active)
{
	struct rds_ib_device *rid = md->md_rid;
	struct ib_qp_init_attr attr = {};

	attr.event_handler = rds_ib_mr_qp_event;
	attr.qp_context = md;
	attr.cap.max_send_wr = active ? RDS_IB_REGQP_SQ + 1 : 1;
	attr.cap.max_recv_wr = 1;
	attr.cap.max_send_sge = 1;
	attr.cap.max_recv_sge = 1;
	attr.sq_sig_type = IB_SIGNAL_REQ_WR;
	attr.qp_type = IB_QPT_RC;
	attr.send_cq = md->md_cq;
	attr.recv_cq = md->md_cq;
	return rdma_create_qp(id, rid->rid_pd, &attr);
}

static void rds_ib_mr_conn_param(struct rdma_conn_param *param)
{
	memset(param, 0, sizeof(*param));
	param->retry_count = RDS_IB_DEFAULT_RETRY_COUNT;
	param->rnr_retry_count = 7;
}

/* Same address (and, with @port, the same port)? */
static bool rds_ib_mr_same_addr(const struct sockaddr *a,
				const struct sockaddr *b, bool port)
{
	if (a->sa_family != b->sa_family)
		return false;
	if (a->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)a;
		const struct sockaddr_in *y = (const struct sockaddr_in *)b;

		return x->sin_addr.s_addr == y->sin_addr.s_addr &&
		       (!port || x->sin_port == y->sin_port);
	}
	if (a->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)a;
		const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)b;

		return ipv6_addr_equal(&x->sin6_addr, &y->sin6_addr) &&
		       (!port || x->sin6_port == y->sin6_port);
	}
	return false;
}

/**
 * rds_ib_mr_req_ours - is a CONNECT_REQUEST our own active side's?
 * @md: device state
 * @id: the new passive cm_id of the request
 * @event: the request
 *
 * The listener of the self-connection listens on an address anyone on
 * the network can reach; accepting a stranger would give it an RC QP on
 * our PD.  Ours comes from the active cm_id's source address and port
 * and carries md_nonce, a random number remade with every registration
 * QP, as its private data (rdma_cm may pad the private data: only the
 * first bytes count).  On iWARP the TCP source port may be remapped (the
 * iWARP port mapper), so there only the address is compared; the nonce is
 * what a stranger cannot forge.
 *
 * Return: true if the request is ours.
 */
static bool rds_ib_mr_req_ours(struct rds_ib_mr_dev *md,
			       struct rdma_cm_id *id,
			       struct rdma_cm_event *event)
{
	const struct rdma_conn_param *conn = &event->param.conn;

	if (!conn->private_data ||
	    conn->private_data_len < sizeof(md->md_nonce))
		return false;
	if (memcmp(conn->private_data, &md->md_nonce, sizeof(md->md_nonce)))
		return false;
	return rds_ib_mr_same_addr((struct sockaddr *)&id->route.addr.dst_addr,
				   (struct sockaddr *)&md->md_active_src,
				   !rdma_protocol_iwarp(id->device,
							id->port_num));
}

static void rds_ib_mr_cm_fail(struct rds_ib_mr_dev *md, int err)
{
	if (!completion_done(&md->md_cm_done)) {
		md->md_cm_status = err;
		complete(&md->md_cm_done);
	} else {
		rds_ib_mr_qp_error(md, "registration QP disconnected");
	}
}

/*
 * CM events of the self-connection.  The listener, the active id and the
 * passive id all have @md as context.  Returning non-zero for a new
 * passive id makes rdma_cm destroy it.
 */
static int rds_ib_mr_cm_handler(struct rdma_cm_id *id,
				struct rdma_cm_event *event)
{
	struct rds_ib_mr_dev *md = id->context;
	struct rdma_conn_param param;
	int ret = 0;

	switch (event->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ret = rdma_resolve_route(id, RDS_IB_REGQP_TIMEOUT_MS);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = rds_ib_mr_create_qp(md, id, true);
		if (!ret) {
			rds_ib_mr_conn_param(&param);
			param.private_data = &md->md_nonce;
			param.private_data_len = sizeof(md->md_nonce);
			/* The listener's check; its request comes after. */
			memcpy(&md->md_active_src, &id->route.addr.src_addr,
			       sizeof(md->md_active_src));
			ret = rdma_connect_locked(id, &param);
		}
		break;
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		/* Only our own active side may come, and only once. */
		if (md->md_passive_id || !rds_ib_mr_req_ours(md, id, event)) {
			rds_ib_stats_inc(s_ib_rdma_regqp_foreign_req);
			return 1;
		}
		ret = rds_ib_mr_create_qp(md, id, false);
		if (ret)
			return 1;
		rds_ib_mr_conn_param(&param);
		ret = rdma_accept(id, &param);
		if (ret) {
			rdma_destroy_qp(id);
			return 1;
		}
		md->md_passive_id = id;
		return 0;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id == md->md_active_id && !completion_done(&md->md_cm_done)) {
			md->md_cm_status = 0;
			complete(&md->md_cm_done);
		}
		break;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_REJECTED:
		if (id == md->md_active_id)
			rds_ib_mr_cm_fail(md, -ECONNREFUSED);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		if (id != md->md_listen_id)
			rds_ib_mr_cm_fail(md, -ENETRESET);
		break;
	default:
		break;
	}
	if (ret && id == md->md_active_id)
		rds_ib_mr_cm_fail(md, ret);
	/* The active id is ours to destroy, never rdma_cm's. */
	return 0;
}

/**
 * rds_ib_mr_qp_destroy - tear the registration self-connection down
 * @md: device state
 *
 * md_qp_sem held for writing, process context (ib_drain_qp() sleeps).
 * Every WR posted on the QP has completed, flushed if need be, when this
 * returns, so the caller may then reap the MRs whose keys it left
 * UNKNOWN (rds_ib_mr_reap_list()).  Idempotent: a QP or id already
 * gone is skipped.  The next rds_ib_mr_qp_get() makes a new one.
 */
void rds_ib_mr_qp_destroy(struct rds_ib_mr_dev *md)
{
	if (md->md_active_id && md->md_active_id->qp) {
		rdma_disconnect(md->md_active_id);
		/* Every posted WR completes (flushed) before this returns. */
		ib_drain_qp(md->md_active_id->qp);
		rdma_destroy_qp(md->md_active_id);
	}
	md->md_qp = NULL;
	if (md->md_active_id)
		rdma_destroy_id(md->md_active_id);
	md->md_active_id = NULL;
	if (md->md_listen_id)
		rdma_destroy_id(md->md_listen_id);
	md->md_listen_id = NULL;
	if (md->md_passive_id) {
		if (md->md_passive_id->qp)
			rdma_destroy_qp(md->md_passive_id);
		rdma_destroy_id(md->md_passive_id);
	}
	md->md_passive_id = NULL;
	if (md->md_cq)
		ib_free_cq(md->md_cq);
	md->md_cq = NULL;
	md->md_qp_gen++;
}

static void rds_ib_mr_fill_addr(struct sockaddr_storage *ss,
				const struct in6_addr *addr, __be16 port)
{
	memset(ss, 0, sizeof(*ss));
	if (ipv6_addr_v4mapped(addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
		sin->sin_port = port;
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *addr;
		sin6->sin6_port = port;
	}
}

/* The port rdma_bind_addr() chose for @id. */
static __be16 rds_ib_mr_bound_port(struct rdma_cm_id *id)
{
	struct sockaddr *sa = (struct sockaddr *)&id->route.addr.src_addr;

	if (sa->sa_family == AF_INET)
		return ((struct sockaddr_in *)sa)->sin_port;
	return ((struct sockaddr_in6 *)sa)->sin6_port;
}

/*
 * Make the self-connection on @laddr (an address of the device).
 * md_qp_sem held for writing.
 */
static int rds_ib_mr_qp_create(struct rds_ib_mr_dev *md,
			       const struct in6_addr *laddr)
{
	struct rds_ib_device *rid = md->md_rid;
	struct sockaddr_storage src, dst;
	int ret;

	md->md_cq = ib_alloc_cq(rid->rid_dev, md, RDS_IB_REGQP_SQ + 8, 0,
				IB_POLL_SOFTIRQ);
	if (IS_ERR(md->md_cq)) {
		ret = PTR_ERR(md->md_cq);
		md->md_cq = NULL;
		return ret;
	}
	if (rds_fault_take(&rds_ib_mr_qp_fail_next)) {
		ret = -ENETUNREACH;
		goto fail;
	}
	reinit_completion(&md->md_cm_done);
	md->md_cm_status = -ETIMEDOUT;
	/* Before the listener exists: its handler reads them. */
	get_random_bytes(&md->md_nonce, sizeof(md->md_nonce));
	memset(&md->md_active_src, 0, sizeof(md->md_active_src));

	md->md_listen_id = rdma_create_id(&init_net, rds_ib_mr_cm_handler, md,
					  RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(md->md_listen_id)) {
		ret = PTR_ERR(md->md_listen_id);
		md->md_listen_id = NULL;
		goto fail;
	}
	rds_ib_mr_fill_addr(&src, laddr, 0);
	ret = rdma_bind_addr(md->md_listen_id, (struct sockaddr *)&src);
	if (ret)
		goto fail;
	if (md->md_listen_id->device != rid->rid_dev) {
		ret = -EADDRNOTAVAIL;
		goto fail;
	}
	ret = rdma_listen(md->md_listen_id, 1);
	if (ret)
		goto fail;

	md->md_active_id = rdma_create_id(&init_net, rds_ib_mr_cm_handler, md,
					  RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(md->md_active_id)) {
		ret = PTR_ERR(md->md_active_id);
		md->md_active_id = NULL;
		goto fail;
	}
	rds_ib_mr_fill_addr(&src, laddr, 0);
	rds_ib_mr_fill_addr(&dst, laddr, rds_ib_mr_bound_port(md->md_listen_id));
	ret = rdma_resolve_addr(md->md_active_id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst,
				RDS_IB_REGQP_TIMEOUT_MS);
	if (ret)
		goto fail;
	if (!wait_for_completion_timeout(&md->md_cm_done,
					 msecs_to_jiffies(3 * RDS_IB_REGQP_TIMEOUT_MS))) {
		ret = -ETIMEDOUT;
		goto fail;
	}
	ret = md->md_cm_status;
	if (ret)
		goto fail;
	md->md_qp = md->md_active_id->qp;
	md->md_laddr = *laddr;
	atomic_set(&md->md_sq_avail, RDS_IB_REGQP_SQ);
	md->md_broken = false;
	return 0;

fail:
	pr_warn_ratelimited("RDS/IB: %s: cannot make the registration QP: %d\n",
			    dev_name(&rid->rid_dev->dev), ret);
	rds_ib_mr_qp_destroy(md);
	return ret;
}

/**
 * rds_ib_mr_recover_worker - rebuild a broken registration QP
 * @work: md_recover_work of the device state
 *
 * Queued by rds_ib_mr_qp_error() with a reference on the device state,
 * which it drops.  Tears down the QP if it is still the broken one (a
 * registration may have rebuilt it first), then reaps the MRs whose keys
 * a failed or flushed WR left UNKNOWN: the drain guarantees no WR refers
 * to them any more.  The QP itself is made again on the next use.
 */
void rds_ib_mr_recover_worker(struct work_struct *work)
{
	struct rds_ib_mr_dev *md = container_of(work, struct rds_ib_mr_dev,
						md_recover_work);
	LIST_HEAD(unknown);

	down_write(&md->md_qp_sem);
	if (md->md_broken && md->md_qp) {
		pr_info("RDS/IB: %s: rebuilding the registration QP\n",
			dev_name(&md->md_rid->rid_dev->dev));
		rds_ib_mr_qp_destroy(md);
	}
	/* The QP drained, or is not broken: no WR refers to these MRs. */
	rds_ib_mr_take_unknown(md, &unknown);
	up_write(&md->md_qp_sem);
	rds_ib_mr_reap_list(md, &unknown);
	rds_ib_mr_dev_put(md);
}

/**
 * rds_ib_mr_reap_soon - deregister the MRs on md_unknown, QP or not
 * @md: device state
 *
 * Any context.  For MRs whose failed WR was on a connection QP (a REG_MR
 * of rds_ib_mr_conn_post()): its completion came, so no WR refers to
 * them, and the registration QP is left alone; the recovery work reaps
 * without tearing down a QP that is not broken.
 */
void rds_ib_mr_reap_soon(struct rds_ib_mr_dev *md)
{
	kref_get(&md->md_ref);
	if (!queue_work(rds_ib_wq, &md->md_recover_work))
		rds_ib_mr_dev_put(md);
}

/**
 * rds_ib_mr_qp_error - a WR on the registration QP failed or was flushed
 * @md: device state
 * @why: for the log
 *
 * Any context.  The QP is rebuilt (disconnect, drain, reap, reconnect on
 * the next registration).  The recovery work is queued on every call,
 * not only the first: an MR put on md_unknown after the work's reap, for
 * example one the invalidation worker gave up on because the QP could not
 * be made again (md_broken stays set until one is), would otherwise wait
 * for the next registration on the device, holding its pinned pages and
 * any use-once message waiting for its key's death.  A work item already
 * pending is not queued twice, and one that runs again finds nothing to
 * tear down and reaps.
 */
void rds_ib_mr_qp_error(struct rds_ib_mr_dev *md, const char *why)
{
	if (!READ_ONCE(md->md_broken)) {
		WRITE_ONCE(md->md_broken, true);
		pr_info_ratelimited("RDS/IB: %s: registration QP error: %s\n",
				    dev_name(&md->md_rid->rid_dev->dev), why);
	}
	kref_get(&md->md_ref);
	if (!queue_work(rds_ib_wq, &md->md_recover_work))
		rds_ib_mr_dev_put(md);
}

/**
 * rds_ib_mr_qp_get - a usable registration QP, made on first use
 * @md: device state
 * @laddr: an address of the device to connect the QP to itself on
 *
 * Process context.  On success md_qp_sem is held for reading; the caller
 * posts on md_qp and releases it.
 *
 * Return: 0, or the errno of making the self-connection.
 */
int rds_ib_mr_qp_get(struct rds_ib_mr_dev *md,
			    const struct in6_addr *laddr)
{
	LIST_HEAD(unknown);
	int ret = 0;

	for (;;) {
		down_read(&md->md_qp_sem);
		if (md->md_dead) {
			up_read(&md->md_qp_sem);
			return -ENODEV;
		}
		if (md->md_qp && !READ_ONCE(md->md_broken))
			return 0;
		up_read(&md->md_qp_sem);

		down_write(&md->md_qp_sem);
		if (md->md_qp && READ_ONCE(md->md_broken))
			rds_ib_mr_qp_destroy(md);
		rds_ib_mr_take_unknown(md, &unknown);
		if (!md->md_qp && !md->md_dead)
			ret = rds_ib_mr_qp_create(md, laddr);
		up_write(&md->md_qp_sem);
		rds_ib_mr_reap_list(md, &unknown);
		if (ret)
			return ret;
	}
}
