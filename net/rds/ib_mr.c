// SPDX-License-Identifier: GPL-2.0
/*
 * ib_mr.c - FRWR memory registration: per-device MR pools, the key
 * lifecycle, and the recycle step shared by recovery and device removal.
 *
 * Theory of operation
 * ===================
 *
 * Normal operation.  Nothing is made at module load or device add.  The
 * first registration on a device makes its struct rds_ib_mr_dev and the
 * device's registration QP (ib_regqp.c: an RC QP on the device's PD,
 * connected to itself through rdma_cm).  An MR belongs to the PD, not to
 * a QP, so a key registered there is valid for RDMA arriving on any
 * connection QP of the PD, i.e. from every peer, and works before any
 * connection exists.  LOCAL_INV, and the REG_MR of RDS_GET_MR, are posted
 * on the registration QP only.  With rds_ib_mr_reg_on_conn set, the REG_MR
 * of an RDS_CMSG_RDMA_MAP goes on the QP of the connection its message
 * leaves on when that connection is up on the same device
 * (rds_ib_mr_conn_post(), RDS_IB_REG_SQ entries per QP), ahead of the
 * message's SEND, as xprtrdma chains its REG_MRs: the message leaves
 * without waiting for the completion (rds_ib_mr_reg_ordered()), saving
 * the registration QP's completion and a send worker wake-up per
 * operation.  Such a REG_MR fails with its connection (the key is
 * unknown, the MR reaped without touching the registration QP, the
 * messages naming the cookie reported: not retransmitted, which is why it
 * is off by default), and the peer's remote invalidation may arrive
 * before its completion was handled (a separate CQ): accepted, and the
 * key invalidated locally once the registration completed (ib_inv.c).
 *
 * MRs come from two pools per device, 8K (up to RDS_IB_MR_8K_PAGES pages)
 * and 1M (up to RDS_IB_MR_1M_PAGES), whose sizes are the module parameters
 * rds_ib_mr_8k_pool_size and rds_ib_mr_1m_pool_size (capped by the
 * device's max_mr).  MRs are allocated on demand up to that size and kept
 * on the pool's clean list once their key is dead and nobody holds them.
 * Every registration rotates the key's low byte (ib_inc_rkey) right before
 * REG_MR is posted.
 *
 * Key reuse.  A key handed out is not handed out again before
 * md_key_window (2^24) further registrations on the device: an MR is
 * retired after RDS_IB_MR_KEY_USES registrations (all values of its key
 * byte), every deregistration of an MR that used a key stamps its index
 * (rkey >> 8) with the device's registration clock (md_reg_seq) in a
 * cool-down table (md_cool), and a new MR whose index is still cooling
 * down is parked, kept allocated, instead of used, and adopted once the
 * index cooled down.  A pool may park its own size plus the steady state of
 * cooling indices (rds_ib_mr_park_max()), so an HCA that hands a freed
 * index straight back cannot stop registrations.  See "Keys never
 * come back" in rds.rst.
 *
 * The MR chooses its iova: the page offset of the buffer, plus the device
 * instance's epoch (bits 21..30, ib.c) and RDS_MR_IOVA_USE_ONCE for
 * use-once keys (see the RDMA design in
 * Documentation/networking/rds.rst).  Access is LOCAL_WRITE, REMOTE_READ,
 * REMOTE_WRITE, and REMOTE_ATOMIC whenever the device has atomics.
 *
 * Registration is process context (a socket option or sendmsg).  The key
 * is tracked in md_keys (state REG) before the REG_MR is posted signalled.
 * From the moment the MR is taken, it owns the user's pages: whatever
 * happens, the last of its holds DMA-unmaps them and gives them back
 * (m_sg_release; rds.ko's reference, whose last put unpins them).
 * RDS_GET_MR sleeps until it completes (ib_rdma_reg_waits): the key must
 * be valid when the cookie is returned, which the application may hand
 * out by any means, and no QP orders after the registration QP.  The
 * sleep is killable and bounded: after RDS_IB_MR_REG_WAIT the
 * registration QP is made to recover (ib_rdma_reg_timeouts), whose drain
 * completes the REG_MR, if only as flushed; on a fatal signal the waiter
 * leaves the MR to the completion (m_reg_abandoned, decided under
 * md_keys' lock), which invalidates a valid key or hands a failed one to
 * recovery (ib_rdma_reg_abandoned).  A REG_MR of RDS_GET_MR that failed
 * leaves the key state unknown (the HCA may hold a valid key for the
 * pages): the caller gets -EAGAIN and the MR, pages still mapped and
 * pinned, goes to recovery like an asynchronous one.  The
 * RDS_CMSG_RDMA_MAP cmsg of sendmsg does not wait: rds.ko sets
 * RDS_MR_REG_PENDING and holds every message naming the MR until the
 * completion calls rds_mr_reg_complete() (rdma.c), which makes the key
 * live first, unless the REG_MR is ahead of it on its own connection's
 * QP.  A key released while its REG_MR is in flight is queued
 * for invalidation by that completion (state REG_LINV); a failed one is
 * reported to rds.ko (its messages are dropped unsent) and then handled
 * as any failed WR (unknown, deregistered by recovery).  Per use-once MAP
 * operation the owner posts the REG_MR and at most one LOCAL_INV (none
 * when the issuer invalidates remotely); nothing on the data path sleeps.
 *
 * Pool exhaustion: a registration that finds its pool full flushes the
 * pending local invalidations (ib_inv.c) and waits, bounded, for an MR to
 * become clean (pool_wait); if none does it fails with -ENOMEM
 * (pool_depleted).  Freed MRs make later registrations succeed again.
 *
 * Transport recovery (ib_regqp.c).  Any failed or flushed completion on
 * the registration QP marks it broken: the recovery work disconnects,
 * drains and destroys it, then this file's recycle step,
 * rds_ib_mr_reap_list(), deregisters every MR whose key state became
 * unknown (ib_dereg_mr kills the key for good, so waiters for its death
 * are released; ib_rdma_mr_reaped), and the next registration builds a
 * fresh self-connection.  Only the deregistration
 * drops an unknown key's hold, so only after it are the pages
 * DMA-unmapped and given back (ib_rdma_mr_unmap_keyed counts any unmap
 * while a key may live: it must stay 0).  An MR whose WR did not
 * complete successfully is never reused.
 *
 * Device removal tears everything down (rds_ib_mr_device_remove, called by
 * the ib_client before the PD goes), in this order: mark the state dead and
 * destroy the registration QP (the drain completes every REG_MR and
 * LOCAL_INV in flight, most as flushed); wait for every registration still
 * running (md_reg_sem: a synchronous one woken by its flushed REG_MR
 * settles its MR as unknown, one that had not posted puts its MR back);
 * stop the invalidation worker for good; run recovery's reap of the MRs
 * whose key state is unknown; then deregister every remaining MR.  After
 * the wait nobody but removal takes an MR off p_all or clears m_ib (both
 * under p_lock), so each verbs MR is deregistered exactly once, and every
 * verbs MR is gone before the PD.  MRs still held by sockets lose their
 * verbs MR and their DMA mapping (the device is going, the HCA no longer
 * touches the pages) and are freed when released.
 */
#include <linux/bitfield.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <net/ipv6.h>

#include "ib.h"

unsigned int rds_ib_mr_8k_pool_size = 85 * 4096;
unsigned int rds_ib_mr_1m_pool_size = 4096;

/*
 * A pool needs one MR; the in-tree parameters are ints.  Read-only: the
 * pools are sized when a device's MR state is made.
 */
RDS_PARAM_UINT(rds_ib_mr_8k_pool_size, rds_ib_mr_8k_pool_size, 1, INT_MAX,
	       0444,
	       " Max number of 8K MRs per device (1..2147483647, default 348160; capped by the device)");
RDS_PARAM_UINT(rds_ib_mr_1m_pool_size, rds_ib_mr_1m_pool_size, 1, INT_MAX,
	       0444,
	       " Max number of 1M MRs per device (1..2147483647, default 4096; capped by the device)");

/*
 * Key reuse.  An index (rkey >> 8) is not used again before this many
 * registrations (REG_MRs posted on the device) passed since its last verbs
 * MR was deregistered.  Smaller values are a test knob: they weaken the
 * guarantee.
 */
#define RDS_IB_MR_KEY_WINDOW_MIN	RDS_IB_MR_KEY_USES
static unsigned int rds_ib_mr_key_window = 1U << 24;

/* Read-only: a device's window is fixed when its MR state is made. */
RDS_PARAM_UINT(rds_ib_mr_key_window, rds_ib_mr_key_window,
	       RDS_IB_MR_KEY_WINDOW_MIN, UINT_MAX, 0444,
	       " Registrations before an MR index is used again (256..4294967295, default 16777216; small values are for tests)");

/*
 * Test knob: every Nth ib_alloc_mr() of a device is treated as if the HCA
 * had handed back an index still cooling down (as mlx5 firmware may), so
 * parking and adoption run on rxe, whose indices never come back early.
 */
static unsigned int rds_ib_mr_park_every;

RDS_PARAM_UINT(rds_ib_mr_park_every, rds_ib_mr_park_every, 0, 1000000, 0644,
	       " Test: park every Nth new MR as if its index were cooling down (0..1000000, default 0: off)");

/*
 * Test knob: the next N asynchronous registrations (RDS_CMSG_RDMA_MAP)
 * complete as failed although the HCA executed them, as a REG_MR
 * completion error would: the key is unknown, the registration QP
 * recovers, and rds.ko reports the messages naming the cookie.
 */
static unsigned int rds_ib_mr_reg_fail_next;

RDS_PARAM_UINT(rds_ib_mr_reg_fail_next, rds_ib_mr_reg_fail_next, 0, 1000000,
	       0644,
	       " Test: fail the next N asynchronous (RDMA_MAP) registrations (0..1000000, default 0)");

/*
 * Test knob: the same for the next N synchronous registrations (RDS_GET_MR,
 * RDS_GET_MR_FOR_DEST): the REG_MR executed, so the key is valid in the
 * HCA, but the waiter is told it failed.
 */
static unsigned int rds_ib_mr_reg_sync_fail_next;

