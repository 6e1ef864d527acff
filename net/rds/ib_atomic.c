// SPDX-License-Identifier: GPL-2.0
/*
 * ib_atomic.c - RDS atomics: plain, masked and emulated masked.
 *
 * Theory of operation
 * ===================
 *
 * rds.ko calls ->xmit_atomic() for a message carrying an atomic, before
 * the message's SEND.  The opcode depends on what the device can do
 * (recorded in struct rds_ib_device) and on the masks:
 *
 *   - masks that make the masked op equal the plain one (CSWP: compare and
 *     swap masks ~0; FADD: nocarry mask 0), or a plain cmsg:
 *     IB_WR_ATOMIC_CMP_AND_SWP / IB_WR_ATOMIC_FETCH_AND_ADD, on any device
 *     with atomic_cap != IB_ATOMIC_NONE;
 *   - other masks where masked_atomic_cap != IB_ATOMIC_NONE: the masked
 *     opcodes;
 *   - other masks on a device with plain atomics only (rxe), or any masked
 *     cmsg while the module parameter rds_ib_atomic_force_emul is set (so
 *     that the emulation can be tested against the plain and native
 *     masked paths): emulated by a compare-and-swap loop.  From a guess v of the remote word we post
 *     CMP_AND_SWP(v, f(v)), f being the masked operation; the HCA returns
 *     the word's old value r.  r == v means the swap happened atomically
 *     (or, for a masked CSWP whose masked compare fails, f(v) == v and the
 *     word was verified unchanged): r is the result.  Otherwise v = r and
 *     we try again, at most rds_ib_atomic_emul_tries times and for at most
 *     rds_ib_atomic_emul_ms (then OTHER_ERROR, counted in
 *     ib_atomic_emulated_exhausted; each retry counts in
 *     ib_atomic_emulated_retries).  A try misses when the guess was wrong:
 *     the first guess (zero for FADD, the compare value for CSWP) usually
 *     is, and later ones miss when another atomic, or a CPU store on the
 *     owner, changed the word within one round trip.  Eight processes on
 *     two nodes hammering one word on rxe averaged 4.2 tries per op, and
 *     the former bound of 64 was once suspected of failing an op for
 *     nothing more than a busy word, so the default is 1024; a fixed 2 s
 *     bound did fail one (a busy word, slow tries on a debug kernel under
 *     TCG), so the time bound is a parameter too, 10 s by default.  The bounds
 *     remain because an emulated op holds its message's SEND, and with it
 *     the connection's path: every later message to that peer waits
 *     behind the loop (each try completes, so the RDMA op watchdog does
 *     not see it).  Each step is one HCA atomic, so the emulation is
 *     atomic with respect to other HCA atomics on that
 *     memory, not to CPU stores on the owner.  The result compare assumes
 *     the HCA returns the old value in host order, as rxe does.
 *
 * iWARP devices (siw) and devices with atomic_cap NONE have no atomics:
 * ->atomic_check() makes sendmsg() fail with EOPNOTSUPP.  A misaligned
 * remote address is not posted: it reports REMOTE_ERROR, what a responder
 * answers, and its message is completed unsent (-ECANCELED to rds.ko, as
 * for an unpostable RDMA op, ib_rdma.c): sent without the atomic, it
 * would tell the word's owner that the atomic was done.
 *
 * The 8-byte result goes to the (8-byte aligned, pinned) local buffer;
 * the HCA writes it there.  The SEND that follows needs no fence: the
 * responder executes the atomic before it processes the SEND (RC order),
 * so the owner finds the word updated when the message arrives, and a
 * retransmitted atomic is answered from the responder's atomic resources,
 * not executed again; send completions come in queue order, so the SEND's
 * reports the op only after the atomic's.  Unfenced, an atomic costs no
 * round trip of its own and several are in flight at once (in-tree does
 * not fence them either).  Against a use-once key the SEND is fenced
 * (IB_SEND_FENCE, ib_rdma.c): it leaves only once the atomic's response
 * arrived, so no retransmitted atomic can reach the responder after the
 * SEND killed the key (a responder that checks the key again for a
 * duplicate would answer it with an error although the atomic ran).  It
 * is a fence, not the software hold below: the SEND is posted right
 * behind the atomic and the HCA waits, whereas a held SEND is posted only
 * after a completion and a trip through the send worker, a longer window
 * in which a path drop leaves the SEND unsent and the key alive.  The
 * owner may receive the message of an atomic on an ordinary key whose
 * requester later reports an error (its response lost, the retries
 * exhausted), as with an RDMA WRITE.  When
 * the emulation loop runs, ->xmit_atomic() returns -EINPROGRESS once it
 * posted the first try (rds.ko counts the op posted: a cancel no longer
 * reports it, and the SEND still goes), -EAGAIN until the loop finished,
 * and the loop kicks the send worker when it did: the SEND hold of
 * ib_rdma.c (rds_ib_msg_hold()), which a READ uses too.  The hold is a
 * marker in rm->m_final_op, not the loop's context, so nothing stays
 * allocated if the message is never transmitted again (reconnect,
 * cancel).  Retries are posted from the completion handler
 * under e_ack_lock, checking RDS_IB_EP_DEAD like the ACK path, so none
 * lands behind the drain marker of rds_ib_ep_destroy().
 *
 * The atomic WR is always signalled (one completion per hardware atomic):
 * a failure reports its true status (REMOTE_ERROR for a bad or stale key)
 * through rds_atomic_send_complete() and drops the connection; success is
 * reported by the SEND's completion, or by ours when no SEND follows.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/highmem.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include "ib.h"

#define RDS_IB_ATOMIC_EMUL_TRIES_MAX	65536

/*
 * Read once per op (READ_ONCE()), so it may change at run time: an op
 * already posted keeps the opcode it was given.
 */
