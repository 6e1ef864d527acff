// SPDX-License-Identifier: GPL-2.0
/*
 * ib_recv.c - receive ring, reassembly and delivery.
 *
 * Theory of operation
 * ===================
 *
 * Receive ring.  e_recv_nr slots, each posted with two SGEs: a 48-byte
 * header buffer (one DMA-mapped array for the ring) and a 4 KiB fragment
 * page of its own.  Receive completions arrive in ring order, in softirq
 * context, through the kernel CQ API (one ib_cqe per slot, done =
 * rds_ib_recv_done).  A completed slot gives its page away (to the message
 * being reassembled, or back to the allocator for an ACK-only packet) and
 * is refilled with a new page; refills are batched (once
 * rds_ib_rx_batch() slots are free, up to RDS_IB_RECV_BATCH slots per
 * ib_post_recv() chain) and fall back to a worker in process
 * context when atomic allocation fails, so the path never spins.
 *
 * Slot ownership.  Two contexts post (the completion handler and the refill
 * worker, on any CPU) and one completes, so the ring's counters are only
 * changed under e_recv_lock, and a slot goes back to the free part of the
 * ring only when its completion is done with it: the handler takes the
 * page, unmaps it and copies the header out of the slot's header buffer
 * first, and only then advances e_recv_tail.  Receives complete in the
 * order they were posted and are posted in slot order, so the slots in use
 * are always the e_recv_head - e_recv_tail slots before e_recv_head_idx,
 * and a refill never touches one of them.  Slot indices are stepped
 * separately from the wrapping u32 sequence numbers (rds_ib_ring_next()),
 * so any ring size is safe across the 2^32 wrap.  The pages
 * of all connections together are capped by net.rds.ib.max_recv_allocation
 * (a per-CPU counter: no lock or cache line shared on the data path).
 *
 * Recycling.  A fragment page that comes back whole (its message was
 * read, or it only carried an ACK) and the state of a one-fragment
 * message go to a small per-CPU stack (RDS_IB_RECYCLE_MAX of each,
 * irq-safe) instead of the allocators, and the next refill or message on
 * that CPU takes them from there; a stack per NUMA node moves the surplus
 * of the CPUs that free (readers) to those that allocate (completion
 * handlers) in batches.  On a request/response exchange the receive path
 * then allocates nothing.  A page is recycled only while we hold its last
 * reference, on its own node, and when it is not from the emergency
 * reserves; recycled pages are not counted in max_recv_allocation.  The
 * stack of a CPU that went offline is emptied once it is dead (a CPU
 * hotplug callback), and every stack when the module leaves.
 *
 * Reassembly.  The first fragment of a message allocates a struct
 * rds_ib_incoming with room for one page pointer per fragment, taken from
 * its header's h_len, which is checked against the 1 MiB limit.  When that
 * atomic allocation fails, one of the largest size comes from a mempool
 * shared by all connections (RDS_IB_INC_RESERVE elements, refilled as
 * messages are freed): a shortage of memory is not the peer's fault and
 * drops nothing unless the reserve is exhausted too (then the path is
 * dropped as a transport error, -ENOMEM, and the sender retransmits after
 * the reconnect).  Each
 * further fragment must repeat the sequence number, length and ports of the
 * first and carry exactly the bytes expected; anything else is a protocol
 * error that drops the connection (the sender retransmits, nothing is
 * delivered twice).  Every header's checksum is verified; a bad one drops
 * the connection too.  The payload is never copied here: the pages go to
 * rds.ko with the message and are copied once, by ->inc_copy_to_user().
 *
 * Integrity checks.  RC promises each completed receive was written once,
 * in order; two cheap checks turn a device that breaks it into a reconnect
 * instead of a wrong delivery.  A slot's header buffer is marked when the
 * slot is posted (RDS_IB_RX_HDR_POISON; the buffers are mapped
 * bidirectionally, one DMA cache alignment apart), and a completion that
 * still finds the mark was never written.  The first fragment of a message
 * must carry a sequence number above the last one on this connection
 * unless it is a retransmission or a congestion update
 * (rds_ib_rx_seq_ok()): going back means an earlier message was delivered
 * again.  Either drops the connection, so the peer retransmits what we
 * have not acknowledged.
 *
 * ACK processing.  Every header carries the peer's ACK (rds_send_drop_acked()
 * when it advances) and possibly credits.  A completed message's sequence
 * becomes our ACK to send; ACK_REQUIRED asks for it to go out now (see
 * ib_send.c for coalescing).  ACK-only packets (ports 0, no data) carry
 * only that.
 *
 * Credits.  With flow control every completed slot was a credit the peer
 * spent, and every buffer posted is one we owe it (counted by
 * rds_ib_advertise_credits()).  After each completion and each refill
 * rds_ib_attempt_ack() decides whether they must go out on their own
 * (rds_ib_credit_update_due()): a data fragment, or an ACK-only packet
 * acknowledging new data of ours, marks the peer as owed
 * (RDS_IB_EP_CREDIT_OWED); a pure credit update from the peer does not, so
 * two peers short of buffers never answer each other's ACKs for ever.
 * Under max_recv_allocation a ring may hold fewer buffers than a refill
 * batch, down to one: the connection still comes up (ib_cm.c) and the
 * refill worker keeps retrying, every HZ / 10, until pages come back.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/delay.h>
#include <linux/mempool.h>
#include <linux/cpuhotplug.h>
#include <linux/sched/clock.h>

#include "ib.h"

struct percpu_counter rds_ib_rx_allocated;

unsigned int rds_ib_ring_seq_start;
static unsigned int rds_ib_recv_fail_every;
static unsigned int rds_ib_recv_delay_us;
static unsigned int rds_ib_recv_replay_every;

/*
 * Test knobs (0644, ours; 0 = off), validated like every parameter:
 *  rds_ib_ring_seq_start   first send and receive ring sequence number of
 *                          new connections (start just below the wrap);
 *  rds_ib_recv_fail_every  every Nth atomic allocation of the receive
 *                          completion path (fragment pages, messages)
 *                          fails, so the refill worker and the reserve run;
 *  rds_ib_recv_delay_us    the completion handler busy-waits this long
 *                          after handing a slot back, widening any window
 *                          in which a refill on another CPU could reuse it;
 *  rds_ib_recv_replay_every every Nth new message is dropped and the
 *                          last one-fragment message is received again in
 *                          its place (rds_ib_recv_replay()).
 */