RDS_PARAM_UINT(rds_ib_mr_reg_sync_fail_next, rds_ib_mr_reg_sync_fail_next,
	       0, 1000000, 0644,
	       " Test: fail the next N synchronous (RDS_GET_MR) registrations (0..1000000, default 0)");

/*
 * Test knob: a verbs MR we deregister with its key dead is kept instead
 * (up to RDS_IB_MR_LIFO_MAX per pool) and the pool's next ib_alloc_mr()
 * hands it out again, as an HCA that reuses a freed index at once (mlx5
 * firmware may; rxe never does).  Kept ones are deregistered for real at
 * device removal.
 */
static unsigned int rds_ib_mr_lifo_test;

RDS_PARAM_UINT(rds_ib_mr_lifo_test, rds_ib_mr_lifo_test, 0, 1, 0644,
	       " Test: hand a freed MR index out again at once, as some HCAs do (0..1, default 0: off)");

/*
 * RDS_CMSG_RDMA_MAP registrations post their REG_MR on the QP of the
 * connection the message goes out on, ahead of its SEND, when they can
 * (rds_ib_mr_conn_post()); off (the default): always on the registration
 * QP.  Off by default because such a REG_MR is flushed by any failure of
 * its connection until it completed, and a flushed registration cannot be
 * redone under the same key (rds.rst).
 */
static bool rds_ib_mr_reg_on_conn;

module_param(rds_ib_mr_reg_on_conn, bool, 0644);
MODULE_PARM_DESC(rds_ib_mr_reg_on_conn,
		 " Post RDMA_MAP registrations on the connection's QP ahead of the message; a connection failure then fails them (default N)");

/*
 * Test knob: a successful REG_MR completion on a connection QP is handled
 * this much later, from a work item, so that the peer's answer (and its
 * remote invalidation) arrives while the key is still being registered.
 */
static unsigned int rds_ib_mr_conn_reg_defer_ms;

RDS_PARAM_UINT(rds_ib_mr_conn_reg_defer_ms, rds_ib_mr_conn_reg_defer_ms, 0,
	       1000, 0644,
	       " Test: handle successful connection-QP REG_MR completions this much later (0..1000 ms, default 0)");

static LIST_HEAD(rds_ib_mr_deferred);
static DEFINE_SPINLOCK(rds_ib_mr_deferred_lock);
static void rds_ib_mr_deferred_worker(struct work_struct *work);
static DECLARE_DELAYED_WORK(rds_ib_mr_deferred_work, rds_ib_mr_deferred_worker);

/*
 * Parked MRs a pool may hold at least (rds_ib_mr_park_max()), and
 * ib_alloc_mr() tries per new pool MR that do not end in a park.
 */
#define RDS_IB_MR_PARK_SLACK	32
#define RDS_IB_MR_ALLOC_TRIES	4

/*
 * How long RDS_GET_MR waits for its REG_MR before it makes the
 * registration QP recover (whose drain completes every WR, if only as
 * flushed), and then between warnings.
 */
#define RDS_IB_MR_REG_WAIT	msecs_to_jiffies(3 * RDS_IB_REGQP_TIMEOUT_MS)
/* How long a registration waits for a clean MR of a full pool. */
#define RDS_IB_MR_POOL_WAIT	(HZ / 2)
#define RDS_IB_MR_POOL_TRIES	4

static DEFINE_MUTEX(rds_ib_mr_dev_mutex);	/* making rid->rid_mr */

static void rds_ib_mr_stat(int class, unsigned int which);
static void rds_ib_mr_cool_start(struct rds_ib_mr_dev *md,
				 struct rds_ib_mr *mr);
static void rds_ib_mr_free(struct rds_ib_mr *mr);
static unsigned int rds_ib_mr_park_max(const struct rds_ib_mr_pool *pool,
				       u64 window, unsigned int max_mr);

enum {
	RDS_IB_MR_STAT_ALLOC,
	RDS_IB_MR_STAT_FREE,
	RDS_IB_MR_STAT_USED,
	RDS_IB_MR_STAT_WAIT,
	RDS_IB_MR_STAT_DEPLETED,
	RDS_IB_MR_STAT_REUSED,
};

static void rds_ib_mr_stat(int class, unsigned int which)
{
	bool k8 = class == RDS_IB_MR_8K;

	switch (which) {
	case RDS_IB_MR_STAT_ALLOC:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_alloc);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_alloc);
		break;
	case RDS_IB_MR_STAT_FREE:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_free);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_free);
		break;
	case RDS_IB_MR_STAT_USED:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_used);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_used);
		break;
	case RDS_IB_MR_STAT_WAIT:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_pool_wait);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_pool_wait);
		break;
	case RDS_IB_MR_STAT_DEPLETED:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_pool_depleted);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_pool_depleted);
		break;
	case RDS_IB_MR_STAT_REUSED:
		if (k8)
			rds_ib_stats_inc(s_ib_rdma_mr_8k_reused);
		else
			rds_ib_stats_inc(s_ib_rdma_mr_1m_reused);
		break;
	}
}

static void rds_ib_mr_dev_free(struct kref *ref)
{
	struct rds_ib_mr_dev *md = container_of(ref, struct rds_ib_mr_dev,
						md_ref);
	struct rds_ib_mr_cool *c;
	unsigned long index;

	WARN_ON(!xa_empty(&md->md_keys));
	xa_destroy(&md->md_keys);
	/* Every MR is gone: the device's indices are of no more interest. */
	xa_for_each(&md->md_cool, index, c)
		kfree(c);
	xa_destroy(&md->md_cool);
	mutex_destroy(&md->md_cool_lock);
	rds_ib_device_put(md->md_rid);
	kfree(md);
}

/**
 * rds_ib_mr_dev_put - drop a reference on a device's registration state
 * @md: the state
 */
void rds_ib_mr_dev_put(struct rds_ib_mr_dev *md)
{
	kref_put(&md->md_ref, rds_ib_mr_dev_free);
}

/**
 * rds_ib_mr_take_unknown - take the MRs whose key state is unknown
 * @md: device state
 * @list: where they go (m_item)
 *
 * Called with md_qp_sem held for writing and no registration QP, or one
 * that is not broken (or by device removal once everything stopped), so
 * no WR still in flight refers to any of them: a
 * WR that failed completed, and one given up after a failed post was
 * given up under md_qp_sem read-held with the QP marked broken, which
 * the holder of the write side destroys (drains) before it takes the
 * list.  Taken outside it, the list could hold an MR whose LOCAL_INV a
 * later drain still completes (its cqe in freed memory).
 */
void rds_ib_mr_take_unknown(struct rds_ib_mr_dev *md, struct list_head *list)
{
	spin_lock_bh(&md->md_inv_lock);
	list_splice_init(&md->md_unknown, list);
	spin_unlock_bh(&md->md_inv_lock);
}

/**
 * rds_ib_mr_reap_list - deregister MRs whose key state is unknown
 * @md: device state
 * @list: MRs from rds_ib_mr_take_unknown()
 *
 * The recycle step of recovery and of device removal: ib_dereg_mr() kills
 * the key for good, and only then are the pages given back.  Process
 * context, no lock held (the waiters of the keys run from here).
 */
void rds_ib_mr_reap_list(struct rds_ib_mr_dev *md, struct list_head *list)
{
	struct rds_ib_mr *mr, *tmp;

	list_for_each_entry_safe(mr, tmp, list, m_item) {
		struct rds_ib_mr_pool *pool = mr->m_pool;
		struct ib_mr *ibmr = NULL;

		list_del_init(&mr->m_item);
		/* Whoever takes the MR off p_all deregisters it, once. */
		spin_lock_bh(&pool->p_lock);
		if (!list_empty(&mr->m_all)) {
			list_del_init(&mr->m_all);
			pool->p_count--;
			ibmr = mr->m_ib;
			mr->m_ib = NULL;
		}
		spin_unlock_bh(&pool->p_lock);
		if (ibmr) {
			/* ORDER: stamped before the index can come back. */
			rds_ib_mr_cool_start(md, mr);
			ib_dereg_mr(ibmr);
			rds_ib_stats_inc(s_ib_rdma_mr_reaped);
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
			wake_up(&pool->p_wait);
		}
		rds_ib_mr_key_dead(mr);
	}
}

/*
 * The device's registration state with a reference, or NULL.  Under
 * rid_lock, not just a load: removal clears rid_mr and then drops the
 * record's reference, which may be the last.
 */
static struct rds_ib_mr_dev *rds_ib_mr_dev_find(struct rds_ib_device *rid)
{
	struct rds_ib_mr_dev *md;

	spin_lock(&rid->rid_lock);
	md = rid->rid_mr;
	if (md)
		kref_get(&md->md_ref);
	spin_unlock(&rid->rid_lock);
	return md;
}

/* Lockdep class of md_cool's lock, apart from md_keys' (see its init). */
static struct lock_class_key rds_ib_md_cool_class;

/* The device's registration state, made on first use (process context). */
static struct rds_ib_mr_dev *rds_ib_mr_dev_get(struct rds_ib_device *rid)
{
	unsigned int max_mr = rid->rid_dev->attrs.max_mr;
	struct rds_ib_mr_dev *md;
	int i;

	md = rds_ib_mr_dev_find(rid);
	if (md)
		return md;

