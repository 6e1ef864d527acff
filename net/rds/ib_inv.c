// SPDX-License-Identifier: GPL-2.0
/*
 * ib_inv.c - the invalidation policy: how keys die.
 *
 * Theory of operation
 * ===================
 *
 * A key dies exactly once, by one of three paths, each ending in
 * rds_ib_mr_key_dead() (ib_mr.c), which removes it from the device's index
 * of live keys (md_keys), releases whoever waits for its death and lets
 * the MR return to its pool once its user released it too:
 *
 * 1. Remote invalidation.  We advertise RDS_IB_CAP_SEND_INV in the CM
 *    private data (the reserved1 byte the in-tree module zeroes and never
 *    reads) when our device can take it and rds_ib_inv_force_local is off.
 *    An issuer on a connection whose peer advertised it sends the message
 *    that completes an RDMA or atomic against a use-once cookie (offset
 *    bit RDS_MR_IOVA_USE_ONCE) as IB_WR_SEND_WITH_INV
 *    (rds_ib_inv_send_remote_ok).  The owner's receive completion carries
 *    IB_WC_WITH_INVALIDATE; rds_ib_inv_recv_remote() checks that the rkey
 *    is one of our live use-once keys and retires it without posting
 *    anything.  Anything else is a protocol error: the caller drops the
 *    connection.  The HCA invalidates the key before it generates the
 *    receive completion, so the key is dead before the message is seen.
 *
 * 2. Batched local invalidation.  Keys of MRs released by their user, and
 *    use-once keys whose completing message arrived without remote
 *    invalidation (an in-tree peer, a device without it, or forced), are
 *    queued on the device's pending list.  The batch worker chains up to
 *    rds_ib_inv_batch IB_WR_LOCAL_INVs into one ib_post_send() on the
 *    registration QP with only the last one signalled:
 *
 *      ORDER: strong send queue ordering means that when the last WR of
 *      the chain completes successfully, every LOCAL_INV before it has.
 *
 *    The batch goes out when it is full, when someone waits for one of its
 *    keys (a message completing a use-once RDMA, rds_ib_unuse_mr; an MR
 *    released with invalidate; a full pool), or after rds_ib_inv_flush_us.
 *    A message completing a use-once RDMA is handed on only from the
 *    waiter callback, i.e. after the batch holding its key completed.
 *
 * 3. Recovery.  A failed or flushed LOCAL_INV (or REG_MR) leaves the key's
 *    state unknown: the MRs go to md_unknown and recovery (ib_regqp.c)
 *    deregisters them after draining the registration QP, which kills the
 *    keys for good and releases their waiters.  Such MRs are never reused.
 *
 * A key released while its asynchronous REG_MR (RDS_CMSG_RDMA_MAP) is still
 * in flight is not queued yet: rds_ib_inv_queue() moves it to REG_LINV and
 * the REG_MR completion queues it once the key is live (ib_mr.c).  A
 * REG_MR posted on a connection QP ahead of the message carrying the
 * cookie may still be unhandled when the peer's answer arrives on the
 * receive CQ, even with IB_WC_WITH_INVALIDATE: that remote invalidation
 * is accepted, and the key goes the local way (REG_LINV_NOW, the message
 * held) so that its death still has one owner.
 *
 * Device removal stops the batch worker for good (md_inv_stopped, under
 * md_inv_lock, which every queueing of it takes): a key that moves to LINV
 * afterwards stays off the pending list and removal's deregistration of
 * its MR kills it (ib_mr.c).  Nothing queues md_inv_work of a device state
 * that may already be freed.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "ib.h"
#include <trace/events/rds.h>

#define RDS_IB_INV_MAX_BATCH	64

#define RDS_IB_INV_MAX_FLUSH_US	100000

/*
 * All three may change at run time: each use reads them once with
 * READ_ONCE().  force_local is only looked at when a connection advertises
 * its capabilities and when an op chooses between SEND_WITH_INV and a plain
 * send, so flipping it never strands a key: we keep honouring remote
 * invalidations a peer was already offered.  The two numbers are checked
 * by their ->set, so a bad write is refused and changes nothing.
 */