RDS_PARAM_UINT(rds_ib_ring_seq_start, rds_ib_ring_seq_start, 0, UINT_MAX,
	       0644,
	       " Test: first ring sequence number of new connections (0..4294967295, default 0)");
RDS_PARAM_UINT(rds_ib_recv_fail_every, rds_ib_recv_fail_every, 0, 1000000,
	       0644,
	       " Test: fail every Nth atomic allocation of the receive completion path (0..1000000, default 0: never)");
RDS_PARAM_UINT(rds_ib_recv_delay_us, rds_ib_recv_delay_us, 0, 1000, 0644,
	       " Test: wait this long after a receive slot is handed back (0..1000 us, default 0)");
RDS_PARAM_UINT(rds_ib_recv_replay_every, rds_ib_recv_replay_every, 0, 1000000,
	       0644,
	       " Test: every Nth received message is replaced by an earlier one (0..1000000, default 0: never)");
static atomic_t rds_ib_recv_fail_count = ATOMIC_INIT(0);
static atomic_t rds_ib_recv_replay_count = ATOMIC_INIT(0);

/*
 * Whether a receive side allocation fails on purpose: the fail_rx fault
 * attribute (debug kernels, any context, debugfs.c), or every Nth atomic
 * one (rds_ib_recv_fail_every).
 */
static bool rds_ib_recv_inject_fail(gfp_t gfp)
{
	unsigned int every = READ_ONCE(rds_ib_recv_fail_every);

	if (rds_should_fail(RDS_FAULT_RX))
		return true;
	if (likely(!every) || gfpflags_allow_blocking(gfp))
		return false;
	return (unsigned int)atomic_inc_return(&rds_ib_recv_fail_count) %
	       every == 0;
}

/* Largest reassembly state: one page pointer per fragment of 1 MiB. */
#define RDS_IB_INC_MAX_FRAGS	DIV_ROUND_UP(RDS_MAX_MSG_SIZE, RDS_FRAG_SIZE)
/* Reserve of largest-size reassembly states, shared by all connections. */
#define RDS_IB_INC_RESERVE	64

static mempool_t *rds_ib_inc_pool;

/*
 * Recycling stacks: per CPU, and one per NUMA node shared by its CPUs that
 * takes the overflow of a CPU that frees more than it allocates (the
 * reader's CPU) for one that allocates more than it frees (the completion
 * handler's), RDS_IB_RECYCLE_BATCH at a time.  Two kinds: whole fragment
 * pages and one-fragment message states.  Pages go only to the stacks of
 * their own node.  irq-safe: any context frees; the node locks are raw
 * (taken with irqs off, also on PREEMPT_RT) and leaves.
 */
#define RDS_IB_RECYCLE_MAX	32	/* per CPU and kind */
#define RDS_IB_RECYCLE_SHARED	128	/* per node and kind */
#define RDS_IB_RECYCLE_BATCH	16
enum { RDS_IB_RC_PAGE, RDS_IB_RC_INC, RDS_IB_RC_KINDS };

struct rds_ib_recycle {
	unsigned int	nr[RDS_IB_RC_KINDS];
	void		*s[RDS_IB_RC_KINDS][RDS_IB_RECYCLE_MAX];
};
static DEFINE_PER_CPU(struct rds_ib_recycle, rds_ib_recycle);

struct rds_ib_recycle_node {
	raw_spinlock_t	lock;
	unsigned int	nr[RDS_IB_RC_KINDS];	/* read unlocked as a hint */
	void		*s[RDS_IB_RC_KINDS][RDS_IB_RECYCLE_SHARED];
};
static struct rds_ib_recycle_node *rds_ib_recycle_nodes; /* nr_node_ids */

/* Move up to @n entries from the top of one stack to another. */
static void rds_ib_recycle_move(void **dst, unsigned int *dst_nr,
				unsigned int dst_max, void **src,
				unsigned int *src_nr, unsigned int n)
{
	unsigned int d = *dst_nr, s = *src_nr;

	while (n-- && s && d < dst_max)
		dst[d++] = src[--s];
	WRITE_ONCE(*dst_nr, d);
	WRITE_ONCE(*src_nr, s);
}

/* Keep @p (of @kind) for reuse.  Return: false when it was not kept. */
static bool rds_ib_recycle_put(int kind, void *p)
{
	struct rds_ib_recycle_node *rn;
	struct rds_ib_recycle *rc;
	unsigned long flags;
	bool kept = false;
	int node;

	local_irq_save(flags);
	node = numa_mem_id();
	if (kind == RDS_IB_RC_PAGE && page_to_nid(p) != node)
		goto out;
	rn = &rds_ib_recycle_nodes[node];
	rc = this_cpu_ptr(&rds_ib_recycle);
	if (rc->nr[kind] == RDS_IB_RECYCLE_MAX &&
	    READ_ONCE(rn->nr[kind]) < RDS_IB_RECYCLE_SHARED) {
		raw_spin_lock(&rn->lock);
		rds_ib_recycle_move(rn->s[kind], &rn->nr[kind],
				    RDS_IB_RECYCLE_SHARED, rc->s[kind],
				    &rc->nr[kind], RDS_IB_RECYCLE_BATCH);
		raw_spin_unlock(&rn->lock);
	}
	if (rc->nr[kind] < RDS_IB_RECYCLE_MAX) {
		rc->s[kind][rc->nr[kind]++] = p;
		kept = true;
	}
out:
	local_irq_restore(flags);
	return kept;
}