	mutex_lock(&rds_ib_mr_dev_mutex);
	spin_lock(&rid->rid_lock);
	md = rid->rid_mr;
	if (md)
		kref_get(&md->md_ref);
	if (md || rid->rid_dead) {
		spin_unlock(&rid->rid_lock);
		mutex_unlock(&rds_ib_mr_dev_mutex);
		return md ? md : ERR_PTR(-ENODEV);
	}
	spin_unlock(&rid->rid_lock);
	md = kzalloc(sizeof(*md), GFP_KERNEL);
	if (!md) {
		mutex_unlock(&rds_ib_mr_dev_mutex);
		return ERR_PTR(-ENOMEM);
	}
	kref_get(&rid->rid_ref);
	md->md_rid = rid;
	kref_init(&md->md_ref);		/* the device record's reference */
	mutex_init(&md->md_setup);
	init_rwsem(&md->md_qp_sem);
	init_rwsem(&md->md_reg_sem);
	init_completion(&md->md_cm_done);
	init_waitqueue_head(&md->md_sq_wait);
	INIT_WORK(&md->md_recover_work, rds_ib_mr_recover_worker);
	/*
	 * IRQ-safe, as every other user takes it (xa_lock_irqsave()): an
	 * insert that must allocate drops the lock the same way, so its
	 * GFP_KERNEL allocation never runs with interrupts or BHs off.
	 */
	xa_init_flags(&md->md_keys, XA_FLAGS_LOCK_IRQ);
	INIT_LIST_HEAD(&md->md_unknown);
	atomic64_set(&md->md_reg_seq, 0);
	md->md_key_window = rds_ib_mr_key_window;
	mutex_init(&md->md_cool_lock);
	xa_init(&md->md_cool);
	/*
	 * Both xarrays' spinlocks would share one lockdep class (one
	 * xa_init() per file): md_keys is taken from completion softirqs,
	 * md_cool only in process context under md_cool_lock.
	 */
	lockdep_set_class(&md->md_cool.xa_lock, &rds_ib_md_cool_class);
	INIT_LIST_HEAD(&md->md_cool_fifo);
	for (i = 0; i < RDS_IB_MR_NPOOLS; i++) {
		struct rds_ib_mr_pool *pool = &md->md_pools[i];

		spin_lock_init(&pool->p_lock);
		INIT_LIST_HEAD(&pool->p_clean);
		INIT_LIST_HEAD(&pool->p_all);
		INIT_LIST_HEAD(&pool->p_parked);
		init_waitqueue_head(&pool->p_wait);
		pool->p_class = i;
	}
	md->md_pools[RDS_IB_MR_8K].p_max_pages = RDS_IB_MR_8K_PAGES;
	/* siw maps 256 pages per MR: larger requests get EMSGSIZE anyway. */
	md->md_pools[RDS_IB_MR_1M].p_max_pages = min_t(u32, RDS_IB_MR_1M_PAGES,
						       rid->rid_max_frpl);
	md->md_pools[RDS_IB_MR_8K].p_max = min(rds_ib_mr_8k_pool_size,
					       max_mr / 2);
	md->md_pools[RDS_IB_MR_1M].p_max = min(rds_ib_mr_1m_pool_size,
					       max_mr / 2);
	for (i = 0; i < RDS_IB_MR_NPOOLS; i++)
		md->md_pools[i].p_park_max =
			rds_ib_mr_park_max(&md->md_pools[i],
					   md->md_key_window, max_mr);
	rds_ib_inv_dev_init(md);
	kref_get(&md->md_ref);		/* the caller's */
	spin_lock(&rid->rid_lock);
	if (rid->rid_dead) {
		/* Removal ran meanwhile; it did not see us. */
		spin_unlock(&rid->rid_lock);
		mutex_unlock(&rds_ib_mr_dev_mutex);
		rds_ib_mr_dev_put(md);
		rds_ib_mr_dev_put(md);
		return ERR_PTR(-ENODEV);
	}
	smp_store_release(&rid->rid_mr, md);
	spin_unlock(&rid->rid_lock);
	mutex_unlock(&rds_ib_mr_dev_mutex);
	return md;
}

/* ---- key reuse: MR indices cool down before they are used again ---- */

/**
 * rds_ib_mr_park_max - how many MRs a pool may keep parked
 * @pool: the pool (p_max set)
 * @window: registrations an index cools down (md_key_window)
 * @max_mr: the device's max_mr
 *
 * As many as there can be indices cooling down, which the window alone
 * does not bound: one index per retirement (every RDS_IB_MR_KEY_USES
 * registrations, about @window / 256 at a time in steady state), but a
 * working set of MRs near the end of their key bytes retires in a burst,
 * and recovery reaps every MR with a WR in flight or an invalidation
 * pending at once: at most the whole pool.  A pool that cannot park an
 * index the HCA hands straight back gives it back and gets it again: its
 * working set then shrinks with every retirement, and once it is gone no
 * REG_MR is posted, the clock that ends the cool-downs stops, and every
 * registration fails with ENOMEM for good (as with the fixed 32 of
 * before).  So: the pool's size plus the steady state plus slack, and no
 * more than a quarter of the device's MRs (less than a whole pool when
 * the pool's own size was capped by max_mr: then a reap of all of it may
 * not be parkable).  Parking costs memory only on an HCA that does reuse
 * indices early.
 *
 * Return: the limit for @pool.
 */
static unsigned int rds_ib_mr_park_max(const struct rds_ib_mr_pool *pool,
				       u64 window, unsigned int max_mr)
{
	u64 want = (u64)pool->p_max + div_u64(window, RDS_IB_MR_KEY_USES) +
		   RDS_IB_MR_PARK_SLACK;

	return min_t(u64, want, max_t(unsigned int, max_mr / 4,
				      RDS_IB_MR_PARK_SLACK));
}

/*
 * A verbs MR for @pool: ib_alloc_mr(), or one that rds_ib_mr_lifo_test
 * kept (the HCA handing back an index it just freed).
 */
static struct ib_mr *rds_ib_mr_ib_alloc(struct rds_ib_mr_dev *md,
					struct rds_ib_mr_pool *pool)
{
	struct ib_mr *ibmr = NULL;

	spin_lock_bh(&pool->p_lock);
	if (pool->p_lifo_nr)
		ibmr = pool->p_lifo[--pool->p_lifo_nr];
	spin_unlock_bh(&pool->p_lock);
	if (ibmr)
		return ibmr;
	return ib_alloc_mr(md->md_rid->rid_pd, IB_MR_TYPE_MEM_REG,
			   pool->p_max_pages);
}

/*
 * Deregister a verbs MR of @pool whose key is dead (or that never
 * registered), or keep it for rds_ib_mr_ib_alloc() under the test knob.
 */
static void rds_ib_mr_ib_free(struct rds_ib_mr_pool *pool, struct ib_mr *ibmr)
{
	if (READ_ONCE(rds_ib_mr_lifo_test)) {
		spin_lock_bh(&pool->p_lock);
		if (pool->p_lifo_nr < RDS_IB_MR_LIFO_MAX) {
			pool->p_lifo[pool->p_lifo_nr++] = ibmr;
			ibmr = NULL;
		}
		spin_unlock_bh(&pool->p_lock);
	}
	if (ibmr)
		ib_dereg_mr(ibmr);
}

/* Is the index of @c still cooling down?  md_cool_lock or p_lock held. */
static bool rds_ib_mr_cooling(struct rds_ib_mr_dev *md,
			      const struct rds_ib_mr_cool *c)
{
	return (u64)atomic64_read(&md->md_reg_seq) - c->c_stamp <
	       md->md_key_window;
}

/* Forget the indices that cooled down (oldest first).  md_cool_lock held. */
static void rds_ib_mr_cool_expire(struct rds_ib_mr_dev *md)
{
	struct rds_ib_mr_cool *c;

	while ((c = list_first_entry_or_null(&md->md_cool_fifo,
					     struct rds_ib_mr_cool, c_fifo)) &&
	       !rds_ib_mr_cooling(md, c)) {
		list_del_init(&c->c_fifo);
		md->md_cool_nr--;
		xa_erase(&md->md_cool, c->c_index);
		kfree(c);
	}
}

/**
 * rds_ib_mr_cool_start - the verbs MR of @mr was deregistered
 * @md: device state
 * @mr: the MR, off every list, whose verbs MR is deregistered, or about
 *	to be (after its last registration)
 *
 * Process context.  If the MR ever used a key, its index cools down from
 * now: stamped with the registration clock and queued, so no verbs MR we
 * allocate later with that index is used before md_key_window more
 * registrations.  One that never registered leaves no trace.  Needs no
 * memory (the entry was made with the MR), so it cannot fail.  Called for
 * every deregistration but device removal's.
 */
static void rds_ib_mr_cool_start(struct rds_ib_mr_dev *md,
				 struct rds_ib_mr *mr)
{
	struct rds_ib_mr_cool *c = mr->m_cool;

	mr->m_cool = NULL;
	if (!c)
		return;
	mutex_lock(&md->md_cool_lock);
	if (mr->m_regs) {
		c->c_stamp = atomic64_read(&md->md_reg_seq);
		list_add_tail(&c->c_fifo, &md->md_cool_fifo);
		md->md_cool_nr++;
		c = NULL;
	} else {
		xa_erase(&md->md_cool, c->c_index);
	}
	rds_ib_mr_cool_expire(md);
	mutex_unlock(&md->md_cool_lock);
	kfree(c);
}

/* Park @mr (its index cools down) in expiry order.  p_lock held. */
static void rds_ib_mr_park(struct rds_ib_mr_pool *pool, struct rds_ib_mr *mr)
{
	struct rds_ib_mr *pos;

	list_for_each_entry_reverse(pos, &pool->p_parked, m_item)
		if (pos->m_cool->c_stamp <= mr->m_cool->c_stamp)
			break;
	list_add(&mr->m_item, &pos->m_item);
	pool->p_parked_nr++;
}

/* A parked MR of @pool whose index cooled down, or NULL. */
static struct rds_ib_mr *rds_ib_mr_adopt(struct rds_ib_mr_dev *md,
					 struct rds_ib_mr_pool *pool)
{
	struct rds_ib_mr *mr;

	spin_lock_bh(&pool->p_lock);
	mr = list_first_entry_or_null(&pool->p_parked, struct rds_ib_mr,
				      m_item);
	if (mr && !rds_ib_mr_cooling(md, mr->m_cool)) {
		list_del_init(&mr->m_item);
		pool->p_parked_nr--;
	} else {
		mr = NULL;
	}
	spin_unlock_bh(&pool->p_lock);
	if (mr)
		rds_ib_stats_inc(s_ib_rdma_mr_adopted);
	return mr;
}

/* rds_ib_mr_cool_check(): park the MR, its index cooling (or as if). */
enum { RDS_IB_MR_PARK = 1, RDS_IB_MR_PARK_FAKE = 2 };

/*
 * Give @mr's index a cool-down entry, or find that it is still cooling.
 * Returns 0 (usable), RDS_IB_MR_PARK (park it; its entry is held),
 * RDS_IB_MR_PARK_FAKE (the same, by rds_ib_mr_park_every) or an errno.
 */
