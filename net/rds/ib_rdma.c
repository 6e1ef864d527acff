// SPDX-License-Identifier: GPL-2.0
/*
 * ib_rdma.c - RDMA READ/WRITE on a connection's QP and the SEND that
 * completes them.
 *
 * Theory of operation
 * ===================
 *
 * rds.ko calls ->xmit_rdma() for a message that carries an RDMA op, before
 * its ->xmit().  The RDMA core's R/W API (rdma_rw_ctx, as nvmet and
 * xprtrdma's server use it) DMA-maps the local pages and builds the work
 * requests: RDMA READs or WRITEs with as many SGEs each as the QP takes
 * (max_sge_rd for READs), or, where the device needs it, through MRs from
 * the QP's pool (an iWARP READ sink must be an MR with remote write
 * access: REG_MR, then RDMA_READ_WITH_INV; also on any device with
 * ib_core.force_mr=1, and on mlx5 for READs of many SGEs).  An MR maps
 * only pages that meet on page boundaries, so when the core asks for one
 * and the op's pieces (its iovecs) have gaps, each run of pieces gets a
 * context of its own; all are chained into one post, the remote address
 * advancing.  They go on the connection's QP, so the SEND that ->xmit()
 * posts afterwards follows them on the same send queue:
 *
 *   ORDER: on an RC QP the responder executes the WRITEs before the SEND,
 *   so when the owner receives the message its buffer holds the data.
 *   For a READ (and a WRITE flagged RDS_RDMA_FENCE) the SEND waits until
 *   the op completed, so the owner's key is not invalidated while the
 *   READ still uses it.  The wait is ours, not IB_SEND_FENCE: the first
 *   call posts the op, holds the message's SEND back (rds_ib_msg_hold())
 *   and returns -EINPROGRESS (rds.ko then counts the op posted: a cancel
 *   from now on reports nothing and the SEND still goes, so a use-once
 *   key the READ used dies); calls while the hold lasts return -EAGAIN;
 *   the op's last completion releases it (rds_ib_msg_unhold(), which
 *   kicks the path), and the next call returns 0, letting ->xmit() post
 *   the SEND.  Soft-RoCE on 6.12 and siw lose
 *   fenced SENDs behind READs (the SEND never goes out, nothing fails);
 *   holding it back costs the same round trip the fence costs.  An atomic
 *   against a use-once key keeps IB_SEND_FENCE (ib_atomic.c says why);
 *   other atomics need none.
 *
 * The SEND goes out as IB_WR_SEND_WITH_INV with the cookie's rkey when the
 * op is against a use-once key (op_use_once) and the connection negotiated
 * remote invalidation (rds_ib_inv_send_remote_ok, ib_inv.c).
 *
 * Completions.  Every WR of an op (REG_MR and LOCAL_INV included) is
 * signalled and holds a reference on the op's context (rc_pending), so the
 * context, the message reference, the MRs and the DMA mapping go with the
 * last completion that comes, even when only part of a chain could be
 * posted, and always before the QP is destroyed (after the drain), as
 * rdma_rw_ctx_destroy() needs.  An op is one WR unless it has more pages
 * than the QP's SGE limit or needs MRs, so this costs little; the send
 * CQ has an entry for every send queue entry.  The first
 * error reports its true status through rds_rdma_send_complete():
 * REMOTE_ERROR for a bad or stale key (remote access/invalid
 * request/operation errors), DROPPED for a flush, OTHER_ERROR otherwise;
 * later reports of the same op are ignored by rds.ko.  A silent op with no
 * SEND reports its success on the last WR's completion; otherwise the
 * SEND's completion reports it (rds_ib_rdma_msg_sent, called by ib_send.c
 * when it releases the message).  Any error drops the connection (the
 * recovery policy of ib_cm.c).
 *
 * The pages are DMA-mapped only while a context holds them: a call that
 * cannot post (send queue or MRs short, no memory) releases the contexts
 * again, so a message that is then dropped (reconnect) never leaves a
 * mapping behind.  rdma_rw_ctx_init() allocates with GFP_KERNEL, so this
 * runs in process context only (rds_send_xmit() is called from sendmsg()
 * and the send worker).  An op that can never be posted (more MRs than
 * the pool of RDS_IB_RW_MRS holds, more WRs than the room below) is
 * reported RDS_RDMA_OTHER_ERROR (ib_rdma_unpostable) and its message is
 * completed unsent (-ECANCELED to rds.ko, which takes it off the path at
 * once): sent without the op, it would tell the key's owner that the
 * RDMA was done.  The connection and its other messages are not touched.
 * A message that also carries an atomic is checked before its atomic is
 * posted (rds_ib_rdma_postable(), a dry run of the contexts): if the RDMA
 * op can never go, neither op is posted, both are reported
 * RDS_RDMA_OTHER_ERROR, and the message is completed unsent.  Only an op
 * that turns unpostable after its atomic went (its pages unmappable for
 * RDS_IB_RDMA_MAP_RETRY_MS in between) still drops the path: the atomic's
 * success is reported by the SEND's completion, which would never come.
 *
 * Send queue room: the QP has e_rdma_sq entries beyond the send ring;
 * e_rdma_inuse counts those in use by RDMA and atomic WRs.  An op needs
 * one WR per max_sge of its pages, and its pages are not its bytes: each
 * of up to UIO_MAXIOV iovecs may straddle page boundaries, so under 1 MiB
 * can span 2303 pages (255 iovecs of 3 pages, 769 of 2): 288 WRs at 8
 * SGEs per WR, more than the 256 of RDS_IB_RDMA_SQ, thousands at one SGE
 * per READ.  So rds.ko refuses at sendmsg() (EMSGSIZE) an op of more
 * than RDS_RDMA_MAX_OP_PAGES pages, twice those of an unaligned 1 MiB
 * buffer, and rds_ib_ep_setup_qp() sizes e_rdma_sq to
 * 2 * DIV_ROUND_UP(pages of 1 MiB + 1, sge), which is at least
 * DIV_ROUND_UP(RDS_RDMA_MAX_OP_PAGES, sge) for the smallest SGE count
 * of either direction (one per READ on siw), and at least three WRs
 * (LOCAL_INV, REG_MR, RDMA) for each MR of the QP's pool: every op rds.ko
 * accepts fits, unless a device too small for that room falls back to
 * RDS_IB_RDMA_SQ.  Such an op is unpostable (above) rather than waiting
 * forever in front of everything else on the connection.
 */
