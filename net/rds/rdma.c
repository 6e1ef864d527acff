// SPDX-License-Identifier: GPL-2.0
/*
 * rdma.c - the transport-neutral half of RDMA: memory regions, RDMA and
 * atomic ops on messages, and their notifications.
 *
 * Theory of operation
 * ===================
 *
 * Memory regions.  RDS_GET_MR, RDS_GET_MR_FOR_DEST and the RDS_CMSG_RDMA_MAP
 * cmsg all end in rds_rdma_map(): the user range is validated (no overflow,
 * at most RDS_MAX_MSG_SIZE plus the unaligned page), charged against
 * RLIMIT_MEMLOCK (mm_account_pinned_pages(); EPERM when the caller may not
 * lock memory at all, ENOMEM when over the limit), pinned with
 * FOLL_LONGTERM | FOLL_WRITE, described by a scatterlist (first entry at
 * the page offset of the buffer, last ending at its end) and handed to the
 * transport's ->get_mr(), which registers it at the iova we ask for:
 * RDS_MR_IOVA_USE_ONCE | page offset for use-once keys, the page offset for
 * the others; the transport may add bits of its own in between
 * (RDS_MR_IOVA_EPOCH_MASK; see Documentation/networking/rds.rst).  The
 * cookie is rkey | iova << 32, the in-tree format.  The MR goes into the
 * socket's rbtree, keyed by rkey.
 *
 * Asynchronous registration.  The socket options return only once the key
 * is valid: the application may hand the cookie out by any means.  For
 * RDS_CMSG_RDMA_MAP (r_reg_async) the transport may return while the
 * registration is still in flight (RDS_MR_REG_PENDING), because the cookie
 * reaches the peer in that very message: rds_rdma_xmit_ops() does not let
 * a message naming a pending MR (MAP or DEST) leave, unless the transport
 * posted the registration ahead of it on the path's own queue
 * (->mr_reg_ordered()); it parks the path on the MR's r_reg_waiters and
 * stops as for a full ring, and rds_mr_reg_complete() kicks the parked
 * paths.  The connection the message goes out on is known before the
 * cmsgs are parsed (sendmsg, as in-tree), so ->get_mr() gets it.  A failed registration
 * makes those messages complete unsent (the cookie names no valid key);
 * MAP/DEST messages carry no op, so a socket with RDS_RECVERR is told by
 * an RDS_CMSG_RDMA_STATUS of RDS_RDMA_OTHER_ERROR whose user_token is the
 * cookie (preallocated while the registration may still fail), and other
 * sockets by nothing but the missing reply.  The MR stays in the tree
 * until the application frees it.  Connection
 * destruction unparks its paths first (rds_rdma_path_unwait()), so a kick
 * never meets a freed path.
 *
 * References on a struct rds_mr: the tree's, the transport's (handed to it
 * with the ->get_mr() call, dropped by the transport once the key is dead
 * in the HCA, also when the registration failed: a failed REG_MR may have
 * left a valid key), and one per message naming it (MAP/DEST).  An MR
 * leaves the tree exactly once: RDS_FREE_MR, socket close, a failed
 * sendmsg that had mapped it (->free_mr()), or the peer's message that
 * completes an RDMA on a use-once key (->unuse_mr()).  The last reference unpins the pages from
 * a work item, so any context may drop it.
 *
 * Use-once keys and delivery.  rds_recv_incoming() calls
 * rds_rdma_unuse_inc() for an RDS_EXTHDR_RDMA.  For a use-once MR the
 * transport decides whether the key is already dead (remote invalidation)
 * or must first be invalidated; in the latter case it holds the message
 * (rds_inc_hold()) and releases it when the invalidation completed.  A held
 * message, and everything queued after it on the socket, is invisible to
 * recvmsg() and poll(); the last rds_inc_unhold() wakes the socket.
 *
 * Ops.  RDS_CMSG_RDMA_ARGS and the four atomic cmsgs fill rm->rdma and
 * rm->atomic: local pages pinned (FOLL_WRITE where the HCA writes them;
 * not FOLL_LONGTERM: they go with the op) and charged against
 * RLIMIT_MEMLOCK like an MR's (ENOMEM past it), at most
 * RDS_RDMA_MAX_OP_PAGES of them (EMSGSIZE: the transport could not post
 * more in one go), remote address = cookie offset + the user's remote
 * address, a notifier preallocated when the application will want one
 * (NOTIFY_ME, or RDS_RECVERR for failures; ENOMEM if it cannot be had),
 * and the RDS_EXTHDR_RDMA extension so that the
 * owner of the key learns the RDMA is complete.  Cmsgs that hand over a
 * cookie (MAP, DEST) may not be mixed with ops (ARGS, atomics), as in-tree.
 * rds_send_xmit() calls rds_rdma_xmit_ops() before ->xmit(): a message
 * with ops that was sent before a reconnect is not sent again (its ops end
 * with RDS_RDMA_DROPPED); otherwise the atomic, then the RDMA, is posted,
 * and a silent message without payload or cookie sends nothing more.
 *
 * Notifications.  The transport reports the outcome of each op once
 * (rds_rdma_send_complete(), rds_atomic_send_complete()); cancelling
 * reports RDS_RDMA_CANCELED only for ops that were not posted and never
 * will be: m_ops_state (IDLE -> POSTING -> POSTED, or -> CANCELED, by
 * cmpxchg) decides between the sender and a cancel, and a cancel that
 * meets the sender while it posts leaves the report to the op's own
 * completion (or to the sender if the post failed); a message freed with
 * an op that never reported one reports RDS_RDMA_DROPPED, so nothing ever
 * claims a success, or a cancel, that did not happen.  A notification goes on rs_notify_queue (under
 * rs_recv_lock, which poll() also takes) and is returned by recvmsg() as an
 * RDS_CMSG_RDMA_STATUS with no data, before any data, one per call.
 *
 * Locking: rs_rdma_lock (irqsave) protects the MR tree and nests inside
 * nothing; transport callbacks are called without it.
 */
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/rbtree.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/dma-direction.h>
#include <net/sock.h>
#include <net/ipv6.h>

#include "rds.h"
#include <trace/events/rds.h>

/* Pages one user range of @bytes at @addr spans; 0 if empty or wrapping. */
static u64 rds_range_pages(u64 addr, u64 bytes)
{
	u64 end;

	if (!bytes || check_add_overflow(addr, bytes, &end) ||
	    end > (u64)-1 - PAGE_SIZE)
		return 0;
	return (PAGE_ALIGN(end) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT);
}

/*
 * Pin @npages user pages from @addr, all or nothing.  FOLL_LONGTERM for an
 * MR (@longterm: held until the application frees it), not for the pages
 * of one op, which are released when the op is done.
 */
static int rds_pin(u64 addr, unsigned int npages, bool write, bool longterm,
		   struct page **pages)
{
	unsigned int flags = (longterm ? FOLL_LONGTERM : 0) |
			     (write ? FOLL_WRITE : 0);
	int ret;

	if (addr != (unsigned long)addr)
		return -EFAULT;
	ret = pin_user_pages_fast((unsigned long)addr & PAGE_MASK, npages,
				  flags, pages);
	if (ret < 0)
		return ret;
	if (ret < (int)npages) {
		unpin_user_pages(pages, ret);
		return -EFAULT;
	}
	return 0;
}

/* ------------------------------------------------------------------------
 * MR objects and the per-socket tree
 * ------------------------------------------------------------------------
 */

void rds_rdma_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->rs_rdma_lock);
	rs->rs_mr_tree = RB_ROOT;
}

static void rds_mr_free_work(struct work_struct *work)
{
	struct rds_mr *mr = container_of(work, struct rds_mr, r_free_work);
	struct mmpin mmp = { .user = mr->r_user, .num_pg = mr->r_mm_pinned };

	if (mr->r_nents)
		unpin_user_pages_dirty_lock(mr->r_pages, mr->r_nents, true);
	if (mmp.user)
		mm_unaccount_pinned_pages(&mmp);
	kfree(mr->r_sg);
	kvfree(mr->r_pages);
	kfree(mr);
}