bool rds_ib_inv_force_local;

static int rds_ib_inv_force_local_set(const char *val,
				      const struct kernel_param *kp)
{
	bool v = true;	/* a bare "rds_ib_inv_force_local" sets it */

	if (val && kstrtobool(val, &v)) {
		pr_err("%s: %s=%.*s refused: must be a boolean (0/1, n/y)\n",
		       KBUILD_MODNAME, kp->name, (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	WRITE_ONCE(rds_ib_inv_force_local, v);
	return 0;
}

static const struct kernel_param_ops rds_ib_inv_force_local_ops = {
	.flags	= KERNEL_PARAM_OPS_FL_NOARG,
	.set	= rds_ib_inv_force_local_set,
	.get	= param_get_bool,
};

module_param_cb(rds_ib_inv_force_local, &rds_ib_inv_force_local_ops,
		&rds_ib_inv_force_local, 0644);
__MODULE_PARM_TYPE(rds_ib_inv_force_local, "bool");
MODULE_PARM_DESC(rds_ib_inv_force_local,
		 " Never use remote invalidation (advertise nor send it): always invalidate locally (default N)");

static unsigned int rds_ib_inv_batch = 16;

RDS_PARAM_UINT(rds_ib_inv_batch, rds_ib_inv_batch, 1, RDS_IB_INV_MAX_BATCH,
	       0644,
	       " LOCAL_INVs chained per post (1..64, default 16); a full batch is posted at once");

static unsigned int rds_ib_inv_flush_us = 100;

RDS_PARAM_UINT(rds_ib_inv_flush_us, rds_ib_inv_flush_us, 0,
	       RDS_IB_INV_MAX_FLUSH_US, 0644,
	       " Microseconds a lazy (non-urgent) invalidation may wait for its batch to fill (0..100000, default 100)");

/**
 * rds_ib_inv_local_caps - the invalidation capability we advertise
 * @rid: the device of the connection
 *
 * Return: RDS_IB_CAP_SEND_INV if we accept SEND_WITH_INV on @rid, else 0.
 */
u8 rds_ib_inv_local_caps(const struct rds_ib_device *rid)
{
	if (!rid || !rid->rid_send_inv || READ_ONCE(rds_ib_inv_force_local))
		return 0;
	return RDS_IB_CAP_SEND_INV;
}

/**
 * rds_ib_inv_send_remote_ok - may the completing SEND invalidate the key?
 * @ep: the connection endpoint the message goes out on
 * @cookie: the RDMA's cookie (rkey | offset << 32)
 *
 * Only keys their owner made use-once (cookie offset bit
 * RDS_MR_IOVA_USE_ONCE, never set by in-tree nodes) and only to a peer
 * that advertised RDS_IB_CAP_SEND_INV.
 *
 * Return: true to send IB_WR_SEND_WITH_INV with the cookie's rkey.
 */
bool rds_ib_inv_send_remote_ok(const struct rds_ib_ep *ep, u64 cookie)
{
	u32 offset = cookie >> 32;

	return (offset & RDS_MR_IOVA_USE_ONCE) &&
	       (ep->e_peer_caps & RDS_IB_CAP_SEND_INV) &&
	       ep->e_rid->rid_send_inv &&
	       !READ_ONCE(rds_ib_inv_force_local);
}

/**
 * rds_ib_inv_recv_remote - a receive completion invalidated a key of ours
 * @ep: endpoint of the receive
 * @rkey: wc->ex.invalidate_rkey (read only for a successful completion)
 *
 * Softirq context.
 *
 * Return: 0 if @rkey was one of our live use-once keys (now retired), or
 *   %-EPROTO - the peer invalidated a key that is not ours or not
 *   use-once: a protocol error; the caller drops the connection.
 */
int rds_ib_inv_recv_remote(struct rds_ib_ep *ep, u32 rkey)
{
	struct rds_ib_mr_dev *md = smp_load_acquire(&ep->e_rid->rid_mr);
	struct rds_ib_mr *mr;
	unsigned long flags;
	int ret = -EPROTO;
	bool kill = false;

	if (!md)
		goto bogus;
	xa_lock_irqsave(&md->md_keys, flags);
	mr = xa_load(&md->md_keys, rkey);
	if (mr && mr->m_use_once) {
		if (mr->m_key_state == RDS_IB_KEY_LIVE) {
			/* We own the key's death now. */
			mr->m_key_state = RDS_IB_KEY_DEAD;
			__xa_erase(&md->md_keys, rkey);
			kill = true;
			ret = 0;
		} else if (mr->m_key_state == RDS_IB_KEY_LINV) {
			/* Freed meanwhile; the queued LOCAL_INV retires it. */
			ret = 0;
		} else if ((mr->m_key_state == RDS_IB_KEY_REG ||
			    mr->m_key_state == RDS_IB_KEY_REG_LINV ||
			    mr->m_key_state == RDS_IB_KEY_REG_LINV_NOW) &&
			   mr->m_reg_ep_gen) {
			/*
			 * Its REG_MR went ahead of the cookie on a connection
			 * QP (this one, or another the cookie was passed on
			 * through) and its completion, on another CQ, has not
			 * been handled yet.  The HCA invalidates only a key
			 * that is valid (the key byte must match), so the
			 * REG_MR ran; rather than a state for "registered and
			 * already dead", the key simply goes the local way:
			 * the message is held and the key invalidated once
			 * the registration completed (rds_ib_unuse_mr()).
			 */
			rds_ib_stats_inc(s_ib_rdma_reg_conn_early_inv);
			ret = 0;
		}
	}
	xa_unlock_irqrestore(&md->md_keys, flags);
	if (kill) {
		trace_rds_mr_invalidate(rkey, true, 0);
		rds_ib_stats_inc(s_ib_rdma_remote_inv);
		rds_ib_mr_key_dead(mr);
	}
	if (!ret)
		return 0;
bogus:
	pr_notice_ratelimited("RDS/IB: <%pI6c,%pI6c> bogus remote invalidation of rkey 0x%x\n",
			      &ep->e_ic->ic_conn->c_laddr,
			      &ep->e_ic->ic_conn->c_faddr, rkey);
	rds_ib_stats_inc(s_ib_rdma_remote_inv_bogus);
	return -EPROTO;
}

/* Put a key whose state we just moved LIVE -> LINV on the pending list. */
static void rds_ib_inv_add_pending(struct rds_ib_mr_dev *md,
				   struct rds_ib_mr *mr, bool now)
{
	unsigned int batch = clamp_t(unsigned int, READ_ONCE(rds_ib_inv_batch),
				     1, RDS_IB_INV_MAX_BATCH);
	unsigned long delay;

	spin_lock_bh(&md->md_inv_lock);
	/* Removal deregisters the MR (the key stays LINV until then). */
	if (md->md_inv_stopped) {
		spin_unlock_bh(&md->md_inv_lock);
		return;
	}
	list_add_tail(&mr->m_item, &md->md_inv_pending);
	if (++md->md_inv_nr >= batch || now) {
		mod_delayed_work(rds_ib_wq, &md->md_inv_work, 0);
	} else {
		delay = usecs_to_jiffies(READ_ONCE(rds_ib_inv_flush_us));
		queue_delayed_work(rds_ib_wq, &md->md_inv_work, delay);
	}
	spin_unlock_bh(&md->md_inv_lock);
}

/* Run the batch worker after @delay, unless removal stopped it. */
static void rds_ib_inv_kick(struct rds_ib_mr_dev *md, unsigned long delay)
{
	spin_lock_bh(&md->md_inv_lock);
	if (!md->md_inv_stopped)
		mod_delayed_work(rds_ib_wq, &md->md_inv_work, delay);
	spin_unlock_bh(&md->md_inv_lock);
}

/**
 * rds_ib_inv_flush - post the pending invalidations now
 * @md: device state
 */
void rds_ib_inv_flush(struct rds_ib_mr_dev *md)
{
	rds_ib_inv_kick(md, 0);
}

/**
 * rds_ib_inv_queue - invalidate an MR's key if it is still live
 * @mr: the MR
 * @now: post the batch now instead of letting it fill
 *
 * Any context.  Nothing happens when the key is already dying or dead; a
 * key still being registered asynchronously is invalidated once its REG_MR
 * completed.
 */
void rds_ib_inv_queue(struct rds_ib_mr *mr, bool now)
{
	struct rds_ib_mr_dev *md = mr->m_md;
	unsigned long flags;
	bool live;

	xa_lock_irqsave(&md->md_keys, flags);
	live = mr->m_key_state == RDS_IB_KEY_LIVE;
	if (live)
		mr->m_key_state = RDS_IB_KEY_LINV;
	else if (mr->m_key_state == RDS_IB_KEY_REG ||
		 mr->m_key_state == RDS_IB_KEY_REG_LINV)
		/* Asynchronous REG_MR in flight: its completion queues it. */
		mr->m_key_state = now ? RDS_IB_KEY_REG_LINV_NOW :
					RDS_IB_KEY_REG_LINV;
	xa_unlock_irqrestore(&md->md_keys, flags);
	if (live)
		rds_ib_inv_add_pending(md, mr, now);
	else if (now)
		rds_ib_inv_flush(md);
}

static void rds_ib_inv_unhold(struct rds_ib_inv_waiter *w)
{
	struct rds_ib_mr *mr = container_of(w, struct rds_ib_mr, m_unuse_w);

	rds_inc_unhold(mr->m_unuse_inc);
}

/**
 * rds_ib_unuse_mr - ->unuse_mr(): a message completing use-once @mr came
 * @mr: rds.ko's MR (off its socket; its reference passes to us)
 * @inc: the message
 *
 * If the key was invalidated remotely on @inc's receive completion it is
 * already dead and @inc is delivered at once.  Otherwise @inc is held,
 * the key's LOCAL_INV is posted now and the hold goes when the key is
 * dead (after the batch completed, or after recovery deregistered the MR).
 * A key whose REG_MR completion was not handled yet (one posted on a
 * connection QP ahead of the message that carried the cookie, even if
 * the peer invalidated it remotely) is invalidated locally once it
 * completed, and @inc is held until then.
 */
void rds_ib_unuse_mr(struct rds_mr *mr, struct rds_incoming *inc)
{
	struct rds_ib_mr *ibmr = mr->r_trans_private;
	struct rds_ib_mr_dev *md;
	unsigned long flags;
	bool live = false, wait = false;

	if (!ibmr) {
		rds_mr_put(mr);		/* the reference ->get_mr() gave us */
		return;
	}
	md = ibmr->m_md;
	ibmr->m_unuse_w.w_done = rds_ib_inv_unhold;
	ibmr->m_unuse_inc = inc;
	rds_inc_hold(inc);

	xa_lock_irqsave(&md->md_keys, flags);
	switch (ibmr->m_key_state) {
	case RDS_IB_KEY_REG:
	case RDS_IB_KEY_REG_LINV:
	case RDS_IB_KEY_REG_LINV_NOW:
		/*
		 * The REG_MR's completion (a connection QP's, handled after
		 * this receive) makes the key live and posts its LOCAL_INV
		 * at once; the hold goes when that completes.
		 */
		ibmr->m_key_state = RDS_IB_KEY_REG_LINV_NOW;
		fallthrough;
	case RDS_IB_KEY_LINV:
	case RDS_IB_KEY_UNKNOWN:
		list_add_tail(&ibmr->m_unuse_w.w_item, &ibmr->m_waiters);
		wait = true;
		break;
	case RDS_IB_KEY_LIVE:
		ibmr->m_key_state = RDS_IB_KEY_LINV;
		live = true;
		list_add_tail(&ibmr->m_unuse_w.w_item, &ibmr->m_waiters);
		wait = true;
		break;
	default:
		break;
	}
	xa_unlock_irqrestore(&md->md_keys, flags);

	if (live)
		rds_ib_inv_add_pending(md, ibmr, true);
	else if (wait)
		rds_ib_inv_flush(md);
	rds_ib_mr_release(ibmr, false);
	if (!wait)
		rds_inc_unhold(inc);
}

/*
 * An unsignalled LOCAL_INV only completes on error.  The batch's last,
 * signalled WR then completes flushed and retires the whole batch.
 */
static void rds_ib_inv_wr_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *mr = container_of(wc->wr_cqe, struct rds_ib_mr,
					    m_inv_cqe);

	/* WARNING: Only wr_cqe and status are reliable at this point */
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: LOCAL_INV failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_mr_qp_error(mr->m_md, "LOCAL_INV completion error");
	}
}

static void rds_ib_inv_batch_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_inv_batch *b = container_of(wc->wr_cqe,
						  struct rds_ib_inv_batch,
						  b_cqe);
	struct rds_ib_mr_dev *md = b->b_md;
	struct rds_ib_mr *mr, *tmp;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_rdma_inv_completions);
	rds_ib_mr_sq_put(md, b->b_nr);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: LOCAL_INV batch failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_mr_qp_error(md, "LOCAL_INV batch completion error");
	}
	list_for_each_entry_safe(mr, tmp, &b->b_mrs, m_item) {
		list_del_init(&mr->m_item);
		trace_rds_mr_invalidate(mr->m_rkey, false, wc->status);
		if (wc->status == IB_WC_SUCCESS)
			rds_ib_mr_key_dead(mr);
		else
			rds_ib_mr_key_unknown(mr);
	}
	kfree(b);
	rds_ib_mr_dev_put(md);
}

