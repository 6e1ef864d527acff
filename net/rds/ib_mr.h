/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib_mr.h - memory registration and invalidation inside rds_rdma.ko.
 *
 * Objects
 * =======
 *
 * struct rds_ib_mr_dev   per-device registration state (ib_mr.c), made on
 *                        the first registration: the registration QP (an
 *                        RC QP connected to the device itself through
 *                        rdma_cm), the MR pools, the index of live keys and
 *                        the local-invalidation batch (ib_inv.c).
 * struct rds_ib_mr       one FRWR MR of a pool.  While its key is live it
 *                        is in md_keys (rkey -> MR); the key dies exactly
 *                        once, by remote invalidation (ib_inv.c, receive
 *                        completion), by a completed LOCAL_INV batch, or by
 *                        ib_dereg_mr() in recovery.
 *
 * struct rds_ib_mr_cool  an MR index (rkey >> 8) of the device that one of
 *                        our verbs MRs holds, or held until recently and
 *                        that is cooling down (md_cool).
 *
 * A pool MR returns to its pool's clean list only when both its user (the
 * rds.ko handle) has released it and its key is dead: m_refs counts those
 * two holds.
 */
#ifndef _RDS_IB_MR_H
#define _RDS_IB_MR_H

#include <linux/scatterlist.h>
#include <linux/xarray.h>
#include <linux/completion.h>
#include <linux/rwsem.h>
#include <linux/sizes.h>

/* Pool classes (in-tree: 8K MRs of up to 3 pages, 1M MRs of up to 257). */
enum {
	RDS_IB_MR_8K,
	RDS_IB_MR_1M,
	RDS_IB_MR_NPOOLS,
};
#define RDS_IB_MR_8K_PAGES		(8192 / PAGE_SIZE + 1)
#define RDS_IB_MR_1M_PAGES		(SZ_1M / PAGE_SIZE + 1)

/*
 * Registrations one verbs MR may do: the low byte of the rkey is ours to
 * choose (ib_update_fast_reg_key), so one MR index gives this many
 * distinct keys; then the MR is retired.
 */
#define RDS_IB_MR_KEY_USES		(1U << (8 * sizeof(u8)))

/* Verbs MRs a pool keeps for the test knob rds_ib_mr_lifo_test. */
#define RDS_IB_MR_LIFO_MAX		4

/*
 * Key states (m_key_state), the one record of where an MR's key stands.
 * The REG_LINV states are an asynchronous registration (RDS_CMSG_RDMA_MAP)
 * whose key was released while its REG_MR was in flight: its completion
 * makes the key LIVE and queues its LOCAL_INV at once (ib_inv.c).
 */
enum {
	RDS_IB_KEY_FREE,	/* not registered (clean, in the pool) */
	RDS_IB_KEY_REG,		/* REG_MR posted, not completed */
	RDS_IB_KEY_REG_LINV,	/* ... and released: invalidate once live */
	RDS_IB_KEY_REG_LINV_NOW, /* ... and post that batch at once */
	RDS_IB_KEY_LIVE,	/* registered, in md_keys */
	RDS_IB_KEY_LINV,	/* LOCAL_INV queued or posted */
	RDS_IB_KEY_DEAD,	/* invalidated; may be registered again */
	RDS_IB_KEY_UNKNOWN,	/* a WR failed or flushed: never reuse */
};

struct rds_ib_mr_dev;
struct rds_ib_mr;

/**
 * struct rds_ib_inv_waiter - someone waiting for a key to die
 * @w_item: entry in the MR's m_waiters
 * @w_done: called once the key is dead (any context; BH disabled)
 */
struct rds_ib_inv_waiter {
	struct list_head	w_item;
	void			(*w_done)(struct rds_ib_inv_waiter *w);
};

/**
 * struct rds_ib_mr_cool - an MR index in a device's cool-down table
 * @c_index: the index (rkey >> 8)
 * @c_stamp: md_reg_seq when the verbs MR that last held the index was
 *	deregistered (while it cools down or a parked MR holds it)
 * @c_fifo: entry in md_cool_fifo (stamp order) while the index cools
 *	down with no verbs MR of ours; empty while one of ours holds it
 *
 * Made when one of our verbs MRs first gets the index, so a
 * deregistration never needs memory to record it.  Under md_cool_lock.
 */
struct rds_ib_mr_cool {
	u32			c_index;
	u64			c_stamp;
	struct list_head	c_fifo;
};