void rds_mr_put(struct rds_mr *mr)
{
	if (!refcount_dec_and_test(&mr->r_refcount))
		return;
	INIT_WORK(&mr->r_free_work, rds_mr_free_work);
	queue_work(rds_wq, &mr->r_free_work);
}
EXPORT_SYMBOL_GPL(rds_mr_put);

/* Find @key; with @insert, add @insert unless the key is taken. */
static struct rds_mr *rds_mr_tree_walk(struct rb_root *root, u32 key,
				       struct rds_mr *insert)
{
	struct rb_node **p = &root->rb_node, *parent = NULL;
	struct rds_mr *mr;

	while (*p) {
		parent = *p;
		mr = rb_entry(parent, struct rds_mr, r_node);
		if (key < mr->r_key)
			p = &parent->rb_left;
		else if (key > mr->r_key)
			p = &parent->rb_right;
		else
			return mr;
	}
	if (insert) {
		rb_link_node(&insert->r_node, parent, p);
		rb_insert_color(&insert->r_node, root);
	}
	return NULL;
}

/*
 * Unlink @mr, which is in the socket's tree, from it; the tree's reference
 * passes to the caller.  Caller holds rs_rdma_lock.
 */
static void rds_mr_unlink(struct rds_sock *rs, struct rds_mr *mr)
{
	lockdep_assert_held(&rs->rs_rdma_lock);
	rb_erase(&mr->r_node, &rs->rs_mr_tree);
	RB_CLEAR_NODE(&mr->r_node);
	clear_bit(RDS_MR_IN_TREE, &mr->r_state);
}

/* Take the MR of @key off the socket; the tree's reference passes over. */
static struct rds_mr *rds_mr_take(struct rds_sock *rs, u32 key)
{
	struct rds_mr *mr;
	unsigned long flags;

	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	mr = rds_mr_tree_walk(&rs->rs_mr_tree, key, NULL);
	if (mr)
		rds_mr_unlink(rs, mr);
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	return mr;
}

/*
 * Take @mr itself off its socket, if it is still there (a racing
 * RDS_FREE_MR or use-once invalidation may have taken it first).
 * Return: true when the tree's reference passed to the caller.
 */
static bool rds_mr_unpublish(struct rds_sock *rs, struct rds_mr *mr)
{
	unsigned long flags;
	bool owned;

	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	owned = test_bit(RDS_MR_IN_TREE, &mr->r_state);
	if (owned)
		rds_mr_unlink(rs, mr);
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	return owned;
}

/*
 * Claim the one ->free_mr()/->unuse_mr() call of @mr.  Under r_sync_lock,
 * so that a ->sync_mr() that saw the flag clear has finished before the
 * transport may recycle or free the object behind r_trans_private.
 */
static bool rds_mr_trans_claim(struct rds_mr *mr)
{
	unsigned long flags;
	bool first;

	spin_lock_irqsave(&mr->r_sync_lock, flags);
	first = !test_and_set_bit(RDS_MR_TRANS_FREED, &mr->r_state);
	spin_unlock_irqrestore(&mr->r_sync_lock, flags);
	return first;
}

/*
 * Make DMA through @mr visible (@direction as for ->sync_mr()), unless the
 * transport already let go of its object: then there is nothing of this
 * registration left to sync.  Any context; the caller holds a reference.
 */
static void rds_mr_sync(struct rds_mr *mr, int direction)
{
	unsigned long flags;

	if (!mr->r_trans->sync_mr)
		return;
	spin_lock_irqsave(&mr->r_sync_lock, flags);
	if (!test_bit(RDS_MR_TRANS_FREED, &mr->r_state))
		mr->r_trans->sync_mr(mr, direction);
	spin_unlock_irqrestore(&mr->r_sync_lock, flags);
}

/* The MR left its socket: tell the transport (once), drop the tree ref. */
static void rds_mr_release(struct rds_mr *mr, bool invalidate)
{
	trace_rds_mr_release(mr, invalidate || mr->r_invalidate, false);
	if (rds_mr_trans_claim(mr))
		mr->r_trans->free_mr(mr, invalidate || mr->r_invalidate);
	rds_mr_put(mr);
}

/**
 * rds_rdma_map - pin, register and insert an MR
 * @rs: socket
 * @args: the user's arguments (a kernel copy)
 * @conn: connection for RDS_CMSG_RDMA_MAP, NULL for the socket options
 * @async: RDS_CMSG_RDMA_MAP: the transport may return before the key is
 *	valid (the message naming it waits for it in rds_rdma_xmit_ops())
 * @cookie_ret: where to store the cookie, or NULL
 * @mr_ret: where to store a new reference to the MR, or NULL
 *
 * Writes the cookie to args->cookie_addr when that is non-zero.
 * Return: 0 or a negative errno (the in-tree ones).
 */
static int rds_rdma_map(struct rds_sock *rs, const struct rds_get_mr_args *args,
			struct rds_connection *conn, bool async,
			u64 *cookie_ret, struct rds_mr **mr_ret)
{
	struct rds_transport *trans = rs->rs_transport;
	u64 addr = args->vec.addr, bytes = args->vec.bytes;
	struct mmpin mmp = {};
	struct rds_mr *mr, *found;
	unsigned int offset, i;
	u64 low;
	unsigned long flags;
	u64 npages, cookie;
	int ret;

	if (ipv6_addr_any(&rs->rs_bound_addr) || !trans)
		return -ENOTCONN;
	if (!trans->get_mr || !trans->free_mr)
		return -EOPNOTSUPP;
	if (bytes && !rds_range_pages(addr, bytes))
		return -EINVAL;
	if (!can_do_mlock())
		return -EPERM;
	npages = rds_range_pages(addr, bytes);
	if (!npages)
		return -EINVAL;
	if (npages - 1 > (RDS_MAX_MSG_SIZE >> PAGE_SHIFT) ||
	    bytes > RDS_MAX_MSG_SIZE)
		return -EMSGSIZE;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	refcount_set(&mr->r_refcount, 1);
	RB_CLEAR_NODE(&mr->r_node);
	INIT_LIST_HEAD(&mr->r_reg_waiters);
	spin_lock_init(&mr->r_sync_lock);
	mr->r_reg_async = async;
	mr->r_use_once = !!(args->flags & RDS_RDMA_USE_ONCE);
	mr->r_invalidate = !!(args->flags & RDS_RDMA_INVALIDATE);
	mr->r_write = !!(args->flags & RDS_RDMA_READWRITE);
	mr->r_addr = addr;
	mr->r_len = bytes;
	mr->r_sock = rs;
	mr->r_trans = trans;
	offset = offset_in_page(addr);
	mr->r_iova = offset | (mr->r_use_once ? RDS_MR_IOVA_USE_ONCE : 0);

	ret = mm_account_pinned_pages(&mmp, npages << PAGE_SHIFT);
	if (ret) {
		ret = -ENOMEM;
		goto out_free;
	}
	mr->r_user = mmp.user;
	mr->r_mm_pinned = mmp.num_pg;

	ret = -ENOMEM;
	mr->r_pages = kvcalloc(npages, sizeof(*mr->r_pages), GFP_KERNEL);
	mr->r_sg = kcalloc(npages, sizeof(*mr->r_sg), GFP_KERNEL);
	if (!mr->r_pages || !mr->r_sg)
		goto out_free;

	/* Always writable: the HCA may write whatever the flags said. */
	ret = rds_pin(addr, npages, true, true, mr->r_pages);
	if (ret)
		goto out_free;
	mr->r_nents = npages;

	sg_init_table(mr->r_sg, npages);
	for (i = 0; i < npages; i++) {
		unsigned int off = i ? 0 : offset;
		unsigned int len = min_t(u64, PAGE_SIZE - off, bytes);

		sg_set_page(&mr->r_sg[i], mr->r_pages[i], len, off);
		bytes -= len;
	}

	/*
	 * The transport's reference, handed over with the call: on error
	 * it is dropped by the transport, at once or, if a registration
	 * reached the HCA, once the key is dead; the pages stay pinned
	 * until then.
	 */
	rds_mr_get(mr);
	ret = trans->get_mr(rs, mr, conn);
	trace_rds_mr_register(mr, ret);
	if (ret)
		goto out_free;
	/*
	 * What the cookie needs (rds.h): 32 bits, bit 31 as asked, an
	 * offset within a page besides the epoch.  The page offset may be
	 * the DMA address's rather than the CPU's (a bounce buffer).
	 */
	low = mr->r_iova & ~(u64)(RDS_MR_IOVA_EPOCH_MASK |
				  RDS_MR_IOVA_USE_ONCE);
	if (WARN_ON_ONCE(mr->r_iova > U32_MAX || low >= PAGE_SIZE ||
			 !!(mr->r_iova & RDS_MR_IOVA_USE_ONCE) !=
			 mr->r_use_once)) {
		ret = -EINVAL;
		goto out_release;
	}

	cookie = rds_rdma_make_cookie(mr->r_key, (u32)mr->r_iova);

	/*
	 * A reference of our own is taken before the MR is published: from
	 * the insertion on, another thread of the socket (RDS_FREE_MR) or a
	 * peer's message naming a use-once key may take it out and release
	 * it, while put_user() below may fault for as long as the user
	 * likes.  The cookie goes out only once the key is known not to be
	 * a duplicate, so an EBUSY leaves no cookie behind.
	 */
	rds_mr_get(mr);
	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	found = rds_mr_tree_walk(&rs->rs_mr_tree, mr->r_key, mr);
	if (!found)
		set_bit(RDS_MR_IN_TREE, &mr->r_state);
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	if (found) {
		/*
		 * The socket still names the key through an MR of a device
		 * that was removed since (a device added again numbers its
		 * keys afresh): refuse this registration, not the old MR,
		 * which the application may still free by its cookie.  Not
		 * a WARN: any user can get here by keeping keys across a
		 * device removal.
		 */
		pr_notice_ratelimited("RDS: rkey %#x is still in use by an older MR of this socket: registration refused\n",
				      mr->r_key);
		ret = -EBUSY;
		goto out_release_ret;
	}

	if (args->cookie_addr &&
	    put_user(cookie, (u64 __user *)(unsigned long)args->cookie_addr)) {
		if (rds_mr_unpublish(rs, mr))
			rds_mr_release(mr, true);	/* the tree's */
		rds_mr_put(mr);			/* ours */
		return -EFAULT;
	}

	if (cookie_ret)
		*cookie_ret = cookie;
	if (mr_ret)
		*mr_ret = mr;			/* ours, handed over */
	else
		rds_mr_put(mr);
	return 0;

out_release_ret:
	rds_mr_put(mr);				/* ours */
out_release:
	rds_mr_release(mr, true);	/* drops the creator's reference */
	return ret;
out_free:
	rds_mr_put(mr);
	return ret;
}