#include <linux/kernel.h>
#include <linux/slab.h>

#include "ib.h"

/* How long an op whose pages cannot be DMA-mapped is tried again. */
#define RDS_IB_RDMA_MAP_RETRY_MS	5000

/* The bound of rds.ko that the e_rdma_sq of rds_ib_ep_setup_qp() holds. */
static_assert(RDS_RDMA_MAX_OP_PAGES <=
	      2 * ((RDS_MAX_MSG_SIZE >> PAGE_SHIFT) + 1));

/*
 * Holding a message's SEND back until an op of it completed: a READ here,
 * an emulated masked atomic in ib_atomic.c.  rm->m_final_op is NULL (no
 * hold), RDS_IB_SEND_HELD or RDS_IB_SEND_RELEASED (markers, never
 * dereferenced).  The op's ->xmit_*() sets the hold before posting and
 * returns -EINPROGRESS (then -EAGAIN while held); the op's last
 * completion releases it and kicks the path; the next ->xmit_*() call
 * finds it released, clears it and returns 0, so rds.ko goes on with the
 * message.
 */
static char rds_ib_send_held_mark, rds_ib_send_released_mark;
#define RDS_IB_SEND_HELD	((void *)&rds_ib_send_held_mark)
#define RDS_IB_SEND_RELEASED	((void *)&rds_ib_send_released_mark)

/**
 * rds_ib_msg_hold - hold @rm's SEND back until rds_ib_msg_unhold()
 * @rm: the message, with RDS_IN_XMIT held
 *
 * Before posting the op: its completion may come before we look again.
 */
void rds_ib_msg_hold(struct rds_message *rm)
{
	rm->m_final_op = RDS_IB_SEND_HELD;
}

/**
 * rds_ib_msg_unhold - the op that held @rm's SEND back completed
 * @ep: endpoint it was posted on
 * @rm: the message (the caller's reference keeps it until we kicked)
 *
 * Any context.
 */
void rds_ib_msg_unhold(struct rds_ib_ep *ep, struct rds_message *rm)
{
	smp_store_release(&rm->m_final_op, RDS_IB_SEND_RELEASED);
	rds_send_path_kick(ep->e_ic->ic_cp);
}

/**
 * rds_ib_msg_held - where a message's SEND hold stands
 * @rm: the message, with RDS_IN_XMIT held
 *
 * Return: -EAGAIN while held (the release kicks the path); 0 if it was
 * released, now cleared: the op that held it is done, go on; 1 if there
 * was no hold.
 */
static int rds_ib_msg_held(struct rds_message *rm)
{
	void *held = smp_load_acquire(&rm->m_final_op);

	if (!held)
		return 1;
	if (held == RDS_IB_SEND_HELD)
		return -EAGAIN;
	rm->m_final_op = NULL;
	return 0;
}

/**
 * rds_ib_op_begin - may an op of @rm be posted on @ep now?
 * @ep: the path's endpoint, or NULL
 * @rm: the message, with RDS_IN_XMIT held
 *
 * The common start of rds_ib_xmit_rdma() and rds_ib_xmit_atomic(): an op
 * that holds the message's SEND back is never posted twice, nothing is
 * posted on an endpoint that is not up, and earlier messages' chained
 * SENDs go first (ib_send.c).
 *
 * Return: 1 post the op; 0 the op was posted and its hold released (go
 * on with the message); -EAGAIN while it holds the SEND back; -ENOTCONN
 * or -EIO to drop the path.
 */
