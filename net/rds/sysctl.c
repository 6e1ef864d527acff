// SPDX-License-Identifier: GPL-2.0
/*
 * sysctl.c - net.rds.* tunables of rds.ko.
 *
 * Theory of operation
 * ===================
 *
 * The in-tree names, defaults and units, registered in the initial network
 * namespace (as in-tree), so existing sysctl.conf files and rds-tools keep
 * working.  Values are validated: the reconnect delays are milliseconds
 * stored as jiffies with min <= max enforced in both directions, the ACK
 * cadence must be positive and ping_enable is a boolean.  The variables are
 * read with READ_ONCE() where they are used; a change takes effect on the
 * next message or reconnect.
 */
#include <linux/kernel.h>
#include <linux/sysctl.h>
#include <net/net_namespace.h>

#include "rds.h"

#ifndef RDS_SYSCTL_TABLE_END
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define RDS_SYSCTL_TABLE_END
#else
#define RDS_SYSCTL_TABLE_END {}
#endif
#endif

static unsigned long rds_sysctl_reconnect_min = 1;	/* one jiffy */
static unsigned long rds_sysctl_ulong_max = ULONG_MAX;

unsigned long rds_sysctl_reconnect_min_jiffies;
unsigned long rds_sysctl_reconnect_max_jiffies = HZ;
unsigned int rds_sysctl_max_unacked_packets = 8;
unsigned int rds_sysctl_max_unacked_bytes = 16 << 20;
unsigned int rds_sysctl_ping_enable = 1;
EXPORT_SYMBOL_GPL(rds_sysctl_reconnect_min_jiffies);
EXPORT_SYMBOL_GPL(rds_sysctl_reconnect_max_jiffies);
EXPORT_SYMBOL_GPL(rds_sysctl_max_unacked_packets);
EXPORT_SYMBOL_GPL(rds_sysctl_max_unacked_bytes);
EXPORT_SYMBOL_GPL(rds_sysctl_ping_enable);

static struct ctl_table rds_sysctl_table[] = {
	{
		.procname	= "reconnect_min_delay_ms",
		.data		= &rds_sysctl_reconnect_min_jiffies,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_ms_jiffies_minmax,
		.extra1		= &rds_sysctl_reconnect_min,
		.extra2		= &rds_sysctl_reconnect_max_jiffies,
	},
	{
		.procname	= "reconnect_max_delay_ms",
		.data		= &rds_sysctl_reconnect_max_jiffies,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_ms_jiffies_minmax,
		.extra1		= &rds_sysctl_reconnect_min_jiffies,
		.extra2		= &rds_sysctl_ulong_max,
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
	rds_sysctl_reconnect_min_jiffies = rds_sysctl_reconnect_min;
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