static int rds_ib_mr_cool_check(struct rds_ib_mr_dev *md,
				struct rds_ib_mr_pool *pool,
				struct rds_ib_mr *mr)
{
	u32 index = mr->m_ib->rkey >> 8;
	unsigned int every = READ_ONCE(rds_ib_mr_park_every);
	struct rds_ib_mr_cool *c;
	bool fake, park = false;
	int ret = 0;

	mutex_lock(&md->md_cool_lock);
	rds_ib_mr_cool_expire(md);
	fake = every && ++md->md_alloc_nr % every == 0 &&
	       READ_ONCE(pool->p_parked_nr) < pool->p_park_max;
	c = xa_load(&md->md_cool, index);
	if (c && list_empty(&c->c_fifo)) {
		/* One of ours holds it: the HCA cannot hand it out. */
		WARN_ONCE(1, "RDS/IB: MR index %#x allocated twice\n", index);
		ret = -EIO;
		goto out;
	}
	if (c) {
		/* Taken off the FIFO: the new MR or its parking holds it. */
		park = rds_ib_mr_cooling(md, c);
		list_del_init(&c->c_fifo);
		md->md_cool_nr--;
	} else {
		c = kzalloc(sizeof(*c), GFP_KERNEL);
		if (!c) {
			ret = -ENOMEM;
			goto out;
		}
		c->c_index = index;
		INIT_LIST_HEAD(&c->c_fifo);
		ret = xa_insert(&md->md_cool, index, c, GFP_KERNEL);
		if (ret) {
			kfree(c);
			goto out;
		}
	}
	if (!park && fake)
		/* Test knob: as if the index had been freed just now. */
		c->c_stamp = atomic64_read(&md->md_reg_seq);
	mr->m_cool = c;
	ret = park ? RDS_IB_MR_PARK : fake ? RDS_IB_MR_PARK_FAKE : 0;
out:
	mutex_unlock(&md->md_cool_lock);
	return ret;
}

/*
 * Deregister the verbs MR of an MR that is on no list and whose key is
 * dead (or never registered), and free both.
 */
static void rds_ib_mr_destroy(struct rds_ib_mr_dev *md, struct rds_ib_mr *mr)
{
	/*
	 * ORDER: stamp the index before the HCA may hand it out again (the
	 * test knob does so at once).  Every key of the MR was counted by
	 * the clock already, so the early stamp keeps the guarantee.
	 */
	rds_ib_mr_cool_start(md, mr);
	rds_ib_mr_ib_free(mr->m_pool, mr->m_ib);
	mr->m_ib = NULL;
	rds_ib_mr_free(mr);
}

/**
 * rds_ib_mr_new - a fresh MR for @pool, whose p_count the caller raised
 * @md: device state
 * @pool: the pool
 *
 * Process context, md_reg_sem read-held (device removal cannot run).  A
 * parked MR whose index cooled down comes first; else ib_alloc_mr(), and
 * an MR whose index is still cooling down (the HCA gave an index back
 * before md_key_window registrations passed) is parked, kept allocated so
 * the HCA cannot hand that index out again, and we try again.  Each park
 * holds one more distinct cooling index, so the loop ends; only a pool
 * whose parking is full (p_park_max: give the index back) and the test
 * knob's parks count against RDS_IB_MR_ALLOC_TRIES
 * (ib_rdma_mr_key_exhausted).  The MR goes on p_all.
 *
 * Return: the MR, or NULL (no memory, device out of MRs, or parking full
 * and every try cooling).
 */
static struct rds_ib_mr *rds_ib_mr_new(struct rds_ib_mr_dev *md,
				       struct rds_ib_mr_pool *pool)
{
	struct rds_ib_mr *mr;
	bool parked;
	int tries, ret;

	mr = rds_ib_mr_adopt(md, pool);
	for (tries = 0; !mr && tries < RDS_IB_MR_ALLOC_TRIES; ) {
		struct ib_mr *ibmr;

		mr = kzalloc(sizeof(*mr), GFP_KERNEL);
		if (!mr)
			return NULL;
		ibmr = rds_ib_mr_ib_alloc(md, pool);
		if (IS_ERR(ibmr)) {
			kfree(mr);
			return NULL;
		}
		rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_ALLOC);
		mr->m_ib = ibmr;
		mr->m_md = md;
		mr->m_pool = pool;
		INIT_LIST_HEAD(&mr->m_item);
		INIT_LIST_HEAD(&mr->m_all);
		INIT_LIST_HEAD(&mr->m_waiters);
		INIT_LIST_HEAD(&mr->m_defer);
		init_completion(&mr->m_reg_done);
		kref_get(&md->md_ref);

		ret = rds_ib_mr_cool_check(md, pool, mr);
		if (ret == 0)
			break;
		if (ret < 0) {
			rds_ib_mr_destroy(md, mr);
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
			return NULL;
		}
		spin_lock_bh(&pool->p_lock);
		parked = pool->p_parked_nr < pool->p_park_max;
		if (parked)
			rds_ib_mr_park(pool, mr);
		spin_unlock_bh(&pool->p_lock);
		if (parked) {
			mr = NULL;
			rds_ib_stats_inc(s_ib_rdma_mr_parked);
			/*
			 * A real park holds one more distinct cooling index:
			 * the HCA runs out of them and must give a fresh one
			 * (p_park_max bounds the loop), so it is not a try;
			 * the test knob's parks are.
			 */
			if (ret == RDS_IB_MR_PARK_FAKE)
				tries++;
			cond_resched();
			continue;
		}
		/*
		 * No room to park: give the index back.  Its entry returns
		 * to the FIFO with its old stamp (at the tail: it may be
		 * forgotten late, never early).
		 */
		tries++;
		mutex_lock(&md->md_cool_lock);
		list_add_tail(&mr->m_cool->c_fifo, &md->md_cool_fifo);
		md->md_cool_nr++;
		mutex_unlock(&md->md_cool_lock);
		mr->m_cool = NULL;
		rds_ib_mr_destroy(md, mr);
		rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
		mr = NULL;
	}
	if (!mr) {
		rds_ib_stats_inc(s_ib_rdma_mr_key_exhausted);
		return NULL;
	}
	spin_lock_bh(&pool->p_lock);
	list_add_tail(&mr->m_all, &pool->p_all);
	spin_unlock_bh(&pool->p_lock);
	return mr;
}

/* ---- the pools ---- */

/**
 * rds_ib_mr_pool_get - a clean MR of @pool, allocated if the pool may grow
 * @md: device state
 * @pool: the pool
 *
 * Process context, md_reg_sem read-held, may sleep.  An MR that used all
 * its RDS_IB_MR_KEY_USES key bytes is retired here instead of reused:
 * taken off the pool, deregistered (its index starts cooling down) and
 * replaced by a fresh MR.  Device removal cannot run meanwhile (it waits
 * for md_reg_sem), so the PD is alive and removal never sees the MR.
 *
 * Return: the MR or an ERR_PTR (-ENOMEM, -EINTR, -ENODEV).
 */
static struct rds_ib_mr *rds_ib_mr_pool_get(struct rds_ib_mr_dev *md,
					    struct rds_ib_mr_pool *pool)
{
	struct rds_ib_mr *mr;
	int tries;

	for (tries = 0; ; tries++) {
		spin_lock_bh(&pool->p_lock);
		mr = list_first_entry_or_null(&pool->p_clean, struct rds_ib_mr,
					      m_item);
		if (mr) {
			list_del_init(&mr->m_item);
			if (mr->m_regs < RDS_IB_MR_KEY_USES) {
				spin_unlock_bh(&pool->p_lock);
				rds_ib_mr_stat(pool->p_class,
					       RDS_IB_MR_STAT_REUSED);
				return mr;
			}
			/* Retired; its p_count goes to its replacement. */
			list_del_init(&mr->m_all);
			spin_unlock_bh(&pool->p_lock);
			rds_ib_mr_destroy(md, mr);
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
			rds_ib_stats_inc(s_ib_rdma_mr_retired);
			break;
		}
		if (pool->p_count < pool->p_max) {
			pool->p_count++;
			spin_unlock_bh(&pool->p_lock);
			break;
		}
		spin_unlock_bh(&pool->p_lock);

		if (tries >= RDS_IB_MR_POOL_TRIES) {
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_DEPLETED);
			return ERR_PTR(-ENOMEM);
		}
		/* Exhausted: push out pending invalidations and wait. */
		rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_WAIT);
		rds_ib_inv_flush(md);
		if (wait_event_interruptible_timeout(pool->p_wait,
						     !list_empty(&pool->p_clean) ||
						     READ_ONCE(pool->p_count) <
						     pool->p_max ||
						     READ_ONCE(md->md_dead),
						     RDS_IB_MR_POOL_WAIT) < 0)
			return ERR_PTR(-EINTR);
		if (READ_ONCE(md->md_dead))
			return ERR_PTR(-ENODEV);
	}

	mr = rds_ib_mr_new(md, pool);
	if (mr)
		return mr;
	spin_lock_bh(&pool->p_lock);
	pool->p_count--;
	spin_unlock_bh(&pool->p_lock);
	wake_up(&pool->p_wait);
	return ERR_PTR(-ENOMEM);
}

/* Free an MR that left its pool's lists (its verbs MR is gone). */
static void rds_ib_mr_free(struct rds_ib_mr *mr)
{
	struct rds_ib_mr_dev *md = mr->m_md;

	kfree(mr);
	rds_ib_mr_dev_put(md);
}

/*
 * Can the HCA still reach the pages through @mr's key?  Yes while the verbs
 * MR exists and the key is neither free (nothing posted) nor dead.  Racy
 * read: only for the ib_rdma_mr_unmap_keyed check.
 */
static bool rds_ib_mr_key_may_live(struct rds_ib_mr *mr)
{
	int state = READ_ONCE(mr->m_key_state);

	return mr->m_ib && state != RDS_IB_KEY_FREE &&
	       state != RDS_IB_KEY_DEAD;
}

/*
 * DMA-unmap the pages, once: here or in device removal (p_lock), which
 * must do it while the device still exists.
 */