static int rds_get_mr(struct rds_sock *rs, sockptr_t optval,
		      unsigned int optlen)
{
	struct rds_get_mr_args args;

	if (optlen != sizeof(args))
		return -EINVAL;
	if (copy_from_sockptr(&args, optval, sizeof(args)))
		return -EFAULT;
	return rds_rdma_map(rs, &args, NULL, false, NULL, NULL);
}

static int rds_get_mr_for_dest(struct rds_sock *rs, sockptr_t optval,
			       unsigned int optlen)
{
	struct rds_get_mr_for_dest_args dargs;
	struct rds_get_mr_args args = {};

	if (optlen != sizeof(dargs))
		return -EINVAL;
	if (copy_from_sockptr(&dargs, optval, sizeof(dargs)))
		return -EFAULT;
	/* The key is valid for every peer, so dest_addr changes nothing. */
	args.vec = dargs.vec;
	args.cookie_addr = dargs.cookie_addr;
	args.flags = dargs.flags;
	return rds_rdma_map(rs, &args, NULL, false, NULL, NULL);
}

static int rds_free_mr(struct rds_sock *rs, sockptr_t optval,
		       unsigned int optlen)
{
	struct rds_free_mr_args args;
	struct rds_mr *mr;

	if (optlen != sizeof(args))
		return -EINVAL;
	if (copy_from_sockptr(&args, optval, sizeof(args)))
		return -EFAULT;

	if (!args.cookie) {
		if (!rs->rs_transport || !rs->rs_transport->flush_mrs)
			return -EINVAL;
		rs->rs_transport->flush_mrs(rs);
		return 0;
	}

	mr = rds_mr_take(rs, rds_rdma_cookie_key(args.cookie));
	if (!mr)
		return -EINVAL;
	rds_mr_release(mr, args.flags & RDS_RDMA_INVALIDATE);
	return 0;
}

/**
 * rds_rdma_setsockopt - RDS_GET_MR, RDS_GET_MR_FOR_DEST, RDS_FREE_MR
 * @rs: socket
 * @optname: option
 * @optval: user argument
 * @optlen: its length (must be the exact struct size: EINVAL)
 *
 * Process context, may sleep.  Return: 0 or a negative errno.
 */
int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen)
{
	switch (optname) {
	case RDS_GET_MR:
		return rds_get_mr(rs, optval, optlen);
	case RDS_GET_MR_FOR_DEST:
		return rds_get_mr_for_dest(rs, optval, optlen);
	case RDS_FREE_MR:
		return rds_free_mr(rs, optval, optlen);
	default:
		return -ENOPROTOOPT;
	}
}

/* ------------------------------------------------------------------------
 * Notifications
 * ------------------------------------------------------------------------
 */

/*
 * Fault injection (tests): the next rdma_notifier_fail allocations of a
 * notifier fail, as a failed kzalloc() would.  0, the default, is off.
 */
static unsigned int rds_rdma_notifier_fail;
module_param_named(rdma_notifier_fail, rds_rdma_notifier_fail, uint, 0644);
MODULE_PARM_DESC(rdma_notifier_fail,
		 " Test: fail the next N allocations of an RDMA/atomic notifier (default 0)");

static struct rds_notifier *rds_notifier_alloc(struct rds_sock *rs,
					       u64 token)
{
	struct rds_notifier *n;

	if (rds_fault_take(&rds_rdma_notifier_fail))
		return NULL;
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return NULL;
	INIT_LIST_HEAD(&n->n_list);
	n->n_user_token = token;
	n->n_status = RDS_RDMA_OTHER_ERROR;
	n->n_rs = rs;
	sock_hold(rds_rs_to_sk(rs));
	return n;
}

static void rds_notifier_free(struct rds_notifier *n)
{
	sock_put(rds_rs_to_sk(n->n_rs));
	kfree(n);
}

/*
 * Report the outcome of one op: the first report wins.  Queued when the
 * application asked for it (always, or on failure with RDS_RECVERR).
 */
static void rds_op_report(struct rds_notifier **slot, bool notify,
			  bool recverr, int status)
{
	struct rds_notifier *n = xchg(slot, NULL);
	struct rds_sock *rs;
	unsigned long flags;
	bool queued = false;

	if (!n)
		return;
	rs = n->n_rs;
	if (notify || (recverr && status != RDS_RDMA_SUCCESS)) {
		n->n_status = status;
		spin_lock_irqsave(&rs->rs_recv_lock, flags);
		if (!sock_flag(rds_rs_to_sk(rs), SOCK_DEAD)) {
			list_add_tail(&n->n_list, &rs->rs_notify_queue);
			queued = true;
		}
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	}
	if (queued)
		rds_wake_sk(rs);
	else
		rds_notifier_free(n);
}

/*
 * With RDS_RECVERR, give @rm the notifier that reports a failure of @mr's
 * registration (MAP, or DEST naming an MR whose MAP is still in flight or
 * failed).  A registration that already succeeded cannot fail any more:
 * nothing to prepare.  Return: 0 or -ENOMEM.
 */