static bool rds_ib_atomic_force_emul;

static int rds_ib_atomic_force_emul_set(const char *val,
					const struct kernel_param *kp)
{
	bool v = true;	/* a bare "rds_ib_atomic_force_emul" sets it */

	if (val && kstrtobool(val, &v)) {
		pr_err("%s: %s=%.*s refused: must be a boolean (0/1, n/y)\n",
		       KBUILD_MODNAME, kp->name, (int)strcspn(val, "\n"), val);
		return -EINVAL;
	}
	WRITE_ONCE(rds_ib_atomic_force_emul, v);
	return 0;
}

static const struct kernel_param_ops rds_ib_atomic_force_emul_ops = {
	.flags	= KERNEL_PARAM_OPS_FL_NOARG,
	.set	= rds_ib_atomic_force_emul_set,
	.get	= param_get_bool,
};

module_param_cb(rds_ib_atomic_force_emul, &rds_ib_atomic_force_emul_ops,
		&rds_ib_atomic_force_emul, 0644);
__MODULE_PARM_TYPE(rds_ib_atomic_force_emul, "bool");
MODULE_PARM_DESC(rds_ib_atomic_force_emul,
		 " Emulate every masked atomic with a CMP_AND_SWP loop, even where plain or native masked opcodes would do (testing; default N)");

/*
 * CMP_AND_SWPs one emulated op may post before it fails; read once per
 * retry.
 */
static unsigned int rds_ib_atomic_emul_tries = 1024;

RDS_PARAM_UINT(rds_ib_atomic_emul_tries, rds_ib_atomic_emul_tries, 2,
	       RDS_IB_ATOMIC_EMUL_TRIES_MAX, 0644,
	       " CMP_AND_SWPs an emulated masked atomic may post before it fails with RDS_RDMA_OTHER_ERROR (2..65536, default 1024; see also rds_ib_atomic_emul_ms)");

/*
 * Milliseconds one emulated op may spend in tries (0: tries alone bound
 * it); read when the op starts.
 */
static unsigned int rds_ib_atomic_emul_ms = 10000;

RDS_PARAM_UINT(rds_ib_atomic_emul_ms, rds_ib_atomic_emul_ms, 0, 600000, 0644,
	       " Milliseconds an emulated masked atomic may spend in tries before it fails with RDS_RDMA_OTHER_ERROR (0..600000, 0: no time bound; default 10000)");

/*
 * Jiffies after which an emulated op posts no more tries, or 0 for no
 * bound.
 */