/* Could not post: the keys' state is unknown; recovery deregisters them. */
static void rds_ib_inv_give_up(struct list_head *list)
{
	struct rds_ib_mr *mr, *tmp;

	list_for_each_entry_safe(mr, tmp, list, m_item) {
		list_del_init(&mr->m_item);
		rds_ib_mr_key_unknown(mr);
	}
}

/* Post one chain of up to a batch of pending LOCAL_INVs.  Return: posted. */
static bool rds_ib_inv_post_batch(struct rds_ib_mr_dev *md)
{
	unsigned int max = clamp_t(unsigned int, READ_ONCE(rds_ib_inv_batch),
				   1, RDS_IB_INV_MAX_BATCH);
	const struct ib_send_wr *bad_wr;
	struct ib_send_wr *first = NULL, **prev = &first, *last = NULL;
	struct rds_ib_inv_batch *b;
	struct rds_ib_mr *mr;
	unsigned int nr;
	int ret;

	b = kmalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		rds_ib_inv_kick(md, 1);
		return false;
	}
	b->b_md = md;
	b->b_nr = 0;
	INIT_LIST_HEAD(&b->b_mrs);
	b->b_cqe.done = rds_ib_inv_batch_done;

	spin_lock_bh(&md->md_inv_lock);
	while (b->b_nr < max &&
	       (mr = list_first_entry_or_null(&md->md_inv_pending,
					      struct rds_ib_mr, m_item))) {
		list_move_tail(&mr->m_item, &b->b_mrs);
		md->md_inv_nr--;
		b->b_nr++;
	}
	spin_unlock_bh(&md->md_inv_lock);
	if (!b->b_nr) {
		kfree(b);
		return false;
	}

	if (rds_ib_mr_qp_get(md, &md->md_laddr)) {
		rds_ib_inv_give_up(&b->b_mrs);
		kfree(b);
		return true;
	}
	if (!rds_ib_mr_sq_get(md, b->b_nr)) {
		up_read(&md->md_qp_sem);
		/* Back to the head of the queue; completions make room. */
		spin_lock_bh(&md->md_inv_lock);
		list_splice(&b->b_mrs, &md->md_inv_pending);
		md->md_inv_nr += b->b_nr;
		spin_unlock_bh(&md->md_inv_lock);
		kfree(b);
		rds_ib_inv_kick(md, 1);
		return false;
	}

	list_for_each_entry(mr, &b->b_mrs, m_item) {
		struct ib_send_wr *wr = &mr->m_inv_wr;

		memset(wr, 0, sizeof(*wr));
		mr->m_inv_cqe.done = rds_ib_inv_wr_done;
		wr->wr_cqe = &mr->m_inv_cqe;
		wr->opcode = IB_WR_LOCAL_INV;
		wr->ex.invalidate_rkey = mr->m_rkey;
		*prev = wr;
		prev = &wr->next;
		last = wr;
	}
	last->wr_cqe = &b->b_cqe;
	last->send_flags = IB_SEND_SIGNALED;

	/*
	 * ORDER: once posted, the batch may complete (and be freed by
	 * rds_ib_inv_batch_done()) before ib_post_send() even returns:
	 * nothing below may touch @b on success.
	 */
	nr = b->b_nr;
	kref_get(&md->md_ref);
	ret = ib_post_send(md->md_qp, first, &bad_wr);
	if (ret) {
		/*
		 * Only the WRs before @bad_wr were posted and the signalled
		 * one was not: no batch completion will come.  The drain of
		 * recovery completes the posted ones; the keys are unknown.
		 * ORDER: before md_qp_sem is released, so recovery takes
		 * these MRs only after it destroyed (drained) this QP.
		 */
		rds_ib_mr_qp_error(md, "LOCAL_INV post failed");
		rds_ib_inv_give_up(&b->b_mrs);
		up_read(&md->md_qp_sem);
		kfree(b);
		rds_ib_mr_dev_put(md);
		return true;
	}
	up_read(&md->md_qp_sem);
	rds_ib_stats_add(s_ib_rdma_local_inv, nr);
	rds_ib_stats_inc(s_ib_rdma_inv_batches);
	return true;
}