static int rds_reg_notifier_prepare(struct rds_sock *rs,
				    struct rds_message *rm,
				    struct rds_mr *mr, u64 cookie)
{
	if (!rs->rs_recverr || rm->m_reg_notifier ||
	    (!test_bit(RDS_MR_REG_PENDING, &mr->r_state) &&
	     !test_bit(RDS_MR_REG_FAILED, &mr->r_state)))
		return 0;
	rm->m_reg_notifier = rds_notifier_alloc(rs, cookie);
	return rm->m_reg_notifier ? 0 : -ENOMEM;
}

void rds_rdma_send_complete(struct rds_message *rm, int status)
{
	struct rm_rdma_op *op = &rm->rdma;

	trace_rds_rdma_complete(rm, false, status);
	/* As in-tree: WRITEs count as sent bytes, READs as received. */
	if (status == RDS_RDMA_SUCCESS && op->op_write)
		rds_stats_add(s_send_rdma_bytes, op->op_bytes);
	else if (status == RDS_RDMA_SUCCESS)
		rds_stats_add(s_recv_rdma_bytes, op->op_bytes);
	rds_op_report(&op->op_notifier, op->op_notify, op->op_recverr, status);
}
EXPORT_SYMBOL_GPL(rds_rdma_send_complete);

void rds_atomic_send_complete(struct rds_message *rm, int status)
{
	struct rm_atomic_op *op = &rm->atomic;

	trace_rds_rdma_complete(rm, true, status);
	rds_op_report(&op->op_notifier, op->op_notify, op->op_recverr, status);
}
EXPORT_SYMBOL_GPL(rds_atomic_send_complete);

/**
 * rds_rdma_msg_drop - a message with ops will not be (re)sent
 * @rm: the message
 * @status: RDS_RDMA_CANCELED or RDS_RDMA_DROPPED
 *
 * Reports @status for each op that has not reported yet.  Any context.
 * Return: true if @rm had an op.
 */
bool rds_rdma_msg_drop(struct rds_message *rm, int status)
{
	if (!rm->rdma.op_active && !rm->atomic.op_active)
		return false;
	if (rm->atomic.op_active)
		rds_atomic_send_complete(rm, status);
	if (rm->rdma.op_active)
		rds_rdma_send_complete(rm, status);
	return true;
}

/**
 * rds_rdma_msg_cancel - RDS_CANCEL_SENT_TO (or close()) took @rm back
 * @rm: the message, off its socket
 *
 * Ops that were not posted are reported RDS_RDMA_CANCELED and will never
 * be posted; ops the sender is posting or has posted may execute, so their
 * completions report the real outcome (a cancel that meets the sender in
 * rds_rdma_xmit_ops() leaves the decision to it).  A message's ops go as
 * a unit: once one is posted (RDS_OPS_POSTED, also while the transport
 * holds the SEND behind it), the others are posted too.  Any context.
 */
void rds_rdma_msg_cancel(struct rds_message *rm)
{
	u32 old, new;

	if (!rm->rdma.op_active && !rm->atomic.op_active)
		return;
	old = READ_ONCE(rm->m_ops_state);
	for (;;) {
		if (old == RDS_OPS_IDLE)
			new = RDS_OPS_CANCELED;
		else if (old == RDS_OPS_POSTING)
			new = RDS_OPS_CANCEL_PENDING;
		else
			return;
		new = cmpxchg(&rm->m_ops_state, old, new) == old ? new : 0;
		if (new)
			break;
		old = READ_ONCE(rm->m_ops_state);
	}
	if (new == RDS_OPS_CANCELED)
		rds_rdma_msg_drop(rm, RDS_RDMA_CANCELED);
}

/**
 * rds_notify_recv - hand one notification to recvmsg()
 * @rs: socket
 * @msg: the user's msghdr
 *
 * Return: 0 (the recvmsg() return: no data), -EAGAIN if there was none,
 * or -EFAULT.
 */
int rds_notify_recv(struct rds_sock *rs, struct msghdr *msg)
{
	struct rds_rdma_notify cmsg;
	struct rds_notifier *n;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	n = list_first_entry_or_null(&rs->rs_notify_queue,
				     struct rds_notifier, n_list);
	if (n)
		list_del_init(&n->n_list);
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	if (!n)
		return -EAGAIN;

	memset(&cmsg, 0, sizeof(cmsg));	/* the padding goes to userspace */
	cmsg.user_token = n->n_user_token;
	cmsg.status = n->n_status;
	ret = put_cmsg(msg, SOL_RDS, RDS_CMSG_RDMA_STATUS, sizeof(cmsg), &cmsg);
	if (ret) {
		/* Keep it for the next call. */
		spin_lock_irqsave(&rs->rs_recv_lock, flags);
		list_add(&n->n_list, &rs->rs_notify_queue);
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
		return ret;
	}
	rds_notifier_free(n);
	return 0;
}

/* ------------------------------------------------------------------------
 * Ops on messages
 * ------------------------------------------------------------------------
 */

/**
 * struct rds_op_pin - the pages an op pinned
 * @node: on rds_op_pins_dirty while it waits for the unpin work
 *	(unpin_user_pages_dirty_lock() may sleep)
 * @mmp: their RLIMIT_MEMLOCK charge (rds_op_pin_charge())
 * @dirty: the HCA may have written them
 * @npages: pages
 * @pages: the pages
 */
struct rds_op_pin {
	struct llist_node	node;
	struct mmpin		mmp;
	bool			dirty;
	unsigned int		npages;
	struct page		*pages[];
};

/*
 * Pins the HCA may have written (READ sinks, atomic results) are marked
 * dirty under the page lock, which may sleep, while the last reference of
 * a message usually goes in the send completion (softirq): they wait on
 * this list for one work item, which takes every pin queued meanwhile, so
 * a stream of ops costs one wakeup per batch and not one per op.  Clean
 * pins (WRITE sources) are released at once, unless vmalloc()ed.
 */
static LLIST_HEAD(rds_op_pins_dirty);

static void rds_op_pins_work(struct work_struct *work)
{
	struct llist_node *list = llist_del_all(&rds_op_pins_dirty);
	struct rds_op_pin *pin, *tmp;

	llist_for_each_entry_safe(pin, tmp, list, node) {
		unpin_user_pages_dirty_lock(pin->pages, pin->npages,
					    pin->dirty);
		mm_unaccount_pinned_pages(&pin->mmp);
		kvfree(pin);
		cond_resched();
	}
}

static DECLARE_WORK(rds_op_pins_w, rds_op_pins_work);

/**
 * rds_op_pins_exit - wait for the pins of freed messages to be released
 *
 * At module exit, after the last socket and connection are gone.
 */
void rds_op_pins_exit(void)
{
	flush_work(&rds_op_pins_w);
}

/**
 * rds_op_pin_charge - charge the pages an op is about to pin
 * @pin: the op's (empty) pin
 * @npages: page pins it will hold (the same page twice counts twice)
 *
 * An op's pages stay pinned while its message is queued, which may be
 * long (a peer that is down), so they count against the sender's
 * RLIMIT_MEMLOCK like an MR's (mm_account_pinned_pages(): nothing for
 * CAP_IPC_LOCK or an unlimited RLIMIT_MEMLOCK).  Given back with the pins.
 *
 * Return: 0, or -ENOMEM over the limit, as RDS_GET_MR.
 */
static int rds_op_pin_charge(struct rds_op_pin *pin, u64 npages)
{
	return mm_account_pinned_pages(&pin->mmp, npages << PAGE_SHIFT) ?
	       -ENOMEM : 0;
}

static void rds_op_pin_release(struct rds_op_pin *pin)
{
	if (!pin)
		return;
	/* vfree() may sleep outside interrupts: a big pin goes there too. */
	if ((pin->dirty && pin->npages) || is_vmalloc_addr(pin)) {
		if (llist_add(&pin->node, &rds_op_pins_dirty))
			queue_work(rds_wq, &rds_op_pins_w);
		return;
	}
	unpin_user_pages(pin->pages, pin->npages);
	mm_unaccount_pinned_pages(&pin->mmp);
	kvfree(pin);
}

