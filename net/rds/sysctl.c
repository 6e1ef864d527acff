// SPDX-License-Identifier: GPL-2.0
/*
 * sysctl.c - net.rds.* tunables of rds.ko.
 *
 * Theory of operation
 * ===================
 *
 * The in-tree names, defaults and units, registered in the initial network
 * namespace (as in-tree), so existing sysctl.conf files and rds-tools keep
 * working.  Every value is validated and a refused write (-EINVAL) leaves
 * the variable as it was:
 *
 *   reconnect_min_delay_ms, reconnect_max_delay_ms
 *	milliseconds, 1..RDS_RECONNECT_MAX_MS, stored as jiffies rounded up
 *	(a read shows the rounded value).  The pair has its own handler: the
 *	text is parsed into a temporary, and under one mutex the new value is
 *	checked against the other delay (min <= max) before it is stored, so
 *	two concurrent writers cannot leave min above max.
 *   max_unacked_packets, max_unacked_bytes   1..INT_MAX
 *   ping_enable                               0 or 1
 *
 * The variables are read with READ_ONCE() where they are used; a change
 * takes effect on the next message or reconnect.
 */
#include <linux/kernel.h>
#include <linux/jiffies.h>
#include <linux/mutex.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "rds.h"

/* One hour: far beyond any useful backoff, and no overflow when doubled. */
#define RDS_RECONNECT_MAX_MS	(60UL * 60 * 1000)

static unsigned long rds_reconnect_ms_min = 1;
static unsigned long rds_reconnect_ms_max = RDS_RECONNECT_MAX_MS;
static DEFINE_MUTEX(rds_sysctl_reconnect_lock);

unsigned long rds_sysctl_reconnect_min_jiffies = 1;	/* one jiffy */
unsigned long rds_sysctl_reconnect_max_jiffies = HZ;
unsigned int rds_sysctl_max_unacked_packets = 8;
unsigned int rds_sysctl_max_unacked_bytes = 16 << 20;
unsigned int rds_sysctl_ping_enable = 1;
EXPORT_SYMBOL_GPL(rds_sysctl_reconnect_min_jiffies);
EXPORT_SYMBOL_GPL(rds_sysctl_reconnect_max_jiffies);
EXPORT_SYMBOL_GPL(rds_sysctl_max_unacked_packets);
EXPORT_SYMBOL_GPL(rds_sysctl_max_unacked_bytes);
EXPORT_SYMBOL_GPL(rds_sysctl_ping_enable);

/**
 * rds_sysctl_reconnect_handler - read or write one of the reconnect delays
 * @table: the entry; ->data is rds_sysctl_reconnect_{min,max}_jiffies
 * @write: nonzero for a write
 * @buffer: user text (already copied in by the sysctl core)
 * @lenp: its length; updated
 * @ppos: file position; updated
 *
 * The value is shown and taken in milliseconds.  A write must be one
 * integer in 1..RDS_RECONNECT_MAX_MS; it is rounded up to whole jiffies and
 * must keep reconnect_min_delay_ms <= reconnect_max_delay_ms.  Anything
 * else is refused with -EINVAL and nothing is stored.  Serialised with the
 * other delay's writes by rds_sysctl_reconnect_lock.
 *
 * Context: process context (a read or write of the sysctl file).
 * Return:
 *   0 - the value was read, or written and stored
 *   %-EINVAL - not one integer in range, or min would exceed max
 *   %-EFAULT, %-ENOMEM - as returned by proc_doulongvec_minmax()
 */
static int rds_sysctl_reconnect_handler(rds_ctl_table *table, int write,
					void *buffer, size_t *lenp,
					loff_t *ppos)
{
	unsigned long *delay = table->data;
	bool is_min = delay == &rds_sysctl_reconnect_min_jiffies;
	unsigned long ms, j, lo, hi;
	struct ctl_table tmp = {
		.procname	= table->procname,
		.data		= &ms,
		.maxlen		= sizeof(ms),
		.mode		= table->mode,
		.extra1		= &rds_reconnect_ms_min,
		.extra2		= &rds_reconnect_ms_max,
	};
	int ret;

	mutex_lock(&rds_sysctl_reconnect_lock);
	ms = jiffies_to_msecs(READ_ONCE(*delay));
	ret = proc_doulongvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (ret || !write)
		goto out;
	j = max(msecs_to_jiffies(ms), 1UL);
	lo = is_min ? j : rds_sysctl_reconnect_min_jiffies;
	hi = is_min ? rds_sysctl_reconnect_max_jiffies : j;
	if (lo > hi) {
		ret = -EINVAL;
		goto out;
	}
	WRITE_ONCE(*delay, j);
out:
	mutex_unlock(&rds_sysctl_reconnect_lock);
	return ret;
}

static struct ctl_table rds_sysctl_table[] = {
	{
		.procname	= "reconnect_min_delay_ms",
		.data		= &rds_sysctl_reconnect_min_jiffies,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= rds_sysctl_reconnect_handler,
	},
	{
		.procname	= "reconnect_max_delay_ms",
		.data		= &rds_sysctl_reconnect_max_jiffies,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= rds_sysctl_reconnect_handler,
	},
	{
		.procname	= "max_unacked_packets",
		.data		= &rds_sysctl_max_unacked_packets,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= SYSCTL_INT_MAX,
	},
	{
		.procname	= "max_unacked_bytes",
		.data		= &rds_sysctl_max_unacked_bytes,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ONE,
		.extra2		= SYSCTL_INT_MAX,
	},
	{
		.procname	= "ping_enable",
		.data		= &rds_sysctl_ping_enable,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	RDS_SYSCTL_TABLE_END
};

static struct ctl_table_header *rds_sysctl_hdr;

int rds_sysctl_init(void)
{
	rds_sysctl_hdr = register_net_sysctl(&init_net, "net/rds",
					     rds_sysctl_table);
	return rds_sysctl_hdr ? 0 : -ENOMEM;
}

void rds_sysctl_exit(void)
{
	if (rds_sysctl_hdr)
		unregister_net_sysctl_table(rds_sysctl_hdr);
	rds_sysctl_hdr = NULL;
}