/**
 * rds_ib_inv_worker - post the pending invalidations (md_inv_work)
 * @work: the work item
 *
 * Process context (rds_ib_wq).
 */
void rds_ib_inv_worker(struct work_struct *work)
{
	struct rds_ib_mr_dev *md = container_of(to_delayed_work(work),
						struct rds_ib_mr_dev,
						md_inv_work);

	while (rds_ib_inv_post_batch(md))
		cond_resched();
}

/**
 * rds_ib_inv_dev_init - set up a device's invalidation state
 * @md: device state being made
 */
void rds_ib_inv_dev_init(struct rds_ib_mr_dev *md)
{
	spin_lock_init(&md->md_inv_lock);
	INIT_LIST_HEAD(&md->md_inv_pending);
	md->md_inv_nr = 0;
	md->md_inv_stopped = false;
	INIT_DELAYED_WORK(&md->md_inv_work, rds_ib_inv_worker);
}

/**
 * rds_ib_inv_dev_stop - the device goes: stop posting, for good
 * @md: device state (md_dead set, registration QP destroyed)
 *
 * Process context.  Once this returns the batch worker neither runs nor is
 * queued again.  Pending keys stay in state LINV; device removal
 * deregisters their MRs.
 */
void rds_ib_inv_dev_stop(struct rds_ib_mr_dev *md)
{
	struct rds_ib_mr *mr, *tmp;

	spin_lock_bh(&md->md_inv_lock);
	md->md_inv_stopped = true;
	spin_unlock_bh(&md->md_inv_lock);
	cancel_delayed_work_sync(&md->md_inv_work);
	spin_lock_bh(&md->md_inv_lock);
	list_for_each_entry_safe(mr, tmp, &md->md_inv_pending, m_item)
		list_del_init(&mr->m_item);
	md->md_inv_nr = 0;
	spin_unlock_bh(&md->md_inv_lock);
}