static unsigned long rds_ib_atomic_emul_deadline(void)
{
	unsigned int ms = READ_ONCE(rds_ib_atomic_emul_ms);

	if (!ms)
		return 0;
	return (jiffies + msecs_to_jiffies(ms)) | 1;
}

/**
 * struct rds_ib_atomic_ctx - one atomic in flight
 * @ac_cqe: completion; done = rds_ib_atomic_done
 * @ac_ep: endpoint it is posted on
 * @ac_rm: the message (a reference)
 * @ac_wr: the work request
 * @ac_sge: the 8-byte result buffer
 * @ac_emulate: masked op emulated on plain CMP_AND_SWP
 * @ac_guess: emulation: the value we expect in the remote word
 * @ac_tries: emulation: CMP_AND_SWPs posted
 * @ac_final: no SEND follows: report success ourselves
 * @ac_deadline: emulation: jiffies after which no try is posted
 */
struct rds_ib_atomic_ctx {
	struct ib_cqe		ac_cqe;
	struct rds_ib_ep	*ac_ep;
	struct rds_message	*ac_rm;
	struct ib_atomic_wr	ac_wr;
	struct ib_sge		ac_sge;
	bool			ac_emulate;
	u64			ac_guess;
	unsigned int		ac_tries;
	bool			ac_final;
	unsigned long		ac_deadline;
};

/**
 * rds_ib_masked_fadd - masked fetch-and-add, bit by bit
 * @v: the old value
 * @add: the addend
 * @nocarry: bit i set: no carry from bit i into bit i + 1
 *
 * Return: the new value.
 */
static u64 rds_ib_masked_fadd(u64 v, u64 add, u64 nocarry)
{
	u64 res = 0, carry = 0;
	int i;

	for (i = 0; i < 64; i++) {
		u64 a = (v >> i) & 1, b = (add >> i) & 1;

		res |= (a ^ b ^ carry) << i;
		carry = (a & b) | (carry & (a ^ b));
		if ((nocarry >> i) & 1)
			carry = 0;
	}
	return res;
}

/* What the masked op makes of the remote word @v. */
static u64 rds_ib_atomic_apply(const struct rm_atomic_op *op, u64 v)
{
	if (op->op_type == RDS_ATOMIC_TYPE_FADD)
		return rds_ib_masked_fadd(v, op->op_m_fadd.add,
					  op->op_m_fadd.nocarry_mask);
	if ((v & op->op_m_cswp.compare_mask) !=
	    (op->op_m_cswp.compare & op->op_m_cswp.compare_mask))
		return v;
	return (v & ~op->op_m_cswp.swap_mask) |
	       (op->op_m_cswp.swap & op->op_m_cswp.swap_mask);
}

static bool rds_ib_atomic_trivial(const struct rm_atomic_op *op)
{
	if (!op->op_masked)
		return true;
	if (READ_ONCE(rds_ib_atomic_force_emul))
		return false;
	if (op->op_type == RDS_ATOMIC_TYPE_FADD)
		return !op->op_m_fadd.nocarry_mask;
	return op->op_m_cswp.compare_mask == ~0ULL &&
	       op->op_m_cswp.swap_mask == ~0ULL;
}

/* The result the HCA wrote to the local buffer (host order). */
static u64 rds_ib_atomic_result(struct rds_ib_atomic_ctx *ac)
{
	struct scatterlist *sg = ac->ac_rm->atomic.op_sg;
	struct ib_device *dev = ac->ac_ep->e_rid->rid_dev;
	void *p;
	u64 v;

	ib_dma_sync_single_for_cpu(dev, sg_dma_address(sg), 8,
				   DMA_FROM_DEVICE);
	p = kmap_local_page(sg_page(sg));
	memcpy(&v, p + sg->offset, sizeof(v));
	kunmap_local(p);
	ib_dma_sync_single_for_device(dev, sg_dma_address(sg), 8,
				      DMA_FROM_DEVICE);
	return v;
}