int rds_ib_op_begin(struct rds_ib_ep *ep, struct rds_message *rm)
{
	int ret;

	ret = rds_ib_msg_held(rm);
	if (ret <= 0)
		return ret;
	if (!ep || !test_bit(RDS_IB_EP_UP, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
		return -ENOTCONN;
	ret = rds_ib_send_flush(ep);
	return ret ? ret : 1;
}

/**
 * struct rds_ib_rw - one RDMA core context of an op
 * @rw_ctx: the context (DMA mapping, WRs, MRs)
 * @rw_sg: its first scatterlist entry
 * @rw_nents: its entries
 */
struct rds_ib_rw {
	struct rdma_rw_ctx	rw_ctx;
	struct scatterlist	*rw_sg;
	u32			rw_nents;
};

/**
 * struct rds_ib_rdma_ctx - one posted RDMA op
 * @rc_mid_cqe: completion of the WRs before the last
 * @rc_last_cqe: completion of the last WR
 * @rc_ep: endpoint it was posted on
 * @rc_qp: its QP (outlives every completion: destroyed after the drain)
 * @rc_rm: the message (a reference)
 * @rc_port: port of the connection (for the RDMA core)
 * @rc_nwr: send queue entries reserved (work requests of the op)
 * @rc_pending: completions still to come (one per posted WR)
 * @rc_write: RDMA WRITE (else READ)
 * @rc_final: no SEND follows: this op reports success
 * @rc_hold: the SEND waits for this op (rds_ib_msg_hold())
 * @rc_failed: an error was already reported
 * @rc_last_ok: the last WR completed successfully
 * @rc_nrw: entries of @rc_rw
 * @rc_rw: the RDMA core's contexts, in remote address order
 */
struct rds_ib_rdma_ctx {
	struct ib_cqe		rc_mid_cqe;
	struct ib_cqe		rc_last_cqe;
	struct rds_ib_ep	*rc_ep;
	struct ib_qp		*rc_qp;
	struct rds_message	*rc_rm;
	u32			rc_port;
	unsigned int		rc_nwr;
	atomic_t		rc_pending;
	bool			rc_write;
	bool			rc_final;
	bool			rc_hold;
	bool			rc_failed;
	bool			rc_last_ok;
	unsigned int		rc_nrw;
	struct rds_ib_rw	rc_rw[];
};

/**
 * rds_ib_rdma_status - RDS status of a failed work completion
 * @status: the completion's status
 *
 * Return: RDS_RDMA_REMOTE_ERROR, RDS_RDMA_DROPPED or RDS_RDMA_OTHER_ERROR.
 */
int rds_ib_rdma_status(enum ib_wc_status status)
{
	switch (status) {
	case IB_WC_SUCCESS:
		return RDS_RDMA_SUCCESS;
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_INV_REQ_ERR:
	case IB_WC_REM_OP_ERR:
	case IB_WC_REM_INV_RD_REQ_ERR:
		return RDS_RDMA_REMOTE_ERROR;
	case IB_WC_WR_FLUSH_ERR:
		return RDS_RDMA_DROPPED;
	default:
		return RDS_RDMA_OTHER_ERROR;
	}
}

/* Reserve @n entries if they are free. */
static bool rds_ib_rdma_sq_try(struct rds_ib_ep *ep, unsigned int n)
{
	if (atomic_add_return(n, &ep->e_rdma_inuse) <= ep->e_rdma_sq)
		return true;
	atomic_sub(n, &ep->e_rdma_inuse);
	return false;
}

/**
 * rds_ib_rdma_sq_get - reserve send queue entries for RDMA/atomic WRs
 * @ep: endpoint
 * @n: entries
 *
 * Called by ->xmit_rdma()/->xmit_atomic().  When the entries are not there
 * it marks the endpoint RDS_IB_EP_TX_FULL, so that rds_ib_rdma_sq_put()
 * kicks the sender once some come back.  ORDER: TX_FULL is set before the
 * second look, and put() makes its room visible before it tests TX_FULL,
 * so either the second look finds the room or put() sees the flag.
 *
 * Return: true if reserved; false: the caller returns -EAGAIN.
 */
bool rds_ib_rdma_sq_get(struct rds_ib_ep *ep, unsigned int n)
{
	if (rds_ib_rdma_sq_try(ep, n))
		return true;
	set_bit(RDS_IB_EP_TX_FULL, &ep->e_flags);
	smp_mb__after_atomic();
	return rds_ib_rdma_sq_try(ep, n);
}

/**
 * rds_ib_rdma_sq_put - return send queue entries
 * @ep: endpoint
 * @n: entries
 *
 * Resumes a sender that stopped for lack of them (see rds_ib_rdma_sq_get()).
 * Without this an RDMA op waiting for room would wait for the next SEND
 * completion, and SENDs are mostly unsignalled: with every flow waiting,
 * none might come.
 */
void rds_ib_rdma_sq_put(struct rds_ib_ep *ep, unsigned int n)
{
	/* ORDER: an op's MRs are back in the QP's pool before we count it gone. */
	smp_mb__before_atomic();
	atomic_sub(n, &ep->e_rdma_inuse);
	smp_mb__after_atomic();
	rds_ib_tx_kick(ep, ep->e_ic->ic_cp);
}

static void rds_ib_rdma_fail(struct rds_ib_rdma_ctx *ctx, struct ib_wc *wc,
			     const char *what)
{
	struct rds_ib_ep *ep = ctx->rc_ep;

	if (!ctx->rc_failed) {
		ctx->rc_failed = true;
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: %s to %pI6c failed: %s\n",
					    what, &ep->e_ic->ic_conn->c_faddr,
					    ib_wc_status_msg(wc->status));
		rds_rdma_send_complete(ctx->rc_rm,
				       rds_ib_rdma_status(wc->status));
	}
	rds_ib_ep_wc_error(ep, wc);
}

/*
 * Split @op's scatterlist into the runs MRs can map: a new run starts
 * where a piece does not begin a page or its predecessor does not end one,
 * and after e_rw_mr_pages pieces (each at most a page), so that one
 * MR maps a run however an IOMMU merges its pages.  Fills @rw (may be
 * NULL: count only).  Return: the number of runs.
 */
static unsigned int rds_ib_rdma_runs(struct rds_ib_ep *ep,
				     struct rm_rdma_op *op, struct rds_ib_rw *rw)
{
	unsigned int i, runs = 0, len = 0, max = max(ep->e_rw_mr_pages, 1U);
	struct scatterlist *sg, *prev = NULL;

	for_each_sg(op->op_sg, sg, op->op_nents, i) {
		if (!prev || sg->offset || len == max ||
		    prev->offset + prev->length != PAGE_SIZE) {
			if (rw) {
				rw[runs].rw_sg = sg;
				rw[runs].rw_nents = 0;
			}
			runs++;
			len = 0;
		}
		if (rw)
			rw[runs - 1].rw_nents++;
		len++;
		prev = sg;
	}
	return runs;
}

/* Release what rdma_rw_ctx_init() took for the first @n pieces. */
static void rds_ib_rdma_rw_destroy(struct rds_ib_rdma_ctx *ctx,
				   unsigned int n)
{
	enum dma_data_direction dir = ctx->rc_write ? DMA_TO_DEVICE :
						      DMA_FROM_DEVICE;
	unsigned int i;

	for (i = 0; i < n; i++)
		rdma_rw_ctx_destroy(&ctx->rc_rw[i].rw_ctx, ctx->rc_qp,
				    ctx->rc_port, ctx->rc_rw[i].rw_sg,
				    ctx->rc_rw[i].rw_nents, dir);
}

/* Release a context that was never posted (or whose post failed whole). */
static void rds_ib_rdma_ctx_free(struct rds_ib_rdma_ctx *ctx)
{
	rds_ib_rdma_rw_destroy(ctx, ctx->rc_nrw);
	kfree(ctx);
}

/*
 * Build the RDMA core's contexts for the pieces set up in @ctx (DMA
 * mapping, and MRs where the device needs them).  Return: the WRs they
 * take, or a negative errno with nothing held.
 */
static int rds_ib_rdma_rw_init(struct rds_ib_rdma_ctx *ctx,
			       struct rm_rdma_op *op)
{
	enum dma_data_direction dir = op->op_write ? DMA_TO_DEVICE :
						     DMA_FROM_DEVICE;
	u64 raddr = op->op_remote_addr;
	struct scatterlist *sg;
	unsigned int i, j;
	int n, nwr = 0;

	for (i = 0; i < ctx->rc_nrw; i++) {
		struct rds_ib_rw *rw = &ctx->rc_rw[i];

		n = rdma_rw_ctx_init(&rw->rw_ctx, ctx->rc_qp, ctx->rc_port,
				     rw->rw_sg, rw->rw_nents, 0, raddr,
				     op->op_rkey, dir);
		if (n <= 0) {
			rds_ib_rdma_rw_destroy(ctx, i);
			return n ? n : -EIO;
		}
		nwr += n;
		for_each_sg(rw->rw_sg, sg, rw->rw_nents, j)
			raddr += sg->length;
	}
	return nwr;
}

/**
 * rds_ib_rdma_ctx_make - the RDMA core's contexts for an op
 * @ep: endpoint
 * @op: the op
 * @ctxp: the new context, on success
 *
 * One rdma_rw_ctx covers the whole scatterlist unless the device needs an
 * MR for this op (iWARP READ sinks, ib_core.force_mr) and one MR cannot
 * map it (pieces that do not meet on page boundaries, more pages than an
 * MR maps after an IOMMU merged them): rdma_rw_ctx_init() says -EINVAL,
 * and each run (rds_ib_rdma_runs()) gets a context of its own.  Every MR
 * comes from the QP's pool of e_rw_mrs; when it is empty the op waits
 * for ops in flight to give theirs back, and one that could never get
 * enough fails.  Mapping failures (-EIO: a full swiotlb, or an address
 * the device cannot reach; -ENOMEM) are taken for shortages and tried
 * again later, for RDS_IB_RDMA_MAP_RETRY_MS at most: then the op is
 * unpostable.
 *
 * Return: the WRs the op takes; -ENOMEM or -EAGAIN to try again later
 * (-EAGAIN: a completion kicks the path); another negative errno: the op
 * can never be posted on this endpoint.
 */
static int rds_ib_rdma_ctx_make(struct rds_ib_ep *ep, struct rm_rdma_op *op,
				struct rds_ib_rdma_ctx **ctxp)
{
	struct rds_ib_rdma_ctx *ctx;
	unsigned int nrw = 1;
	bool again = false;
	int busy, nwr;

retry:
	/* ORDER: pairs with rds_ib_rdma_sq_put(); see below. */
	busy = atomic_read_acquire(&ep->e_rdma_inuse);
	ctx = kzalloc(struct_size(ctx, rc_rw, nrw), GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;
	ctx->rc_ep = ep;
	ctx->rc_qp = ep->e_qp;
	ctx->rc_port = ep->e_id->port_num;
	ctx->rc_write = op->op_write;
	ctx->rc_nrw = nrw;
	if (nrw == 1) {
		ctx->rc_rw[0].rw_sg = op->op_sg;
		ctx->rc_rw[0].rw_nents = op->op_nents;
	} else {
		rds_ib_rdma_runs(ep, op, ctx->rc_rw);
	}
	nwr = rds_ib_rdma_rw_init(ctx, op);
	if (nwr > 0) {
		*ctxp = ctx;
		return nwr;
	}
	kfree(ctx);
	switch (nwr) {
	case -EINVAL:
		/* One MR cannot map it all: map the runs apart. */
		if (nrw > 1)
			return nwr;
		nrw = rds_ib_rdma_runs(ep, op, NULL);
		if (nrw == 1)
			return nwr;
		/* An MR per run at least: more than the pool ever has? */
		if (nrw > ep->e_rw_mrs)
			return -E2BIG;
		goto retry;
	case -EIO:
	case -ENOMEM:
		if (!op->op_map_since)
			op->op_map_since = jiffies | 1;
		else if (time_after(jiffies, op->op_map_since +
				    msecs_to_jiffies(RDS_IB_RDMA_MAP_RETRY_MS)))
			return -ETIMEDOUT;	/* -ENOMEM would retry */
		return -ENOMEM;
	case -EAGAIN:
		break;
	default:
		return nwr;
	}
	/*
	 * The QP's MR pool is empty.  A context gives its MRs back before
	 * its rds_ib_rdma_sq_put(), so if nothing was in flight when we
	 * looked, the pool was full: the op needs more MRs than it has.
	 * Otherwise wait for a completion, as rds_ib_rdma_sq_get() does:
	 * TX_FULL before the second try.
	 */
	if (!busy)
		return -E2BIG;
	if (again)
		return -EAGAIN;
	again = true;
	set_bit(RDS_IB_EP_TX_FULL, &ep->e_flags);
	smp_mb__after_atomic();
	goto retry;
}

/*
 * Drop @n of the context's pending completions; the last one releases the
 * RDMA core's contexts (DMA mapping, MRs), reports the success of a silent
 * op, and frees everything.
 */
static void rds_ib_rdma_ctx_put(struct rds_ib_rdma_ctx *ctx, unsigned int n)
{
	struct rds_ib_ep *ep = ctx->rc_ep;
	struct rds_message *rm = ctx->rc_rm;

	if (!atomic_sub_and_test(n, &ctx->rc_pending))
		return;
	rds_ib_rdma_rw_destroy(ctx, ctx->rc_nrw);
	rm->rdma.op_mapped = 0;
	if (ctx->rc_last_ok && ctx->rc_final && !ctx->rc_failed)
		rds_rdma_send_complete(rm, RDS_RDMA_SUCCESS);
	rds_ib_rdma_sq_put(ep, ctx->rc_nwr);
	/* After a failure the endpoint is in error: ->xmit() refuses it. */
	if (ctx->rc_hold)
		rds_ib_msg_unhold(ep, rm);
	rds_message_put(rm);
	kfree(ctx);
}

static void rds_ib_rdma_mid_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_rdma_ctx *ctx = container_of(wc->wr_cqe,
						   struct rds_ib_rdma_ctx,
						   rc_mid_cqe);

	/* WARNING: Only wr_cqe and status are reliable at this point */
	if (wc->status != IB_WC_SUCCESS)
		rds_ib_rdma_fail(ctx, wc, "RDMA");
	rds_ib_rdma_ctx_put(ctx, 1);
}

static void rds_ib_rdma_last_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_rdma_ctx *ctx = container_of(wc->wr_cqe,
						   struct rds_ib_rdma_ctx,
						   rc_last_cqe);

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_rdma_completions);
	atomic_inc(&ctx->rc_ep->e_rdma_done);
	if (wc->status != IB_WC_SUCCESS)
		rds_ib_rdma_fail(ctx, wc, "RDMA");
	else
		ctx->rc_last_ok = true;
	/* ORDER: the earlier WRs of the chain completed before this one. */
	rds_ib_rdma_ctx_put(ctx, 1);
}