/**
 * rds_rdma_free_ops - release what the cmsgs attached to a message
 * @rm: the message, being freed
 *
 * An op that never reported reports RDS_RDMA_DROPPED now.  Any context.
 */
void rds_rdma_free_ops(struct rds_message *rm)
{
	struct rds_notifier *n;

	rds_rdma_msg_drop(rm, RDS_RDMA_DROPPED);
	n = xchg(&rm->m_reg_notifier, NULL);
	if (n)
		rds_notifier_free(n);
	if (rm->rdma.op_active) {
		rds_op_pin_release(rm->rdma.op_pin);
		kfree(rm->rdma.op_sg);
		rm->rdma.op_active = 0;
	}
	if (rm->atomic.op_active) {
		rds_op_pin_release(rm->atomic.op_pin);
		kfree(rm->atomic.op_sg);
		rm->atomic.op_active = 0;
	}
	if (rm->m_rdma_mr) {
		rds_mr_put(rm->m_rdma_mr);
		rm->m_rdma_mr = NULL;
	}
}

/* Cookie cmsgs (MAP, DEST) and op cmsgs (ARGS, atomics) do not mix. */
static bool rds_has_cookie(struct rds_message *rm)
{
	return rm->m_rdma_cookie || rm->m_rdma_mr;
}

static bool rds_has_op(struct rds_message *rm)
{
	return rm->rdma.op_active || rm->atomic.op_active;
}

static int rds_add_rdma_exthdr(struct rds_message *rm, u32 key)
{
	struct rds_ext_header_rdma ext = { .h_rdma_rkey = cpu_to_be32(key) };

	return rds_message_add_extension(&rm->m_inc.i_hdr, RDS_EXTHDR_RDMA,
					 &ext);
}

static int rds_cmsg_rdma_args(struct rds_sock *rs, struct rds_message *rm,
			      struct cmsghdr *cmsg)
{
	struct rm_rdma_op *op = &rm->rdma;
	struct rds_iovec *iovs = NULL;
	struct rds_rdma_args args;
	struct rds_op_pin *pin = NULL;
	u64 npages = 0, nbytes = 0;
	unsigned int i, j, n;
	int ret;

	if (cmsg->cmsg_len < CMSG_LEN(sizeof(args)) || op->op_active ||
	    rds_has_cookie(rm))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));

	if (ipv6_addr_any(&rs->rs_bound_addr))
		return -ENOTCONN;
	if (!args.nr_local)
		return -EINVAL;
	if (args.nr_local > UIO_MAXIOV)
		return -EMSGSIZE;

	iovs = kvcalloc(args.nr_local, sizeof(*iovs), GFP_KERNEL);
	if (!iovs)
		return -ENOMEM;
	if (copy_from_user(iovs, u64_to_user_ptr(args.local_vec_addr),
			   args.nr_local * sizeof(*iovs))) {
		ret = -EFAULT;
		goto out;
	}
	for (i = 0; i < args.nr_local; i++) {
		u64 p = rds_range_pages(iovs[i].addr, iovs[i].bytes);

		if (!p) {
			ret = -EINVAL;
			goto out;
		}
		if (iovs[i].bytes > RDS_MAX_MSG_SIZE) {
			ret = -EMSGSIZE;
			goto out;
		}
		nbytes += iovs[i].bytes;	/* <= UIO_MAXIOV << 20 */
		npages += p;
	}
	if (nbytes > args.remote_vec.bytes) {
		ret = -EINVAL;
		goto out;
	}
	if (nbytes > RDS_MAX_MSG_SIZE) {
		ret = -EMSGSIZE;
		goto out;
	}
	/*
	 * Many small iovecs that straddle pages could need more WRs than
	 * the transport's RDMA send queue room: refuse them here, not with
	 * a dropped connection later.
	 */
	if (npages > RDS_RDMA_MAX_OP_PAGES) {
		ret = -EMSGSIZE;
		goto out;
	}

	ret = -ENOMEM;
	pin = kvzalloc(struct_size(pin, pages, npages), GFP_KERNEL);
	op->op_sg = kcalloc(npages, sizeof(*op->op_sg), GFP_KERNEL);
	if (!pin || !op->op_sg)
		goto out_op;
	ret = rds_op_pin_charge(pin, npages);
	if (ret)
		goto out_op;
	sg_init_table(op->op_sg, npages);
	op->op_write = !!(args.flags & RDS_RDMA_READWRITE);
	pin->dirty = !op->op_write;

	for (i = 0; i < args.nr_local; i++) {
		u64 addr = iovs[i].addr, left = iovs[i].bytes;

		n = rds_range_pages(addr, left);
		/* READ writes local memory: pin it writable. */
		ret = rds_pin(addr, n, !op->op_write, false,
			      &pin->pages[pin->npages]);
		if (ret)
			goto out_op;
		for (j = 0; j < n; j++) {
			unsigned int off = offset_in_page(addr);
			unsigned int len = min_t(u64, PAGE_SIZE - off, left);

			sg_set_page(&op->op_sg[op->op_nents + j],
				    pin->pages[pin->npages + j], len, off);
			addr += len;
			left -= len;
		}
		pin->npages += n;
		op->op_nents += n;
	}

	if ((args.flags & RDS_RDMA_NOTIFY_ME) || rs->rs_recverr) {
		ret = -ENOMEM;
		op->op_notifier = rds_notifier_alloc(rs, args.user_token);
		if (!op->op_notifier)
			goto out_op;
	}
	op->op_fence = !!(args.flags & RDS_RDMA_FENCE);
	op->op_notify = !!(args.flags & RDS_RDMA_NOTIFY_ME);
	op->op_silent = !!(args.flags & RDS_RDMA_SILENT);
	op->op_recverr = rs->rs_recverr;
	op->op_use_once = !!(rds_rdma_cookie_offset(args.cookie) &
			     RDS_MR_IOVA_USE_ONCE);
	op->op_rkey = rds_rdma_cookie_key(args.cookie);
	op->op_remote_addr = args.remote_vec.addr +
			     rds_rdma_cookie_offset(args.cookie);
	op->op_bytes = nbytes;
	op->op_pin = pin;
	ret = rds_add_rdma_exthdr(rm, op->op_rkey);
	if (ret)
		goto out_op;
	op->op_active = 1;
	rds_stats_inc(s_send_rdma);
	kvfree(iovs);
	return 0;

out_op:
	if (op->op_notifier)
		rds_notifier_free(op->op_notifier);
	op->op_notifier = NULL;
	rds_op_pin_release(pin);
	op->op_pin = NULL;
	kfree(op->op_sg);
	op->op_sg = NULL;
	op->op_nents = 0;
out:
	kvfree(iovs);
	return ret;
}

static int rds_cmsg_rdma_dest(struct rds_sock *rs, struct rds_message *rm,
			      struct cmsghdr *cmsg)
{
	struct rds_mr *mr;
	unsigned long flags;
	u64 cookie;
	int ret;

	if (cmsg->cmsg_len < CMSG_LEN(sizeof(cookie)) || rds_has_cookie(rm) ||
	    rds_has_op(rm))
		return -EINVAL;
	memcpy(&cookie, CMSG_DATA(cmsg), sizeof(cookie));

	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	mr = rds_mr_tree_walk(&rs->rs_mr_tree, rds_rdma_cookie_key(cookie),
			      NULL);
	if (mr)
		rds_mr_get(mr);
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	if (!mr)
		return -EINVAL;

	ret = rds_message_add_rdma_dest_extension(&rm->m_inc.i_hdr,
						  rds_rdma_cookie_key(cookie),
						  rds_rdma_cookie_offset(cookie));
	if (ret) {
		rds_mr_put(mr);
		return ret;
	}
	ret = rds_reg_notifier_prepare(rs, rm, mr, cookie);
	if (ret) {
		rds_mr_put(mr);
		return ret;
	}
	rds_mr_sync(mr, DMA_TO_DEVICE);
	rm->m_rdma_cookie = cookie;
	rm->m_rdma_mr = mr;
	return 0;
}