static int rds_ib_atomic_post(struct rds_ib_atomic_ctx *ac)
{
	struct rds_ib_ep *ep = ac->ac_ep;
	const struct ib_send_wr *bad_wr;
	int ret;

	/*
	 * The RDMA op watchdog counts atomics too, before the post.  ORDER:
	 * @ac may be completed and freed before ib_post_send() returns; only
	 * @ep (alive while we may post on it) is used after the post.
	 */
	atomic_inc(&ep->e_rdma_posted);
	ret = ib_post_send(ep->e_qp, &ac->ac_wr.wr, &bad_wr);
	if (ret) {
		atomic_inc(&ep->e_rdma_done);
		return ret;
	}
	rds_ib_stats_inc(s_ib_atomic_wrs);
	rds_ib_rdma_wd_arm(ep);
	return 0;
}

/* Emulation step: CMP_AND_SWP(guess, f(guess)). */
static void rds_ib_atomic_emul_prep(struct rds_ib_atomic_ctx *ac)
{
	const struct rm_atomic_op *op = &ac->ac_rm->atomic;

	ac->ac_wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	ac->ac_wr.compare_add = ac->ac_guess;
	ac->ac_wr.swap = rds_ib_atomic_apply(op, ac->ac_guess);
	ac->ac_wr.compare_add_mask = 0;
	ac->ac_wr.swap_mask = 0;
	ac->ac_tries++;
}

static void rds_ib_atomic_finish(struct rds_ib_atomic_ctx *ac, int status)
{
	struct rds_ib_ep *ep = ac->ac_ep;
	struct rds_message *rm = ac->ac_rm;
	struct rm_atomic_op *op = &rm->atomic;
	bool wait = ac->ac_emulate && !ac->ac_final;

	if (op->op_mapped) {
		ib_dma_unmap_sg(ep->e_rid->rid_dev, op->op_sg, 1,
				DMA_FROM_DEVICE);
		op->op_mapped = 0;
	}
	rds_ib_rdma_sq_put(ep, 1);
	if (status != RDS_RDMA_SUCCESS || ac->ac_final)
		rds_atomic_send_complete(rm, status);
	kfree(ac);
	if (wait)
		rds_ib_msg_unhold(ep, rm);	/* @rm ours until we kicked */
	rds_message_put(rm);
}

/* Post the next step of an emulation loop, unless the endpoint is dying. */
static int rds_ib_atomic_repost(struct rds_ib_atomic_ctx *ac)
{
	struct rds_ib_ep *ep = ac->ac_ep;
	unsigned long flags;
	int ret = -ENOTCONN;

	spin_lock_irqsave(&ep->e_ack_lock, flags);
	if (!test_bit(RDS_IB_EP_DEAD, &ep->e_flags))
		ret = rds_ib_atomic_post(ac);
	spin_unlock_irqrestore(&ep->e_ack_lock, flags);
	return ret;
}

static void rds_ib_atomic_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_atomic_ctx *ac = container_of(wc->wr_cqe,
						    struct rds_ib_atomic_ctx,
						    ac_cqe);
	struct rds_ib_ep *ep = ac->ac_ep;
	u64 r;
	int ret;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_atomic_completions);
	atomic_inc(&ep->e_rdma_done);
	if (wc->status != IB_WC_SUCCESS) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: atomic to %pI6c failed: %s\n",
					    &ep->e_ic->ic_conn->c_faddr,
					    ib_wc_status_msg(wc->status));
		rds_ib_ep_wc_error(ep, wc);
		rds_ib_atomic_finish(ac, rds_ib_rdma_status(wc->status));
		return;
	}
	if (!ac->ac_emulate) {
		rds_ib_atomic_finish(ac, RDS_RDMA_SUCCESS);
		return;
	}
	r = rds_ib_atomic_result(ac);
	if (r == ac->ac_guess) {
		rds_ib_atomic_finish(ac, RDS_RDMA_SUCCESS);
		return;
	}
	if (test_bit(RDS_IB_EP_ERROR, &ep->e_flags)) {
		rds_ib_atomic_finish(ac, RDS_RDMA_DROPPED);
		return;
	}
	if (ac->ac_tries >= READ_ONCE(rds_ib_atomic_emul_tries) ||
	    (ac->ac_deadline && time_after(jiffies, ac->ac_deadline))) {
		rds_ib_stats_inc(s_ib_atomic_emulated_exhausted);
		rds_ib_atomic_finish(ac, RDS_RDMA_OTHER_ERROR);
		return;
	}
	rds_ib_stats_inc(s_ib_atomic_emulated_retries);
	ac->ac_guess = r;
	rds_ib_atomic_emul_prep(ac);
	ret = rds_ib_atomic_repost(ac);
	if (ret) {
		rds_ib_ep_post_error(ep, ret, "ib_post_send of atomic failed");
		rds_ib_atomic_finish(ac, RDS_RDMA_DROPPED);
	}
}

