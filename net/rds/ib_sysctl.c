// SPDX-License-Identifier: GPL-2.0
/*
 * ib_sysctl.c - net.rds.ib.* tunables of rds_rdma.ko.
 *
 * Theory of operation
 * ===================
 *
 * The names, defaults and units are those of the in-tree rds_rdma, so that
 * existing tuning (sysctl.conf, rds-tools) keeps working:
 *
 *   max_send_wr          send ring entries per connection (256)
 *   max_recv_wr          receive ring entries per connection (1024)
 *   max_unsignaled_wr    sends posted between two signalled sends (16)
 *   max_recv_allocation  receive fragments (4 KiB) held by all connections
 *                        together, ring buffers and undelivered messages
 *   flow_control         offer credit-based flow control (0)
 *
 * Every value is range checked by its handler, so the data path may use
 * them without further validation.  They are read when a connection is set
 * up (ring sizes, flow control) or on the fast path with READ_ONCE()
 * (max_unsignaled_wr, max_recv_allocation); a change never affects a ring
 * that already exists.  Like the in-tree module, the table lives in the
 * initial network namespace only, where all RDS/RDMA connections live.
 */
#include <linux/kernel.h>
#include <linux/sysctl.h>
#include <linux/mm.h>
#include <net/net_namespace.h>

#include "ib.h"

unsigned long rds_ib_sysctl_max_send_wr = RDS_IB_DEFAULT_SEND_WR;
unsigned long rds_ib_sysctl_max_recv_wr = RDS_IB_DEFAULT_RECV_WR;
unsigned long rds_ib_sysctl_max_unsig_wrs = RDS_IB_DEFAULT_UNSIG_WR;
unsigned long rds_ib_sysctl_max_recv_allocation =
	(128 * 1024 * 1024) / RDS_FRAG_SIZE;
int rds_ib_sysctl_flow_control;

/* A ring needs at least 2 entries; the upper bound keeps u32 ring math. */
static unsigned long rds_ib_wr_min = 2;
static unsigned long rds_ib_wr_max = RDS_IB_MAX_RING;
static unsigned long rds_ib_unsig_min = 1;
static unsigned long rds_ib_unsig_max = 64;
static unsigned long rds_ib_alloc_min = 1;
static unsigned long rds_ib_alloc_max = ULONG_MAX / RDS_FRAG_SIZE;

static struct ctl_table rds_ib_sysctl_table[] = {
	{
		.procname	= "max_send_wr",
		.data		= &rds_ib_sysctl_max_send_wr,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &rds_ib_wr_min,
		.extra2		= &rds_ib_wr_max,
	},
	{
		.procname	= "max_recv_wr",
		.data		= &rds_ib_sysctl_max_recv_wr,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &rds_ib_wr_min,
		.extra2		= &rds_ib_wr_max,
	},
	{
		.procname	= "max_unsignaled_wr",
		.data		= &rds_ib_sysctl_max_unsig_wrs,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &rds_ib_unsig_min,
		.extra2		= &rds_ib_unsig_max,
	},
	{
		.procname	= "max_recv_allocation",
		.data		= &rds_ib_sysctl_max_recv_allocation,
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= proc_doulongvec_minmax,
		.extra1		= &rds_ib_alloc_min,
		.extra2		= &rds_ib_alloc_max,
	},
	{
		.procname	= "flow_control",
		.data		= &rds_ib_sysctl_flow_control,
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
	RDS_SYSCTL_TABLE_END
};

static struct ctl_table_header *rds_ib_sysctl_hdr;

/**
 * rds_ib_sysctl_init - register net.rds.ib.* in the initial namespace
 *
 * Like the in-tree module, the receive allocation cap defaults to about a
 * third of RAM, counted in fragments.
 *
 * Return: 0 or %-ENOMEM.
 */
int rds_ib_sysctl_init(void)
{
	rds_ib_sysctl_max_recv_allocation =
		max_t(unsigned long, 1,
		      totalram_pages() / 3 * (PAGE_SIZE / RDS_FRAG_SIZE));
	rds_ib_sysctl_hdr = register_net_sysctl(&init_net, "net/rds/ib",
						rds_ib_sysctl_table);
	return rds_ib_sysctl_hdr ? 0 : -ENOMEM;
}

void rds_ib_sysctl_exit(void)
{
	if (rds_ib_sysctl_hdr)
		unregister_net_sysctl_table(rds_ib_sysctl_hdr);
	rds_ib_sysctl_hdr = NULL;
}