static void rds_ib_mr_dma_unmap(struct rds_ib_mr *mr)
{
	struct rds_ib_mr_pool *pool = mr->m_pool;

	spin_lock_bh(&pool->p_lock);
	if (mr->m_mapped && rds_ib_mr_key_may_live(mr)) {
		/* A bug: a peer with the key may reach freed memory. */
		rds_ib_stats_inc(s_ib_rdma_mr_unmap_keyed);
		pr_warn_ratelimited("RDS/IB: pages of rkey %#x released while the key may be valid (state %d)\n",
				    mr->m_rkey, READ_ONCE(mr->m_key_state));
	}
	if (mr->m_mapped)
		ib_dma_unmap_sg(mr->m_md->md_rid->rid_dev, mr->m_sg,
				mr->m_nents, mr->m_dir);
	mr->m_mapped = 0;
	spin_unlock_bh(&pool->p_lock);
}

/* Give the user's pages back: the HCA no longer touches them. */
static void rds_ib_mr_unmap(struct rds_ib_mr *mr)
{
	rds_ib_mr_dma_unmap(mr);
	if (mr->m_sg_release)
		mr->m_sg_release(mr->m_sg, mr->m_nents, mr->m_sg_arg);
	mr->m_sg_release = NULL;
	mr->m_sg = NULL;
	mr->m_nents = 0;
}

/**
 * rds_ib_mr_put_ref - drop the user hold or the live-key hold
 * @mr: the MR
 *
 * Any context.  The last one unmaps the pages and returns the MR to its
 * pool (or frees it when its verbs MR is gone).
 */
void rds_ib_mr_put_ref(struct rds_ib_mr *mr)
{
	struct rds_ib_mr_pool *pool = mr->m_pool;

	if (!atomic_dec_and_test(&mr->m_refs))
		return;
	rds_ib_mr_unmap(mr);
	spin_lock_bh(&pool->p_lock);
	if (!mr->m_ib) {
		/* Device removal deregistered it and left it to us. */
		spin_unlock_bh(&pool->p_lock);
		rds_ib_mr_free(mr);
		return;
	}
	if (mr->m_key_state == RDS_IB_KEY_UNKNOWN) {
		/* Recovery owns it (md_unknown) and deregisters it. */
		spin_unlock_bh(&pool->p_lock);
		return;
	}
	mr->m_key_state = RDS_IB_KEY_FREE;
	list_add(&mr->m_item, &pool->p_clean);
	spin_unlock_bh(&pool->p_lock);
	wake_up(&pool->p_wait);
}

/**
 * rds_ib_mr_key_dead - the MR's key is invalid in the HCA
 * @mr: the MR (removed from md_keys by the caller or here)
 *
 * Any context.  Releases the waiters for the key's death and drops the
 * live-key hold.
 */
void rds_ib_mr_key_dead(struct rds_ib_mr *mr)
{
	struct rds_ib_mr_dev *md = mr->m_md;
	struct rds_ib_inv_waiter *w, *tmp;
	unsigned long flags;
	LIST_HEAD(waiters);

	xa_lock_irqsave(&md->md_keys, flags);
	if (xa_load(&md->md_keys, mr->m_rkey) == mr)
		__xa_erase(&md->md_keys, mr->m_rkey);
	if (mr->m_key_state != RDS_IB_KEY_UNKNOWN || !mr->m_ib)
		mr->m_key_state = RDS_IB_KEY_DEAD;
	list_splice_init(&mr->m_waiters, &waiters);
	xa_unlock_irqrestore(&md->md_keys, flags);

	list_for_each_entry_safe(w, tmp, &waiters, w_item) {
		list_del_init(&w->w_item);
		w->w_done(w);
	}
	rds_ib_mr_put_ref(mr);
}

/* The key's state is unknown: never reuse @mr, deregister it. */
static void rds_ib_mr_set_unknown(struct rds_ib_mr *mr)
{
	struct rds_ib_mr_dev *md = mr->m_md;
	unsigned long flags;

	xa_lock_irqsave(&md->md_keys, flags);
	mr->m_key_state = RDS_IB_KEY_UNKNOWN;
	xa_unlock_irqrestore(&md->md_keys, flags);
	spin_lock_bh(&md->md_inv_lock);
	list_add_tail(&mr->m_item, &md->md_unknown);
	spin_unlock_bh(&md->md_inv_lock);
}

/**
 * rds_ib_mr_key_unknown - a WR on @mr failed or was flushed
 * @mr: the MR
 *
 * Any context.  The MR is never reused; recovery deregisters it after the
 * registration QP drained, which kills the key and releases the waiters.
 */
void rds_ib_mr_key_unknown(struct rds_ib_mr *mr)
{
	rds_ib_mr_set_unknown(mr);
	rds_ib_mr_qp_error(mr->m_md, "MR work request failed");
}

/* ---- registration ---- */

/*
 * The REG_MR of an asynchronous registration completed.  The callback runs
 * with a hold on @mr, so the transport's reference on the socket's MR
 * (dropped when the pages are unmapped) outlives it.
 */
static void rds_ib_mr_reg_async_done(struct rds_ib_mr *mr, bool ok)
{
	struct rds_ib_mr_dev *md = mr->m_md;
	unsigned long flags;
	int inv;

	if (!ok) {
		/* The key hold keeps the pages mapped until recovery. */
		mr->m_reg_cb(mr->m_sg_arg, false);
		if (mr->m_reg_ep_gen) {
			/* Completed on a connection QP: reap, QP or not. */
			rds_ib_mr_set_unknown(mr);
			rds_ib_mr_reap_soon(md);
		} else {
			rds_ib_mr_key_unknown(mr);
		}
		return;
	}
	xa_lock_irqsave(&md->md_keys, flags);
	/* Released meanwhile: rds_ib_inv_queue() left it to us. */
	inv = mr->m_key_state;
	mr->m_key_state = RDS_IB_KEY_LIVE;
	atomic_inc(&mr->m_refs);
	xa_unlock_irqrestore(&md->md_keys, flags);
	rds_ib_mr_stat(mr->m_pool->p_class, RDS_IB_MR_STAT_USED);
	mr->m_reg_cb(mr->m_sg_arg, true);
	if (inv == RDS_IB_KEY_REG_LINV || inv == RDS_IB_KEY_REG_LINV_NOW)
		rds_ib_inv_queue(mr, inv == RDS_IB_KEY_REG_LINV_NOW);
	rds_ib_mr_put_ref(mr);
}

/*
 * The REG_MR of a synchronous registration completed: wake the waiter,
 * or, if a fatal signal made it give up (m_reg_abandoned), settle the MR
 * here as its user would have: a valid key is invalidated and released.
 * A failed one goes to recovery here, in the completion, whatever the
 * waiter does: the recovery that a failed or flushed WR started drains
 * the registration QP, and the drain ends only after this handler, so
 * the MR is on md_unknown before recovery reaps (the key's hold then
 * keeps the pages until the key is dead; the waiter drops only the
 * user's).
 */
static void rds_ib_mr_reg_sync_done(struct rds_ib_mr *mr, bool ok)
{
	struct rds_ib_mr_dev *md = mr->m_md;
	unsigned long flags;
	bool abandoned;

	if (!ok)
		rds_ib_mr_key_unknown(mr);
	xa_lock_irqsave(&md->md_keys, flags);
	abandoned = mr->m_reg_abandoned;
	if (!abandoned)
		complete(&mr->m_reg_done);	/* @mr is the waiter's now */
	else if (ok)
		mr->m_key_state = RDS_IB_KEY_LIVE;
	xa_unlock_irqrestore(&md->md_keys, flags);
	if (!abandoned)
		return;
	if (ok)
		rds_ib_mr_release(mr, true);
	else
		rds_ib_mr_put_ref(mr);	/* the user's hold */
}

/**
 * rds_ib_mr_reg_wait - wait for the REG_MR of a synchronous registration
 * @md: device state
 * @mr: the MR, whose REG_MR was posted
 *
 * Process context.  The WR refers to @mr, so its completion comes, if
 * only as flushed when the registration QP is drained.  Nothing but a
 * broken QP or HCA delays it; after RDS_IB_MR_REG_WAIT the QP is made to
 * recover (once), whose drain completes the WR.  The wait is killable:
 * on a fatal signal @mr is left to the completion (m_reg_abandoned),
 * which settles it, and the caller must not touch @mr any more.
 *
 * Return: 0 when the REG_MR completed (m_reg_status says how), -EINTR
 * when the MR was abandoned.
 */
static int rds_ib_mr_reg_wait(struct rds_ib_mr_dev *md, struct rds_ib_mr *mr)
{
	bool kicked = false, abandon;
	unsigned long flags;
	long left;

	for (;;) {
		left = wait_for_completion_killable_timeout(&mr->m_reg_done,
							    RDS_IB_MR_REG_WAIT);
		if (left > 0)
			return 0;
		if (left < 0)
			break;
		rds_ib_stats_inc(s_ib_rdma_reg_timeouts);
		pr_warn_ratelimited("RDS/IB: %s: REG_MR of rkey %#x not completed after %u ms%s\n",
				    dev_name(&md->md_rid->rid_dev->dev),
				    mr->m_rkey,
				    jiffies_to_msecs(RDS_IB_MR_REG_WAIT),
				    kicked ? "" : ": recovering the registration QP");
		/*
		 * Once: a second kick could break a rebuilt, healthy QP; and
		 * not if the completion came meanwhile.
		 */
		if (!kicked && !completion_done(&mr->m_reg_done))
			rds_ib_mr_qp_error(md, "REG_MR completion timed out");
		kicked = true;
	}

	/* A fatal signal.  Under md_keys' lock: the completion decides too. */
	xa_lock_irqsave(&md->md_keys, flags);
	abandon = !completion_done(&mr->m_reg_done);
	if (abandon)
		mr->m_reg_abandoned = true;
	xa_unlock_irqrestore(&md->md_keys, flags);
	if (!abandon)
		return 0;
	rds_ib_stats_inc(s_ib_rdma_reg_abandoned);
	return -EINTR;
}

