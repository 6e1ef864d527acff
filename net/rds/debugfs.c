// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs.c - /sys/kernel/debug/rds/: connections and why they dropped.
 *
 * Theory of operation
 * ===================
 *
 * Two read-only files, for people and for tests; not an ABI (the RDS_INFO
 * getsockopts are):
 *
 *   connections   one line per path of every netns: local and remote
 *                 address, TOS, the netns (inode number), transport,
 *                 state, drops, reconnects, the last drop's
 *                 reason, detail (wc status, CM event, errno), age and
 *                 the transport's text (connection.c formats them)
 *   drop_reasons  drops and reconnects per reason since rds.ko loaded
 *                 (stats.c)
 *
 * Both are plain seq_file single_open() readers that take no lock but RCU:
 * reading never stalls a connection.  The directory exists while rds.ko
 * is loaded; debugfs_remove_recursive() waits for readers in progress.
 * Failing to create it (no debugfs) is not an error.
 *
 * Fault injection (kernels with CONFIG_FAULT_INJECTION_DEBUG_FS only).
 * Three standard fault attributes (Documentation/fault-injection/), one
 * directory each, with probability, interval, times, space, verbose and
 * task-filter as for failslab:
 *
 *   fail_conn  connection set-up: rds.ko's connection allocation (from
 *              sendmsg(), connect(), the rdma_cm handler or a ping) and, in
 *              rds_rdma, the endpoint, its CQs, its QP and its rings
 *              (connect worker, rdma_cm handler)
 *   fail_rx    the receive side: fragment pages and message state in the
 *              completion handler (softirq), the refill worker and the
 *              first refill of a new connection, the congestion map copy
 *   fail_tx    the send path: congestion updates and atomics (from
 *              sendmsg() or the send worker), pongs (softirq)
 *
 * Each site, when its attribute says so, behaves as if its allocation had
 * failed, so the error and fallback paths that failslab's task filter
 * cannot reach (workers, softirq) run on demand.  All three start off
 * (probability 0) and quiet (verbose 0: a fail-nth user gets no stack
 * dump from us); failures are logged rate-limited when verbose is set.
 * task-filter must stay off for the softirq sites.  In task context the
 * sites also count for /proc/thread-self/fail-nth, like any other.
 * rds_rdma calls rds_should_fail() and is unloaded before rds.ko, so the
 * attributes outlive every caller.
 */
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/ratelimit.h>
#include <linux/seq_file.h>

#include "rds.h"

static struct dentry *rds_debugfs_dir;

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
static struct fault_attr rds_fault_attrs[RDS_FAULT_NR] = {
	[RDS_FAULT_CONN] = FAULT_ATTR_INITIALIZER,
	[RDS_FAULT_RX] = FAULT_ATTR_INITIALIZER,
	[RDS_FAULT_TX] = FAULT_ATTR_INITIALIZER,
};

static const char * const rds_fault_names[RDS_FAULT_NR] = {
	[RDS_FAULT_CONN] = "fail_conn",
	[RDS_FAULT_RX] = "fail_rx",
	[RDS_FAULT_TX] = "fail_tx",
};

/**
 * rds_should_fail - whether a fault injection site fails this time
 * @site: which attribute decides (enum rds_fault)
 *
 * Any context.  Always false until the site's debugfs attribute is given
 * a probability.
 *
 * Return: true if the caller must behave as if its allocation failed.
 */
bool rds_should_fail(enum rds_fault site)
{
	return should_fail(&rds_fault_attrs[site], 1);
}
EXPORT_SYMBOL_GPL(rds_should_fail);

static void rds_fault_init(void)
{
	int i;

	for (i = 0; i < RDS_FAULT_NR; i++) {
		/*
		 * Quiet unless asked: in task context the sites also fire
		 * for /proc/thread-self/fail-nth, whose users (rds_failslab)
		 * expect no stack dump from us.
		 */
		rds_fault_attrs[i].verbose = 0;
		ratelimit_state_init(&rds_fault_attrs[i].ratelimit_state,
				     DEFAULT_RATELIMIT_INTERVAL,
				     DEFAULT_RATELIMIT_BURST);
		fault_create_debugfs_attr(rds_fault_names[i], rds_debugfs_dir,
					  &rds_fault_attrs[i]);
	}
}

static void rds_fault_dput(struct dentry *dentry)
{
	dput(dentry);
}

static void rds_fault_nop(const void *name)
{
}

/*
 * On 6.1 fault_create_debugfs_attr() keeps a reference to the attribute's
 * directory in dname (a struct dentry *) that nothing drops; 6.12 keeps
 * its name there instead (a char array).  Drop the reference, on kernels
 * that took one, once the directory is gone.
 */
static void rds_fault_exit(void)
{
	int i;

	for (i = 0; i < RDS_FAULT_NR; i++)
		_Generic(rds_fault_attrs[i].dname,
			 struct dentry *: rds_fault_dput,
			 default: rds_fault_nop)(rds_fault_attrs[i].dname);
}
#else
static inline void rds_fault_init(void)
{
}

static inline void rds_fault_exit(void)
{
}
#endif

static int rds_debugfs_conns_show(struct seq_file *m, void *v)
{
	rds_conn_debugfs_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rds_debugfs_conns);

static int rds_debugfs_drops_show(struct seq_file *m, void *v)
{
	rds_stats_drop_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rds_debugfs_drops);

/**
 * rds_debugfs_init - create /sys/kernel/debug/rds/
 *
 * Return: 0 (debugfs problems are ignored, as debugfs wants).
 */
int rds_debugfs_init(void)
{
	rds_debugfs_dir = debugfs_create_dir("rds", NULL);
	debugfs_create_file("connections", 0400, rds_debugfs_dir, NULL,
			    &rds_debugfs_conns_fops);
	debugfs_create_file("drop_reasons", 0400, rds_debugfs_dir, NULL,
			    &rds_debugfs_drops_fops);
	rds_fault_init();
	return 0;
}

void rds_debugfs_exit(void)
{
	debugfs_remove_recursive(rds_debugfs_dir);
	rds_debugfs_dir = NULL;
	rds_fault_exit();
}