/* An entry of @kind kept for reuse (a page of this node), or NULL. */
static void *rds_ib_recycle_get(int kind)
{
	struct rds_ib_recycle_node *rn;
	struct rds_ib_recycle *rc;
	unsigned long flags;
	void *p = NULL;

	local_irq_save(flags);
	rn = &rds_ib_recycle_nodes[numa_mem_id()];
	rc = this_cpu_ptr(&rds_ib_recycle);
	if (!rc->nr[kind] && READ_ONCE(rn->nr[kind])) {
		raw_spin_lock(&rn->lock);
		rds_ib_recycle_move(rc->s[kind], &rc->nr[kind],
				    RDS_IB_RECYCLE_MAX, rn->s[kind],
				    &rn->nr[kind], RDS_IB_RECYCLE_BATCH);
		raw_spin_unlock(&rn->lock);
	}
	if (rc->nr[kind])
		p = rc->s[kind][--rc->nr[kind]];
	local_irq_restore(flags);
	return p;
}

/* Free every entry of one stack of @kind. */
static void rds_ib_recycle_empty(int kind, void **s, unsigned int *nr)
{
	while (*nr) {
		void *p = s[--(*nr)];

		if (kind == RDS_IB_RC_PAGE)
			put_page(p);
		else
			kfree(p);
	}
}

/* Our CPU hotplug state (dynamic), or 0. */
static int rds_ib_recycle_hp;

/*
 * @cpu is dead: free what its stack kept.  Runs on another CPU after the
 * dead one stopped; only a CPU touches its own stack, so nobody else does.
 */
static int rds_ib_recycle_cpu_dead(unsigned int cpu)
{
	struct rds_ib_recycle *rc = per_cpu_ptr(&rds_ib_recycle, cpu);
	int kind;

	for (kind = 0; kind < RDS_IB_RC_KINDS; kind++)
		rds_ib_recycle_empty(kind, rc->s[kind], &rc->nr[kind]);
	return 0;
}

/* Empty every stack (module exit: no connection and no message is left). */
static void rds_ib_recycle_drain(void)
{
	unsigned int cpu;
	int kind, node;

	for_each_possible_cpu(cpu)
		rds_ib_recycle_cpu_dead(cpu);
	for (node = 0; node < nr_node_ids; node++) {
		struct rds_ib_recycle_node *rn = &rds_ib_recycle_nodes[node];

		for (kind = 0; kind < RDS_IB_RC_KINDS; kind++)
			rds_ib_recycle_empty(kind, rn->s[kind], &rn->nr[kind]);
	}
}

/**
 * rds_ib_recv_init - module-wide receive state
 *
 * Return: 0, -ENOMEM, or the errno of registering the CPU hotplug state.
 */
int rds_ib_recv_init(void)
{
	int ret, i;

	ret = percpu_counter_init(&rds_ib_rx_allocated, 0, GFP_KERNEL);
	if (ret)
		return ret;
	rds_ib_recycle_nodes = kcalloc(nr_node_ids,
				       sizeof(*rds_ib_recycle_nodes),
				       GFP_KERNEL);
	if (!rds_ib_recycle_nodes)
		goto no_mem;
	for (i = 0; i < nr_node_ids; i++)
		raw_spin_lock_init(&rds_ib_recycle_nodes[i].lock);
	rds_ib_inc_pool = mempool_create_kmalloc_pool(RDS_IB_INC_RESERVE,
			struct_size_t(struct rds_ib_incoming, ii_pages,
				      RDS_IB_INC_MAX_FRAGS));
	if (!rds_ib_inc_pool)
		goto no_mem;
	/* A "dead" callback: a prepare state, torn down after the CPU died. */
	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN,
					"net/rds_rdma:recycle", NULL,
					rds_ib_recycle_cpu_dead);
	if (ret < 0) {
		mempool_destroy(rds_ib_inc_pool);
		rds_ib_inc_pool = NULL;
		goto fail;
	}
	rds_ib_recycle_hp = ret;
	return 0;

no_mem:
	ret = -ENOMEM;
fail:
	kfree(rds_ib_recycle_nodes);
	rds_ib_recycle_nodes = NULL;
	percpu_counter_destroy(&rds_ib_rx_allocated);
	return ret;
}

/**
 * rds_ib_recv_exit - undo rds_ib_recv_init()
 *
 * Every connection is gone; warns if a receive page is still accounted.
 */
void rds_ib_recv_exit(void)
{
	cpuhp_remove_state_nocalls(rds_ib_recycle_hp);
	rds_ib_recycle_drain();
	kfree(rds_ib_recycle_nodes);
	rds_ib_recycle_nodes = NULL;
	mempool_destroy(rds_ib_inc_pool);
	WARN_ON(percpu_counter_sum(&rds_ib_rx_allocated));
	percpu_counter_destroy(&rds_ib_rx_allocated);
}

/*
 * Below max_recv_allocation?  Pages are counted on the CPU that takes them
 * and uncounted on the CPU whose reader frees them, so the quick read can
 * be off by a batch per CPU for good once traffic stops (nothing folds the
 * remainders): near the limit percpu_counter_compare() sums exactly, or a
 * small limit could refuse every refill of an idle ring for ever.
 */