/**
 * struct rds_ib_mr_pool - one size class of FRWR MRs of a device
 * @p_lock: protects the lists and counters
 * @p_clean: MRs whose key is dead and that nobody holds
 * @p_all: every MR of the pool (for teardown)
 * @p_parked: verbs MRs the HCA gave us with an index still cooling down,
 *	kept allocated so it cannot hand the index out again (m_item),
 *	in order of expiry; not on @p_all, not counted in @p_count
 * @p_parked_nr: their number (at most @p_park_max)
 * @p_park_max: parked MRs the pool may hold (rds_ib_mr_park_max())
 * @p_lifo: test knob rds_ib_mr_lifo_test: verbs MRs "deregistered" but
 *	kept, handed out again first, as an HCA that reuses an index at once
 * @p_lifo_nr: their number
 * @p_count: MRs allocated
 * @p_max: most MRs this pool may allocate (module parameter)
 * @p_max_pages: pages per MR
 * @p_wait: woken when an MR becomes clean
 * @p_class: RDS_IB_MR_8K or RDS_IB_MR_1M
 */
struct rds_ib_mr_pool {
	spinlock_t		p_lock;
	struct list_head	p_clean;
	struct list_head	p_all;
	struct list_head	p_parked;
	unsigned int		p_parked_nr;
	unsigned int		p_park_max;
	struct ib_mr		*p_lifo[RDS_IB_MR_LIFO_MAX];
	unsigned int		p_lifo_nr;
	unsigned int		p_count;
	unsigned int		p_max;
	unsigned int		p_max_pages;
	wait_queue_head_t	p_wait;
	int			p_class;
};

/**
 * struct rds_ib_mr - one FRWR MR
 * @m_md: device state (a reference while the MR exists)
 * @m_pool: its pool
 * @m_ib: the verbs MR
 * @m_item: entry in p_clean, p_parked or the invalidation batch
 * @m_all: entry in p_all
 * @m_refs: user hold + live-key hold; zero returns the MR to its pool
 * @m_key_state: RDS_IB_KEY_* (under md_keys' lock once registered)
 * @m_use_once: the key dies with the first RDMA that completes on it
 * @m_rkey: key of the current registration
 * @m_iova: its I/O virtual address (the cookie offset)
 * @m_sg: the user's scatterlist (pinned pages, owned by rds.ko)
 * @m_nents: entries in @m_sg
 * @m_mapped: DMA-mapped entries (0: not mapped)
 * @m_dir: DMA direction of the mapping
 * @m_reg_wr: the REG_MR work request
 * @m_reg_cqe: its completion; done = rds_ib_mr_reg_done
 * @m_reg_done: completed by the REG_MR completion (synchronous)
 * @m_reg_status: its status
 * @m_reg_cb: asynchronous registration: called from the REG_MR
 *	completion with @m_sg_arg and whether the key is valid; NULL: the
 *	registering thread waits on @m_reg_done
 * @m_reg_abandoned: a synchronous waiter gave up (fatal signal): the
 *	completion settles the MR (under md_keys' lock)
 * @m_reg_ep_gen: e_gen of the connection endpoint whose QP carries the
 *	REG_MR in flight (rds_ib_mr_conn_post()); 0 on the registration QP
 * @m_defer: entry in the test knob's list (rds_ib_mr_conn_reg_defer_ms)
 * @m_inv_wr: the LOCAL_INV work request (ib_inv.c)
 * @m_inv_cqe: its completion when it is not the last of its batch
 * @m_waiters: struct rds_ib_inv_waiter waiting for the key to die
 * @m_sg_release: gives @m_sg back to its owner once the HCA is done
 * @m_sg_arg: argument of @m_sg_release
 * @m_unuse_w: waiter of ->unuse_mr() (ib_inv.c)
 * @m_unuse_inc: the message it holds
 * @m_regs: key bytes used since ib_alloc_mr (at most RDS_IB_MR_KEY_USES)
 * @m_cool: the cool-down entry of the MR's index (NULL once deregistered)
 */
struct rds_ib_mr {
	struct rds_ib_mr_dev	*m_md;
	struct rds_ib_mr_pool	*m_pool;
	struct ib_mr		*m_ib;
	struct list_head	m_item;
	struct list_head	m_all;
	atomic_t		m_refs;
	int			m_key_state;
	bool			m_use_once;
	u32			m_rkey;
	u64			m_iova;
	struct scatterlist	*m_sg;
	unsigned int		m_nents;
	int			m_mapped;
	enum dma_data_direction	m_dir;
	struct ib_reg_wr	m_reg_wr;
	struct ib_cqe		m_reg_cqe;
	struct completion	m_reg_done;
	int			m_reg_status;
	void			(*m_reg_cb)(void *arg, bool ok);
	bool			m_reg_abandoned;
	u64			m_reg_ep_gen;
	struct list_head	m_defer;
	struct ib_send_wr	m_inv_wr;
	struct ib_cqe		m_inv_cqe;
	struct list_head	m_waiters;
	void			(*m_sg_release)(struct scatterlist *sg,
						unsigned int nents, void *arg);
	void			*m_sg_arg;
	struct rds_ib_inv_waiter m_unuse_w;
	struct rds_incoming	*m_unuse_inc;
	unsigned int		m_regs;
	struct rds_ib_mr_cool	*m_cool;
};

