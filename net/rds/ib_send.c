// SPDX-License-Identifier: GPL-2.0
/*
 * ib_send.c - send ring, fragments, ACKs and credits.
 *
 * Theory of operation
 * ===================
 *
 * Framing (wire-compatible with the in-tree rds_rdma).  A message of L
 * payload bytes goes out as max(1, ceil(L / 4096)) SENDs.  Every SEND
 * carries a full copy of the 48-byte header (same sequence, length and
 * ports) in its first SGE and up to 4096 payload bytes in the following
 * SGEs.  h_ack (the piggy-backed ACK) and h_credit may differ per fragment,
 * so each fragment's header checksum is computed on its own copy.  The last
 * fragment is solicited.  Immediate data is never used.
 *
 * Send ring.  e_send_nr slots, each with its own header buffer (one
 * DMA-mapped array) and its own ib_cqe.  Slots are taken in ring order by
 * ->xmit() (serialised by rds.ko's IN_XMIT bit) and released in ring order
 * by the send completion handler: a signalled SEND completing means every
 * earlier SEND of the QP completed too (send queue ordering), so one
 * completion releases every slot up to it.  The last fragment's slot owns
 * the message reference and its DMA mapping.
 *
 * Doorbells and signalling.  ->xmit() does not post: it appends the
 * message's fragments to the endpoint's pending chain, and
 * rds_ib_send_flush() posts the chain with one ib_post_send() when rds.ko
 * ends its batch (->xmit_path_complete(), which it calls on every way out
 * of its send loop, with IN_XMIT still held), when the chain reaches
 * RDS_IB_POST_BATCH WRs (a large message may take it past that, up to the
 * free slots), and before an RDMA or atomic WR is posted (they must not
 * overtake earlier messages' SENDs).  The last WR of every post is
 * signalled, and every net.rds.ib.max_unsignaled_wr-th WR within one, and
 * the last fragment of a message with RDMA or atomic ops (their status is
 * that of its own completion, not of a later WR's), so a queue of small
 * messages costs one doorbell and one completion per batch instead of one
 * per message, and no posted WR ever waits for a completion that is not
 * coming.
 *
 * Ring sequence numbers (u32, wrapping) name slot uses, so a stale
 * completion (flush after release) is recognised and ignored; slot indices
 * are kept apart from them (rds_ib_ring_next()), so any ring size works
 * across the 2^32 wrap.  Only the completion handler releases slots, and it
 * hands them back to xmit with release ordering (e_send_free).
 *
 * ACKs.  The receive side records the highest sequence received in order
 * (e_ack_next) and whether the peer asked for an ACK.  Every outgoing
 * fragment piggy-backs e_ack_next.  When an ACK is requested and nothing
 * is going out, one ACK-only header (sport = dport = seq = 0) is sent on a
 * dedicated WR outside the ring; at most one is in flight and requests
 * arriving meanwhile are coalesced into the next one, sent from the ACK's
 * completion.
 *
 * Credits (only when both sides enabled net.rds.ib.flow_control).  One
 * atomic packs the send credits the peer gave us (low 16 bits) and the
 * receive buffers we posted but have not advertised yet (high 16 bits),
 * so a sender takes credits and advertises posted buffers in one cmpxchg.
 * Every SEND, ACK included, costs one credit.  The last credit is kept for
 * a SEND that advertises credits, so two peers can never both wait for
 * credits.  A peer that enforces our credits while we do not enforce its
 * (an in-tree passive side that saw credits in our REQ) still gets them:
 * RDS_IB_EP_ADV_CREDITS is independent of RDS_IB_EP_FLOWCTL.
 *
 * Posted credits ride on whatever we send next.  An ACK-only message of
 * their own goes out (rds_ib_credit_update_due()) once rds_ib_rx_batch()
 * are waiting, or when the peer may be unable to send data: the advertised
 * buffers still posted on our ring (its credits, as far as we can know)
 * are 1 or none.  With max_recv_allocation keeping the ring below the
 * batch the second rule is the one that moves a one-way flow; an ACK costs
 * the peer a receive slot, so the rule is shaped not to answer ACKs with
 * ACKs for ever (see the function for the argument).
 *
 * Errors: a failed post goes to rds_ib_ep_post_error(), a failed
 * completion to rds_ib_ep_wc_error(); the teardown releases whatever the
 * ring still holds.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>

#include "ib.h"

/**
 * rds_ib_header_csum - set the checksum of a header we are about to send
 * @hdr: header copy in a DMA buffer
 */
void rds_ib_header_csum(struct rds_header *hdr)
{
	rds_header_csum_set(hdr);
}