/*
 * RDMA op watchdog
 * ================
 *
 * A posted op must end in a completion, success or error.  Soft-RoCE on 6.1
 * once left RDMA work requests unsent for good (not reproduced since; the cause
 * below is read in its source, not proven): its requester and completer are
 * separate tasklets that may run at once on two CPUs, and the requester decides
 * to wait before it says so, without a lock against the completer that would
 * wake it.  The likeliest case is the fence: rxe_wqe_is_fenced() finds a READ
 * or atomic still holding its credit, the completer returns the credit and,
 * seeing no wait_fence yet, wakes nobody, and then the requester sets
 * wait_fence and stops.  "Too many unacknowledged PSNs" (req.wait_psn) and "too
 * many skbs in flight" (need_req_skb) have the same shape but need everything
 * in flight to finish inside the window.  With nothing left in flight there is
 * no retransmit timer either; only the next ib_post_send() restarts it.  In
 * 6.12 the requester and completer are one work item and the race is gone.  The
 * SEND after a READ was fenced when the stall was seen; it is held back in
 * software now (above).  The SEND behind an atomic on a use-once key is still
 * fenced, so it counts as outstanding until its slot is released, or the
 * watchdog would see nothing to wait for.  A READ holds its message's SEND back
 * (rds_ib_msg_hold()), so after a READ nothing more is posted on the path until
 * it completes, and the ACK WR behind it stays in flight: such a lost wake-up
 * then stalls the connection for ever, silently.
 *
 * So, per endpoint, while ops are outstanding (e_rdma_posted !=
 * e_rdma_done) a delayed work looks every rds_ib_rdma_kick_ms whether any
 * completed since its last look.  After one period without a completion it
 * posts a zero-length RDMA WRITE (no SGE; the responder checks no key for
 * a zero-length WRITE, IBA C9-88), which costs one PSN and restarts the
 * requester; at most one is in flight.  Only on soft-RoCE (rxe), whose
 * race this is; elsewhere the timeout alone applies.  Atomics (ib_atomic.c)
 * count as ops too, and so does the fenced SEND behind a use-once atomic
 * (which, if the peer's receive ring stays empty under RNR retries for the
 * whole timeout, now drops the connection instead of waiting on for ever).
 * After rds_ib_rdma_timeout_ms without a completion the
 * endpoint is failed (drop reason "timeout", detail -ETIMEDOUT): the QP
 * goes to error, every outstanding op completes with a flush and reports
 * RDS_RDMA_DROPPED, and the connection is rebuilt.  Counters:
 * ib_rdma_kicks, ib_rdma_timeouts.
 */
