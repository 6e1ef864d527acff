// SPDX-License-Identifier: GPL-2.0
/*
 * threads.c - the workqueue the per-path workers run on.
 *
 * Theory of operation
 * ===================
 *
 * Each path has four work items (connect, send, receive, shutdown; see
 * connection.c, send.c, recv.c).  They run on one multi-threaded,
 * WQ_MEM_RECLAIM workqueue: a work item never runs concurrently with
 * itself, so each worker is serialised per path, while different paths and
 * different kinds of work proceed in parallel on any CPU.  Nothing on the
 * message path waits for a worker; sendmsg() transmits directly when the
 * path is idle and the workers only pick up what is left (batch limit, full
 * ring, reconnect).
 */
#include <linux/kernel.h>
#include <linux/workqueue.h>

#include "rds.h"

struct workqueue_struct *rds_wq;
EXPORT_SYMBOL_GPL(rds_wq);

int rds_threads_init(void)
{
	rds_wq = alloc_workqueue("krdsd", WQ_MEM_RECLAIM, 0);
	return rds_wq ? 0 : -ENOMEM;
}

void rds_threads_exit(void)
{
	destroy_workqueue(rds_wq);
	rds_wq = NULL;
}