/**
 * rds_ib_tx_kick - resume a sender that stopped for lack of room
 * @ep: endpoint
 * @cp: its path
 *
 * Room is send ring slots, credits, or RDMA send queue entries.  ORDER:
 * the caller made the room visible before this; xmit sets TX_FULL before
 * its last look for room, so one of the two always sees the other.
 */
void rds_ib_tx_kick(struct rds_ib_ep *ep, struct rds_conn_path *cp)
{
	smp_mb__before_atomic();
	if (test_bit(RDS_IB_EP_TX_FULL, &ep->e_flags) &&
	    test_and_clear_bit(RDS_IB_EP_TX_FULL, &ep->e_flags) &&
	    !test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		rds_send_path_kick(cp);
}

/* ------------------------------------------------------------------------
 * Credits
 * ------------------------------------------------------------------------
 */

/*
 * Take up to @wanted send credits and, if any are taken (or @need_posted),
 * up to @max_posted posted credits to advertise.  Without flow control
 * every request is granted and only posted credits are counted.
 * Return: credits taken; *@adv gets the credits to put in h_credit.
 */
static u32 rds_ib_grab_credits(struct rds_ib_ep *ep, u32 wanted, u32 *adv,
			       bool need_posted, u32 max_posted)
{
	bool flowctl = test_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags);
	bool advertise = test_bit(RDS_IB_EP_ADV_CREDITS, &ep->e_flags);
	int old, new;
	u32 avail, posted, got, give;

	*adv = 0;
	if (!flowctl && !advertise)
		return wanted;
	do {
		old = atomic_read(&ep->e_credits);
		avail = RDS_IB_SEND_CREDITS(old);
		posted = advertise ? RDS_IB_POST_CREDITS(old) : 0;
		got = wanted;
		if (flowctl) {
			/* Keep the last credit for a credit update. */
			if (avail && !posted)
				avail--;
			got = min(avail, wanted);
		}
		give = 0;
		if (posted && (got || need_posted))
			give = min(posted, max_posted);
		new = old;
		if (flowctl)
			new -= RDS_IB_SET_SEND_CREDITS(got);
		new -= RDS_IB_SET_POST_CREDITS(give);
	} while (atomic_cmpxchg(&ep->e_credits, old, new) != old);

	/* The peer is paid for what it spent (rds_ib_credit_update_due()). */
	if (give && test_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags))
		clear_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags);
	if (flowctl && got < wanted)
		rds_ib_stats_inc(s_ib_tx_throttle);
	*adv = give;
	return got;
}

/*
 * Add @credits send credits, saturating at RDS_IB_MAX_RING_USED (the
 * largest receive ring a peer can have): whatever a peer claims, the send
 * half of e_credits never carries into the posted half.
 */
static void rds_ib_credits_add_send(struct rds_ib_ep *ep, u32 credits)
{
	int old = atomic_read(&ep->e_credits), new;

	do {
		u32 send = RDS_IB_SEND_CREDITS(old) +
			   min_t(u32, credits, RDS_IB_MAX_RING_USED);

		send = min_t(u32, send, RDS_IB_MAX_RING_USED);
		new = (old & ~RDS_IB_SET_SEND_CREDITS(~0)) |
		      RDS_IB_SET_SEND_CREDITS(send);
	} while (!atomic_try_cmpxchg(&ep->e_credits, &old, new));
}

/* Give back send credits taken but not used. */
static void rds_ib_return_credits(struct rds_ib_ep *ep, u32 credits)
{
	if (credits && test_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags))
		rds_ib_credits_add_send(ep, credits);
}

/**
 * rds_ib_send_add_credits - the peer gave us send credits
 * @ep: endpoint
 * @credits: h_credit or the private data's credit
 *
 * Any context.  Resumes a sender stopped for lack of credits.  The peer
 * cannot give more than its receive ring: a peer that claims more (a bug
 * or a forgery) is clamped (rds_ib_credits_add_send()).
 */
void rds_ib_send_add_credits(struct rds_ib_ep *ep, unsigned int credits)
{
	struct rds_conn_path *cp = ep->e_ic->ic_cp;

	if (!credits || !test_bit(RDS_IB_EP_FLOWCTL, &ep->e_flags))
		return;
	rds_ib_credits_add_send(ep, credits);
	rds_ib_stats_inc(s_ib_rx_credit_updates);
	rds_ib_tx_kick(ep, cp);
}

/**
 * rds_ib_advertise_credits - receive buffers were posted
 * @ep: endpoint
 * @posted: how many
 *
 * Counts them for the next h_credit.  Whether they are worth an ACK of
 * their own is rds_ib_credit_update_due()'s call, made by
 * rds_ib_attempt_ack(), which every caller of the refill runs next (the
 * set-up refill: once the path is up).  Any context.
 */
