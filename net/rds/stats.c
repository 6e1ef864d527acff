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
 * so that RDS_INFO_COUNTERS (info.c) and rds-info show the same rows as
 * with the in-tree module.
 *
 * Connection drops and reconnects are also counted by enum
 * rds_drop_reason, in two arrays of atomics outside struct rds_statistics
 * (they are rare, and RDS_INFO_COUNTERS keeps the in-tree rows only); a
 * reconnect is counted under the reason of the drop it recovers from.
 * debugfs shows them (rds/drop_reasons).
 */
#include <linux/kernel.h>
#include <linux/percpu.h>
#include <linux/seq_file.h>
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
	"send_zcopy",
	"send_zcopy_copied",
	"send_zcopy_bytes",
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

static const char *const rds_drop_reason_names[RDS_DROP_NR] = {
	[RDS_DROP_NONE]			= "none",
	[RDS_DROP_OTHER]		= "other",
	[RDS_DROP_LOCAL_SHUTDOWN]	= "local_shutdown",
	[RDS_DROP_CONNECT_FAILED]	= "connect_failed",
	[RDS_DROP_XMIT_ERROR]		= "xmit_error",
	[RDS_DROP_TRANSPORT]		= "transport_error",
	[RDS_DROP_PEER_DISCONNECT]	= "peer_disconnect",
	[RDS_DROP_PEER_RESTART]		= "peer_restart",
	[RDS_DROP_REJECTED]		= "rejected",
	[RDS_DROP_CM_EVENT]		= "cm_event",
	[RDS_DROP_ADDR_CHANGE]		= "addr_change",
	[RDS_DROP_DEVICE_REMOVAL]	= "device_removal",
	[RDS_DROP_QP_EVENT]		= "qp_event",
	[RDS_DROP_WC_ERROR]		= "wc_error",
	[RDS_DROP_POST_ERROR]		= "post_error",
	[RDS_DROP_PROTOCOL]		= "protocol_error",
	[RDS_DROP_TIMEOUT]		= "timeout",
};

static atomic_long_t rds_drop_count[RDS_DROP_NR];
static atomic_long_t rds_reconnect_count[RDS_DROP_NR];

/**
 * rds_drop_reason_name - the name of an enum rds_drop_reason
 * @reason: the reason
 *
 * Return: a string constant ("?" for an unknown value).
 */
const char *rds_drop_reason_name(int reason)
{
	if (reason < 0 || reason >= RDS_DROP_NR ||
	    !rds_drop_reason_names[reason])
		return "?";
	return rds_drop_reason_names[reason];
}
EXPORT_SYMBOL_GPL(rds_drop_reason_name);

void rds_stats_conn_drop(int reason)
{
	if (reason >= 0 && reason < RDS_DROP_NR)
		atomic_long_inc(&rds_drop_count[reason]);
}

void rds_stats_conn_reconnect(int reason)
{
	if (reason >= 0 && reason < RDS_DROP_NR)
		atomic_long_inc(&rds_reconnect_count[reason]);
}

/**
 * rds_stats_drop_show - the drop/reconnect table (debugfs "drop_reasons")
 * @m: the seq_file
 */
void rds_stats_drop_show(struct seq_file *m)
{
	unsigned int i;

	seq_printf(m, "%-16s %10s %10s\n", "reason", "drops", "reconnects");
	for (i = RDS_DROP_OTHER; i < RDS_DROP_NR; i++)
		seq_printf(m, "%-16s %10ld %10ld\n", rds_drop_reason_name(i),
			   atomic_long_read(&rds_drop_count[i]),
			   atomic_long_read(&rds_reconnect_count[i]));
}

int rds_stats_init(void)
{
	static_assert(ARRAY_SIZE(rds_drop_reason_names) == RDS_DROP_NR);
	return rds_debugfs_init();
}

void rds_stats_exit(void)
{
	rds_debugfs_exit();
}
