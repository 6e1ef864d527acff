/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of rds.ko and rds_rdma.ko (TRACE_SYSTEM rds).
 *
 * One trace system for both modules: every event is defined here and
 * instantiated in rds.ko (net/rds/trace.c, the only CREATE_TRACE_POINTS);
 * the few that rds_rdma.ko fires itself are exported from rds.ko with
 * EXPORT_TRACEPOINT_SYMBOL_GPL (rds_rdma.ko depends on rds.ko anyway).
 * The events carry only scalars and addresses, so the transport's types
 * never reach rds.ko.  See Documentation/networking/rds.rst, "Tracepoints
 * and debugfs".
 *
 * This header is found as <trace/events/rds.h> through the -I of the
 * project's include/ directory (Kbuild); TRACE_INCLUDE_PATH says the same
 * for define_trace.h.  Neither Debian kernel has a trace/events/rds.h of
 * its own.  Include "rds.h" before this file.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rds

#if !defined(_TRACE_RDS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_RDS_H

#include <linux/tracepoint.h>
#include <linux/in6.h>

TRACE_DEFINE_ENUM(RDS_CONN_DOWN);
TRACE_DEFINE_ENUM(RDS_CONN_CONNECTING);
TRACE_DEFINE_ENUM(RDS_CONN_DISCONNECTING);
TRACE_DEFINE_ENUM(RDS_CONN_UP);
TRACE_DEFINE_ENUM(RDS_CONN_ERROR);

#define rds_show_state(s)						\
	__print_symbolic(s,						\
			 { RDS_CONN_DOWN,		"DOWN" },	\
			 { RDS_CONN_CONNECTING,		"CONNECTING" },	\
			 { RDS_CONN_DISCONNECTING,	"DISCONNECTING" }, \
			 { RDS_CONN_UP,			"UP" },		\
			 { RDS_CONN_ERROR,		"ERROR" })

/* The connection's addresses and TOS, common to the per-path events. */
#define RDS_TP_CONN_FIELDS						\
	__array(u8, laddr, sizeof(struct in6_addr))			\
	__array(u8, faddr, sizeof(struct in6_addr))			\
	__field(u8, tos)

#define RDS_TP_CONN_ASSIGN(conn)					\
	do {								\
		memcpy(__entry->laddr, &(conn)->c_laddr,		\
		       sizeof(struct in6_addr));			\
		memcpy(__entry->faddr, &(conn)->c_faddr,		\
		       sizeof(struct in6_addr));			\
		__entry->tos = (conn)->c_tos;				\
	} while (0)