static bool rds_ib_rx_alloc_ok(void)
{
	s64 max = READ_ONCE(rds_ib_sysctl_max_recv_allocation);

	if (percpu_counter_compare(&rds_ib_rx_allocated, max) >= 0) {
		rds_ib_stats_inc(s_ib_rx_alloc_limit);
		return false;
	}
	return true;
}

static void rds_ib_frag_put(struct page *page)
{
	percpu_counter_sub(&rds_ib_rx_allocated, 1);
	/* Only ours (nobody else can take a reference) and ordinary. */
	if (page_ref_count(page) == 1 && !page_is_pfmemalloc(page) &&
	    rds_ib_recycle_put(RDS_IB_RC_PAGE, page))
		return;
	put_page(page);
}

static struct page *rds_ib_frag_get(gfp_t gfp)
{
	struct page *page;

	if (!rds_ib_rx_alloc_ok() || rds_ib_recv_inject_fail(gfp))
		return NULL;
	page = rds_ib_recycle_get(RDS_IB_RC_PAGE);
	if (!page)
		page = alloc_page(gfp | __GFP_NOWARN);
	if (page)
		percpu_counter_add(&rds_ib_rx_allocated, 1);
	return page;
}

/**
 * rds_ib_recv_ring_alloc - allocate the receive ring and its headers
 * @ep: endpoint with a QP
 *
 * Process context.  Return: 0 or -ENOMEM.
 */
int rds_ib_recv_ring_alloc(struct rds_ib_ep *ep)
{
	struct ib_device *dev = ep->e_rid->rid_dev;
	u32 lkey = ep->e_rid->rid_pd->local_dma_lkey;
	size_t hlen;
	u32 i;

	/*
	 * The CPU writes a slot's header (the poison) while the HCA may be
	 * writing its neighbour's: on a non-coherent platform they must not
	 * share a cache line, and the mapping is bidirectional so that the
	 * write reaches a bounce buffer too (swiotlb).
	 */
	ep->e_recv_hdr_stride = ALIGN(sizeof(struct rds_header),
				      dma_get_cache_alignment());
	hlen = (size_t)ep->e_recv_hdr_stride * ep->e_recv_nr;

	ep->e_recvs = kvcalloc(ep->e_recv_nr, sizeof(*ep->e_recvs),
			       GFP_KERNEL);
	ep->e_recv_hdrs = kzalloc(hlen, GFP_KERNEL);
	if (!ep->e_recvs || !ep->e_recv_hdrs)
		return -ENOMEM;
	ep->e_recv_hdrs_dma = ib_dma_map_single(dev, ep->e_recv_hdrs, hlen,
						DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, ep->e_recv_hdrs_dma)) {
		ep->e_recv_hdrs_dma = 0;
		return -ENOMEM;
	}
	for (i = 0; i < ep->e_recv_nr; i++) {
		struct rds_ib_recv_slot *rs = &ep->e_recvs[i];

		rs->rs_cqe.done = rds_ib_recv_done_fn;
		rs->rs_wr.wr_cqe = &rs->rs_cqe;
		rs->rs_wr.sg_list = rs->rs_sge;
		rs->rs_wr.num_sge = RDS_IB_RECV_SGE;
		rs->rs_sge[0].addr = ep->e_recv_hdrs_dma +
				     i * ep->e_recv_hdr_stride;
		rs->rs_sge[0].length = sizeof(struct rds_header);
		rs->rs_sge[0].lkey = lkey;
		rs->rs_sge[1].length = RDS_FRAG_SIZE;
		rs->rs_sge[1].lkey = lkey;
	}
	ep->e_recv_head = READ_ONCE(rds_ib_ring_seq_start);
	ep->e_recv_tail = ep->e_recv_head;
	ep->e_recv_head_idx = 0;
	return 0;
}

/**
 * rds_ib_recv_ring_free - release the receive ring
 * @ep: endpoint whose QP is drained or gone
 *
 * Frees the pages of slots that never completed and a partly reassembled
 * message.  Process context.
 */
void rds_ib_recv_ring_free(struct rds_ib_ep *ep)
{
	struct ib_device *dev = ep->e_rid ? ep->e_rid->rid_dev : NULL;
	u32 i;

	if (ep->e_recv_inc) {
		rds_inc_put(&ep->e_recv_inc->ii_inc);
		ep->e_recv_inc = NULL;
	}
	if (ep->e_replay_page) {
		put_page(ep->e_replay_page);
		ep->e_replay_page = NULL;
	}
	if (ep->e_recvs) {
		for (i = 0; i < ep->e_recv_nr; i++) {
			struct rds_ib_recv_slot *rs = &ep->e_recvs[i];

			if (!rs->rs_page)
				continue;
			ib_dma_unmap_page(dev, rs->rs_dma, RDS_FRAG_SIZE,
					  DMA_FROM_DEVICE);
			rds_ib_frag_put(rs->rs_page);
			rs->rs_page = NULL;
		}
	}
	if (dev && ep->e_recv_hdrs_dma)
		ib_dma_unmap_single(dev, ep->e_recv_hdrs_dma,
				    (size_t)ep->e_recv_hdr_stride *
				    ep->e_recv_nr, DMA_BIDIRECTIONAL);
	kvfree(ep->e_recvs);
	kfree(ep->e_recv_hdrs);
	ep->e_recvs = NULL;
	ep->e_recv_hdrs = NULL;
}

/* Slot @idx's header buffer. */
static struct rds_header *rds_ib_recv_hdr(struct rds_ib_ep *ep, u32 idx)
{
	return ep->e_recv_hdrs + (size_t)idx * ep->e_recv_hdr_stride;
}