static int rds_cmsg_rdma_map(struct rds_sock *rs,
			     struct rds_connection *conn,
			     struct rds_message *rm, struct cmsghdr *cmsg)
{
	struct rds_get_mr_args args;
	struct rds_mr *mr = NULL;
	u64 cookie = 0;
	int ret;

	if (cmsg->cmsg_len < CMSG_LEN(sizeof(args)) || rds_has_cookie(rm) ||
	    rds_has_op(rm))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));

	ret = rds_rdma_map(rs, &args, conn, true, &cookie, &mr);
	if (ret)
		return ret;
	rm->m_rdma_cookie = cookie;
	rm->m_rdma_mr = mr;
	set_bit(RDS_MSG_RDMA_MAP, &rm->m_flags);
	ret = rds_reg_notifier_prepare(rs, rm, mr, cookie);
	if (ret)
		return ret;
	return rds_message_add_rdma_dest_extension(&rm->m_inc.i_hdr,
						   rds_rdma_cookie_key(cookie),
						   rds_rdma_cookie_offset(cookie));
}

static int rds_cmsg_atomic(struct rds_sock *rs, struct rds_message *rm,
			   struct cmsghdr *cmsg)
{
	struct rm_atomic_op *op = &rm->atomic;
	struct rds_atomic_args args;
	struct rds_op_pin *pin;
	int ret;

	if (cmsg->cmsg_len < CMSG_LEN(sizeof(args)) || op->op_active ||
	    rds_has_cookie(rm))
		return -EINVAL;
	memcpy(&args, CMSG_DATA(cmsg), sizeof(args));

	if (ipv6_addr_any(&rs->rs_bound_addr))
		return -ENOTCONN;

	switch (cmsg->cmsg_type) {
	case RDS_CMSG_ATOMIC_FADD:
		op->op_type = RDS_ATOMIC_TYPE_FADD;
		op->op_m_fadd.add = args.fadd.add;
		op->op_m_fadd.nocarry_mask = 0;
		break;
	case RDS_CMSG_MASKED_ATOMIC_FADD:
		op->op_type = RDS_ATOMIC_TYPE_FADD;
		op->op_masked = 1;
		op->op_m_fadd.add = args.m_fadd.add;
		op->op_m_fadd.nocarry_mask = args.m_fadd.nocarry_mask;
		break;
	case RDS_CMSG_ATOMIC_CSWP:
		op->op_type = RDS_ATOMIC_TYPE_CSWP;
		op->op_m_cswp.compare = args.cswp.compare;
		op->op_m_cswp.swap = args.cswp.swap;
		op->op_m_cswp.compare_mask = ~0ULL;
		op->op_m_cswp.swap_mask = ~0ULL;
		break;
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
		op->op_type = RDS_ATOMIC_TYPE_CSWP;
		op->op_masked = 1;
		op->op_m_cswp.compare = args.m_cswp.compare;
		op->op_m_cswp.swap = args.m_cswp.swap;
		op->op_m_cswp.compare_mask = args.m_cswp.compare_mask;
		op->op_m_cswp.swap_mask = args.m_cswp.swap_mask;
		break;
	default:
		return -EINVAL;
	}

	if (args.local_addr & 7) {
		ret = -EFAULT;
		goto out;
	}
	ret = -ENOMEM;
	pin = kvzalloc(struct_size(pin, pages, 1), GFP_KERNEL);
	op->op_sg = kcalloc(1, sizeof(*op->op_sg), GFP_KERNEL);
	op->op_pin = pin;
	if (!pin || !op->op_sg)
		goto out;
	pin->dirty = true;
	ret = rds_op_pin_charge(pin, 1);
	if (ret)
		goto out;
	ret = rds_pin(args.local_addr, 1, true, false, pin->pages);
	if (ret)
		goto out;
	pin->npages = 1;
	sg_init_table(op->op_sg, 1);
	sg_set_page(op->op_sg, pin->pages[0], 8,
		    offset_in_page(args.local_addr));

	if ((args.flags & RDS_RDMA_NOTIFY_ME) || rs->rs_recverr) {
		ret = -ENOMEM;
		op->op_notifier = rds_notifier_alloc(rs, args.user_token);
		if (!op->op_notifier)
			goto out;
	}
	op->op_notify = !!(args.flags & RDS_RDMA_NOTIFY_ME);
	op->op_silent = !!(args.flags & RDS_RDMA_SILENT);
	op->op_recverr = rs->rs_recverr;
	op->op_use_once = !!(rds_rdma_cookie_offset(args.cookie) &
			     RDS_MR_IOVA_USE_ONCE);
	op->op_rkey = rds_rdma_cookie_key(args.cookie);
	op->op_remote_addr = args.remote_addr +
			     rds_rdma_cookie_offset(args.cookie);
	/*
	 * The owner of a use-once key learns of the atomic like of an RDMA,
	 * whatever the order of the cmsgs (two extension headers fit).
	 */
	if (op->op_use_once) {
		ret = rds_add_rdma_exthdr(rm, op->op_rkey);
		if (ret)
			goto out;
	}
	op->op_active = 1;
	return 0;

out:
	if (op->op_notifier)
		rds_notifier_free(op->op_notifier);
	op->op_notifier = NULL;
	rds_op_pin_release(op->op_pin);
	op->op_pin = NULL;
	kfree(op->op_sg);
	op->op_sg = NULL;
	op->op_masked = 0;
	return ret;
}

/**
 * rds_cmsg_rdma - handle one RDMA/atomic cmsg of sendmsg()
 * @rs: socket
 * @conn: the connection the message goes out on
 * @rm: message being built (header populated)
 * @cmsg: the cmsg (level SOL_RDS, CMSG_OK checked)
 *
 * Process context.  Return: 0 or a negative errno; what was attached
 * before an error is released with the message.
 */
int rds_cmsg_rdma(struct rds_sock *rs, struct rds_connection *conn,
		  struct rds_message *rm, struct cmsghdr *cmsg)
{
	switch (cmsg->cmsg_type) {
	case RDS_CMSG_RDMA_ARGS:
		return rds_cmsg_rdma_args(rs, rm, cmsg);
	case RDS_CMSG_RDMA_DEST:
		return rds_cmsg_rdma_dest(rs, rm, cmsg);
	case RDS_CMSG_RDMA_MAP:
		return rds_cmsg_rdma_map(rs, conn, rm, cmsg);
	case RDS_CMSG_ATOMIC_FADD:
	case RDS_CMSG_ATOMIC_CSWP:
	case RDS_CMSG_MASKED_ATOMIC_FADD:
	case RDS_CMSG_MASKED_ATOMIC_CSWP:
		return rds_cmsg_atomic(rs, rm, cmsg);
	default:
		return -EINVAL;
	}
}

/**
 * rds_rdma_check_send - can the connection's transport carry @rm's ops
 * @rs: socket
 * @rm: message
 * @conn: connection chosen for it
 *
 * Return: 0, -EOPNOTSUPP (no RDMA/atomics there), or the transport's
 * errno (-ENOMEM).
 */
int rds_rdma_check_send(struct rds_sock *rs, struct rds_message *rm,
			struct rds_connection *conn)
{
	struct rds_transport *trans = conn->c_trans;

	if (rm->rdma.op_active && !trans->xmit_rdma)
		return -EOPNOTSUPP;
	if (rm->atomic.op_active) {
		if (!trans->xmit_atomic)
			return -EOPNOTSUPP;
		if (trans->atomic_check)
			return trans->atomic_check(rs, conn,
						   rm->atomic.op_masked);
	}
	return 0;
}

/**
 * rds_rdma_sendmsg_failed - sendmsg() gives up on @rm before queueing it
 * @rs: socket
 * @rm: message
 *
 * An MR that RDS_CMSG_RDMA_MAP made for it is destroyed again, as in-tree;
 * ops do not report (the application got the error).
 */
