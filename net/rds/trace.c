// SPDX-License-Identifier: GPL-2.0
/*
 * trace.c - the instance of the rds tracepoints.
 *
 * Theory of operation
 * ===================
 *
 * include/trace/events/rds.h declares every event of both modules; this
 * is its one CREATE_TRACE_POINTS, so the events live in rds.ko and appear
 * in tracefs as events/rds/ while rds.ko is loaded.  rds_rdma.ko fires
 * rds_mr_invalidate itself, so that one is exported.  rds_conn_state fires
 * from rds_conn_path_transition(), an inline in rds.h that both modules
 * use: the inline tests the static key (tracepoint_enabled()) and only
 * then calls rds_trace_conn_state() here, so a disabled event costs a NOP
 * and the event's code stays in rds.ko.  Every other event is called by
 * rds.ko only, through the usual trace_*() static-key inlines.
 */
#include "rds.h"

#define CREATE_TRACE_POINTS
#include <trace/events/rds.h>

EXPORT_TRACEPOINT_SYMBOL_GPL(rds_conn_state);
EXPORT_TRACEPOINT_SYMBOL_GPL(rds_mr_invalidate);

/**
 * rds_trace_conn_state - fire rds_conn_state (called when it is enabled)
 * @cp: path
 * @old: state before
 * @new: state after
 */
void rds_trace_conn_state(struct rds_conn_path *cp, int old, int new)
{
	trace_rds_conn_state(cp, old, new);
}
EXPORT_SYMBOL_GPL(rds_trace_conn_state);