/*
 * Mark slot @idx's header buffer as not yet written (RDS_IB_RX_HDR_POISON):
 * a completion that finds the mark was not filled by the HCA, and its slot's
 * page and header are those of an earlier message.
 */
static void rds_ib_recv_poison_hdr(struct rds_ib_ep *ep, u32 idx)
{
	struct ib_device *dev = ep->e_rid->rid_dev;
	u64 hdr_dma = ep->e_recvs[idx].rs_sge[0].addr;

	ib_dma_sync_single_for_cpu(dev, hdr_dma, sizeof(struct rds_header),
				   DMA_BIDIRECTIONAL);
	rds_ib_recv_hdr(ep, idx)->h_sequence = RDS_IB_RX_HDR_POISON;
	ib_dma_sync_single_for_device(dev, hdr_dma, sizeof(struct rds_header),
				      DMA_BIDIRECTIONAL);
}

/**
 * rds_ib_recv_refill - post receive buffers until the ring is full
 * @ep: endpoint
 * @gfp: GFP_ATOMIC from the completion handler, GFP_KERNEL otherwise
 *
 * Pages are allocated outside the ring lock, a batch at a time, and posted
 * with one ib_post_recv() per batch.  Newly posted buffers become posted
 * credits.
 *
 * Return: 0 when the ring is full, -ENOMEM when pages ran out (the caller
 * retries later), -EIO when posting failed (the path is dropped).
 */
int rds_ib_recv_refill(struct rds_ib_ep *ep, gfp_t gfp)
{
	struct ib_device *dev = ep->e_rid->rid_dev;
	struct page *pages[RDS_IB_RECV_BATCH];
	int ret = 0;

	for (;;) {
		struct ib_recv_wr *first = NULL, *prev = NULL;
		const struct ib_recv_wr *bad;
		u32 space, n, i;
		int err;

		if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags) ||
		    test_bit(RDS_IB_EP_ERROR, &ep->e_flags))
			return -EIO;
		space = ep->e_recv_nr -
			(READ_ONCE(ep->e_recv_head) - READ_ONCE(ep->e_recv_tail));
		n = min_t(u32, space, RDS_IB_RECV_BATCH);
		if (!n)
			return 0;
		for (i = 0; i < n; i++) {
			pages[i] = rds_ib_frag_get(gfp);
			if (!pages[i])
				break;
		}
		if (i < n)
			ret = -ENOMEM;
		n = i;

		spin_lock_bh(&ep->e_recv_lock);
		if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags)) {
			spin_unlock_bh(&ep->e_recv_lock);
			ret = -EIO;
			i = 0;
			goto free_rest;
		}
		space = ep->e_recv_nr - (ep->e_recv_head - ep->e_recv_tail);
		for (i = 0; i < n && i < space; i++) {
			struct rds_ib_recv_slot *rs;
			u64 dma;

			rs = &ep->e_recvs[ep->e_recv_head_idx];
			/* The free part of the ring holds no page. */
			if (WARN_ON_ONCE(rs->rs_page)) {
				ret = -EIO;
				break;
			}
			dma = ib_dma_map_page(dev, pages[i], 0, RDS_FRAG_SIZE,
					      DMA_FROM_DEVICE);
			if (ib_dma_mapping_error(dev, dma)) {
				ret = -ENOMEM;
				break;
			}
			rds_ib_recv_poison_hdr(ep, ep->e_recv_head_idx);
			rs->rs_page = pages[i];
			rs->rs_dma = dma;
			rs->rs_sge[1].addr = dma;
			rs->rs_wr.next = NULL;
			pages[i] = NULL;
			if (prev)
				prev->next = &rs->rs_wr;
			else
				first = &rs->rs_wr;
			prev = &rs->rs_wr;
			ep->e_recv_head++;
			ep->e_recv_head_idx =
				rds_ib_ring_next(ep->e_recv_head_idx,
						 ep->e_recv_nr);
		}
		err = first ? ib_post_recv(ep->e_qp, first, &bad) : 0;
		if (err) {
			spin_unlock_bh(&ep->e_recv_lock);
			rds_ib_ep_post_error(ep, err, "ib_post_recv failed");
			ret = -EIO;
			/* The slots keep theirs; free the batch's unused pages. */
			i = 0;
			goto free_rest;
		}
		spin_unlock_bh(&ep->e_recv_lock);
		rds_ib_advertise_credits(ep, i);
		if (ret == -EIO)
			rds_ib_ep_error(ep, "receive ring slot still in use");
free_rest:
		for (; i < n; i++)
			if (pages[i])
				rds_ib_frag_put(pages[i]);
		if (ret)
			return ret;
	}
}

/**
 * rds_ib_refill_worker - refill in process context after atomic failure
 * @work: e_refill_work of an endpoint
 */
void rds_ib_refill_worker(struct work_struct *work)
{
	struct rds_ib_ep *ep = container_of(to_delayed_work(work),
					    struct rds_ib_ep, e_refill_work);
	int ret;

	rds_ib_stats_inc(s_ib_rx_refill_from_thread);
	ret = rds_ib_recv_refill(ep, GFP_KERNEL);
	if (ret == -ENOMEM)
		queue_delayed_work(rds_ib_wq, &ep->e_refill_work, HZ / 10);
	rds_ib_attempt_ack(ep);
}

/**
 * rds_ib_recv_path - rds.ko's receive worker: make sure the ring is full
 * @cp: path
 *
 * Process context.  Return: 0.
 */
int rds_ib_recv_path(struct rds_conn_path *cp)
{
	struct rds_ib_connection *ic = cp->cp_transport_data;

	mutex_lock(&ic->ic_mutex);
	if (ic->ic_ep && ic->ic_ep->e_qp)
		queue_delayed_work(rds_ib_wq, &ic->ic_ep->e_refill_work, 0);
	mutex_unlock(&ic->ic_mutex);
	return 0;
}