void rds_ib_advertise_credits(struct rds_ib_ep *ep, unsigned int posted)
{
	if (!posted)
		return;
	/* Before negotiation we count for the private data. */
	if (test_bit(RDS_IB_EP_UP, &ep->e_flags) &&
	    !test_bit(RDS_IB_EP_ADV_CREDITS, &ep->e_flags))
		return;
	atomic_add(RDS_IB_SET_POST_CREDITS(posted), &ep->e_credits);
}

/**
 * rds_ib_credit_update_due - are our posted credits worth an ACK of their own?
 * @ep: endpoint, up
 *
 * Posted credits normally ride on the next data or ACK we send anyway.
 * They need a message of their own when the peer may have stopped for
 * want of them: a sender keeps its last credit for a message that carries
 * credits of its own, so a peer left with one credit (or none) and nothing
 * to advertise sends nothing, not even the ACK_REQUIRED that would make us
 * answer.  Due when some are unadvertised and
 *
 *  (a) rds_ib_rx_batch() of them are waiting (one ACK per batch keeps a
 *      flow going without a stall per ring), or
 *  (b) the peer's credits, as far as we can know them, are too low for a
 *      data message: "left", the buffers on our ring that were advertised
 *      and are still posted, is at most 1 (it counts credits the peer has,
 *      ones still travelling to it, and SENDs of it still travelling to us:
 *      an upper bound of what it holds), and either at least 2 credits
 *      wait or RDS_IB_EP_CREDIT_OWED is set.  This is the rule that moves a
 *      flow whose ring max_recv_allocation keeps below the batch.
 *
 * Why (b) cannot make two peers answer each other's ACKs for ever: an
 * ACK-only message takes a receive slot from its receiver, which reposts
 * it and so has a credit to give back, and a naive "give back when the
 * peer is low" rule would answer that with another ACK, and so on (on a
 * ring capped at one or two buffers both peers are always "low").  Here an
 * ACK goes out under (b) only
 *
 *  - with CREDIT_OWED, which only a received data fragment, an ACK-only
 *    message that acknowledges data of ours not acknowledged before (its
 *    h_ack advanced), or the set-up sets, and which any message carrying
 *    credits clears: a peer's credit update (an ACK whose h_ack is one we
 *    had) never sets it, so such ACKs are bounded by the data messages of
 *    the two sides (each of ours makes at most one advancing ACK); or
 *  - with at least 2 credits in it: the two peers' unadvertised credits
 *    together then drop by at least 1 per such ACK (at least 2 leave with
 *    it, the one slot it takes comes back as 1), and only data, the
 *    reposting of pages readers freed and a ring filling up to its size
 *    raise that sum, all of them finite without new traffic.  (a) gives at
 *    least 4 and falls under the same argument.
 *
 * So without new data the ACKs stop.  What a tiny ring cannot have is
 * both that and a quiet state in which both peers can always send data:
 * after any message its receiver holds at least one unadvertised credit,
 * so its sender has at most (posted buffers - 1); from 3 posted buffers up
 * a stuck peer (credits <= 1, nothing to advertise) always leaves us with
 * at least 2 unadvertised and "left" <= 1, and (b) frees it, but with 2
 * or 1 a peer that turns from receiving to sending may wait until the
 * ring can grow or our next message.  Any context.
 *
 * Return: true when rds_ib_attempt_ack() should send an ACK-only message.
 */
static bool rds_ib_credit_update_due(struct rds_ib_ep *ep)
{
	u32 unadv, posted, left;

	if (!test_bit(RDS_IB_EP_ADV_CREDITS, &ep->e_flags))
		return false;
	unadv = RDS_IB_POST_CREDITS(atomic_read(&ep->e_credits));
	if (!unadv)
		return false;
	if (unadv >= rds_ib_rx_batch(ep))
		return true;
	/* Lockless: a refill in progress only makes "left" look larger. */
	posted = READ_ONCE(ep->e_recv_head) - READ_ONCE(ep->e_recv_tail);
	left = posted > unadv ? posted - unadv : 0;
	if (left > 1)
		return false;
	return unadv >= 2 || test_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags);
}

/**
 * rds_ib_credit_owed - the peer spent a credit that it may need back soon
 * @ep: endpoint
 *
 * A data fragment arrived, or an ACK-only message that acknowledges data
 * of ours for the first time.  Arms rule (b) of rds_ib_credit_update_due()
 * for a single credit.  Receive completion context.
 */
void rds_ib_credit_owed(struct rds_ib_ep *ep)
{
	if (test_bit(RDS_IB_EP_ADV_CREDITS, &ep->e_flags) &&
	    !test_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags))
		set_bit(RDS_IB_EP_CREDIT_OWED, &ep->e_flags);
}

/* ------------------------------------------------------------------------
 * ACKs
 * ------------------------------------------------------------------------
 */