/**
 * struct rds_ib_inv_batch - LOCAL_INVs posted in one chain (ib_inv.c)
 * @b_cqe: completion of the last (only signalled) WR
 * @b_md: device state
 * @b_mrs: the MRs of the chain (m_item)
 * @b_nr: how many
 */
struct rds_ib_inv_batch {
	struct ib_cqe		b_cqe;
	struct rds_ib_mr_dev	*b_md;
	struct list_head	b_mrs;
	unsigned int		b_nr;
};

/**
 * struct rds_ib_mr_dev - registration state of one device
 * @md_rid: the device record (a reference)
 * @md_ref: references: the device record, every MR, every batch
 * @md_setup: serialises making and rebuilding the registration QP
 * @md_listen_id: rdma_cm listener of the self-connection
 * @md_active_id: active side; its QP is the registration QP
 * @md_passive_id: passive side (only exists to complete the connection)
 * @md_cq: completions of both QPs (IB_POLL_SOFTIRQ)
 * @md_qp: the registration QP, or NULL when there is none
 * @md_qp_gen: bumped each time the registration QP is torn down
 * @md_cm_done: the self-connection is established or failed
 * @md_cm_status: 0 or the errno of the failure
 * @md_broken: a WR on the registration QP failed: rebuild before use
 * @md_dead: the device is going away
 * @md_sq_avail: free send queue entries of the registration QP
 * @md_sq_wait: woken when @md_sq_avail grows
 * @md_recover_work: tears a broken registration QP down
 * @md_pools: the MR pools
 * @md_keys: live keys: rkey -> struct rds_ib_mr
 * @md_inv_lock: protects the pending invalidation batch
 * @md_inv_pending: MRs whose LOCAL_INV is not yet posted (m_item)
 * @md_inv_nr: their number
 * @md_inv_work: posts the pending batch (timer and urgent flushes)
 * @md_unknown: MRs whose key state is unknown after a failed or flushed
 *	WR (m_item, under @md_inv_lock); deregistered by recovery
 * @md_qp_sem: held for reading while posting on @md_qp, for writing
 *	while it is made or torn down
 * @md_reg_sem: held for reading by a registration from before it takes an
 *	MR until the MR's key state is settled (live, unknown, or back in
 *	the pool); device removal takes it for writing to wait them out
 * @md_inv_stopped: device removal stopped the invalidation worker: nothing
 *	queues it any more (under @md_inv_lock)
 * @md_laddr: address the registration QP was last made on (rebuilds)
 * @md_nonce: private data of the self-connection's CONNECT_REQUEST; the
 *	listener accepts no request without it (remade with the QP)
 * @md_active_src: source address and port of @md_active_id, copied before
 *	it connects: the listener accepts no request from elsewhere
 * @md_reg_seq: REG_MRs posted on the device (the registration clock)
 * @md_key_window: registrations an index cools down after its last verbs
 *	MR is deregistered (rds_ib_mr_key_window when @md was made)
 * @md_cool_lock: protects @md_cool, @md_cool_fifo, @md_cool_nr,
 *	@md_alloc_nr and every entry's fields
 * @md_cool: index -> struct rds_ib_mr_cool: indices our verbs MRs hold
 *	and those cooling down
 * @md_cool_fifo: the cooling ones, oldest stamp first
 * @md_cool_nr: their number
 * @md_alloc_nr: ib_alloc_mr() calls (rds_ib_mr_park_every)
 */
struct rds_ib_mr_dev {
	struct rds_ib_device	*md_rid;
	struct kref		md_ref;
	struct mutex		md_setup;
	struct rdma_cm_id	*md_listen_id;
	struct rdma_cm_id	*md_active_id;
	struct rdma_cm_id	*md_passive_id;
	struct ib_cq		*md_cq;
	struct ib_qp		*md_qp;
	unsigned int		md_qp_gen;
	struct completion	md_cm_done;
	int			md_cm_status;
	bool			md_broken;
	bool			md_dead;
	atomic_t		md_sq_avail;
	wait_queue_head_t	md_sq_wait;
	struct work_struct	md_recover_work;
	struct rds_ib_mr_pool	md_pools[RDS_IB_MR_NPOOLS];
	struct xarray		md_keys;
	spinlock_t		md_inv_lock;
	struct list_head	md_inv_pending;
	unsigned int		md_inv_nr;
	struct delayed_work	md_inv_work;
	struct list_head	md_unknown;
	struct rw_semaphore	md_qp_sem;
	struct rw_semaphore	md_reg_sem;
	bool			md_inv_stopped;
	struct in6_addr		md_laddr;
	u64			md_nonce;
	struct sockaddr_storage	md_active_src;
	atomic64_t		md_reg_seq;
	u64			md_key_window;
	struct mutex		md_cool_lock;
	struct xarray		md_cool;
	struct list_head	md_cool_fifo;
	unsigned int		md_cool_nr;
	unsigned int		md_alloc_nr;
};