static void rds_ib_rdma_kick_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_ep *ep = container_of(wc->wr_cqe, struct rds_ib_ep,
					    e_kick_cqe);

	/* WARNING: Only wr_cqe and status are reliable at this point */
	clear_bit(RDS_IB_EP_KICK_IN_FLIGHT, &ep->e_flags);
	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: RDMA kick failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_ep_wc_error(ep, wc);
	}
}

static void rds_ib_rdma_kick(struct rds_ib_ep *ep)
{
	unsigned long flags;
	int ret;

	/* The lost wake-up is soft-RoCE's: elsewhere the timeout alone. */
	if (ep->e_rid->rid_dev->ops.driver_id != RDMA_DRIVER_RXE)
		return;
	if (test_and_set_bit(RDS_IB_EP_KICK_IN_FLIGHT, &ep->e_flags))
		return;
	/* ORDER: as the ACK, never posted behind the drain markers. */
	spin_lock_irqsave(&ep->e_ack_lock, flags);
	if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		ret = -ENOTCONN;
	else
		ret = ib_post_send(ep->e_qp, &ep->e_kick_wr.wr, NULL);
	spin_unlock_irqrestore(&ep->e_ack_lock, flags);
	if (unlikely(ret)) {
		clear_bit(RDS_IB_EP_KICK_IN_FLIGHT, &ep->e_flags);
		if (ret != -ENOTCONN)
			rds_ib_ep_post_error(ep, ret,
					     "posting an RDMA kick failed");
		return;
	}
	rds_ib_stats_inc(s_ib_rdma_kicks);
}