/**
 * rds_ib_atomic_check - ->atomic_check(): can the socket's device do it?
 * @rs: the bound socket
 * @conn: the connection (unused: the device is the socket's)
 * @masked: a MASKED_* op (emulated where the device lacks them)
 *
 * Process context.  Return: 0, -EOPNOTSUPP, or -ENOMEM (device lookup).
 */
int rds_ib_atomic_check(struct rds_sock *rs, struct rds_connection *conn,
			bool masked)
{
	struct rds_ib_device *rid;
	int ret = 0;

	rid = rds_ib_sock_device(rs);
	if (IS_ERR(rid))
		return PTR_ERR(rid) == -ENOMEM ? -ENOMEM : -EOPNOTSUPP;
	if (rid->rid_iwarp || rid->rid_atomic_cap == IB_ATOMIC_NONE)
		ret = -EOPNOTSUPP;
	rds_ib_device_put(rid);
	return ret;
}

/**
 * rds_ib_xmit_atomic - post the atomic op of a message
 * @cp: path
 * @op: &rm->atomic
 *
 * RDS_IN_XMIT held, process context: a message that also carries an
 * RDMA op first has that op's contexts built and freed
 * (rds_ib_rdma_postable(), GFP_KERNEL), so that an op that could never
 * be posted is refused before the atomic goes.  An emulated masked op
 * returns -EINPROGRESS once posted and -EAGAIN until its loop finished
 * (the completion kicks the send worker).
 *
 * Return: 0, -EINPROGRESS (posted, holding the SEND), -EAGAIN/-ENOMEM
 * (called again), -ECANCELED (not posted, reported: complete the message
 * unsent), -ENOTCONN/-EIO (drop path).
 */
