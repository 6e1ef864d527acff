// SPDX-License-Identifier: GPL-2.0
/*
 * ib_info.c - what rds_rdma.ko shows through the RDS_INFO_* getsockopts.
 *
 * Theory of operation
 * ===================
 *
 * Two things come from this module (the protocol and the zeroed items are
 * rds.ko's, info.c):
 *
 *   - RDS_INFO_IB_CONNECTIONS / RDS6_INFO_IB_CONNECTIONS: one
 *     rds_info_rdma_connection (IPv4 connections only) or
 *     rds6_info_rdma_connection (all) per connection of this transport in
 *     the caller's namespace.  Addresses, TOS and SL are always filled in;
 *     while the current endpoint is up also the GIDs, the ring sizes, the
 *     send SGE limit and the 1 MB pool's limits (MRs, pages per MR), as
 *     in-tree.  cache_allocs is 0: in-tree it is the KiB of receive
 *     fragments parked in the connection's recycling cache, and we have
 *     no such cache (ib_recv.c returns each page to the page allocator).
 *   - the rds_rdma counters of ib_stats.c, appended to RDS_INFO_COUNTERS
 *     through the transport's ->info_counters().
 *
 * The connection walk runs under RCU, so the endpoint is read under
 * ic_ep_lock: ib_cm.c changes ic_ep under it and destroys an endpoint only
 * after detaching it, so the endpoint and its cm_id stay valid while the
 * lock is held.  Nothing here sleeps.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <rdma/rdma_cm.h>

#include "ib.h"

/* Limits of the 1 MB pool of @rid: what it uses, or would use. */
static void rds_ib_info_mr_limits(struct rds_ib_device *rid, u32 *max,
				  u32 *pages)
{
	struct rds_ib_mr_dev *md = smp_load_acquire(&rid->rid_mr);

	if (md) {
		*max = md->md_pools[RDS_IB_MR_1M].p_max;
		*pages = md->md_pools[RDS_IB_MR_1M].p_max_pages;
	} else {
		*max = min_t(u32, rds_ib_mr_1m_pool_size,
			     rid->rid_dev->attrs.max_mr / 2);
		*pages = RDS_IB_MR_1M_PAGES;
	}
}

/* The fields both layouts share, after the addresses. */
struct rds_ib_info_fields {
	u8	src_gid[RDS_IB_GID_LEN];
	u8	dst_gid[RDS_IB_GID_LEN];
	u32	max_send_wr;
	u32	max_recv_wr;
	u32	max_send_sge;
	u32	rdma_mr_max;
	u32	rdma_mr_size;
	u8	sl;
};

static void rds_ib_info_read(struct rds_connection *conn,
			     struct rds_ib_info_fields *f)
{
	struct rds_ib_connection *ic = rds_conn_path0(conn)->cp_transport_data;
	struct rds_ib_ep *ep;
	unsigned long flags;

	memset(f, 0, sizeof(*f));
	if (!ic)
		return;
	spin_lock_irqsave(&ic->ic_ep_lock, flags);
	ep = ic->ic_ep;
	if (ep && test_bit(RDS_IB_EP_UP, &ep->e_flags) &&
	    !test_bit(RDS_IB_EP_DEAD, &ep->e_flags) && ep->e_id) {
		struct rdma_cm_id *id = ep->e_id;

		rdma_read_gids(id, (union ib_gid *)f->src_gid,
			       (union ib_gid *)f->dst_gid);
		if (id->route.path_rec)
			f->sl = id->route.path_rec[0].sl;
		f->max_send_wr = ep->e_send_nr;
		f->max_recv_wr = ep->e_recv_nr;
		f->max_send_sge = ep->e_max_send_sge;
		if (ep->e_rid)
			rds_ib_info_mr_limits(ep->e_rid, &f->rdma_mr_max,
					      &f->rdma_mr_size);
	}
	spin_unlock_irqrestore(&ic->ic_ep_lock, flags);
}

/*
 * Fill what follows the addresses of an item of either table: the two uapi
 * layouts use the same names and types there (only the addresses differ),
 * so one macro serves both.  The item comes zeroed from
 * rds_info_item_begin(): its padding and cache_allocs stay 0.
 */