/**
 * rds_ib_set_ack - record a sequence number received in order
 * @ep: endpoint
 * @seq: its sequence number
 * @required: the sender asked for an ACK
 *
 * Receive completion context.
 */
void rds_ib_set_ack(struct rds_ib_ep *ep, u64 seq, bool required)
{
	if (seq > (u64)atomic64_read(&ep->e_ack_next))
		atomic64_set(&ep->e_ack_next, seq);
	if (required) {
		/* ORDER: the sequence is visible before the request. */
		smp_mb__before_atomic();
		set_bit(RDS_IB_EP_ACK_REQUESTED, &ep->e_flags);
	}
}

/* The ACK to piggy-back now; clears the pending request. */
static u64 rds_ib_take_ack(struct rds_ib_ep *ep)
{
	if (test_and_clear_bit(RDS_IB_EP_ACK_REQUESTED, &ep->e_flags))
		rds_ib_stats_inc(s_ib_ack_send_piggybacked);
	smp_mb__after_atomic();
	return atomic64_read(&ep->e_ack_next);
}

/**
 * rds_ib_attempt_ack - send an ACK-only message if one is due
 * @ep: endpoint
 *
 * Due when the peer asked for an ACK or our posted credits are worth one
 * (rds_ib_credit_update_due()).  At most one ACK is in flight; its
 * completion calls us again.  Every context that posts receive buffers,
 * completes a receive or gets credits calls us afterwards.  Any context.
 */
void rds_ib_attempt_ack(struct rds_ib_ep *ep)
{
	struct rds_header *hdr = ep->e_ack_hdr;
	struct ib_device *dev;
	unsigned long flags;
	u32 adv = 0;
	u64 seq;
	int ret;

	if (!test_bit(RDS_IB_EP_UP, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_DEAD, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return;
	if (!test_bit(RDS_IB_EP_ACK_REQUESTED, &ep->e_flags) &&
	    !rds_ib_credit_update_due(ep))
		return;
	if (test_and_set_bit(RDS_IB_EP_ACK_IN_FLIGHT, &ep->e_flags))
		return;

	if (!rds_ib_grab_credits(ep, 1, &adv, true, RDS_MAX_ADV_CREDIT)) {
		clear_bit(RDS_IB_EP_ACK_IN_FLIGHT, &ep->e_flags);
		rds_ib_stats_inc(s_ib_ack_send_delayed);
		return;
	}

	clear_bit(RDS_IB_EP_ACK_REQUESTED, &ep->e_flags);
	smp_mb__after_atomic();
	seq = atomic64_read(&ep->e_ack_next);

	dev = ep->e_rid->rid_dev;
	ib_dma_sync_single_for_cpu(dev, ep->e_ack_dma, sizeof(*hdr),
				   DMA_TO_DEVICE);
	rds_message_populate_header(hdr, 0, 0, 0);
	hdr->h_ack = cpu_to_be64(seq);
	hdr->h_credit = adv;
	rds_ib_header_csum(hdr);
	ib_dma_sync_single_for_device(dev, ep->e_ack_dma, sizeof(*hdr),
				      DMA_TO_DEVICE);
	if (adv)
		rds_ib_stats_inc(s_ib_tx_credit_updates);

	spin_lock_irqsave(&ep->e_ack_lock, flags);
	if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		ret = -ENOTCONN;
	else
		ret = ib_post_send(ep->e_qp, &ep->e_ack_wr, NULL);
	spin_unlock_irqrestore(&ep->e_ack_lock, flags);
	if (unlikely(ret)) {
		clear_bit(RDS_IB_EP_ACK_IN_FLIGHT, &ep->e_flags);
		rds_ib_stats_inc(s_ib_ack_send_failure);
		rds_ib_ep_post_error(ep, ret, "posting an ACK failed");
		return;
	}
	rds_ib_stats_inc(s_ib_ack_sent);
}

static void rds_ib_ack_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_ep *ep = cq->cq_context;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_tx_cq_event);
	clear_bit(RDS_IB_EP_ACK_IN_FLIGHT, &ep->e_flags);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: ACK send failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_ep_wc_error(ep, wc);
		return;
	}
	rds_ib_attempt_ack(ep);
}

/* ------------------------------------------------------------------------
 * Send ring
 * ------------------------------------------------------------------------
 */

static void rds_ib_rm_release(struct rds_ib_ep *ep, struct rds_message *rm,
			      bool ok)
{
	rds_ib_rdma_msg_sent(ep, rm, ok);
	if (rm->data.op_nents && test_bit(RDS_MSG_MAPPED, &rm->m_flags)) {
		ib_dma_unmap_sg(ep->e_rid->rid_dev, rm->data.op_sg,
				rm->data.op_nents, DMA_TO_DEVICE);
		rds_message_unmapped(rm);
	} else {
		clear_bit(RDS_MSG_MAPPED, &rm->m_flags);
	}
	rds_message_put(rm);
}