void rds_rdma_sendmsg_failed(struct rds_sock *rs, struct rds_message *rm)
{
	struct rds_notifier *n;
	struct rds_mr *mr;

	n = xchg(&rm->rdma.op_notifier, NULL);
	if (n)
		rds_notifier_free(n);
	n = xchg(&rm->atomic.op_notifier, NULL);
	if (n)
		rds_notifier_free(n);
	n = xchg(&rm->m_reg_notifier, NULL);
	if (n)
		rds_notifier_free(n);

	/* Only the MAP case: DEST named an MR the application keeps. */
	mr = rm->m_rdma_mr;
	if (!mr || !test_bit(RDS_MSG_RDMA_MAP, &rm->m_flags))
		return;
	/*
	 * @mr itself, not whatever MR has its key now: the application may
	 * have freed it and registered again meanwhile (sendmsg() can block
	 * between the map and this failure).
	 */
	if (rds_mr_unpublish(rs, mr))
		rds_mr_release(mr, true);
}

/*
 * Parked paths: cp_reg_item/cp_reg_mr of every path and r_reg_waiters of
 * every MR.  Kicks are issued under it, so that once a path is unparked
 * nothing kicks it any more.  Irq-safe: completions may come from any
 * context.
 */
static DEFINE_SPINLOCK(rds_mr_reg_lock);

/* Unpark @cp; rds_mr_reg_lock held. */
static void rds_rdma_unpark(struct rds_conn_path *cp)
{
	struct rds_mr *mr = cp->cp_reg_mr;

	if (!mr)
		return;
	list_del_init(&cp->cp_reg_item);
	cp->cp_reg_mr = NULL;
	/* Never the last: the transport holds one while REG_PENDING. */
	rds_mr_put(mr);
}

/*
 * May a message naming @mr leave on @cp?  Return: 0 yes, 1 no and never
 * (the registration failed), -EAGAIN not yet (@cp is parked on @mr and
 * kicked when the registration finishes).  Yes also while the
 * registration is pending when the transport posted it ahead of the
 * message on @cp's own queue (->mr_reg_ordered()): the HCA executes it
 * first.  If it then fails, the SEND behind it fails too.
 */
static int rds_rdma_mr_ready(struct rds_conn_path *cp, struct rds_mr *mr)
{
	struct rds_transport *trans = cp->cp_conn->c_trans;
	unsigned long flags;
	int ret = -EAGAIN;

	/* ORDER: pairs with clear_bit_unlock() in rds_mr_reg_complete(). */
	if (!test_bit_acquire(RDS_MR_REG_PENDING, &mr->r_state))
		return test_bit(RDS_MR_REG_FAILED, &mr->r_state) ? 1 : 0;

	spin_lock_irqsave(&rds_mr_reg_lock, flags);
	if (!test_bit(RDS_MR_REG_PENDING, &mr->r_state)) {
		ret = test_bit(RDS_MR_REG_FAILED, &mr->r_state) ? 1 : 0;
	} else if (mr->r_trans == trans && trans->mr_reg_ordered &&
		   trans->mr_reg_ordered(cp, mr)) {
		/* Parked before a reconnect brought it here, perhaps. */
		if (cp->cp_reg_mr == mr)
			rds_rdma_unpark(cp);
		ret = 0;
	} else if (cp->cp_reg_mr != mr) {
		rds_rdma_unpark(cp);
		rds_mr_get(mr);
		cp->cp_reg_mr = mr;
		list_add_tail(&cp->cp_reg_item, &mr->r_reg_waiters);
	}
	spin_unlock_irqrestore(&rds_mr_reg_lock, flags);
	return ret;
}

void rds_mr_reg_complete(struct rds_mr *mr, bool ok)
{
	struct rds_conn_path *cp, *tmp;
	unsigned long flags;

	spin_lock_irqsave(&rds_mr_reg_lock, flags);
	if (!ok)
		set_bit(RDS_MR_REG_FAILED, &mr->r_state);
	clear_bit_unlock(RDS_MR_REG_PENDING, &mr->r_state);
	list_for_each_entry_safe(cp, tmp, &mr->r_reg_waiters, cp_reg_item) {
		rds_rdma_unpark(cp);
		rds_send_path_kick(cp);
	}
	spin_unlock_irqrestore(&rds_mr_reg_lock, flags);
	if (!ok)
		pr_notice_ratelimited("rds: an RDMA_MAP registration failed: messages naming its cookie are dropped\n");
}
EXPORT_SYMBOL_GPL(rds_mr_reg_complete);

/**
 * rds_rdma_path_unwait - a path goes away: no registration may kick it
 * @cp: path (RDS_DESTROY_PENDING set)
 *
 * Any context.
 */
void rds_rdma_path_unwait(struct rds_conn_path *cp)
{
	unsigned long flags;

	spin_lock_irqsave(&rds_mr_reg_lock, flags);
	rds_rdma_unpark(cp);
	spin_unlock_irqrestore(&rds_mr_reg_lock, flags);
}

/*
 * Test knob: wait this long between claiming a message's ops and posting
 * them, so that a test can cancel the message in between.
 */
static unsigned int rds_rdma_post_delay_ms;

RDS_PARAM_UINT(rdma_post_delay_ms, rds_rdma_post_delay_ms, 0, 1000, 0644,
	       " Test: wait this long before posting a message's RDMA/atomic ops (0..1000 ms, default 0)");

/*
 * The sender takes the right to post @rm's ops, unless a cancel reported
 * them first (RDS_OPS_CANCELED: they are never posted).  A message whose
 * atomic was posted by an earlier call stays RDS_OPS_POSTED.  Process
 * context (rds_send_xmit()).
 */
static bool rds_ops_claim(struct rds_message *rm)
{
	unsigned int delay;
	u32 old;

	old = cmpxchg(&rm->m_ops_state, RDS_OPS_IDLE, RDS_OPS_POSTING);
	if (old == RDS_OPS_CANCELED)
		return false;
	delay = READ_ONCE(rds_rdma_post_delay_ms);
	if (delay && old == RDS_OPS_IDLE)
		msleep(delay);
	return true;
}

/*
 * Posting failed with nothing of @rm posted: give the ops back.  If a
 * cancel came meanwhile, it is the sender that reports CANCELED, and the
 * next call completes the message unsent.  Return: @err.
 */
static int rds_ops_unclaim(struct rds_message *rm, int err)
{
	if (cmpxchg(&rm->m_ops_state, RDS_OPS_POSTING, RDS_OPS_IDLE) ==
	    RDS_OPS_CANCEL_PENDING) {
		WRITE_ONCE(rm->m_ops_state, RDS_OPS_CANCELED);
		rds_rdma_msg_drop(rm, RDS_RDMA_CANCELED);
	}
	return err;
}

/*
 * The transport posted an op of @rm and holds its SEND back until the op
 * completed (-EINPROGRESS).  The op runs whatever a cancel says now, so
 * its completions report it (RDS_OPS_POSTED; a cancel that came while we
 * were posting, CANCEL_PENDING, is overruled as when posting succeeds)
 * and the message at the cursor still gets its SEND, which for a
 * use-once key is what kills it.  The transport kicks the path when the
 * hold ends.  Return: -EAGAIN, for rds_send_xmit().
 */
static int rds_ops_posted_held(struct rds_message *rm)
{
	WRITE_ONCE(rm->m_ops_state, RDS_OPS_POSTED);
	return -EAGAIN;
}

/**
 * rds_rdma_xmit_ops - post a message's ops before its data
 * @cp: path (RDS_IN_XMIT held)
 * @rm: the message at the transmit cursor
 *
 * A message naming an MR whose registration is still in flight (MAP or
 * DEST) is held: -EAGAIN, and the registration's completion kicks @cp.
 * An op the transport posted and holds the SEND for (-EINPROGRESS) is
 * posted from then on: -EAGAIN until the transport kicks @cp.
 *
 * Return: 0 to go on with ->xmit(), a positive byte count when the message
 * is complete without a SEND (silent, dropped because it is a
 * retransmission, naming a key whose registration failed, or whose RDMA
 * op the transport can never post: -ECANCELED from ->xmit_rdma(), the op
 * already reported), or a negative errno as ->xmit() returns them.  In
 * the last three cases the message is marked RDS_MSG_UNSENT: its ops are
 * reported, no ACK will ever name it, and rds_send_xmit() takes it off
 * the path at once.  (A silent one stays until an ACK covers it: its
 * op's completion still reports through its socket.)
 */
