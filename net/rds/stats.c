// SPDX-License-Identifier: GPL-2.0
/*
 * stats.c - per-CPU counters of rds.ko.
 *
 * Theory of operation
 * ===================
 *
 * Every counter is a u64 in a per-CPU struct rds_statistics, bumped with
 * this_cpu_add() (no lock, no shared cache line on the message path).
 * Readers sum over the possible CPUs; the sum is not a snapshot, which is
 * fine for statistics.  The names are the in-tree ones, in struct order,
 * so that RDS_INFO_COUNTERS (a later issue) and rds-info show the same
 * rows as with the in-tree module.
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/string.h>

#include "rds.h"

DEFINE_PER_CPU_SHARED_ALIGNED(struct rds_statistics, rds_stats);
EXPORT_PER_CPU_SYMBOL_GPL(rds_stats);

const char *const rds_stat_names[] = {
	"conn_reset",
	"recv_drop_bad_checksum",
	"recv_drop_old_seq",
	"recv_drop_no_sock",
	"recv_drop_dead_sock",
	"recv_deliver_raced",
	"recv_delivered",
	"recv_queued",
	"recv_immediate_retry",
	"recv_delayed_retry",
	"recv_ack_required",
	"recv_rdma_bytes",
	"recv_ping",
	"send_queue_empty",
	"send_queue_full",
	"send_lock_contention",
	"send_lock_queue_raced",
	"send_immediate_retry",
	"send_delayed_retry",
	"send_drop_acked",
	"send_ack_required",
	"send_queued",
	"send_rdma",
	"send_rdma_bytes",
	"send_pong",
	"page_remainder_hit",
	"page_remainder_miss",
	"copy_to_user",
	"copy_from_user",
	"cong_update_queued",
	"cong_update_received",
	"cong_send_error",
	"cong_send_blocked",
	"recv_bytes_added_to_sock",
	"recv_bytes_freed_fromsock",
	"send_stuck_rm",
};
static_assert(ARRAY_SIZE(rds_stat_names) == RDS_STAT_COUNT);

void rds_stats_sum(struct rds_statistics *out)
{
	const u64 *src;
	u64 *dst = (u64 *)out;
	unsigned int i;
	int cpu;

	memset(out, 0, sizeof(*out));
	for_each_possible_cpu(cpu) {
		src = (const u64 *)per_cpu_ptr(&rds_stats, cpu);
		for (i = 0; i < RDS_STAT_COUNT; i++)
			dst[i] += READ_ONCE(src[i]);
	}
}
EXPORT_SYMBOL_GPL(rds_stats_sum);

int rds_stats_init(void)
{
	return 0;
}

void rds_stats_exit(void)
{
}