TRACE_EVENT(rds_conn_state,
	TP_PROTO(struct rds_conn_path *cp, int old, int new),
	TP_ARGS(cp, old, new),
	TP_STRUCT__entry(
		RDS_TP_CONN_FIELDS
		__field(int, old)
		__field(int, new)
	),
	TP_fast_assign(
		RDS_TP_CONN_ASSIGN(cp->cp_conn);
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("<%pI6c,%pI6c,%u> %s -> %s",
		  __entry->laddr, __entry->faddr, __entry->tos,
		  rds_show_state(__entry->old), rds_show_state(__entry->new))
);

TRACE_EVENT(rds_conn_drop,
	TP_PROTO(struct rds_conn_path *cp, int reason, int detail,
		 const char *why, bool dropped),
	TP_ARGS(cp, reason, detail, why, dropped),
	TP_STRUCT__entry(
		RDS_TP_CONN_FIELDS
		__field(int, state)
		__field(int, detail)
		__field(bool, dropped)
		__string(reason, rds_drop_reason_name(reason))
		__string(why, why ?: "")
	),
	TP_fast_assign(
		RDS_TP_CONN_ASSIGN(cp->cp_conn);
		__entry->state = rds_conn_path_state(cp);
		__entry->detail = detail;
		__entry->dropped = dropped;
		rds_trace_assign_str(reason, rds_drop_reason_name(reason));
		rds_trace_assign_str(why, why ?: "");
	),
	TP_printk("<%pI6c,%pI6c,%u> reason=%s detail=%d why=\"%s\" state=%s%s",
		  __entry->laddr, __entry->faddr, __entry->tos,
		  __get_str(reason), __entry->detail, __get_str(why),
		  rds_show_state(__entry->state),
		  __entry->dropped ? "" : " (already down)")
);

DECLARE_EVENT_CLASS(rds_msg_class,
	TP_PROTO(struct rds_conn_path *cp, const struct rds_header *hdr),
	TP_ARGS(cp, hdr),
	TP_STRUCT__entry(
		RDS_TP_CONN_FIELDS
		__field(u64, seq)
		__field(u32, len)
		__field(u16, sport)
		__field(u16, dport)
		__field(u8, flags)
	),
	TP_fast_assign(
		RDS_TP_CONN_ASSIGN(cp->cp_conn);
		__entry->seq = be64_to_cpu(hdr->h_sequence);
		__entry->len = be32_to_cpu(hdr->h_len);
		__entry->sport = be16_to_cpu(hdr->h_sport);
		__entry->dport = be16_to_cpu(hdr->h_dport);
		__entry->flags = hdr->h_flags;
	),
	TP_printk("<%pI6c,%pI6c,%u> seq=%llu len=%u sport=%u dport=%u flags=%#x",
		  __entry->laddr, __entry->faddr, __entry->tos,
		  __entry->seq, __entry->len, __entry->sport, __entry->dport,
		  __entry->flags)
);

/* A message handed to the transport (first ->xmit() of it). */
DEFINE_EVENT(rds_msg_class, rds_send,
	TP_PROTO(struct rds_conn_path *cp, const struct rds_header *hdr),
	TP_ARGS(cp, hdr)
);

/* A complete message arrived from the transport (rds_recv_incoming()). */
DEFINE_EVENT(rds_msg_class, rds_recv,
	TP_PROTO(struct rds_conn_path *cp, const struct rds_header *hdr),
	TP_ARGS(cp, hdr)
);

#define rds_show_op(atomic, write)					\
	((atomic) ? "atomic" : (write) ? "rdma_write" : "rdma_read")

TRACE_EVENT(rds_rdma_post,
	TP_PROTO(struct rds_conn_path *cp, struct rds_message *rm, bool atomic,
		 int ret),
	TP_ARGS(cp, rm, atomic, ret),
	TP_STRUCT__entry(
		RDS_TP_CONN_FIELDS
		__field(u64, raddr)
		__field(u32, rkey)
		__field(u32, bytes)
		__field(int, ret)
		__field(bool, atomic)
		__field(bool, write)
	),
	TP_fast_assign(
		RDS_TP_CONN_ASSIGN(cp->cp_conn);
		__entry->atomic = atomic;
		__entry->write = !atomic && rm->rdma.op_write;
		__entry->rkey = atomic ? rm->atomic.op_rkey : rm->rdma.op_rkey;
		__entry->raddr = atomic ? rm->atomic.op_remote_addr :
					  rm->rdma.op_remote_addr;
		__entry->bytes = atomic ? 8 : rm->rdma.op_bytes;
		__entry->ret = ret;
	),
	TP_printk("<%pI6c,%pI6c,%u> %s rkey=%#x raddr=%#llx bytes=%u ret=%d",
		  __entry->laddr, __entry->faddr, __entry->tos,
		  rds_show_op(__entry->atomic, __entry->write),
		  __entry->rkey, __entry->raddr, __entry->bytes, __entry->ret)
);

TRACE_EVENT(rds_rdma_complete,
	TP_PROTO(struct rds_message *rm, bool atomic, int status),
	TP_ARGS(rm, atomic, status),
	TP_STRUCT__entry(
		__array(u8, daddr, sizeof(struct in6_addr))
		__field(u32, rkey)
		__field(int, status)
		__field(bool, atomic)
		__field(bool, write)
	),
	TP_fast_assign(
		memcpy(__entry->daddr, &rm->m_daddr, sizeof(struct in6_addr));
		__entry->atomic = atomic;
		__entry->write = !atomic && rm->rdma.op_write;
		__entry->rkey = atomic ? rm->atomic.op_rkey : rm->rdma.op_rkey;
		__entry->status = status;
	),
	TP_printk("to %pI6c %s rkey=%#x status=%d",
		  __entry->daddr, rds_show_op(__entry->atomic, __entry->write),
		  __entry->rkey, __entry->status)
);

TRACE_EVENT(rds_mr_register,
	TP_PROTO(struct rds_mr *mr, int ret),
	TP_ARGS(mr, ret),
	TP_STRUCT__entry(
		__field(u64, addr)
		__field(u64, len)
		__field(u64, iova)
		__field(u32, rkey)
		__field(int, ret)
		__field(bool, use_once)
		__field(bool, write)
	),
	TP_fast_assign(
		__entry->addr = mr->r_addr;
		__entry->len = mr->r_len;
		__entry->iova = mr->r_iova;
		__entry->rkey = ret ? 0 : mr->r_key;
		__entry->ret = ret;
		__entry->use_once = mr->r_use_once;
		__entry->write = mr->r_write;
	),
	TP_printk("rkey=%#x iova=%#llx addr=%#llx len=%llu%s%s ret=%d",
		  __entry->rkey, __entry->iova, __entry->addr, __entry->len,
		  __entry->use_once ? " use_once" : "",
		  __entry->write ? " write" : "", __entry->ret)
);

/* An MR left its socket (free, close, use-once key used by the peer). */
TRACE_EVENT(rds_mr_release,
	TP_PROTO(struct rds_mr *mr, bool invalidate, bool unuse),
	TP_ARGS(mr, invalidate, unuse),
	TP_STRUCT__entry(
		__field(u32, rkey)
		__field(bool, invalidate)
		__field(bool, unuse)
	),
	TP_fast_assign(
		__entry->rkey = mr->r_key;
		__entry->invalidate = invalidate;
		__entry->unuse = unuse;
	),
	TP_printk("rkey=%#x %s%s", __entry->rkey,
		  __entry->unuse ? "used by peer" : "freed",
		  __entry->invalidate ? " invalidate now" : "")
);

/* A key died in the HCA (transport): remote or local invalidation. */
TRACE_EVENT(rds_mr_invalidate,
	TP_PROTO(u32 rkey, bool remote, int status),
	TP_ARGS(rkey, remote, status),
	TP_STRUCT__entry(
		__field(u32, rkey)
		__field(int, status)
		__field(bool, remote)
	),
	TP_fast_assign(
		__entry->rkey = rkey;
		__entry->status = status;
		__entry->remote = remote;
	),
	TP_printk("rkey=%#x %s status=%d", __entry->rkey,
		  __entry->remote ? "remote" : "local", __entry->status)
);

#endif /* _TRACE_RDS_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH trace/events
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rds

#include <trace/define_trace.h>