static void rds_ib_mr_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *mr = container_of(wc->wr_cqe, struct rds_ib_mr,
					    m_reg_cqe);
	struct rds_ib_mr_dev *md = mr->m_md;
	bool async = mr->m_reg_cb;
	bool ok = wc->status == IB_WC_SUCCESS;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_rdma_reg_completions);
	mr->m_reg_status = wc->status;
	rds_ib_mr_sq_put(md, 1);
	if (!ok) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: REG_MR failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_mr_qp_error(md, "REG_MR completion error");
	} else if (rds_fault_take(async ? &rds_ib_mr_reg_fail_next :
				  &rds_ib_mr_reg_sync_fail_next)) {
		/* The key is unknown (valid, in fact): recovery kills it. */
		ok = false;
		mr->m_reg_status = IB_WC_GENERAL_ERR;
	}
	if (async)
		rds_ib_mr_reg_async_done(mr, ok);
	else
		rds_ib_mr_reg_sync_done(mr, ok);
}

/* The test knob's deferred completions (rds_ib_mr_conn_reg_defer_ms). */
static void rds_ib_mr_deferred_worker(struct work_struct *work)
{
	struct rds_ib_mr *mr;

	for (;;) {
		spin_lock_bh(&rds_ib_mr_deferred_lock);
		mr = list_first_entry_or_null(&rds_ib_mr_deferred,
					      struct rds_ib_mr, m_defer);
		if (mr)
			list_del_init(&mr->m_defer);
		spin_unlock_bh(&rds_ib_mr_deferred_lock);
		if (!mr)
			break;
		local_bh_disable();
		rds_ib_mr_reg_async_done(mr, true);
		local_bh_enable();
	}
}

/**
 * rds_ib_mr_conn_flush_deferred - run the test knob's deferred completions
 *
 * Process context.  Device removal (after its endpoints drained) and
 * module exit call it, so no MR whose registration completed waits in the
 * knob's list past them, and no timer of it outlives the module.
 */
void rds_ib_mr_conn_flush_deferred(void)
{
	flush_delayed_work(&rds_ib_mr_deferred_work);
	rds_ib_mr_deferred_worker(NULL);
}

/*
 * The REG_MR of rds_ib_mr_conn_post() completed, on the connection's send
 * CQ.  A failure is the connection's (any failed or flushed completion
 * drops it, as for its other WRs); the key is unknown and the MR is
 * deregistered without touching the registration QP.
 */
static void rds_ib_mr_conn_reg_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_mr *mr = container_of(wc->wr_cqe, struct rds_ib_mr,
					    m_reg_cqe);
	struct rds_ib_ep *ep = cq->cq_context;
	bool ok = wc->status == IB_WC_SUCCESS;
	unsigned int defer;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_rdma_reg_completions);
	mr->m_reg_status = wc->status;
	atomic_inc(&ep->e_reg_avail);
	if (!ok) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: REG_MR on a connection failed: %s\n",
					    ib_wc_status_msg(wc->status));
		rds_ib_ep_wc_error(ep, wc);
	}
	defer = READ_ONCE(rds_ib_mr_conn_reg_defer_ms);
	if (ok && defer) {
		spin_lock(&rds_ib_mr_deferred_lock);
		list_add_tail(&mr->m_defer, &rds_ib_mr_deferred);
		spin_unlock(&rds_ib_mr_deferred_lock);
		/* Not mod_: a steady flow must not push the timer back. */
		queue_delayed_work(rds_ib_wq, &rds_ib_mr_deferred_work,
				   msecs_to_jiffies(defer));
		return;
	}
	rds_ib_mr_reg_async_done(mr, ok);
}

/**
 * rds_ib_mr_conn_post - post an asynchronous REG_MR on a connection's QP
 * @md: device state
 * @mr: the MR, prepared and tracked in md_keys (state REG)
 * @laddr: the socket's address (the registration QP's, once one is made)
 * @ic: the connection the message naming it goes out on
 *
 * The message's SEND is posted later on the same QP, so the HCA executes
 * the REG_MR before it: the message need not wait for the completion
 * (rds_ib_mr_reg_ordered()), which saves the registration QP's completion
 * and the send worker's wake-up per RDMA_MAP operation, as xprtrdma chains
 * its REG_MRs ahead of the RPC's SEND.  Only on an endpoint that is up,
 * on @md's device, with a free REG_MR entry (RDS_IB_REG_SQ); else the
 * caller uses the registration QP.  Posted under e_ack_lock with
 * RDS_IB_EP_DEAD checked, so it lands before the drain of
 * rds_ib_ep_destroy(), which completes it if only as flushed.  Process
 * context.
 *
 * Return: true when posted (m_reg_ep_gen records the endpoint).
 */
static bool rds_ib_mr_conn_post(struct rds_ib_mr_dev *md,
				struct rds_ib_mr *mr,
				const struct in6_addr *laddr,
				struct rds_ib_connection *ic)
{
	const struct ib_send_wr *bad_wr;
	struct rds_ib_ep *ep;
	unsigned long flags;
	int ret = -ENOTCONN;

	/* The failure knob acts on the registration QP's completion. */
	if (!ic || !READ_ONCE(rds_ib_mr_reg_on_conn) ||
	    READ_ONCE(rds_ib_mr_reg_fail_next))
		return false;
	/*
	 * The invalidation worker makes the registration QP on md_laddr:
	 * while there is none to keep, a current address of the device (the
	 * first one may have gone).  Racy first look, checked again locked.
	 */
	if (!ipv6_addr_equal(&md->md_laddr, laddr) &&
	    (!READ_ONCE(md->md_qp) || READ_ONCE(md->md_broken))) {
		down_write(&md->md_qp_sem);
		if (!md->md_qp || md->md_broken)
			md->md_laddr = *laddr;
		up_write(&md->md_qp_sem);
	}
	spin_lock_irqsave(&ic->ic_ep_lock, flags);
	ep = ic->ic_ep;
	if (!ep || ep->e_rid != md->md_rid ||
	    !test_bit(RDS_IB_EP_UP, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags) ||
	    !atomic_add_unless(&ep->e_reg_avail, -1, 0))
		goto out;
	mr->m_reg_cqe.done = rds_ib_mr_conn_reg_done;
	WRITE_ONCE(mr->m_reg_ep_gen, ep->e_gen);
	spin_lock(&ep->e_ack_lock);
	if (!test_bit(RDS_IB_EP_DEAD, &ep->e_flags)) {
		/* The registration clock, before the post (see below). */
		atomic64_inc(&md->md_reg_seq);
		ret = ib_post_send(ep->e_qp, &mr->m_reg_wr.wr, &bad_wr);
	}
	spin_unlock(&ep->e_ack_lock);
	if (ret) {
		atomic_inc(&ep->e_reg_avail);
		mr->m_reg_cqe.done = rds_ib_mr_reg_done;
		WRITE_ONCE(mr->m_reg_ep_gen, 0);
	}
out:
	spin_unlock_irqrestore(&ic->ic_ep_lock, flags);
	if (ret)
		return false;
	rds_ib_stats_inc(s_ib_rdma_reg_conn_wrs);
	return true;
}

/**
 * rds_ib_mr_reg_ordered - ->mr_reg_ordered(): may a message naming @mr,
 *	whose registration is still pending, leave on @cp now?
 * @cp: the path (RDS_IN_XMIT held, so its endpoint stays)
 * @mr: rds.ko's MR (RDS_MR_REG_PENDING, under rds_mr_reg_lock: the
 *	completion has not run, so the pool MR is still this registration's)
 *
 * Yes when the REG_MR was posted on the QP of @cp's current endpoint: the
 * SEND goes behind it on the same send queue.
 */
bool rds_ib_mr_reg_ordered(struct rds_conn_path *cp, struct rds_mr *mr)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;
	struct rds_ib_ep *ep = READ_ONCE(ic->ic_ep);
	struct rds_ib_mr *ibmr = mr->r_trans_private;

	return ep && ibmr && READ_ONCE(ibmr->m_reg_ep_gen) == ep->e_gen &&
	       !test_bit(RDS_IB_EP_ERROR, &ep->e_flags);
}

static unsigned int rds_ib_sg_pages(struct scatterlist *sg, unsigned int nents)
{
	struct scatterlist *s;
	unsigned int i, pages = 0;

	for_each_sg(sg, s, nents, i)
		pages += DIV_ROUND_UP(s->offset + s->length, PAGE_SIZE);
	return pages;
}

/*
 * rds_ib_mr_register() with md_reg_sem read-held (and a reference on @md).
 * @sg_release is called once in every case (see there).
 */
static struct rds_ib_mr *
rds_ib_mr_do_register(struct rds_ib_mr_dev *md, const struct in6_addr *laddr,
		      unsigned int pages, struct scatterlist *sg,
		      unsigned int nents, bool use_once, bool write,
		      void (*sg_release)(struct scatterlist *sg,
					 unsigned int nents, void *arg),
		      void *sg_arg, void (*reg_cb)(void *arg, bool ok),
		      struct rds_ib_connection *ic)
{
	struct rds_ib_device *rid = md->md_rid;
	struct ib_device *dev = rid->rid_dev;
	const struct ib_send_wr *bad_wr;
	struct rds_ib_mr_pool *pool;
	struct rds_ib_mr *mr;
	unsigned long flags;
	int access, n, ret;

	pool = &md->md_pools[pages <= RDS_IB_MR_8K_PAGES ? RDS_IB_MR_8K :
						       RDS_IB_MR_1M];
	mr = rds_ib_mr_pool_get(md, pool);
	if (IS_ERR(mr)) {
		sg_release(sg, nents, sg_arg);
		return mr;
	}

	/* From here the MR gives the pages back, whatever happens. */
	mr->m_sg_release = sg_release;
	mr->m_sg_arg = sg_arg;
	mr->m_sg = sg;
	mr->m_nents = nents;
	mr->m_dir = write ? DMA_BIDIRECTIONAL : DMA_TO_DEVICE;
	mr->m_use_once = use_once;
	mr->m_mapped = ib_dma_map_sg(dev, sg, nents, mr->m_dir);
	if (!mr->m_mapped) {
		ret = -ENOMEM;
		goto out_put;
	}
	n = ib_map_mr_sg(mr->m_ib, sg, mr->m_mapped, NULL, PAGE_SIZE);
	if (n != mr->m_mapped) {
		ret = n < 0 ? n : -EINVAL;
		goto out_put;
	}
	/*
	 * The MR starts at the buffer's page offset in this device
	 * instance's epoch (the cookie offset; see ib.c).
	 */
	mr->m_ib->iova = (mr->m_ib->iova & ~PAGE_MASK) |
			 FIELD_PREP(RDS_MR_IOVA_EPOCH_MASK,
				    rid->rid_iova_epoch) |
			 (use_once ? RDS_MR_IOVA_USE_ONCE : 0);
	/*
	 * New key for every registration, bumped right before the post; an
	 * MR never uses a key byte twice (rds_ib_mr_pool_get retires it).
	 */
	WARN_ON_ONCE(mr->m_regs >= RDS_IB_MR_KEY_USES);
	mr->m_regs++;
	ib_update_fast_reg_key(mr->m_ib, ib_inc_rkey(mr->m_ib->rkey));

