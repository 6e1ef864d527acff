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
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "rds.h"

static struct dentry *rds_debugfs_dir;

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
	return 0;
}

void rds_debugfs_exit(void)
{
	debugfs_remove_recursive(rds_debugfs_dir);
	rds_debugfs_dir = NULL;
}