#define rds_ib_info_fill(c, f, conn) do {				\
	memcpy((c)->src_gid, (f)->src_gid, sizeof((c)->src_gid));	\
	memcpy((c)->dst_gid, (f)->dst_gid, sizeof((c)->dst_gid));	\
	(c)->max_send_wr = (f)->max_send_wr;				\
	(c)->max_recv_wr = (f)->max_recv_wr;				\
	(c)->max_send_sge = (f)->max_send_sge;				\
	(c)->rdma_mr_max = (f)->rdma_mr_max;				\
	(c)->rdma_mr_size = (f)->rdma_mr_size;				\
	(c)->tos = (conn)->c_tos;					\
	(c)->sl = (f)->sl;						\
} while (0)

static void rds_ib_info_conn_cmn(struct rds_info_iter *it,
				 struct rds_connection *conn, bool v6)
{
	struct rds_ib_info_fields f;

	if (conn->c_trans != &rds_ib_transport || (!v6 && conn->c_isv6))
		return;
	rds_ib_info_read(conn, &f);
	if (v6) {
		struct rds6_info_rdma_connection *c = rds_info_item_begin(it);

		c->src_addr = conn->c_laddr;
		c->dst_addr = conn->c_faddr;
		rds_ib_info_fill(c, &f, conn);
	} else {
		struct rds_info_rdma_connection *c = rds_info_item_begin(it);

		c->src_addr = conn->c_laddr.s6_addr32[3];
		c->dst_addr = conn->c_faddr.s6_addr32[3];
		rds_ib_info_fill(c, &f, conn);
	}
	rds_info_item_end(it);
}

static void rds_ib_info_conn_v4(struct rds_info_iter *it,
				struct rds_connection *conn)
{
	rds_ib_info_conn_cmn(it, conn, false);
}

static void rds_ib_info_conn_v6(struct rds_info_iter *it,
				struct rds_connection *conn)
{
	rds_ib_info_conn_cmn(it, conn, true);
}

static void rds_ib_info_conns(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_ib_info_conn_v4);
}

static void rds6_ib_info_conns(struct rds_info_iter *it)
{
	rds_info_for_each_conn(it, rds_ib_info_conn_v6);
}

/**
 * rds_ib_info_counters - the rds_rdma rows of RDS_INFO_COUNTERS
 * @it: the pass
 *
 * The transport's ->info_counters(): every counter of ib_stats.c, summed
 * over the CPUs, under its in-tree name where in-tree has the counter.
 * Context: process context.
 */
void rds_ib_info_counters(struct rds_info_iter *it)
{
	unsigned int i, n = rds_ib_stats_count();
	u64 *v;

	v = kmalloc_array(n, sizeof(*v), GFP_KERNEL);
	if (!v)
		return;
	rds_ib_stats_sum(v);
	for (i = 0; i < n; i++)
		rds_info_counter(it, rds_ib_stats_name(i), v[i]);
	kfree(v);
}

/**
 * rds_ib_info_init - register the RDMA connection tables
 *
 * Return: 0 or the error of rds_info_register().
 */
int rds_ib_info_init(void)
{
	int ret;

	ret = rds_info_register(RDS_INFO_IB_CONNECTIONS,
				sizeof(struct rds_info_rdma_connection),
				rds_ib_info_conns);
	if (ret)
		return ret;
	ret = rds_info_register(RDS6_INFO_IB_CONNECTIONS,
				sizeof(struct rds6_info_rdma_connection),
				rds6_ib_info_conns);
	if (ret)
		rds_info_unregister(RDS_INFO_IB_CONNECTIONS, rds_ib_info_conns);
	return ret;
}

/**
 * rds_ib_info_exit - withdraw the tables; returns once none is running
 */
void rds_ib_info_exit(void)
{
	rds_info_unregister(RDS6_INFO_IB_CONNECTIONS, rds6_ib_info_conns);
	rds_info_unregister(RDS_INFO_IB_CONNECTIONS, rds_ib_info_conns);
}