	access = IB_ACCESS_REMOTE_READ;
	if (write) {
		access |= IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
		if (rid->rid_atomic_cap != IB_ATOMIC_NONE)
			access |= IB_ACCESS_REMOTE_ATOMIC;
	}
	memset(&mr->m_reg_wr, 0, sizeof(mr->m_reg_wr));
	mr->m_reg_cqe.done = rds_ib_mr_reg_done;
	WRITE_ONCE(mr->m_reg_ep_gen, 0);
	mr->m_reg_wr.wr.wr_cqe = &mr->m_reg_cqe;
	mr->m_reg_wr.wr.opcode = IB_WR_REG_MR;
	mr->m_reg_wr.wr.send_flags = IB_SEND_SIGNALED;
	mr->m_reg_wr.mr = mr->m_ib;
	mr->m_reg_wr.key = mr->m_ib->rkey;
	mr->m_reg_wr.access = access;
	mr->m_rkey = mr->m_ib->rkey;
	mr->m_iova = mr->m_ib->iova;
	mr->m_key_state = RDS_IB_KEY_REG;
	mr->m_reg_cb = reg_cb;
	mr->m_reg_abandoned = false;
	reinit_completion(&mr->m_reg_done);
	/*
	 * Two holds: the user's and the key's.  The key is tracked before
	 * the post: an asynchronous completion may make it live at once.
	 */
	atomic_set(&mr->m_refs, 2);
	ret = xa_insert_irq(&md->md_keys, mr->m_rkey, mr, GFP_KERNEL);
	/* -EBUSY: a key handed out twice, a bug of ours. */
	WARN_ON_ONCE(ret == -EBUSY);
	if (ret) {
		ret = -ENOMEM;
		goto out_put;
	}
	/*
	 * RDMA_MAP: ahead of the message on its connection's QP if we can;
	 * as below, the completion may run before the post returns.
	 */
	if (reg_cb && rds_ib_mr_conn_post(md, mr, laddr, ic))
		return mr;
	ret = rds_ib_mr_qp_get(md, laddr);	/* md_qp_sem read-held */
	if (ret)
		goto out_erase;
	if (!rds_ib_mr_sq_get(md, 1)) {
		up_read(&md->md_qp_sem);
		ret = wait_event_interruptible_timeout(md->md_sq_wait,
				atomic_read(&md->md_sq_avail) > 0, HZ);
		ret = ret < 0 ? ret : -EAGAIN;
		goto out_erase;
	}
	/*
	 * ORDER: with @reg_cb the completion may make the key live and run
	 * the callback before ib_post_send() returns; nobody but our caller
	 * can release @mr, so it is still ours to return.
	 */
	/*
	 * The registration clock of the key cool-down, before the post: the
	 * key may be live, used, dead and its MR retired (stamped with the
	 * clock) before ib_post_send() returns.  A failed post counts too.
	 */
	atomic64_inc(&md->md_reg_seq);
	ret = ib_post_send(md->md_qp, &mr->m_reg_wr.wr, &bad_wr);
	up_read(&md->md_qp_sem);
	if (ret) {
		rds_ib_mr_sq_put(md, 1);
		goto out_erase;
	}
	rds_ib_stats_inc(s_ib_rdma_reg_wrs);
	if (reg_cb)
		return mr;
	rds_ib_stats_inc(s_ib_rdma_reg_waits);

	/* Bounded and killable; an abandoned MR is the completion's. */
	ret = rds_ib_mr_reg_wait(md, mr);
	if (ret)
		return ERR_PTR(ret);
	if (mr->m_reg_status != IB_WC_SUCCESS) {
		/*
		 * The key may be valid: the completion gave the MR to
		 * recovery, and the key's hold keeps the pages mapped and
		 * pinned until the MR is deregistered.  Drop the user's.
		 */
		rds_ib_mr_put_ref(mr);
		return ERR_PTR(-EAGAIN);
	}
	xa_lock_irqsave(&md->md_keys, flags);
	mr->m_key_state = RDS_IB_KEY_LIVE;
	xa_unlock_irqrestore(&md->md_keys, flags);
	rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_USED);
	return mr;

out_erase:
	xa_erase_irq(&md->md_keys, mr->m_rkey);
out_put:
	/* Nothing was posted: the MR's key is as free as it was. */
	mr->m_key_state = RDS_IB_KEY_FREE;
	atomic_set(&mr->m_refs, 1);	/* the last: gives the pages back */
	rds_ib_mr_put_ref(mr);
	return ERR_PTR(ret);
}

/**
 * rds_ib_mr_register - register pinned pages with FRWR
 * @rid: the device the socket's address is on
 * @laddr: that address (the registration QP connects to it)
 * @sg: the pages (not DMA-mapped); handed to us until @sg_release is
 *	called
 * @nents: entries in @sg
 * @use_once: mark the key use-once (iova bit RDS_MR_IOVA_USE_ONCE)
 * @write: the peer may write (REMOTE_WRITE, and REMOTE_ATOMIC if possible)
 * @sg_release: called exactly once, when the HCA can no longer touch the
 *	pages (any context)
 * @sg_arg: its argument
 * @reg_cb: NULL: wait for the REG_MR to complete; else return once it is
 *	posted, and the completion calls @reg_cb(@sg_arg, key valid)
 * @ic: with @reg_cb, the connection of the message naming the key, or
 *	NULL: the REG_MR goes on its QP when it can (rds_ib_mr_conn_post())
 *
 * Process context, may sleep (making the registration QP, a full pool or
 * send queue) and, without @reg_cb, until the REG_MR completes.  The
 * returned MR holds the user's reference; rds_ib_mr_release() drops it.
 * m_rkey and m_iova form the cookie.  @sg_release is called in every
 * case: after a success once the released key is dead; after an error at
 * once if nothing was posted, else (a REG_MR that failed, with or without
 * @reg_cb, or an abandoned wait) once recovery deregistered the MR, which
 * may be after we returned.  Until then the pages must stay valid.
 *
 * Return: the MR or an ERR_PTR:
 *   %-EOPNOTSUPP - the device has no FRWR;
 *   %-EMSGSIZE - more pages than the largest MR maps;
 *   %-EINVAL - the pages cannot be mapped by one MR (gaps);
 *   %-ENOMEM - no MR (pool exhausted) or no memory;
 *   %-ENODEV - the device is going away;
 *   %-EAGAIN - the registration QP failed; try again;
 *   %-EINTR - a fatal signal came while waiting for the REG_MR (the MR
 *	settles on its own).
 */
struct rds_ib_mr *rds_ib_mr_register(struct rds_ib_device *rid,
				     const struct in6_addr *laddr,
				     struct scatterlist *sg,
				     unsigned int nents, bool use_once,
				     bool write,
				     void (*sg_release)(struct scatterlist *sg,
							unsigned int nents,
							void *arg),
				     void *sg_arg,
				     void (*reg_cb)(void *arg, bool ok),
				     struct rds_ib_connection *ic)
{
	struct rds_ib_mr_dev *md;
	struct rds_ib_mr *mr;
	unsigned int pages;

	if (!rid->rid_frwr) {
		mr = ERR_PTR(-EOPNOTSUPP);
		goto out_release;
	}
	if (!nents) {
		mr = ERR_PTR(-EINVAL);
		goto out_release;
	}
	pages = rds_ib_sg_pages(sg, nents);
	if (pages > RDS_IB_MR_1M_PAGES || pages > rid->rid_max_frpl) {
		mr = ERR_PTR(-EMSGSIZE);
		goto out_release;
	}

	md = rds_ib_mr_dev_get(rid);
	if (IS_ERR(md)) {
		mr = ERR_CAST(md);
		goto out_release;
	}
	/*
	 * Device removal waits for us here: once it holds md_reg_sem no
	 * registration takes an MR, allocates one, or is left with an MR
	 * whose key state is still moving (an abandoned wait's MR settles
	 * in the drain that comes before).
	 */
	down_read(&md->md_reg_sem);
	if (READ_ONCE(md->md_dead)) {
		mr = ERR_PTR(-ENODEV);
		sg_release(sg, nents, sg_arg);
	} else {
		/* Gives the pages to an MR or back, in every case. */
		mr = rds_ib_mr_do_register(md, laddr, pages, sg, nents,
					   use_once, write, sg_release, sg_arg,
					   reg_cb, ic);
	}
	up_read(&md->md_reg_sem);
	rds_ib_mr_dev_put(md);
	return mr;

out_release:
	sg_release(sg, nents, sg_arg);
	return mr;
}

/**
 * rds_ib_mr_release - the user is done with an MR
 * @mr: the MR from rds_ib_mr_register()
 * @invalidate: invalidate the key now rather than with the next batch
 *
 * Any context.  A live key is invalidated (ib_inv.c); the pages go back to
 * their owner once the key is dead.
 */
void rds_ib_mr_release(struct rds_ib_mr *mr, bool invalidate)
{
	rds_ib_inv_queue(mr, invalidate);
	rds_ib_mr_put_ref(mr);
}

/**
 * rds_ib_mr_device_remove - the device goes: destroy its registrations
 * @rid: the device record
 *
 * Process context, called by the ib_client ->remove() before the PD is
 * freed.  Returns with every verbs MR of the device deregistered and every
 * page DMA-unmapped.  MRs still held by users keep their object (without
 * verbs MR) until released.  See "Device removal" at the top for the order.
 */