/* Release slots up to and including ring sequence @last. */
static void rds_ib_send_release(struct rds_ib_ep *ep, u32 last, bool ok)
{
	u32 n = 0;

	while ((s32)(last - ep->e_send_tail) >= 0) {
		struct rds_ib_send_slot *ss;

		ss = &ep->e_sends[ep->e_send_tail_idx];
		if (ss->ss_rm) {
			rds_ib_rm_release(ep, ss->ss_rm, ok);
			ss->ss_rm = NULL;
		}
		ep->e_send_tail++;
		ep->e_send_tail_idx = rds_ib_ring_next(ep->e_send_tail_idx,
						       ep->e_send_nr);
		n++;
	}
	if (n) {
		/*
		 * ORDER: release.  Our stores to the slots (ss_rm, the tail)
		 * are visible before xmit, on another CPU, can take them
		 * (rds_ib_slots_get()'s cmpxchg) and fill them again.
		 */
		smp_mb__before_atomic();
		atomic_add(n, &ep->e_send_free);
	}
}

static void rds_ib_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_send_slot *ss = container_of(wc->wr_cqe,
						   struct rds_ib_send_slot,
						   ss_cqe);
	struct rds_ib_ep *ep = cq->cq_context;
	struct rds_conn_path *cp = ep->e_ic->ic_cp;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_tx_cq_event);
	/* A stale completion (flushed after release) is below the tail. */
	if ((s32)(ss->ss_seq - ep->e_send_tail) >= 0 &&
	    (s32)(ep->e_send_head - ss->ss_seq) > 0)
		rds_ib_send_release(ep, ss->ss_seq,
				    wc->status == IB_WC_SUCCESS);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: send to %pI6c failed: %s\n",
					    &ep->e_ic->ic_conn->c_faddr,
					    ib_wc_status_msg(wc->status));
		rds_ib_ep_wc_error(ep, wc);
		return;
	}
	rds_ib_tx_kick(ep, cp);
}

/**
 * rds_ib_send_ring_alloc - allocate and DMA-map the send ring and ACK WR
 * @ep: endpoint with a QP
 *
 * Process context.  Return: 0 or -ENOMEM.
 */
int rds_ib_send_ring_alloc(struct rds_ib_ep *ep)
{
	struct ib_device *dev = ep->e_rid->rid_dev;
	u32 lkey = ep->e_rid->rid_pd->local_dma_lkey;
	size_t hlen = sizeof(struct rds_header) * ep->e_send_nr;
	u32 i;

	ep->e_sends = kvcalloc(ep->e_send_nr, sizeof(*ep->e_sends),
			       GFP_KERNEL);
	ep->e_send_hdrs = kzalloc(hlen, GFP_KERNEL);
	ep->e_ack_hdr = kzalloc(sizeof(struct rds_header), GFP_KERNEL);
	if (!ep->e_sends || !ep->e_send_hdrs || !ep->e_ack_hdr)
		return -ENOMEM;

	ep->e_send_hdrs_dma = ib_dma_map_single(dev, ep->e_send_hdrs, hlen,
						DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, ep->e_send_hdrs_dma)) {
		ep->e_send_hdrs_dma = 0;
		return -ENOMEM;
	}
	ep->e_ack_dma = ib_dma_map_single(dev, ep->e_ack_hdr,
					  sizeof(struct rds_header),
					  DMA_TO_DEVICE);
	if (ib_dma_mapping_error(dev, ep->e_ack_dma)) {
		ep->e_ack_dma = 0;
		return -ENOMEM;
	}

	for (i = 0; i < ep->e_send_nr; i++) {
		struct rds_ib_send_slot *ss = &ep->e_sends[i];

		ss->ss_cqe.done = rds_ib_send_done;
		ss->ss_wr.wr_cqe = &ss->ss_cqe;
		ss->ss_wr.sg_list = ss->ss_sge;
		ss->ss_wr.opcode = IB_WR_SEND;
		ss->ss_sge[0].addr = ep->e_send_hdrs_dma +
				     i * sizeof(struct rds_header);
		ss->ss_sge[0].length = sizeof(struct rds_header);
		ss->ss_sge[0].lkey = lkey;
	}
	atomic_set(&ep->e_send_free, ep->e_send_nr);
	ep->e_send_head = READ_ONCE(rds_ib_ring_seq_start);
	ep->e_send_tail = ep->e_send_head;
	ep->e_send_head_idx = 0;
	ep->e_send_tail_idx = 0;
	ep->e_pend_first = NULL;
	ep->e_pend_last = NULL;
	ep->e_pend_n = 0;

	ep->e_ack_cqe.done = rds_ib_ack_done;
	ep->e_ack_sge.addr = ep->e_ack_dma;
	ep->e_ack_sge.length = sizeof(struct rds_header);
	ep->e_ack_sge.lkey = lkey;
	ep->e_ack_wr.wr_cqe = &ep->e_ack_cqe;
	ep->e_ack_wr.sg_list = &ep->e_ack_sge;
	ep->e_ack_wr.num_sge = 1;
	ep->e_ack_wr.opcode = IB_WR_SEND;
	ep->e_ack_wr.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED;
	return 0;
}