static void rds_ib_rdma_wd_worker(struct work_struct *work)
{
	struct rds_ib_ep *ep = container_of(to_delayed_work(work),
					    struct rds_ib_ep, e_rdma_wd);
	unsigned int timeout_ms = READ_ONCE(rds_ib_rdma_timeout_ms);
	u32 done, posted;

	if (!test_bit(RDS_IB_EP_UP, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		return;
	done = atomic_read(&ep->e_rdma_done);
	/* ORDER: an op counted done was counted posted before. */
	smp_rmb();
	posted = atomic_read(&ep->e_rdma_posted);
	if (posted == done) {
		/* Idle: the next post arms us again. */
		ep->e_wd_since = 0;
		return;
	}
	if (!ep->e_wd_since || done != ep->e_wd_done) {
		ep->e_wd_done = done;
		ep->e_wd_since = jiffies | 1;
	} else if (timeout_ms &&
		   time_after(jiffies, ep->e_wd_since +
					msecs_to_jiffies(timeout_ms))) {
		rds_ib_stats_inc(s_ib_rdma_timeouts);
		pr_notice_ratelimited("RDS/IB: %u RDMA ops to %pI6c without a completion for %u ms: dropping the connection\n",
				      posted - done,
				      &ep->e_ic->ic_conn->c_faddr, timeout_ms);
		rds_ib_ep_fail(ep, RDS_DROP_TIMEOUT, -ETIMEDOUT,
			       "RDMA op timed out");
		return;
	} else {
		rds_ib_rdma_kick(ep);
	}
	queue_delayed_work(rds_ib_wq, &ep->e_rdma_wd,
			   msecs_to_jiffies(READ_ONCE(rds_ib_rdma_kick_ms)));
}

/* An op was posted: make sure the watchdog looks (no-op if pending). */
void rds_ib_rdma_wd_arm(struct rds_ib_ep *ep)
{
	if (!test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		queue_delayed_work(rds_ib_wq, &ep->e_rdma_wd,
				   msecs_to_jiffies(READ_ONCE(rds_ib_rdma_kick_ms)));
}

/**
 * rds_ib_rdma_wd_init - set up an endpoint's RDMA watchdog and kick WR
 * @ep: new endpoint
 */
void rds_ib_rdma_wd_init(struct rds_ib_ep *ep)
{
	INIT_DELAYED_WORK(&ep->e_rdma_wd, rds_ib_rdma_wd_worker);
	atomic_set(&ep->e_rdma_posted, 0);
	atomic_set(&ep->e_rdma_done, 0);
	ep->e_kick_cqe.done = rds_ib_rdma_kick_done;
	ep->e_kick_wr.wr.wr_cqe = &ep->e_kick_cqe;
	ep->e_kick_wr.wr.opcode = IB_WR_RDMA_WRITE;
	ep->e_kick_wr.wr.send_flags = IB_SEND_SIGNALED;
	ep->e_kick_wr.wr.num_sge = 0;
	ep->e_kick_wr.remote_addr = 0;
	ep->e_kick_wr.rkey = 0;
}

/**
 * rds_ib_rdma_wd_stop - stop an endpoint's RDMA watchdog
 * @ep: endpoint marked RDS_IB_EP_DEAD
 *
 * Process context.  Called before the drain and again after it.
 */
void rds_ib_rdma_wd_stop(struct rds_ib_ep *ep)
{
	cancel_delayed_work_sync(&ep->e_rdma_wd);
}

/*
 * @rm's RDMA op can never be posted on @ep (see the theory of operation):
 * report it and have rds.ko complete the message unsent (-ECANCELED), so
 * that its owner never takes the RDMA for done.  A message whose atomic
 * was already posted cannot be taken back so: -EIO drops the path, as any
 * failed post.
 */
static int rds_ib_rdma_unpostable(struct rds_ib_ep *ep,
				  struct rds_message *rm, int err)
{
	rds_rdma_send_complete(rm, RDS_RDMA_OTHER_ERROR);
	rds_ib_stats_inc(s_ib_rdma_unpostable);
	pr_info_ratelimited("RDS/IB: RDMA op of %u bytes in %u pieces to %pI6c cannot be posted: %d\n",
			    rm->rdma.op_bytes, rm->rdma.op_nents,
			    &ep->e_ic->ic_conn->c_faddr, err);
	return rm->atomic.op_active ? -EIO : -ECANCELED;
}

/**
 * rds_ib_rdma_postable - could the RDMA op of @rm ever be posted on @ep?
 * @ep: endpoint, up
 * @rm: a message with an atomic and an RDMA op, neither posted yet
 *
 * Called by rds_ib_xmit_atomic() before it posts the atomic: once the
 * atomic is posted, an RDMA op found unpostable could only drop the path
 * (see the theory of operation).  Builds the op's contexts as
 * rds_ib_xmit_rdma() would, and frees them unposted (rdma_rw_ctx_wrs()
 * moves the MRs' keys on, so a context that was only made leaves none
 * behind).  An op that can never be posted is reported
 * RDS_RDMA_OTHER_ERROR and counted in ib_rdma_unpostable, as there.
 * Costs a DMA mapping more, for these messages only.
 *
 * Process context.  Return: 0 (it can); -ENOMEM or -EAGAIN (short now:
 * try again later); -ECANCELED (never: reported, complete the message
 * unsent without posting the atomic).
 */
int rds_ib_rdma_postable(struct rds_ib_ep *ep, struct rds_message *rm)
{
	struct rm_rdma_op *op = &rm->rdma;
	struct rds_ib_rdma_ctx *ctx;
	int ret;

	/* rds_ib_xmit_rdma() fails these itself. */
	if (!op->op_nents || !op->op_bytes || op->op_mapped)
		return 0;
	ret = rds_ib_rdma_ctx_make(ep, op, &ctx);
	if (ret == -ENOMEM || ret == -EAGAIN)
		return ret;
	if (ret > 0) {
		rds_ib_rdma_ctx_free(ctx);
		if (ret <= ep->e_rdma_sq) {
			/*
			 * Once: the atomic's own retries skip this.  And the
			 * real mapping gets its full retry time of its own.
			 */
			op->op_postable = 1;
			op->op_map_since = 0;
			return 0;
		}
		ret = -E2BIG;
	}
	rds_ib_rdma_unpostable(ep, rm, ret);
	return -ECANCELED;
}

/**
 * rds_ib_xmit_rdma - post the RDMA op of a message
 * @cp: path
 * @op: &rm->rdma
 *
 * RDS_IN_XMIT held, process context (sendmsg() or the send worker): the
 * RDMA core's rdma_rw_ctx_init() allocates with GFP_KERNEL.  A READ (or
 * RDS_RDMA_FENCE op) followed by a SEND returns -EINPROGRESS once posted,
 * -EAGAIN while it holds the SEND back, and 0 from the call after its
 * completion (see the theory of operation).  An op that can never be
 * posted here (it needs more send queue room or MRs than the endpoint
 * has, or its pages could not be mapped for RDS_IB_RDMA_MAP_RETRY_MS) is
 * reported RDS_RDMA_OTHER_ERROR and the call returns -ECANCELED: rds.ko
 * completes the message unsent, and the connection stays up.
 *
 * Return: 0; -EINPROGRESS posted and holding the SEND; -EAGAIN/-ENOMEM
 * when the send queue, the MRs or memory are short, or while the op holds
 * the SEND back (called again later); -ECANCELED for an unpostable op;
 * -ENOTCONN or -EIO to drop the path.
 */
int rds_ib_xmit_rdma(struct rds_conn_path *cp, struct rm_rdma_op *op)
{
	struct rds_message *rm = container_of(op, struct rds_message, rdma);
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep = READ_ONCE(ic->ic_ep);
	const struct ib_send_wr *bad_wr;
	struct ib_send_wr *first, *wr;
	struct rds_ib_rdma_ctx *ctx;
	unsigned int nwr, i;
	bool hold;
	int ret;

	ret = rds_ib_op_begin(ep, rm);
	if (ret <= 0)
		return ret;
	if (!op->op_nents || !op->op_bytes)
		return -EIO;
	/* Mapped only while a context holds the op (a posted one). */
	if (op->op_mapped)
		return -EIO;

	ret = rds_ib_rdma_ctx_make(ep, op, &ctx);
	if (ret == -ENOMEM || ret == -EAGAIN)
		return ret;
	if (ret < 0)
		return rds_ib_rdma_unpostable(ep, rm, ret);
	nwr = ret;
	if (nwr > ep->e_rdma_sq) {
		rds_ib_rdma_ctx_free(ctx);
		return rds_ib_rdma_unpostable(ep, rm, -E2BIG);
	}
	/* Before rdma_rw_ctx_wrs(): after it a context must be posted. */
	if (!rds_ib_rdma_sq_get(ep, nwr)) {
		rds_ib_rdma_ctx_free(ctx);
		return -EAGAIN;
	}
	op->op_mapped = 1;
	ctx->rc_rm = rm;
	ctx->rc_nwr = nwr;
	atomic_set(&ctx->rc_pending, nwr);
	ctx->rc_final = !rds_msg_has_send(rm);
	ctx->rc_hold = !ctx->rc_final && (!op->op_write || op->op_fence);
	ctx->rc_mid_cqe.done = rds_ib_rdma_mid_done;
	ctx->rc_last_cqe.done = rds_ib_rdma_last_done;

	/*
	 * One chain, last context first.  Every WR is signalled and counted
	 * in rc_pending, so a chain posted only in part still ends in
	 * completions we count (see the theory of operation).
	 */
	first = NULL;
	for (i = ctx->rc_nrw; i-- > 0; )
		first = rdma_rw_ctx_wrs(&ctx->rc_rw[i].rw_ctx, ctx->rc_qp,
					ctx->rc_port,
					first ? NULL : &ctx->rc_last_cqe, first);
	for (wr = first, i = 0; wr; wr = wr->next, i++) {
		if (!wr->next)
			break;
		wr->wr_cqe = &ctx->rc_mid_cqe;
		wr->send_flags |= IB_SEND_SIGNALED;
	}
	/* rdma_rw_ctx_init()'s counts are the chain's length. */
	if (WARN_ON_ONCE(i + 1 != nwr)) {
		/*
		 * The MRs' keys moved on unposted: rebuild the QP and its
		 * pool (-EIO drops the path) rather than use them again.
		 */
		rds_ib_rdma_ctx_free(ctx);
		op->op_mapped = 0;
		rds_ib_rdma_sq_put(ep, nwr);
		rds_ib_rdma_unpostable(ep, rm, -EPROTO);
		return -EIO;
	}
	if (op->op_fence)
		first->send_flags |= IB_SEND_FENCE;

	rds_message_addref(rm);
	/* The completion may come (and free @ctx) before we look again. */
	hold = ctx->rc_hold;
	if (hold)
		rds_ib_msg_hold(rm);
	/* Counted before the post: the last completion may come first. */
	atomic_inc(&ep->e_rdma_posted);
	ret = ib_post_send(ctx->rc_qp, first, &bad_wr);
	if (unlikely(ret)) {
		unsigned int posted = 0;

		/* The last WR is never posted then: the op is not outstanding. */
		atomic_inc(&ep->e_rdma_done);

		/*
		 * The WRs before @bad_wr were posted and complete (flushed,
		 * the endpoint goes into error) through rc_mid_cqe, maybe
		 * already; the others never will: drop their share.  The
		 * last put, here or in a completion, frees @ctx, which the
		 * unposted share keeps alive until then.
		 */
		for (wr = first; wr && wr != bad_wr; wr = wr->next)
			posted++;
		rds_ib_ep_post_error(ep, ret, "ib_post_send of RDMA failed");
		if (posted < nwr)
			rds_ib_rdma_ctx_put(ctx, nwr - posted);
		return -EIO;
	}
	rds_ib_stats_add(s_ib_rdma_wrs, nwr);
	rds_ib_stats_inc(s_ib_rdma_ops);
	rds_ib_rdma_wd_arm(ep);
	return hold ? -EINPROGRESS : 0;
}

/**
 * rds_ib_rdma_prep_send - adjust a SEND of a message that carries ops
 * @ep: endpoint
 * @rm: the message
 * @wr: the fragment's SEND
 * @last: last fragment
 *
 * Called for every fragment.  Fences the fragments behind an atomic on a
 * use-once key (only the first waits; a READ's SEND was held back until
 * the READ completed instead), and makes the last one IB_WR_SEND_WITH_INV
 * for a use-once key on a negotiated connection.
 */
void rds_ib_rdma_prep_send(struct rds_ib_ep *ep, struct rds_message *rm,
			   struct ib_send_wr *wr, bool last)
{
	bool rdma = rm->rdma.op_active, atomic = rm->atomic.op_active;
	u64 cookie, raddr;
	u32 rkey;

	wr->opcode = IB_WR_SEND;
	if (atomic && rm->atomic.op_use_once) {
		wr->send_flags |= IB_SEND_FENCE;
		/*
		 * For the watchdog, the fenced SEND is outstanding until
		 * its last slot is released (rds_ib_rdma_msg_sent()): a
		 * lost wake-up of a fenced WR would otherwise go unseen,
		 * the atomic it waits for being done.
		 */
		if (last) {
			atomic_inc(&ep->e_rdma_posted);
			rds_ib_rdma_wd_arm(ep);
		}
	}
	if (!last || (!rdma && !atomic))
		return;
	if (rdma && rm->rdma.op_use_once) {
		rkey = rm->rdma.op_rkey;
		raddr = rm->rdma.op_remote_addr;
	} else if (atomic && rm->atomic.op_use_once) {
		rkey = rm->atomic.op_rkey;
		raddr = rm->atomic.op_remote_addr;
	} else {
		return;
	}
	/*
	 * Only a key its owner made use-once may be invalidated remotely:
	 * our use-once MRs live at iova RDS_MR_IOVA_USE_ONCE | epoch | page
	 * offset and are at most 1 MiB long, so every address inside one is
	 * in [2^31, 2^32).  op_use_once alone may come from the application's
	 * flag on an ordinary key.  (With two use-once keys in a message,
	 * the owner kills the other on receipt: each has its RDMA extension
	 * header.)
	 */
	if ((raddr >> 31) != 1)
		return;
	cookie = (u64)RDS_MR_IOVA_USE_ONCE << 32 | rkey;
	if (!rds_ib_inv_send_remote_ok(ep, cookie))
		return;
	wr->opcode = IB_WR_SEND_WITH_INV;
	wr->ex.invalidate_rkey = rkey;
	rds_ib_stats_inc(s_ib_rdma_send_inv);
}

/**
 * rds_ib_rdma_msg_sent - the final SEND of a message was released
 * @ep: endpoint
 * @rm: the message
 * @ok: the SEND completed successfully
 *
 * Reports the message's ops (first report wins in rds.ko), and counts a
 * fenced SEND done for the watchdog (rds_ib_rdma_prep_send()).
 */
void rds_ib_rdma_msg_sent(struct rds_ib_ep *ep, struct rds_message *rm,
			  bool ok)
{
	int status = ok ? RDS_RDMA_SUCCESS : RDS_RDMA_DROPPED;

	if (rm->atomic.op_active && rm->atomic.op_use_once)
		atomic_inc(&ep->e_rdma_done);

	if (rm->rdma.op_active)
		rds_rdma_send_complete(rm, status);
	if (rm->atomic.op_active)
		rds_atomic_send_complete(rm, status);
}