void rds_ib_mr_device_remove(struct rds_ib_device *rid)
{
	struct rds_ib_mr_dev *md;
	struct rds_ib_mr *mr;
	unsigned long flags;
	LIST_HEAD(unknown);
	int i;

	mutex_lock(&rds_ib_mr_dev_mutex);
	spin_lock(&rid->rid_lock);
	md = rid->rid_mr;
	rid->rid_mr = NULL;
	spin_unlock(&rid->rid_lock);
	mutex_unlock(&rds_ib_mr_dev_mutex);
	if (!md)
		return;

	/* The connections are gone: the test knob's completions run now. */
	rds_ib_mr_conn_flush_deferred();
	down_write(&md->md_qp_sem);
	md->md_dead = true;
	/* The drain completes every REG_MR and LOCAL_INV in flight. */
	rds_ib_mr_qp_destroy(md);
	up_write(&md->md_qp_sem);

	/* Registrations still running: wake their waits, let them settle. */
	for (i = 0; i < RDS_IB_MR_NPOOLS; i++)
		wake_up_all(&md->md_pools[i].p_wait);
	wake_up_all(&md->md_sq_wait);
	down_write(&md->md_reg_sem);
	up_write(&md->md_reg_sem);

	rds_ib_inv_dev_stop(md);
	/* Nothing makes a key unknown any more: reap the last ones. */
	flush_work(&md->md_recover_work);
	rds_ib_mr_take_unknown(md, &unknown);
	rds_ib_mr_reap_list(md, &unknown);

	for (i = 0; i < RDS_IB_MR_NPOOLS; i++) {
		struct rds_ib_mr_pool *pool = &md->md_pools[i];

		/* Parked MRs: only on p_parked, nobody else takes them now. */
		for (;;) {
			spin_lock_bh(&pool->p_lock);
			mr = list_first_entry_or_null(&pool->p_parked,
						      struct rds_ib_mr, m_item);
			if (mr) {
				list_del_init(&mr->m_item);
				pool->p_parked_nr--;
			}
			spin_unlock_bh(&pool->p_lock);
			if (!mr)
				break;
			ib_dereg_mr(mr->m_ib);
			mr->m_ib = NULL;
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
			rds_ib_mr_free(mr);	/* its entry goes with @md */
		}
		/*
		 * What the test knob kept.  No lock: registrations are over
		 * (md_reg_sem) and nothing else touches p_lifo.
		 */
		while (pool->p_lifo_nr)
			ib_dereg_mr(pool->p_lifo[--pool->p_lifo_nr]);

		for (;;) {
			struct ib_mr *ibmr;
			bool clean, kill;

			spin_lock_bh(&pool->p_lock);
			mr = list_first_entry_or_null(&pool->p_all,
						      struct rds_ib_mr, m_all);
			if (!mr) {
				spin_unlock_bh(&pool->p_lock);
				break;
			}
			list_del_init(&mr->m_all);
			clean = !list_empty(&mr->m_item) &&
				mr->m_key_state == RDS_IB_KEY_FREE;
			if (clean)
				list_del_init(&mr->m_item);
			pool->p_count--;
			ibmr = mr->m_ib;
			mr->m_ib = NULL;
			spin_unlock_bh(&pool->p_lock);

			ib_dereg_mr(ibmr);
			rds_ib_mr_stat(pool->p_class, RDS_IB_MR_STAT_FREE);
			if (clean) {
				rds_ib_mr_free(mr);
				continue;
			}
			/* The HCA is done with the pages; the device goes. */
			rds_ib_mr_dma_unmap(mr);
			/*
			 * A live or dying key died with the MR: claim its
			 * death (the LINV ones are on no batch any more).
			 */
			xa_lock_irqsave(&md->md_keys, flags);
			kill = mr->m_key_state == RDS_IB_KEY_LIVE ||
			       mr->m_key_state == RDS_IB_KEY_LINV;
			if (kill)
				mr->m_key_state = RDS_IB_KEY_DEAD;
			xa_unlock_irqrestore(&md->md_keys, flags);
			if (kill)
				rds_ib_mr_key_dead(mr);
		}
		wake_up_all(&pool->p_wait);
	}
	rds_ib_mr_dev_put(md);
}

/* ---- transport ops (rds.h contract) ---- */

static void rds_ib_mr_sg_release(struct scatterlist *sg, unsigned int nents,
				 void *arg)
{
	rds_mr_put(arg);
}

static void rds_ib_mr_reg_cb(void *arg, bool ok)
{
	rds_mr_reg_complete(arg, ok);
}

/**
 * rds_ib_get_mr - ->get_mr(): register a socket's pinned pages
 * @rs: the bound socket (its address names the device)
 * @mr: rds.ko's MR: r_sg/r_nents in, r_key/r_iova/r_trans_private out
 * @conn: connection of an RDMA_MAP cmsg: the message goes out on it, so
 *	its QP may carry the REG_MR (keys are per device: valid for every
 *	peer either way)
 *
 * Process context, may sleep.  With r_reg_async (RDS_CMSG_RDMA_MAP) only
 * until the REG_MR is posted: rds.ko holds the message until
 * rds_mr_reg_complete().  rds.ko hands us a reference on @mr with the
 * call; it keeps the pages pinned and is dropped (rds_ib_mr_sg_release())
 * once the HCA can no longer reach them: after a failed REG_MR only once
 * recovery deregistered the MR, which may be after we returned the error.
 * Return: 0 or as rds_ib_mr_register().
 */
int rds_ib_get_mr(struct rds_sock *rs, struct rds_mr *mr,
		  struct rds_connection *conn)
{
	struct rds_ib_connection *ic = NULL;
	struct rds_ib_device *rid;
	struct rds_ib_mr *ibmr;

	rid = rds_ib_sock_device(rs);
	if (IS_ERR(rid)) {
		rds_mr_put(mr);		/* the reference rds.ko handed us */
		return PTR_ERR(rid) == -ENOMEM ? -ENOMEM : -ENODEV;
	}
	/* Before the post: the completion may come before we return. */
	if (mr->r_reg_async)
		set_bit(RDS_MR_REG_PENDING, &mr->r_state);
	/* RDMA_MAP over one of our connections: its QP may carry the REG. */
	if (mr->r_reg_async && conn && conn->c_trans == &rds_ib_transport)
		ic = conn->c_path[0].cp_transport_data;
	ibmr = rds_ib_mr_register(rid, &rs->rs_bound_addr, mr->r_sg,
				  mr->r_nents, mr->r_use_once, mr->r_write,
				  rds_ib_mr_sg_release, mr,
				  mr->r_reg_async ? rds_ib_mr_reg_cb : NULL, ic);
	rds_ib_device_put(rid);
	if (IS_ERR(ibmr)) {
		/*
		 * No message can wait for it yet.  Our reference is gone or
		 * goes with the MR's recovery (rds_ib_mr_register()).
		 */
		clear_bit(RDS_MR_REG_PENDING, &mr->r_state);
		return PTR_ERR(ibmr);
	}
	mr->r_key = ibmr->m_rkey;
	mr->r_iova = ibmr->m_iova;
	mr->r_trans_private = ibmr;
	return 0;
}

/**
 * rds_ib_free_mr - ->free_mr(): the MR left its socket
 * @mr: rds.ko's MR
 * @invalidate: invalidate the key now (RDS_RDMA_INVALIDATE)
 */
void rds_ib_free_mr(struct rds_mr *mr, bool invalidate)
{
	struct rds_ib_mr *ibmr = mr->r_trans_private;

	if (ibmr)
		rds_ib_mr_release(ibmr, invalidate);
	else
		rds_mr_put(mr);		/* the reference ->get_mr() gave us */
}

/**
 * rds_ib_sync_mr - ->sync_mr(): make DMA through an MR visible
 * @mr: rds.ko's MR
 * @direction: DMA_FROM_DEVICE (before the CPU reads) or DMA_TO_DEVICE
 *
 * Any context.  rds.ko calls it under mr->r_sync_lock and only before
 * ->free_mr()/->unuse_mr(), so the pool MR still carries the user's hold
 * and is this registration's.  Device removal may DMA-unmap it at any
 * time (under p_lock, which is therefore held across the sync).
 */
void rds_ib_sync_mr(struct rds_mr *mr, int direction)
{
	struct rds_ib_mr *ibmr = mr->r_trans_private;
	struct rds_ib_mr_pool *pool;
	struct ib_device *dev;
	unsigned long flags;

	if (!ibmr)
		return;
	pool = ibmr->m_pool;
	spin_lock_irqsave(&pool->p_lock, flags);
	/* Under p_lock a mapped MR's device is still there. */
	if (!ibmr->m_mapped || !ibmr->m_ib)
		goto out;
	dev = ibmr->m_md->md_rid->rid_dev;
	/* Software devices (rxe, siw) have no DMA mapping to sync. */
	if (ib_uses_virt_dma(dev))
		goto out;
	/* Sync in the direction the pages were mapped with. */
	if (direction == DMA_FROM_DEVICE)
		dma_sync_sg_for_cpu(dev->dma_device, ibmr->m_sg, ibmr->m_nents,
				    ibmr->m_dir);
	else
		dma_sync_sg_for_device(dev->dma_device, ibmr->m_sg,
				       ibmr->m_nents, ibmr->m_dir);
out:
	spin_unlock_irqrestore(&pool->p_lock, flags);
}

/**
 * rds_ib_flush_mrs - ->flush_mrs(): invalidate every freed MR now
 * @rs: socket (its bound address names the device)
 *
 * Process context.  Returns once the pending batch was posted and nothing
 * is in flight on the registration QP (bounded wait).
 */
void rds_ib_flush_mrs(struct rds_sock *rs)
{
	struct rds_ib_device *rid;
	struct rds_ib_mr_dev *md;

	rid = rds_ib_sock_device(rs);
	if (IS_ERR(rid))
		return;
	md = rds_ib_mr_dev_find(rid);
	if (md) {
		rds_ib_inv_flush(md);
		flush_delayed_work(&md->md_inv_work);
		wait_event_timeout(md->md_sq_wait,
				   atomic_read(&md->md_sq_avail) >=
				   RDS_IB_REGQP_SQ || !READ_ONCE(md->md_qp),
				   5 * HZ);
		rds_ib_mr_dev_put(md);
	}
	rds_ib_device_put(rid);
}