/**
 * rds_ib_send_ring_free - release everything the send side holds
 * @ep: endpoint whose QP is drained (or never existed)
 *
 * Drops the message references of slots no completion released (sends that
 * were never signalled nor flushed) and of a partly posted message.
 * Process context.
 */
void rds_ib_send_ring_free(struct rds_ib_ep *ep)
{
	struct ib_device *dev = ep->e_rid ? ep->e_rid->rid_dev : NULL;

	if (ep->e_sends && ep->e_send_head != ep->e_send_tail)
		rds_ib_send_release(ep, ep->e_send_head - 1, false);
	if (ep->e_xmit_rm) {
		rds_ib_rm_release(ep, ep->e_xmit_rm, false);
		ep->e_xmit_rm = NULL;
	}
	if (dev && ep->e_send_hdrs_dma)
		ib_dma_unmap_single(dev, ep->e_send_hdrs_dma,
				    sizeof(struct rds_header) * ep->e_send_nr,
				    DMA_TO_DEVICE);
	if (dev && ep->e_ack_dma)
		ib_dma_unmap_single(dev, ep->e_ack_dma,
				    sizeof(struct rds_header), DMA_TO_DEVICE);
	kvfree(ep->e_sends);
	kfree(ep->e_send_hdrs);
	kfree(ep->e_ack_hdr);
	ep->e_sends = NULL;
	ep->e_send_hdrs = NULL;
	ep->e_ack_hdr = NULL;
}

/* Take up to @want free slots.  Return: how many. */
static u32 rds_ib_slots_get(struct rds_ib_ep *ep, u32 want)
{
	int old, got;

	do {
		old = atomic_read(&ep->e_send_free);
		if (old <= 0)
			return 0;
		got = min_t(int, old, want);
	} while (atomic_cmpxchg(&ep->e_send_free, old, old - got) != old);
	return got;
}

/*
 * Fill the data SGEs of one fragment from the message's mapped scatterlist,
 * starting at the cursor.  Return: payload bytes, or -EMSGSIZE if 4 KiB
 * would need more SGEs than the QP or the slot (ss_sge) has.
 */
static int rds_ib_frag_sges(struct rds_ib_ep *ep, struct rds_message *rm,
			    struct rds_ib_send_slot *ss, u32 frag_len,
			    u32 lkey)
{
	u32 max_sge = min_t(u32, ep->e_max_send_sge, ARRAY_SIZE(ss->ss_sge));
	struct scatterlist *sg;
	u32 done = 0, nsge = 1;

	while (done < frag_len) {
		u32 len;

		if (ep->e_xmit_sg >= rm->data.op_count)
			return -EMSGSIZE;
		if (nsge >= max_sge)
			return -EMSGSIZE;
		sg = &rm->data.op_sg[ep->e_xmit_sg];
		len = min_t(u32, sg_dma_len(sg) - ep->e_xmit_sgoff,
			    frag_len - done);
		ss->ss_sge[nsge].addr = sg_dma_address(sg) + ep->e_xmit_sgoff;
		ss->ss_sge[nsge].length = len;
		ss->ss_sge[nsge].lkey = lkey;
		nsge++;
		done += len;
		ep->e_xmit_sgoff += len;
		if (ep->e_xmit_sgoff == sg_dma_len(sg)) {
			ep->e_xmit_sg++;
			ep->e_xmit_sgoff = 0;
		}
	}
	ss->ss_wr.num_sge = nsge;
	return done;
}

/* Map @rm and make it the message being transmitted. */
static int rds_ib_xmit_start(struct rds_ib_ep *ep, struct rds_message *rm)
{
	struct ib_device *dev = ep->e_rid->rid_dev;

	rm->data.op_count = 0;
	if (rm->data.op_nents) {
		int n = ib_dma_map_sg(dev, rm->data.op_sg, rm->data.op_nents,
				      DMA_TO_DEVICE);

		if (!n) {
			rds_ib_stats_inc(s_ib_tx_sg_mapping_failure);
			return -ENOMEM;
		}
		rm->data.op_count = n;
	}
	set_bit(RDS_MSG_MAPPED, &rm->m_flags);
	rds_message_addref(rm);
	ep->e_xmit_rm = rm;
	ep->e_xmit_frag = 0;
	ep->e_xmit_sg = 0;
	ep->e_xmit_sgoff = 0;
	return 0;
}