static bool rds_ib_frag_matches(const struct rds_header *a,
				const struct rds_header *b)
{
	/* Fragments of one message may carry different ACKs and credits. */
	return a->h_sequence == b->h_sequence && a->h_len == b->h_len &&
	       a->h_sport == b->h_sport && a->h_dport == b->h_dport;
}

/*
 * One received fragment with a valid header.  Return: false on a protocol
 * error, or with *@nomem set when no memory was left for the message (the
 * caller drops the path and frees @page).  On success the page was
 * consumed (given to the message or freed).
 */
static bool rds_ib_process_frag(struct rds_ib_ep *ep,
				const struct rds_header *hdr,
				struct page *page, u32 data_len, bool *nomem)
{
	struct rds_ib_connection *ic = ep->e_ic;
	struct rds_connection *conn = ic->ic_conn;
	struct rds_ib_incoming *ibinc = ep->e_recv_inc;
	u32 len, expect;

	if (!ibinc) {
		u32 nfrags;

		len = be32_to_cpu(hdr->h_len);
		if (len > RDS_MAX_MSG_SIZE)
			return false;
		nfrags = len ? DIV_ROUND_UP(len, RDS_FRAG_SIZE) : 1;
		ibinc = NULL;
		if (!rds_ib_recv_inject_fail(GFP_ATOMIC)) {
			if (nfrags == 1)
				ibinc = rds_ib_recycle_get(RDS_IB_RC_INC);
			if (!ibinc)
				ibinc = kmalloc(struct_size(ibinc, ii_pages,
							    nfrags),
						GFP_ATOMIC | __GFP_NOWARN);
		}
		if (ibinc) {
			ibinc->ii_reserve = false;
		} else {
			/* Not the peer's fault: take one from the reserve. */
			ibinc = mempool_alloc(rds_ib_inc_pool,
					      GFP_ATOMIC | __GFP_NOWARN);
			if (!ibinc) {
				*nomem = true;
				return false;
			}
			ibinc->ii_reserve = true;
			rds_ib_stats_inc(s_ib_rx_inc_reserve_used);
		}
		rds_inc_init(&ibinc->ii_inc, ic->ic_cp, &conn->c_faddr);
		memcpy(&ibinc->ii_inc.i_hdr, hdr, sizeof(*hdr));
		ibinc->ii_inc.i_rx_lat_trace[RDS_MSG_RX_HDR] = local_clock();
		ibinc->ii_nr_frags = nfrags;
		ibinc->ii_got = 0;
		ep->e_recv_inc = ibinc;
	} else if (!rds_ib_frag_matches(&ibinc->ii_inc.i_hdr, hdr)) {
		return false;
	}

	len = be32_to_cpu(ibinc->ii_inc.i_hdr.h_len);
	expect = len ? min_t(u32, RDS_FRAG_SIZE,
			     len - ibinc->ii_got * RDS_FRAG_SIZE) : 0;
	if (data_len != expect)
		return false;

	if (len)
		ibinc->ii_pages[ibinc->ii_got] = page;
	else
		rds_ib_frag_put(page);
	ibinc->ii_got++;
	rds_ib_stats_inc(s_ib_rx_total_frags);

	if (ibinc->ii_got == ibinc->ii_nr_frags) {
		u64 seq = be64_to_cpu(ibinc->ii_inc.i_hdr.h_sequence);
		bool ack_req = ibinc->ii_inc.i_hdr.h_flags &
			       RDS_FLAG_ACK_REQUIRED;

		ep->e_recv_inc = NULL;
		rds_ib_stats_inc(s_ib_rx_total_incs);
		rds_recv_incoming(ic->ic_cp, &conn->c_faddr, &conn->c_laddr,
				  &ibinc->ii_inc, GFP_ATOMIC);
		rds_ib_set_ack(ep, seq, ack_req);	/* recv.c counts it */
		rds_inc_put(&ibinc->ii_inc);
	}
	return true;
}

/* A header with no ports and no data only carries an ACK and credits. */
static bool rds_ib_ack_only(const struct rds_header *hdr, u32 data_len)
{
	return !hdr->h_sport && !hdr->h_dport && !data_len;
}

/*
 * Is @hdr, the first fragment of a message, newer than the messages the
 * peer sent before on this connection?  rds.ko numbers messages in the
 * order it queues and sends them, and a connection never sees a message
 * twice except as a retransmission after a reconnect (flagged
 * RDS_FLAG_RETRANSMITTED, which rds.ko drops when it is old); congestion
 * map updates carry sequence 0.  Anything else going back is an earlier
 * message sent again by the transport (seen on rxe 6.1 under RNR retries),
 * and the message it replaced may be lost: the caller drops the connection
 * so that the peer retransmits what we have not acknowledged.
 * Receive completion context (the only user of e_rx_last_seq).
 */
static bool rds_ib_rx_seq_ok(struct rds_ib_ep *ep, const struct rds_header *hdr)
{
	u64 seq = be64_to_cpu(hdr->h_sequence);

	if (!seq ||
	    (hdr->h_flags & (RDS_FLAG_RETRANSMITTED | RDS_FLAG_CONG_BITMAP)))
		return true;
	if (seq <= ep->e_rx_last_seq)
		return false;
	ep->e_rx_last_seq = seq;
	return true;
}

/*
 * Test (rds_ib_recv_replay_every): act as a transport that delivers an
 * earlier message again in the place of a new one, the failure the
 * sequence check is for.  The last one-fragment message is kept (its
 * header and a reference to its page); every Nth first fragment of a new
 * message is dropped and a copy of the kept one takes its place.  Called
 * for first data fragments only.
 */