int rds_ib_xmit_atomic(struct rds_conn_path *cp, struct rm_atomic_op *op)
{
	struct rds_message *rm = container_of(op, struct rds_message, atomic);
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep = READ_ONCE(ic->ic_ep);
	struct rds_ib_atomic_ctx *ac;
	struct rds_ib_device *rid;
	bool wait;
	int ret;

	/* An emulation loop we started earlier: never touch it. */
	ret = rds_ib_op_begin(ep, rm);
	if (ret <= 0)
		return ret;
	rid = ep->e_rid;
	if (rid->rid_iwarp || rid->rid_atomic_cap == IB_ATOMIC_NONE) {
		/* atomic_check let it through: never report success. */
		rds_atomic_send_complete(rm, RDS_RDMA_OTHER_ERROR);
		return -ECANCELED;
	}
	if (!op->op_sg || op->op_sg->length < 8)
		return -EIO;
	if (op->op_remote_addr & 7) {
		/*
		 * The responder would NAK it (invalid request); rxe even
		 * refuses the post, which would cost the connection.
		 */
		rds_atomic_send_complete(rm, RDS_RDMA_REMOTE_ERROR);
		return -ECANCELED;
	}
	/* Posted, the atomic could not be taken back (ib_rdma.c). */
	if (rm->rdma.op_active && !rm->rdma.op_postable) {
		ret = rds_ib_rdma_postable(ep, rm);
		if (ret == -ECANCELED)
			rds_atomic_send_complete(rm, RDS_RDMA_OTHER_ERROR);
		if (ret)
			return ret;
	}

	if (!rds_ib_rdma_sq_get(ep, 1))
		return -EAGAIN;
	ac = rds_should_fail(RDS_FAULT_TX) ? NULL :
	     kzalloc(sizeof(*ac), GFP_ATOMIC | __GFP_NOWARN);
	if (!ac) {
		rds_ib_rdma_sq_put(ep, 1);
		return -ENOMEM;
	}
	if (!op->op_mapped) {
		if (ib_dma_map_sg(rid->rid_dev, op->op_sg, 1,
				  DMA_FROM_DEVICE) != 1) {
			rds_ib_rdma_sq_put(ep, 1);
			kfree(ac);
			return -ENOMEM;
		}
		op->op_mapped = 1;
	}
	ac->ac_ep = ep;
	ac->ac_rm = rm;
	ac->ac_cqe.done = rds_ib_atomic_done;
	ac->ac_final = !rds_msg_has_send(rm);
	ac->ac_sge.addr = sg_dma_address(op->op_sg);
	ac->ac_sge.length = 8;
	ac->ac_sge.lkey = rid->rid_pd->local_dma_lkey;
	ac->ac_wr.wr.wr_cqe = &ac->ac_cqe;
	ac->ac_wr.wr.sg_list = &ac->ac_sge;
	ac->ac_wr.wr.num_sge = 1;
	ac->ac_wr.wr.send_flags = IB_SEND_SIGNALED;
	ac->ac_wr.remote_addr = op->op_remote_addr;
	ac->ac_wr.rkey = op->op_rkey;

	if (rds_ib_atomic_trivial(op)) {
		if (op->op_type == RDS_ATOMIC_TYPE_FADD) {
			ac->ac_wr.wr.opcode = IB_WR_ATOMIC_FETCH_AND_ADD;
			ac->ac_wr.compare_add = op->op_m_fadd.add;
			rds_ib_stats_inc(s_ib_atomic_fadd);
		} else {
			ac->ac_wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
			ac->ac_wr.compare_add = op->op_m_cswp.compare;
			ac->ac_wr.swap = op->op_m_cswp.swap;
			rds_ib_stats_inc(s_ib_atomic_cswp);
		}
	} else if (rid->rid_masked_atomic_cap != IB_ATOMIC_NONE) {
		if (op->op_type == RDS_ATOMIC_TYPE_FADD) {
			ac->ac_wr.wr.opcode = IB_WR_MASKED_ATOMIC_FETCH_AND_ADD;
			ac->ac_wr.compare_add = op->op_m_fadd.add;
			ac->ac_wr.compare_add_mask = op->op_m_fadd.nocarry_mask;
			rds_ib_stats_inc(s_ib_atomic_fadd);
		} else {
			ac->ac_wr.wr.opcode = IB_WR_MASKED_ATOMIC_CMP_AND_SWP;
			ac->ac_wr.compare_add = op->op_m_cswp.compare;
			ac->ac_wr.swap = op->op_m_cswp.swap;
			ac->ac_wr.compare_add_mask = op->op_m_cswp.compare_mask;
			ac->ac_wr.swap_mask = op->op_m_cswp.swap_mask;
			rds_ib_stats_inc(s_ib_atomic_cswp);
		}
	} else {
		ac->ac_emulate = true;
		ac->ac_deadline = rds_ib_atomic_emul_deadline();
		rds_ib_stats_inc(s_ib_atomic_emulated);
		/* First guess: the compare value (CSWP) or zero (FADD). */
		ac->ac_guess = op->op_type == RDS_ATOMIC_TYPE_CSWP ?
			       op->op_m_cswp.compare : 0;
		rds_ib_atomic_emul_prep(ac);
		if (op->op_type == RDS_ATOMIC_TYPE_FADD)
			rds_ib_stats_inc(s_ib_atomic_fadd);
		else
			rds_ib_stats_inc(s_ib_atomic_cswp);
	}

	/*
	 * @ac is the completion's once posted (it frees it); a waiting
	 * emulation is found again through the SEND hold, never through @ac.
	 */
	wait = ac->ac_emulate && !ac->ac_final;
	rds_message_addref(rm);
	if (wait)
		rds_ib_msg_hold(rm);
	ret = rds_ib_atomic_post(ac);
	if (ret) {
		rm->m_final_op = NULL;
		/* Nothing of the op is posted: its buffer is ours again. */
		ib_dma_unmap_sg(rid->rid_dev, op->op_sg, 1, DMA_FROM_DEVICE);
		op->op_mapped = 0;
		rds_message_put(rm);
		rds_ib_rdma_sq_put(ep, 1);
		kfree(ac);
		rds_ib_ep_post_error(ep, ret, "ib_post_send of atomic failed");
		return -EIO;
	}
	return wait ? -EINPROGRESS : 0;
}
