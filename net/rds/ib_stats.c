// SPDX-License-Identifier: GPL-2.0
/*
 * ib_stats.c - per-CPU counters of rds_rdma.ko.
 *
 * Theory of operation
 * ===================
 *
 * Every counter is a u64 in a per-CPU struct rds_ib_statistics, bumped with
 * this_cpu_inc() from any context (no lock, no shared cache line on the
 * data path).  A reader sums the CPUs.  The names and their order are those
 * the in-tree module exports through RDS_INFO_COUNTERS, so tools that parse
 * the counter list by name see the same set; those of in-tree mechanisms we
 * do not have (ib_tasklet_call, ib_tx_stalled, ib_rdma_mr_*_pool_flush)
 * stay zero (rds.rst, Counters).  Ours follow the in-tree ones.
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/cpumask.h>

#include "ib.h"

DEFINE_PER_CPU_SHARED_ALIGNED(struct rds_ib_statistics, rds_ib_stats);

static const char *const rds_ib_stat_names[] = {
	"ib_connect_raced",
	"ib_listen_closed_stale",
	"ib_evt_handler_call",
	"ib_tasklet_call",
	"ib_tx_cq_event",
	"ib_tx_ring_full",
	"ib_tx_throttle",
	"ib_tx_sg_mapping_failure",
	"ib_tx_stalled",
	"ib_tx_credit_updates",
	"ib_rx_cq_event",
	"ib_rx_ring_empty",
	"ib_rx_refill_from_cq",
	"ib_rx_refill_from_thread",
	"ib_rx_alloc_limit",
	"ib_rx_total_frags",
	"ib_rx_total_incs",
	"ib_rx_credit_updates",
	"ib_ack_sent",
	"ib_ack_send_failure",
	"ib_ack_send_delayed",
	"ib_ack_send_piggybacked",
	"ib_ack_received",
	"ib_rdma_mr_8k_alloc",
	"ib_rdma_mr_8k_free",
	"ib_rdma_mr_8k_used",
	"ib_rdma_mr_8k_pool_flush",
	"ib_rdma_mr_8k_pool_wait",
	"ib_rdma_mr_8k_pool_depleted",
	"ib_rdma_mr_1m_alloc",
	"ib_rdma_mr_1m_free",
	"ib_rdma_mr_1m_used",
	"ib_rdma_mr_1m_pool_flush",
	"ib_rdma_mr_1m_pool_wait",
	"ib_rdma_mr_1m_pool_depleted",
	"ib_rdma_mr_8k_reused",
	"ib_rdma_mr_1m_reused",
	"ib_atomic_cswp",
	"ib_atomic_fadd",
	"ib_rdma_reg_wrs",
	"ib_rdma_reg_completions",
	"ib_rdma_reg_waits",
	"ib_rdma_remote_inv",
	"ib_rdma_remote_inv_bogus",
	"ib_rdma_local_inv",
	"ib_rdma_inv_batches",
	"ib_rdma_inv_completions",
	"ib_rdma_ops",
	"ib_rdma_wrs",
	"ib_rdma_completions",
	"ib_rdma_send_inv",
	"ib_rdma_unpostable",
	"ib_atomic_wrs",
	"ib_atomic_completions",
	"ib_atomic_emulated_retries",
	"ib_atomic_emulated",
	"ib_atomic_emulated_exhausted",
	"ib_rx_inc_reserve_used",
	"ib_rdma_mr_retired",
	"ib_rdma_mr_parked",
	"ib_rdma_mr_adopted",
	"ib_rdma_mr_key_exhausted",
	"ib_rdma_regqp_foreign_req",
	"ib_dev_lookups",
	"ib_rdma_mr_reaped",
	"ib_rdma_mr_unmap_keyed",
	"ib_rdma_reg_timeouts",
	"ib_rdma_reg_abandoned",
	"ib_rdma_kicks",
	"ib_rdma_timeouts",
	"ib_rx_stale_header",
	"ib_rx_stale_seq",
	"ib_cm_id_parked",
	"ib_cm_id_unparked",
	"ib_disc_wait_timeouts",
	"ib_tx_posts",
	"ib_iw_initiator_waits",
	"ib_rdma_reg_conn_wrs",
	"ib_rdma_reg_conn_early_inv",
};

static_assert(ARRAY_SIZE(rds_ib_stat_names) * sizeof(u64) ==
	      sizeof(struct rds_ib_statistics));

/**
 * rds_ib_stats_count - number of IB counters
 *
 * Return: how many names rds_ib_stats_name() knows.
 */
unsigned int rds_ib_stats_count(void)
{
	return ARRAY_SIZE(rds_ib_stat_names);
}

/**
 * rds_ib_stats_name - name of one counter, as exported by RDS_INFO_COUNTERS
 * @i: index, below rds_ib_stats_count()
 *
 * Return: the name, or NULL for an index out of range.
 */
const char *rds_ib_stats_name(unsigned int i)
{
	return i < ARRAY_SIZE(rds_ib_stat_names) ? rds_ib_stat_names[i] : NULL;
}

/**
 * rds_ib_stats_sum - add up the per-CPU counters
 * @values: rds_ib_stats_count() entries, overwritten
 */
void rds_ib_stats_sum(u64 *values)
{
	unsigned int i, cpu;

	memset(values, 0, sizeof(struct rds_ib_statistics));
	for_each_possible_cpu(cpu) {
		const u64 *src = (const u64 *)per_cpu_ptr(&rds_ib_stats, cpu);

		for (i = 0; i < ARRAY_SIZE(rds_ib_stat_names); i++)
			values[i] += READ_ONCE(src[i]);
	}
}