/* ib_mr.c */
extern unsigned int rds_ib_mr_8k_pool_size;
extern unsigned int rds_ib_mr_1m_pool_size;
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
				     struct rds_ib_connection *ic);
void rds_ib_mr_release(struct rds_ib_mr *mr, bool invalidate);
void rds_ib_mr_key_dead(struct rds_ib_mr *mr);
void rds_ib_mr_key_unknown(struct rds_ib_mr *mr);
void rds_ib_mr_conn_flush_deferred(void);
void rds_ib_mr_put_ref(struct rds_ib_mr *mr);
void rds_ib_mr_dev_put(struct rds_ib_mr_dev *md);
void rds_ib_mr_device_remove(struct rds_ib_device *rid);
void rds_ib_mr_take_unknown(struct rds_ib_mr_dev *md, struct list_head *list);
void rds_ib_mr_reap_list(struct rds_ib_mr_dev *md, struct list_head *list);

/* ib_regqp.c: the registration QP */
/* Send queue of the registration QP; one entry stays free for the drain. */
#define RDS_IB_REGQP_SQ		512
#define RDS_IB_REGQP_TIMEOUT_MS	5000
int rds_ib_mr_qp_get(struct rds_ib_mr_dev *md, const struct in6_addr *laddr);
void rds_ib_mr_qp_error(struct rds_ib_mr_dev *md, const char *why);
void rds_ib_mr_qp_destroy(struct rds_ib_mr_dev *md);
void rds_ib_mr_recover_worker(struct work_struct *work);
void rds_ib_mr_reap_soon(struct rds_ib_mr_dev *md);
bool rds_ib_mr_sq_get(struct rds_ib_mr_dev *md, unsigned int n);
void rds_ib_mr_sq_put(struct rds_ib_mr_dev *md, unsigned int n);

/* ib_inv.c */
extern bool rds_ib_inv_force_local;
u8 rds_ib_inv_local_caps(const struct rds_ib_device *rid);
bool rds_ib_inv_send_remote_ok(const struct rds_ib_ep *ep, u64 cookie);
int rds_ib_inv_recv_remote(struct rds_ib_ep *ep, u32 rkey);
void rds_ib_inv_queue(struct rds_ib_mr *mr, bool now);
void rds_ib_inv_flush(struct rds_ib_mr_dev *md);
void rds_ib_inv_dev_init(struct rds_ib_mr_dev *md);
void rds_ib_inv_dev_stop(struct rds_ib_mr_dev *md);
void rds_ib_inv_worker(struct work_struct *work);

/* ib_mr.c: transport ops (rds.h contract) */
int rds_ib_get_mr(struct rds_sock *rs, struct rds_mr *mr,
		  struct rds_connection *conn);
void rds_ib_free_mr(struct rds_mr *mr, bool invalidate);
void rds_ib_sync_mr(struct rds_mr *mr, int direction);
void rds_ib_flush_mrs(struct rds_sock *rs);
bool rds_ib_mr_reg_ordered(struct rds_conn_path *cp, struct rds_mr *mr);

/* ib_inv.c: transport op */
void rds_ib_unuse_mr(struct rds_mr *mr, struct rds_incoming *inc);

/* ib_rdma.c */
int rds_ib_rdma_status(enum ib_wc_status status);
bool rds_ib_rdma_sq_get(struct rds_ib_ep *ep, unsigned int n);
void rds_ib_rdma_sq_put(struct rds_ib_ep *ep, unsigned int n);
void rds_ib_msg_hold(struct rds_message *rm);
void rds_ib_msg_unhold(struct rds_ib_ep *ep, struct rds_message *rm);
int rds_ib_op_begin(struct rds_ib_ep *ep, struct rds_message *rm);
int rds_ib_xmit_rdma(struct rds_conn_path *cp, struct rm_rdma_op *op);
int rds_ib_rdma_postable(struct rds_ib_ep *ep, struct rds_message *rm);
void rds_ib_rdma_prep_send(struct rds_ib_ep *ep, struct rds_message *rm,
			   struct ib_send_wr *wr, bool last);
void rds_ib_rdma_msg_sent(struct rds_ib_ep *ep, struct rds_message *rm,
			  bool ok);

/* ib_atomic.c */
int rds_ib_xmit_atomic(struct rds_conn_path *cp, struct rm_atomic_op *op);
int rds_ib_atomic_check(struct rds_sock *rs, struct rds_connection *conn,
			bool masked);

#endif /* _RDS_IB_MR_H */