static void rds_ib_recv_replay(struct rds_ib_ep *ep, struct rds_header *hdr,
			       struct page **page, u32 *byte_len)
{
	unsigned int every = READ_ONCE(rds_ib_recv_replay_every);
	u32 len = be32_to_cpu(hdr->h_len);
	struct page *copy;

	if (hdr->h_flags & (RDS_FLAG_RETRANSMITTED | RDS_FLAG_CONG_BITMAP))
		return;
	if (every && ep->e_replay_page &&
	    (unsigned int)atomic_inc_return(&rds_ib_recv_replay_count) %
	    every == 0) {
		copy = rds_ib_frag_get(GFP_ATOMIC);
		if (!copy)
			return;
		memcpy(page_address(copy), page_address(ep->e_replay_page),
		       ep->e_replay_len - sizeof(*hdr));
		rds_ib_frag_put(*page);		/* the new message is lost */
		*page = copy;
		*hdr = ep->e_replay_hdr;
		*byte_len = ep->e_replay_len;
		return;
	}
	if (len && len <= RDS_FRAG_SIZE && *byte_len == sizeof(*hdr) + len) {
		if (ep->e_replay_page)
			put_page(ep->e_replay_page);
		get_page(*page);
		ep->e_replay_page = *page;
		ep->e_replay_hdr = *hdr;
		ep->e_replay_len = *byte_len;
	}
}

/**
 * rds_ib_recv_done_fn - receive completion
 * @cq: receive CQ (cq_context is the endpoint)
 * @wc: the completion
 *
 * Softirq context, serialised per CQ.
 */
void rds_ib_recv_done_fn(struct ib_cq *cq, struct ib_wc *wc)
{
	struct rds_ib_recv_slot *rs = container_of(wc->wr_cqe,
						   struct rds_ib_recv_slot,
						   rs_cqe);
	struct rds_ib_ep *ep = cq->cq_context;
	struct ib_device *dev = ep->e_rid->rid_dev;
	struct rds_header hdr;
	u32 idx = rs - ep->e_recvs;
	struct page *page;
	bool nomem = false, acked, ack_only;
	u64 ack;
	u32 byte_len, delay;

	/* WARNING: Only wr_cqe and status are reliable at this point */
	rds_ib_stats_inc(s_ib_rx_cq_event);

	/*
	 * Everything we need from the slot comes out before the slot is
	 * handed back: the page, its mapping, and (on success) the header.
	 */
	page = rs->rs_page;
	rs->rs_page = NULL;
	if (page)
		ib_dma_unmap_page(dev, rs->rs_dma, RDS_FRAG_SIZE,
				  DMA_FROM_DEVICE);
	if (likely(wc->status == IB_WC_SUCCESS && page)) {
		u64 hdr_dma = rs->rs_sge[0].addr;

		ib_dma_sync_single_for_cpu(dev, hdr_dma, sizeof(hdr),
					   DMA_BIDIRECTIONAL);
		memcpy(&hdr, rds_ib_recv_hdr(ep, idx), sizeof(hdr));
		ib_dma_sync_single_for_device(dev, hdr_dma, sizeof(hdr),
					      DMA_BIDIRECTIONAL);
	}
	/* Now a refill, here or on another CPU, may post the slot again. */
	spin_lock(&ep->e_recv_lock);
	ep->e_recv_tail++;
	spin_unlock(&ep->e_recv_lock);
	delay = READ_ONCE(rds_ib_recv_delay_us);
	if (unlikely(delay))
		udelay(delay);

	if (unlikely(wc->status != IB_WC_SUCCESS)) {
		if (wc->status != IB_WC_WR_FLUSH_ERR)
			pr_info_ratelimited("RDS/IB: receive from %pI6c failed: %s\n",
					    &ep->e_ic->ic_conn->c_faddr,
					    ib_wc_status_msg(wc->status));
		if (page)
			rds_ib_frag_put(page);
		rds_ib_ep_wc_error(ep, wc);
		return;
	}
	if (unlikely(!page)) {
		/* Cannot happen: every posted slot has a page. */
		rds_ib_ep_error(ep, "receive completion on an empty slot");
		return;
	}
	if (test_bit(RDS_IB_EP_DEAD, &ep->e_flags) ||
	    test_bit(RDS_IB_EP_ERROR, &ep->e_flags)) {
		rds_ib_frag_put(page);
		return;
	}

	/* status == SUCCESS: wc_flags and ex.invalidate_rkey are valid. */
	if ((wc->wc_flags & IB_WC_WITH_INVALIDATE) &&
	    rds_ib_inv_recv_remote(ep, wc->ex.invalidate_rkey)) {
		rds_ib_frag_put(page);
		rds_ib_ep_proto_error(ep, "bogus remote invalidation");
		return;
	}

	byte_len = wc->byte_len;
	if (byte_len < sizeof(hdr)) {
		rds_ib_frag_put(page);
		rds_ib_ep_proto_error(ep, "received a fragment without header");
		return;
	}

	if (unlikely(hdr.h_sequence == RDS_IB_RX_HDR_POISON)) {
		/*
		 * The HCA completed the slot without writing its header: what
		 * the slot holds belongs to an earlier message.  Deliver
		 * nothing; the reconnect retransmits what was not ACKed.
		 */
		rds_ib_stats_inc(s_ib_rx_stale_header);
		pr_warn_ratelimited("RDS/IB: receive slot %u completed with an unwritten header (%u bytes, ring %u..%u)\n",
				    idx, wc->byte_len, READ_ONCE(ep->e_recv_tail),
				    READ_ONCE(ep->e_recv_head));
		rds_ib_frag_put(page);
		rds_ib_ep_proto_error(ep, "receive completion without a header");
		return;
	}
	if (!rds_header_csum_ok(&hdr)) {
		rds_stats_inc(s_recv_drop_bad_checksum);
		rds_ib_frag_put(page);
		rds_ib_ep_proto_error(ep, "header checksum mismatch");
		return;
	}

	/* A first data fragment (not an ACK) must not go back in sequence. */
	if (!ep->e_recv_inc &&
	    !rds_ib_ack_only(&hdr, byte_len - sizeof(hdr))) {
		if (unlikely(READ_ONCE(rds_ib_recv_replay_every)))
			rds_ib_recv_replay(ep, &hdr, &page, &byte_len);
		if (unlikely(!rds_ib_rx_seq_ok(ep, &hdr))) {
			rds_ib_stats_inc(s_ib_rx_stale_seq);
			pr_warn_ratelimited("RDS/IB: message %llu from %pI6c after %llu: the transport delivered an earlier message again\n",
					    be64_to_cpu(hdr.h_sequence),
					    &ep->e_ic->ic_conn->c_faddr,
					    ep->e_rx_last_seq);
			rds_ib_frag_put(page);
			rds_ib_ep_proto_error(ep, "message sequence went back");
			return;
		}
	}

	if (unlikely(test_bit(RDS_IB_EP_IW_GATE, &ep->e_flags) &&
		     !test_bit(RDS_IB_EP_IW_HEARD, &ep->e_flags)))
		rds_ib_ep_iw_heard(ep);

	ack = be64_to_cpu(hdr.h_ack);
	acked = ack > ep->e_ack_recv;
	if (acked) {
		ep->e_ack_recv = ack;
		rds_send_drop_acked(ep->e_ic->ic_cp, ack, NULL);
	}
	if (hdr.h_credit)
		rds_ib_send_add_credits(ep, hdr.h_credit);

	byte_len -= sizeof(hdr);
	ack_only = rds_ib_ack_only(&hdr, byte_len);
	/*
	 * The credit this SEND cost the peer is owed back soon unless it only
	 * answered us without news (a credit update of its own): see
	 * rds_ib_credit_update_due() for why ACKs must not answer ACKs.
	 */
	if (!ack_only || acked)
		rds_ib_credit_owed(ep);
	if (ack_only) {
		rds_ib_stats_inc(s_ib_ack_received);
		rds_ib_frag_put(page);
	} else if (!rds_ib_process_frag(ep, &hdr, page, byte_len, &nomem)) {
		rds_ib_frag_put(page);
		if (nomem)
			rds_ib_ep_fail(ep, RDS_DROP_TRANSPORT, -ENOMEM,
				       "no memory for a received message");
		else
			rds_ib_ep_proto_error(ep, "malformed fragment");
		return;
	}

	/*
	 * Refill in batches; fall back to the worker without memory (or at
	 * max_recv_allocation: it retries until pages come back).  Whether
	 * the new credits, or the slot just taken, call for a credit update
	 * is rds_ib_attempt_ack()'s to judge.
	 */
	if (ep->e_recv_nr - (READ_ONCE(ep->e_recv_head) -
			     READ_ONCE(ep->e_recv_tail)) >=
	    rds_ib_rx_batch(ep)) {
		rds_ib_stats_inc(s_ib_rx_refill_from_cq);
		if (rds_ib_recv_refill(ep, GFP_ATOMIC) == -ENOMEM)
			queue_delayed_work(rds_ib_wq, &ep->e_refill_work, 1);
	}
	if (READ_ONCE(ep->e_recv_head) == READ_ONCE(ep->e_recv_tail))
		rds_ib_stats_inc(s_ib_rx_ring_empty);
	rds_ib_attempt_ack(ep);
}