int rds_rdma_xmit_ops(struct rds_conn_path *cp, struct rds_message *rm)
{
	struct rds_transport *trans = cp->cp_conn->c_trans;
	unsigned int total = sizeof(struct rds_header) + rm->m_payload_len;
	int ret;

	if (cp->cp_xmit_hdr_off)
		return 0;
	if (rm->m_rdma_mr) {
		ret = rds_rdma_mr_ready(cp, rm->m_rdma_mr);
		if (ret < 0)
			return ret;
		if (ret) {
			/* Complete unsent; RDS_RECVERR is told why. */
			rds_op_report(&rm->m_reg_notifier, false, true,
				      RDS_RDMA_OTHER_ERROR);
			set_bit(RDS_MSG_UNSENT, &rm->m_flags);
			return total;
		}
	}
	if (!rds_has_op(rm))
		return 0;
	if (test_bit(RDS_MSG_RETRANSMITTED, &rm->m_flags)) {
		/* RDMA is not idempotent: never again after a reconnect. */
		rds_rdma_msg_drop(rm, RDS_RDMA_DROPPED);
		set_bit(RDS_MSG_UNSENT, &rm->m_flags);
		return total;
	}
	if (!rds_ops_claim(rm))
		return total;	/* cancelled before posting: never sent */
	if (rm->atomic.op_active && !cp->cp_xmit_atomic_sent) {
		ret = trans->xmit_atomic ? trans->xmit_atomic(cp, &rm->atomic) :
					   -EOPNOTSUPP;
		trace_rds_rdma_post(cp, rm, true, ret);
		if (ret == -EINPROGRESS)
			return rds_ops_posted_held(rm);
		/* As for an RDMA op below; the message's RDMA op never goes. */
		if (ret == -ECANCELED) {
			if (rm->rdma.op_active)
				rds_rdma_send_complete(rm,
						       RDS_RDMA_OTHER_ERROR);
			set_bit(RDS_MSG_UNSENT, &rm->m_flags);
			return rds_ops_unclaim(rm, total);
		}
		if (ret)
			return rds_ops_unclaim(rm, ret);
		cp->cp_xmit_atomic_sent = 1;
		WRITE_ONCE(rm->m_ops_state, RDS_OPS_POSTED);
	}
	if (rm->rdma.op_active && !cp->cp_xmit_rdma_sent) {
		ret = trans->xmit_rdma ? trans->xmit_rdma(cp, &rm->rdma) :
					 -EOPNOTSUPP;
		trace_rds_rdma_post(cp, rm, false, ret);
		if (ret == -EINPROGRESS)
			return rds_ops_posted_held(rm);
		/*
		 * Never postable here, and reported: the message must not go,
		 * or its owner would take the RDMA for done.
		 */
		if (ret == -ECANCELED) {
			set_bit(RDS_MSG_UNSENT, &rm->m_flags);
			return rds_ops_unclaim(rm, total);
		}
		if (ret)
			return rds_ops_unclaim(rm, ret);
		cp->cp_xmit_rdma_sent = 1;
		WRITE_ONCE(rm->m_ops_state, RDS_OPS_POSTED);
	}
	if (!rds_msg_has_send(rm))
		return total;
	return 0;
}

/* ------------------------------------------------------------------------
 * Receive side: use-once keys and delivery holds
 * ------------------------------------------------------------------------
 */

bool rds_inc_held(struct rds_incoming *inc)
{
	return atomic_read(&inc->i_holds) != 0;
}

void rds_inc_hold(struct rds_incoming *inc)
{
	rds_inc_addref(inc);
	atomic_inc(&inc->i_holds);
}
EXPORT_SYMBOL_GPL(rds_inc_hold);

void rds_inc_unhold(struct rds_incoming *inc)
{
	struct rds_sock *rs;

	if (atomic_dec_and_test(&inc->i_holds)) {
		rs = xchg(&inc->i_hold_rs, NULL);
		if (rs) {
			rds_wake_sk(rs);
			sock_put(rds_rs_to_sk(rs));
		}
	}
	rds_inc_put(inc);
}
EXPORT_SYMBOL_GPL(rds_inc_unhold);

/**
 * rds_rdma_unuse_inc - @inc carries RDS_EXTHDR_RDMA for our key @r_key
 * @rs: destination socket (a reference is held by the caller)
 * @inc: the message, not yet queued on @rs
 * @r_key: the key
 *
 * A use-once MR leaves the socket; the transport may hold @inc until the
 * key is dead.  Other MRs are only synced.  Unknown keys are ignored (an
 * MR freed meanwhile, or a peer's mistake).
 */
void rds_rdma_unuse_inc(struct rds_sock *rs, struct rds_incoming *inc,
			u32 r_key)
{
	struct rds_mr *mr;
	unsigned long flags;

	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	mr = rds_mr_tree_walk(&rs->rs_mr_tree, r_key, NULL);
	if (mr) {
		rds_mr_get(mr);
		if (mr->r_use_once)
			rds_mr_unlink(rs, mr);
	}
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	if (!mr)
		return;

	if (!mr->r_use_once) {
		rds_mr_sync(mr, DMA_FROM_DEVICE);
		rds_mr_put(mr);
		return;
	}

	rds_mr_put(mr);			/* the lookup's; the tree's remains */
	if (!inc || !mr->r_trans->unuse_mr) {
		rds_mr_release(mr, true);
		return;
	}
	if (!rds_mr_trans_claim(mr)) {
		rds_mr_put(mr);
		return;
	}
	/*
	 * Our own hold around the call, so that the last unhold (ours or
	 * the transport's) always comes and releases the socket.  The
	 * message is not queued yet: a release before that is harmless.
	 */
	rds_inc_hold(inc);
	if (!inc->i_hold_rs) {
		sock_hold(rds_rs_to_sk(rs));
		inc->i_hold_rs = rs;
	}
	trace_rds_mr_release(mr, false, true);
	mr->r_trans->unuse_mr(mr, inc);
	rds_inc_unhold(inc);
	rds_mr_put(mr);
}

/**
 * rds_rdma_unuse - the peer finished an RDMA with one of our keys
 * @rs: socket that received the message
 * @r_key: the key from the RDMA extension header
 *
 * Like rds_rdma_unuse_inc() without a message to hold.  Any context.
 */
void rds_rdma_unuse(struct rds_sock *rs, u32 r_key)
{
	rds_rdma_unuse_inc(rs, NULL, r_key);
}

/**
 * rds_rdma_drop_keys - release a closing socket's MRs and notifications
 * @rs: socket (orphaned: nothing new is queued)
 *
 * Process context.
 */
void rds_rdma_drop_keys(struct rds_sock *rs)
{
	struct rds_notifier *n, *tmp;
	struct rb_node *node;
	struct rds_mr *mr;
	unsigned long flags;
	LIST_HEAD(list);

	for (;;) {
		spin_lock_irqsave(&rs->rs_rdma_lock, flags);
		node = rb_first(&rs->rs_mr_tree);
		mr = NULL;
		if (node) {
			mr = rb_entry(node, struct rds_mr, r_node);
			rds_mr_unlink(rs, mr);
		}
		spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
		if (!mr)
			break;
		mr->r_sock = NULL;
		/*
		 * Invalidation may be lazy: nobody can use the pages now.  No
		 * flush and no wait (in-tree flushes): the transport posts
		 * lazy invalidations on its own (rds_rdma: within
		 * rds_ib_inv_flush_us), and close() must not wait for other
		 * sockets' work on the device.  The pages are unpinned (and
		 * RLIMIT_MEMLOCK credited) when the keys are dead.
		 */
		mr->r_invalidate = 0;
		rds_mr_release(mr, false);
	}

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	list_splice_init(&rs->rs_notify_queue, &list);
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	list_for_each_entry_safe(n, tmp, &list, n_list) {
		list_del(&n->n_list);
		rds_notifier_free(n);
	}
}