/* Post the pending chain once it is this long, batch or not. */
#define RDS_IB_POST_BATCH	16

/**
 * rds_ib_send_flush - post the send ring WRs ->xmit() chained
 * @ep: endpoint
 *
 * Xmit context only (rds.ko's IN_XMIT held): the chain is xmit's.  Its
 * last WR is signalled, so its completion releases every slot of it.
 *
 * Return: 0, or -EIO when the endpoint is in error or the post failed
 * (which fails it).
 */
int rds_ib_send_flush(struct rds_ib_ep *ep)
{
	struct rds_ib_send_slot *first = ep->e_pend_first;
	struct rds_ib_send_slot *last = ep->e_pend_last;
	const struct ib_send_wr *bad;
	int ret;

	if (!first)
		return 0;
	ep->e_pend_first = NULL;
	ep->e_pend_last = NULL;
	ep->e_pend_n = 0;
	/*
	 * An endpoint in error is torn down without more posts: rds.ko's
	 * path shutdown waits for IN_XMIT before the transport drains, and
	 * rds_ib_send_ring_free() releases slots that were taken and never
	 * posted.
	 */
	if (test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return -EIO;
	if (!(last->ss_wr.send_flags & IB_SEND_SIGNALED)) {
		last->ss_wr.send_flags |= IB_SEND_SIGNALED;
		ep->e_unsig = 0;
	}
	rds_ib_stats_inc(s_ib_tx_posts);
	ret = ib_post_send(ep->e_qp, &first->ss_wr, &bad);
	if (unlikely(ret)) {
		pr_info_ratelimited("RDS/IB: ib_post_send to %pI6c: %d\n",
				    &ep->e_ic->ic_conn->c_faddr, ret);
		rds_ib_ep_post_error(ep, ret, "ib_post_send failed");
		return -EIO;
	}
	return 0;
}

/**
 * rds_ib_xmit - post (part of) a message
 * @cp: path
 * @rm: message
 * @hdr_off: 0 on the first call for @rm, else sizeof(struct rds_header)
 * @sg: where rds.ko thinks the payload resumes (we keep our own cursor)
 * @off: offset in that entry
 *
 * Takes as many ring slots (and credits) as the remaining fragments need
 * and are available, fills each slot's header copy and SGEs, and chains
 * them to the pending WRs, which rds_ib_send_flush() posts (here once the
 * chain is long enough, else at the end of rds.ko's batch).  Process
 * context with IN_XMIT held, never sleeps.
 *
 * Return: header (first call only) plus payload bytes posted; -EAGAIN when
 * the ring or the credits are exhausted (a completion or a credit update
 * kicks the path); -ENOMEM when the payload could not be DMA-mapped (rds.ko
 * retries shortly; the path stays up); -ENOTCONN or -EIO to drop the path.
 */
int rds_ib_xmit(struct rds_conn_path *cp, struct rds_message *rm,
		unsigned int hdr_off, unsigned int sg, unsigned int off)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep = READ_ONCE(ic->ic_ep);
	struct rds_ib_send_slot *ss, *first = NULL, *prev = NULL;
	u32 nfrags, want, got, credits, adv = 0, i, n = 0, lkey, unsig_max;
	u32 payload = rm->m_payload_len;
	int bytes = 0, ret;
	u8 flags;

	if (!ep || !test_bit(RDS_IB_EP_UP, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return -ENOTCONN;

	if (ep->e_xmit_rm != rm) {
		if (ep->e_xmit_rm || hdr_off)
			return -EIO;	/* rds.ko switched messages midway */
		ret = rds_ib_xmit_start(ep, rm);
		if (ret)
			return ret;	/* -ENOMEM: rds.ko retries shortly */
	}

	nfrags = payload ? DIV_ROUND_UP(payload, RDS_FRAG_SIZE) : 1;
	want = nfrags - ep->e_xmit_frag;
	got = rds_ib_slots_get(ep, want);
	if (!got) {
		set_bit(RDS_IB_EP_TX_FULL, &ep->e_flags);
		smp_mb__after_atomic();
		got = rds_ib_slots_get(ep, want);
		if (!got) {
			rds_ib_stats_inc(s_ib_tx_ring_full);
			return -EAGAIN;
		}
	}
	credits = rds_ib_grab_credits(ep, got, &adv, false,
				      RDS_MAX_ADV_CREDIT);
	if (credits < got) {
		atomic_add(got - credits, &ep->e_send_free);
		got = credits;
		if (!got) {
			set_bit(RDS_IB_EP_TX_FULL, &ep->e_flags);
			smp_mb__after_atomic();
			credits = rds_ib_grab_credits(ep, 1, &adv, false,
						      RDS_MAX_ADV_CREDIT);
			if (!credits)
				return -EAGAIN;
			/* A credit arrived meanwhile; send one fragment. */
			if (!rds_ib_slots_get(ep, 1)) {
				rds_ib_return_credits(ep, 1);
				return -EAGAIN;
			}
			got = 1;
		}
	}

	flags = rm->m_inc.i_hdr.h_flags;
	if (test_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags))
		flags |= RDS_FLAG_ACK_REQUIRED;
	if (test_bit(RDS_MSG_RETRANSMITTED, &rm->m_flags))
		flags |= RDS_FLAG_RETRANSMITTED;

	lkey = ep->e_rid->rid_pd->local_dma_lkey;
	unsig_max = READ_ONCE(rds_ib_sysctl_max_unsig_wrs);
	for (i = 0; i < got; i++) {
		u32 idx = ep->e_send_head_idx;
		u32 frag = ep->e_xmit_frag;
		u32 frag_len = 0;
		struct rds_header *hdr = &ep->e_send_hdrs[idx];
		u64 hdr_dma = ep->e_send_hdrs_dma + idx * sizeof(*hdr);
		bool last = frag + 1 == nfrags;

		ss = &ep->e_sends[idx];
		ss->ss_seq = ep->e_send_head;
		ss->ss_rm = NULL;
		ss->ss_wr.next = NULL;
		ss->ss_wr.num_sge = 1;
		ss->ss_wr.send_flags = 0;
		rds_ib_rdma_prep_send(ep, rm, &ss->ss_wr, last);

		if (payload) {
			frag_len = min_t(u32, RDS_FRAG_SIZE,
					 payload - frag * RDS_FRAG_SIZE);
			ret = rds_ib_frag_sges(ep, rm, ss, frag_len, lkey);
			if (ret < 0) {
				/* Unpostable: give back what is left. */
				atomic_add(got - i, &ep->e_send_free);
				rds_ib_return_credits(ep, got - i);
				rds_ib_ep_error(ep, "message needs too many SGEs");
				goto post;
			}
		}

		ib_dma_sync_single_for_cpu(ep->e_rid->rid_dev, hdr_dma,
					   sizeof(*hdr), DMA_TO_DEVICE);
		memcpy(hdr, &rm->m_inc.i_hdr, sizeof(*hdr));
		hdr->h_flags = flags;
		hdr->h_ack = cpu_to_be64(rds_ib_take_ack(ep));
		hdr->h_credit = adv;
		if (adv)
			rds_ib_stats_inc(s_ib_tx_credit_updates);
		adv = 0;
		rds_ib_header_csum(hdr);
		ib_dma_sync_single_for_device(ep->e_rid->rid_dev, hdr_dma,
					      sizeof(*hdr), DMA_TO_DEVICE);

		/*
		 * The post's last WR is signalled by rds_ib_send_flush().  A
		 * message with RDMA or atomic ops reports their status from
		 * its own last fragment's completion: a later WR's error must
		 * not report ops that completed as dropped.
		 */
		if (++ep->e_unsig >= unsig_max ||
		    (last && (rm->rdma.op_active || rm->atomic.op_active))) {
			ss->ss_wr.send_flags |= IB_SEND_SIGNALED;
			ep->e_unsig = 0;
		}
		if (last) {
			ss->ss_wr.send_flags |= IB_SEND_SOLICITED;
			/* The last fragment's slot inherits our reference. */
			ss->ss_rm = rm;
			ep->e_xmit_rm = NULL;
		}

		if (prev)
			prev->ss_wr.next = &ss->ss_wr;
		else
			first = ss;
		prev = ss;
		n++;
		ep->e_send_head++;
		ep->e_send_head_idx = rds_ib_ring_next(idx, ep->e_send_nr);
		ep->e_xmit_frag++;
		bytes += frag_len;
	}

post:
	if (first) {
		if (ep->e_pend_last)
			ep->e_pend_last->ss_wr.next = &first->ss_wr;
		else
			ep->e_pend_first = first;
		ep->e_pend_last = prev;
		ep->e_pend_n += n;
	}
	if (!first || test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return -EIO;
	if (ep->e_pend_n >= RDS_IB_POST_BATCH && rds_ib_send_flush(ep))
		return -EIO;
	return (hdr_off ? 0 : sizeof(struct rds_header)) + bytes;
}

/**
 * rds_ib_xmit_path_complete - end of a batch of ->xmit() calls
 * @cp: path
 *
 * The chained sends are posted (one doorbell for the batch), and a
 * requested ACK that no data fragment carried goes out now.
 */
void rds_ib_xmit_path_complete(struct rds_conn_path *cp)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep = READ_ONCE(ic->ic_ep);

	if (!ep)
		return;
	rds_ib_send_flush(ep);
	rds_ib_attempt_ack(ep);
}