/**
 * rds_ib_inc_copy_to_user - copy a received message's payload out
 * @inc: the message
 * @to: destination (user or kernel iterator)
 *
 * Never sleeps for kernel iterators.  Return: bytes copied or -EFAULT.
 */
int rds_ib_inc_copy_to_user(struct rds_incoming *inc, struct iov_iter *to)
{
	struct rds_ib_incoming *ibinc = container_of(inc,
						     struct rds_ib_incoming,
						     ii_inc);
	u32 len = be32_to_cpu(inc->i_hdr.h_len);
	u32 copied = 0, i;

	for (i = 0; copied < len && iov_iter_count(to); i++) {
		size_t chunk = min_t(size_t, len - copied, RDS_FRAG_SIZE);
		size_t ret;

		if (i >= ibinc->ii_got)
			break;
		chunk = min_t(size_t, chunk, iov_iter_count(to));
		ret = copy_page_to_iter(ibinc->ii_pages[i], 0, chunk, to);
		copied += ret;
		if (ret != chunk)
			return -EFAULT;
	}
	/* The copy_to_user counter (as in-tree): bytes to user memory. */
	if (user_backed_iter(to))
		rds_stats_add(s_copy_to_user, copied);
	return copied;
}

/**
 * rds_ib_inc_free - last reference to a received message dropped
 * @inc: the message
 *
 * Any context.
 */
void rds_ib_inc_free(struct rds_incoming *inc)
{
	struct rds_ib_incoming *ibinc = container_of(inc,
						     struct rds_ib_incoming,
						     ii_inc);
	u32 i, n = be32_to_cpu(inc->i_hdr.h_len) ? ibinc->ii_got : 0;

	for (i = 0; i < n; i++)
		rds_ib_frag_put(ibinc->ii_pages[i]);
	if (ibinc->ii_reserve)
		mempool_free(ibinc, rds_ib_inc_pool);
	else if (ibinc->ii_nr_frags != 1 ||
		 !rds_ib_recycle_put(RDS_IB_RC_INC, ibinc))
		kfree(ibinc);
}
