/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds.h - internal interfaces of rds.ko, shared with the transports.
 *
 * Theory of operation
 * ===================
 *
 * rds.ko owns everything that is not transport specific: the PF_RDS socket
 * layer, the global bind table, messages, the per-connection send queue and
 * retransmit list, the receive path (sequence checks, delivery to sockets),
 * the connection/path state machine with reconnect backoff, congestion maps,
 * the RDMA bookkeeping (MRs per socket, cookies, notifications), info/stats/
 * sysctls, and the loopback transport.
 *
 * A transport (struct rds_transport) registers itself with
 * rds_trans_register().  The socket layer picks a transport at bind() time by
 * asking each registered transport's ->laddr_check() whether it can serve the
 * local address.  The first send to a destination creates a connection,
 * struct rds_connection, keyed by (local address, remote address, TOS,
 * transport, netns).  A destination that is an address of this host goes
 * through the loopback transport (loop.c), unless the socket pinned its
 * transport with SO_RDS_TRANSPORT (connection.c).  A connection has one
 * path (struct rds_conn_path); the path is the unit of the state machine,
 * of sequence numbers and of the queues.
 *
 * State machine of a path (cp_state, changed only by
 * rds_conn_path_transition() and the helpers below):
 *
 *   DOWN --connect work--> CONNECTING --rds_connect_path_complete()--> UP
 *   CONNECTING/UP --rds_conn_path_drop()--> ERROR
 *   ERROR --shutdown work--> DISCONNECTING --transport quiet--> DOWN
 *   DOWN --reconnect (bounded exponential backoff) when something is queued
 *
 * The transport never frees a connection; rds.ko calls ->conn_path_shutdown()
 * from its shutdown work, in process context, and the transport returns only
 * once its QP is drained and no completion can reference the path any more.
 * Connections are destroyed only when their transport unregisters (which is
 * why rds_trans_unregister() sleeps) or when rds.ko/the netns goes away.
 *
 * Send side: struct rds_message is a wire header plus a scatterlist of
 * payload pages.  sendmsg() assigns the sequence number and queues it on
 * cp_send_queue under cp_lock; rds_send_xmit() (from sendmsg when nobody
 * else is transmitting, or from the send worker) feeds the queue to the
 * transport's ->xmit() in batches and calls ->xmit_path_complete() at the
 * end of each batch so the transport can ring one doorbell.  A message moves
 * to cp_retrans when it is handed to the transport and stays there until the
 * peer's ACK covers its sequence number (rds_send_drop_acked()).  After a
 * drop, cp_retrans goes back to the head of cp_send_queue marked
 * RETRANSMITTED and everything is sent again on the next connection.
 *
 * Receive side: the transport embeds a struct rds_incoming in its own
 * object, initialises it with rds_inc_init() and hands it to
 * rds_recv_incoming(), which discards duplicates, answers pings, handles
 * congestion map updates and queues the message on the destination socket.
 * The payload stays in transport memory and is copied out by
 * ->inc_copy_to_user() when the application calls recvmsg().
 *
 * Locking (outermost first):
 *   lock_sock(sk) > rm->m_rs_lock > rs->rs_lock > cp->cp_lock
 *   rds_cong_monitor_lock > rs->rs_recv_lock > rds_cong_lock (cong.c)
 *   rds_conn_lock (connection table) is a leaf.
 * All of these spinlocks are taken with irqsave so that a transport may call
 * in from process, softirq or hardirq-disabled context unless a function
 * says otherwise.
 */
#ifndef _RDS_RDS_H
#define _RDS_RDS_H

#include <linux/types.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/rbtree.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/rhashtable.h>
#include <linux/uio.h>
#include <linux/wait.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/tracepoint-defs.h>
#include <linux/rds.h>
#include <net/sock.h>
#include <net/net_namespace.h>
#include <net/ipv6.h>

#include "rds_compat.h"

/* Wire constants: these must never change (interop with in-tree rds). */
#define RDS_FRAG_SHIFT		12
#define RDS_FRAG_SIZE		(1UL << RDS_FRAG_SHIFT)
#define RDS_MAX_MSG_SIZE	(1UL << 20)	/* payload and RDMA bytes */
#define RDS_CONG_MAP_BYTES	(65536 / 8)
#define RDS_CONG_MAP_PAGES	(PAGE_ALIGN(RDS_CONG_MAP_BYTES) / PAGE_SIZE)
#define RDS_CONG_MAP_LONGS	(RDS_CONG_MAP_BYTES / sizeof(unsigned long))
#define RDS_PROBE_PORT		1

#define RDS_FLAG_CONG_BITMAP	0x01
#define RDS_FLAG_ACK_REQUIRED	0x02
#define RDS_FLAG_RETRANSMITTED	0x04
#define RDS_MAX_ADV_CREDIT	255

#define RDS_HEADER_EXT_SPACE	16

/*
 * Pages one RDMA op may pin: the sum of its iovecs' page spans (overlaps
 * counted), twice the pages of an unaligned RDS_MAX_MSG_SIZE buffer.  A
 * transport posts an op of this many pages whatever its SGEs per WR:
 * rds_rdma sizes its RDMA send queue room (e_rdma_sq) for it.  More is
 * EMSGSIZE at sendmsg().
 */
#define RDS_RDMA_MAX_OP_PAGES	(2 * ((RDS_MAX_MSG_SIZE >> PAGE_SHIFT) + 1))

/* Protocol versions, as carried in the IB CM private data. */
#define RDS_PROTOCOL_3_0	0x0300
#define RDS_PROTOCOL_3_1	0x0301
#define RDS_PROTOCOL_4_0	0x0400
#define RDS_PROTOCOL_4_1	0x0401
#define RDS_PROTOCOL_VERSION	RDS_PROTOCOL_3_1
#define RDS_PROTOCOL_MAJOR(v)	((v) >> 8)
#define RDS_PROTOCOL_MINOR(v)	((v) & 255)
#define RDS_PROTOCOL(maj, min)	(((maj) << 8) | (min))

/**
 * struct rds_header - the 48-byte RDS header, identical on every transport
 * @h_sequence: per-path sequence number, from rds_conn_first_seq() (in-tree:
 *	from 1); 0 in ACK-only headers
 * @h_ack: highest sequence number received in order (piggy-backed ACK)
 * @h_len: payload bytes
 * @h_sport: source RDS port
 * @h_dport: destination RDS port (0: ping)
 * @h_flags: RDS_FLAG_*
 * @h_credit: receive credits advertised (flow control)
 * @h_padding: zero
 * @h_csum: ip_fast_csum() of the 48 bytes with h_csum zero; 0 = none
 * @h_exthdr: extension headers (type byte, fixed-size data, ..., type 0)
 */
struct rds_header {
	__be64	h_sequence;
	__be64	h_ack;
	__be32	h_len;
	__be16	h_sport;
	__be16	h_dport;
	u8	h_flags;
	u8	h_credit;
	u8	h_padding[4];
	__sum16	h_csum;
	u8	h_exthdr[RDS_HEADER_EXT_SPACE];
};

/* Extension header types and layouts (wire). */
#define RDS_EXTHDR_NONE		0
#define RDS_EXTHDR_VERSION	1
#define RDS_EXTHDR_RDMA		2
#define RDS_EXTHDR_RDMA_DEST	3
#define RDS_EXTHDR_NPATHS	5
#define RDS_EXTHDR_GEN_NUM	6
#define __RDS_EXTHDR_MAX	16

struct rds_ext_header_version {
	__be32	h_version;
};

struct rds_ext_header_rdma {
	__be32	h_rdma_rkey;
};

struct rds_ext_header_rdma_dest {
	__be32	h_rdma_rkey;
	__be32	h_rdma_offset;
};

#define RDS_MAX_PATHS		1	/* IB and loop are single-path */

struct rds_sock;
struct rds_connection;
struct rds_conn_path;
struct rds_message;
struct rds_incoming;
struct rds_transport;
struct rds_cong_map;
struct seq_file;
struct rds_info_iter;

/* Path states. */
enum rds_conn_state {
	RDS_CONN_DOWN = 0,
	RDS_CONN_CONNECTING,
	RDS_CONN_DISCONNECTING,
	RDS_CONN_UP,
	RDS_CONN_ERROR,
};

/* cp_flags bits */
#define RDS_LL_SEND_FULL	0	/* transport ring full; it will kick us */
#define RDS_RECONNECT_PENDING	1	/* connect work queued */
#define RDS_IN_XMIT		2	/* someone is inside rds_send_xmit() */
#define RDS_DESTROY_PENDING	4	/* connection is being destroyed */
#define RDS_CONG_UPDATE_QUEUED	5	/* our congestion map must be sent */
#define RDS_XMIT_RETRY		7	/* rds_send_xmit() found IN_XMIT busy */

/*
 * Why a path was dropped (cp_drop_reason), for debugfs, the drop and
 * reconnect counters and the rds_conn_drop tracepoint; names in stats.c.
 * The detail that goes with a reason is in parentheses.
 */
enum rds_drop_reason {
	RDS_DROP_NONE = 0,		/* never dropped */
	RDS_DROP_OTHER,			/* rds_conn_path_drop(): none given */
	RDS_DROP_LOCAL_SHUTDOWN,	/* destroyed: unload, netns exit */
	RDS_DROP_CONNECT_FAILED,	/* ->conn_path_connect() (errno) */
	RDS_DROP_XMIT_ERROR,		/* ->xmit() failed (errno) */
	RDS_DROP_TRANSPORT,		/* other transport error (errno) */
	RDS_DROP_PEER_DISCONNECT,	/* the peer closed the connection */
	RDS_DROP_PEER_RESTART,		/* peer's new REQ on an UP path */
	RDS_DROP_REJECTED,		/* connection request rejected */
	RDS_DROP_CM_EVENT,		/* rdma_cm error event (event) */
	RDS_DROP_ADDR_CHANGE,		/* local address moved (event) */
	RDS_DROP_DEVICE_REMOVAL,	/* the device went away */
	RDS_DROP_QP_EVENT,		/* fatal async QP event (event) */
	RDS_DROP_WC_ERROR,		/* failed completion (wc status) */
	RDS_DROP_POST_ERROR,		/* posting a WR failed (errno) */
	RDS_DROP_PROTOCOL,		/* the peer broke the protocol */
	RDS_DROP_TIMEOUT,		/* waited too long (connect race) */
	RDS_DROP_NR
};

/**
 * struct rds_conn_path - one path of a connection: state, queues, sequences
 * @cp_conn: the connection
 * @cp_index: path number (always 0 for now)
 * @cp_state: enum rds_conn_state; read with rds_conn_path_state()
 * @cp_flags: RDS_* bits above (atomic bitops)
 * @cp_lock: protects cp_send_queue, cp_retrans, cp_next_tx_seq, cp_xmit_*
 *	bookkeeping handed between senders, cp_unacked_*
 * @cp_send_queue: messages waiting for ->xmit(), in sequence order
 * @cp_retrans: messages handed to ->xmit(), waiting for the peer's ACK
 * @cp_next_tx_seq: sequence number of the next message queued
 * @cp_next_rx_seq: next sequence number expected from the peer (only the
 *	receive path touches it; the transport serialises its receive calls)
 * @cp_xmit_rm: message being transmitted (owned by the IN_XMIT holder)
 * @cp_xmit_hdr_off: header bytes of cp_xmit_rm already consumed
 * @cp_xmit_sg: payload sg entry where ->xmit() resumes
 * @cp_xmit_data_off: offset into that entry
 * @cp_xmit_rdma_sent: RDMA op of cp_xmit_rm posted (later issue)
 * @cp_xmit_atomic_sent: atomic op of cp_xmit_rm posted (later issue)
 * @cp_send_gen: bumped by every rds_send_xmit() pass (lost-wakeup check)
 * @cp_unacked_packets: messages left before the next ACK_REQUIRED
 * @cp_unacked_bytes: bytes left before the next ACK_REQUIRED
 * @cp_transport_data: the transport's per-path object (conn_alloc sets it)
 * @cp_reconnect_jiffies: current reconnect backoff bound; 0 = immediate
 * @cp_send_w: send worker (rds_send_worker)
 * @cp_recv_w: receive worker: calls ->recv_path() (refill etc.)
 * @cp_conn_w: connect worker: calls ->conn_path_connect()
 * @cp_down_w: shutdown worker: ->conn_path_shutdown(), requeue, reconnect
 * @cp_drop_lock: makes a drop's move to ERROR and its queuing of cp_down_w
 *	one step, so that whoever sees ERROR may rely on cp_down_w being
 *	queued (a leaf lock, any context)
 * @cp_cm_lock: held by the core around ->conn_path_connect() and
 *	->conn_path_shutdown(); a transport may take it in its CM handler to
 *	serialise against both (process context only)
 * @cp_waitq: woken when IN_XMIT is released (shutdown waits on it)
 * @cp_drop_reason: enum rds_drop_reason of the last drop (RDS_DROP_NONE
 *	until the first); set with cp_drop_detail, cp_drop_why and
 *	cp_drop_jiffies by the drop that moved the path to ERROR
 * @cp_drop_detail: reason-specific number (wc status, CM event, errno)
 * @cp_drop_why: the transport's text for it (a string constant of the
 *	transport module or the core, or NULL)
 * @cp_drop_jiffies: when
 * @cp_drops: drops that moved the path to ERROR
 * @cp_reconnects: times the path came UP again after a drop
 * @cp_reg_item: entry in r_reg_waiters of @cp_reg_mr
 * @cp_reg_mr: MR whose registration cp_xmit_rm waits for (a reference),
 *	or NULL; both under rds.ko's registration lock (rdma.c)
 * @cp_pongs: pongs on cp_send_queue and cp_retrans (at most RDS_MAX_PONGS)
 */
struct rds_conn_path {
	struct rds_connection	*cp_conn;
	unsigned int		cp_index;
	atomic_t		cp_state;
	unsigned long		cp_flags;

	spinlock_t		cp_lock;
	struct list_head	cp_send_queue;
	struct list_head	cp_retrans;
	u64			cp_next_tx_seq;
	u64			cp_next_rx_seq;

	struct rds_message	*cp_xmit_rm;
	unsigned int		cp_xmit_hdr_off;
	unsigned int		cp_xmit_sg;
	unsigned int		cp_xmit_data_off;
	unsigned int		cp_xmit_rdma_sent;
	unsigned int		cp_xmit_atomic_sent;
	unsigned long		cp_send_gen;
	int			cp_unacked_packets;
	int			cp_unacked_bytes;

	void			*cp_transport_data;

	unsigned long		cp_reconnect_jiffies;
	struct delayed_work	cp_send_w;
	struct delayed_work	cp_recv_w;
	struct delayed_work	cp_conn_w;
	struct work_struct	cp_down_w;
	spinlock_t		cp_drop_lock;
	struct mutex		cp_cm_lock;
	wait_queue_head_t	cp_waitq;

	int			cp_drop_reason;
	int			cp_drop_detail;
	const char		*cp_drop_why;
	unsigned long		cp_drop_jiffies;
	unsigned long		cp_drops;
	unsigned long		cp_reconnects;

	struct list_head	cp_reg_item;
	struct rds_mr		*cp_reg_mr;
	atomic_t		cp_pongs;
};

/**
 * struct rds_connection - everything between a local and a remote address
 * @c_hash_node: entry in the connection table (RCU)
 * @c_destroy_item: entry in a list of connections being destroyed
 * @c_laddr: local address (IPv4 as ::ffff:a.b.c.d)
 * @c_faddr: remote address
 * @c_dev_if: interface of a link-local IPv6 pair, 0 otherwise
 * @c_tos: type of service (after ->get_tos_map())
 * @c_isv6: the addresses are real IPv6 (not v4-mapped)
 * @c_loopback: c_trans is the loop transport (the remote address is local;
 *	a pinned socket's local peer may also have a real transport)
 * @c_trans: transport
 * @c_net: network namespace (not referenced: conns die with their netns)
 * @c_lcong: congestion map of c_laddr (ours, sent to the peer)
 * @c_fcong: congestion map of c_faddr (the peer's, as it told us)
 * @c_cong_item: entry in c_lcong's list of connections to update
 * @c_version: protocol version negotiated by the transport
 * @c_npaths: number of paths in use (1)
 * @c_rcu: for freeing after lookups are done
 * @c_path: the paths
 */
struct rds_connection {
	struct hlist_node	c_hash_node;
	struct list_head	c_destroy_item;
	struct in6_addr		c_laddr;
	struct in6_addr		c_faddr;
	int			c_dev_if;
	u8			c_tos;
	unsigned int		c_isv6:1;
	unsigned int		c_loopback:1;
	struct rds_transport	*c_trans;
	possible_net_t		c_net;
	struct rds_cong_map	*c_lcong;
	struct rds_cong_map	*c_fcong;
	struct list_head	c_cong_item;
	unsigned int		c_version;
	unsigned int		c_npaths;
	struct rcu_head		c_rcu;
	struct rds_conn_path	c_path[RDS_MAX_PATHS];
};

static inline struct net *rds_conn_net(const struct rds_connection *conn)
{
	return read_pnet(&conn->c_net);
}

/* The only path of a single-path connection. */
static inline struct rds_conn_path *rds_conn_path0(struct rds_connection *conn)
{
	return &conn->c_path[0];
}

static inline int rds_conn_path_state(const struct rds_conn_path *cp)
{
	return atomic_read(&cp->cp_state);
}

static inline bool rds_conn_path_up(const struct rds_conn_path *cp)
{
	return rds_conn_path_state(cp) == RDS_CONN_UP;
}

/* rx latency trace points kept in an incoming message */
#define RDS_MSG_RX_HDR		0	/* header seen by the transport */
#define RDS_MSG_RX_START	1	/* rds_recv_incoming() entered */
#define RDS_MSG_RX_END		2	/* queued on the socket */
#define RDS_MSG_RX_CMSG		3	/* copied out by recvmsg() */
#define RDS_RX_MAX_TRACES	(RDS_MSG_RX_DGRAM_TRACE_MAX + 1)

/**
 * struct rds_incoming - a received message, embedded in a transport object
 * @i_refcount: references; the last rds_inc_put() calls ->inc_free()
 * @i_item: entry in the socket's receive queue (rds.ko)
 * @i_conn: connection it came on
 * @i_conn_path: path it came on
 * @i_hdr: the wire header (of the first fragment)
 * @i_saddr: source address (the sender)
 * @i_rx_jiffies: when rds_inc_init() ran
 * @i_rx_tstamp: real-time receive stamp for SO_TIMESTAMP (rds.ko sets it)
 * @i_rx_lat_trace: local_clock() at the RDS_MSG_RX_* points; the transport
 *	may overwrite [RDS_MSG_RX_HDR] with the time it saw the header
 * @i_rdma_cookie: cookie from an RDMA_DEST extension
 * @i_holds: delivery holds (rds_inc_hold()); recvmsg() and poll() do not
 *	return this message, nor anything queued after it on its socket,
 *	while it is non-zero
 * @i_hold_rs: socket to wake when the last hold goes (a reference, held
 *	while i_holds is non-zero; rds.ko)
 */
struct rds_incoming {
	refcount_t		i_refcount;
	struct list_head	i_item;
	struct rds_connection	*i_conn;
	struct rds_conn_path	*i_conn_path;
	struct rds_header	i_hdr;
	struct in6_addr		i_saddr;
	unsigned long		i_rx_jiffies;
	ktime_t			i_rx_tstamp;
	u64			i_rx_lat_trace[RDS_RX_MAX_TRACES];
	u64			i_rdma_cookie;
	atomic_t		i_holds;
	struct rds_sock		*i_hold_rs;
};

/* m_flags bits */
#define RDS_MSG_ON_SOCK		1	/* on rs->rs_send_queue */
#define RDS_MSG_ON_CONN		2	/* on cp_send_queue or cp_retrans */
#define RDS_MSG_HAS_ACK_SEQ	3	/* m_ack_seq valid */
#define RDS_MSG_ACK_REQUIRED	4	/* ask the peer to ACK this one */
#define RDS_MSG_RETRANSMITTED	5	/* sent before a connection drop */
#define RDS_MSG_MAPPED		6	/* transport has it DMA mapped */
#define RDS_MSG_PAGEVEC		7	/* payload pages not ours (cong map) */
#define RDS_MSG_RDMA_MAP	9	/* m_rdma_mr made by RDS_CMSG_RDMA_MAP */
#define RDS_MSG_PONG		10	/* a pong, counted in cp_pongs */
#define RDS_MSG_UNSENT		11	/* complete, never sent, ops reported */

/* rds_message.m_ops_state: the RDMA/atomic ops of a message (rdma.c). */
enum {
	RDS_OPS_IDLE,		/* not posted; a cancel reports CANCELED */
	RDS_OPS_POSTING,	/* the sender is posting them */
	RDS_OPS_CANCEL_PENDING,	/* cancelled while posting: sender decides */
	RDS_OPS_CANCELED,	/* CANCELED reported: never posted */
	RDS_OPS_POSTED,		/* posted: their completions report */
};

/**
 * rds_fault_take - consume one unit of a "fail the next N" test knob
 * @knob: the module parameter
 *
 * Any context.  Return: true if @knob was non-zero (and is now one less).
 */
static inline bool rds_fault_take(unsigned int *knob)
{
	unsigned int old = READ_ONCE(*knob);

	while (old) {
		unsigned int cur = cmpxchg(knob, old, old - 1);

		if (cur == old)
			return true;
		old = cur;
	}
	return false;
}

/*
 * The least one message counts against a socket's send buffer
 * (rs_snd_bytes) and receive buffer (rs_rcv_bytes), whatever its payload:
 * its header on the wire, so that empty messages and pongs cannot queue
 * without bound.  Messages of at least this many bytes count their
 * payload, as in-tree.  Not more: in-tree programs queue hundreds of tiny
 * messages to a receiver that reads only later (rds_sendrecv ordering).
 */
#define RDS_MSG_MIN_CHARGE	sizeof(struct rds_header)

static inline u32 rds_msg_charge(u32 payload_len)
{
	return max_t(u32, payload_len, RDS_MSG_MIN_CHARGE);
}

/* Pongs a path holds (queued or unacknowledged) before pings go unanswered. */
#define RDS_MAX_PONGS		256

/**
 * struct rm_data_op - the payload of a message
 * @op_active: there is a payload descriptor (always set by the core)
 * @op_notify: later issue (zerocopy/RDMA notifications)
 * @op_nents: sg entries in op_sg
 * @op_count: sg entries mapped by the transport (ib_dma_map_sg result)
 * @op_sg: the entries; each at most PAGE_SIZE, no entry crosses a page
 */
struct rm_data_op {
	unsigned int		op_active:1;
	unsigned int		op_notify:1;
	unsigned int		op_nents;
	unsigned int		op_count;
	struct scatterlist	*op_sg;
};

/**
 * struct rds_notifier - one RDS_CMSG_RDMA_STATUS waiting for recvmsg()
 * @n_list: entry in rs->rs_notify_queue
 * @n_user_token: the user_token of the op
 * @n_status: RDS_RDMA_SUCCESS, _REMOTE_ERROR, _CANCELED, _DROPPED,
 *	_OTHER_ERROR
 * @n_rs: socket to notify (a reference, rds.ko)
 */
struct rds_notifier {
	struct list_head	n_list;
	u64			n_user_token;
	int			n_status;
	struct rds_sock		*n_rs;
};

/**
 * struct rm_rdma_op - an RDMA READ/WRITE riding on a message
 * @op_active: the message carries an RDMA op (RDS_CMSG_RDMA_ARGS)
 * @op_write: RDMA WRITE (local to remote), else READ (remote to local)
 * @op_fence: IB_SEND_FENCE on the SEND that follows the RDMA
 * @op_notify: queue an RDS_CMSG_RDMA_STATUS whatever the outcome
 * @op_recverr: queue one on failure only (RDS_RECVERR set on the socket)
 * @op_silent: RDS_RDMA_SILENT: when the message has no payload, no
 *	cookie and no other op that is not silent, no SEND follows at all
 *	(rds_msg_has_send()): the RDMA WR is the final op
 * @op_mapped: the transport DMA mapped op_sg (transport bookkeeping)
 * @op_postable: the transport found the op postable before it posted the
 *	message's atomic (transport bookkeeping).  The transport's bits of
 *	this word are written in xmit context while no context of the op is
 *	in flight; op_mapped is also cleared by the op's last completion,
 *	which only comes after the last such write
 * @op_use_once: the remote cookie is one of our nodes' use-once keys
 *	(RDS_MR_IOVA_USE_ONCE in its offset; an RDS_RDMA_USE_ONCE flag in
 *	the args is accepted but does not set it: only the owner decides):
 *	the completing SEND may invalidate op_rkey remotely
 *	(IB_WR_SEND_WITH_INV) when the connection negotiated it.  rds.ko has
 *	already put the RDS_EXTHDR_RDMA {op_rkey} extension in the header
 *	(and RDMA_DEST for m_rdma_cookie): the transport adds neither
 * @op_rkey: remote key (low 32 bits of the cookie)
 * @op_remote_addr: remote address: cookie offset + remote_vec.addr
 * @op_bytes: total bytes (sum of the local iovecs, <= remote_vec.bytes,
 *	<= RDS_MAX_MSG_SIZE)
 * @op_nents: entries in op_sg; each within one page
 * @op_count: mapped entries (transport bookkeeping)
 * @op_map_since: jiffies (| 1) of the first failed DMA mapping of an op
 *	not yet posted, 0 if none (transport bookkeeping)
 * @op_sg: the local pages, pinned by rds.ko (FOLL_WRITE for READ), unpinned
 *	when the message is freed
 * @op_notifier: the notification, or NULL; rds.ko queues it once, from
 *	rds_rdma_send_complete() or when the message is dropped/cancelled
 * @op_pin: rds.ko's record of the pinned pages (private)
 */
struct rm_rdma_op {
	unsigned int		op_active:1;
	unsigned int		op_write:1;
	unsigned int		op_fence:1;
	unsigned int		op_notify:1;
	unsigned int		op_recverr:1;
	unsigned int		op_silent:1;
	unsigned int		op_mapped:1;
	unsigned int		op_postable:1;
	unsigned int		op_use_once:1;
	u32			op_rkey;
	u64			op_remote_addr;
	u32			op_bytes;
	unsigned int		op_nents;
	unsigned int		op_count;
	unsigned long		op_map_since;
	struct scatterlist	*op_sg;
	struct rds_notifier	*op_notifier;
	void			*op_pin;
};

/**
 * struct rm_atomic_op - a (masked) atomic riding on a message
 * @op_active: the message carries an atomic op (RDS_CMSG_*ATOMIC_*)
 * @op_type: RDS_ATOMIC_TYPE_CSWP or _FADD
 * @op_notify: queue a notification whatever the outcome
 * @op_recverr: notify on failure only
 * @op_silent: as for rm_rdma_op
 * @op_mapped: transport mapped op_sg
 * @op_masked: the application asked for a MASKED_* op; the masks below are
 *	then its own.  For the plain ops rds.ko sets the masks that make the
 *	masked op equal the plain one (CSWP: both ~0; FADD: nocarry 0), so a
 *	transport may always post the masked opcode, or a plain one when
 *	op_masked is clear, or emulate the masked one on plain atomics
 * @op_use_once: as for rm_rdma_op
 * @op_m_cswp: compare/swap operands and masks
 * @op_m_fadd: add operand and nocarry mask
 * @op_rkey: remote key
 * @op_remote_addr: remote address (cookie offset + remote_addr); when it
 *	is not 8-aligned the op fails with REMOTE_ERROR (HCA or transport)
 * @op_sg: one entry: the 8-byte local result buffer (8-byte aligned, pinned)
 * @op_notifier: notification, or NULL
 * @op_pin: rds.ko's record of the pinned page (private)
 */
struct rm_atomic_op {
	unsigned int		op_active:1;
	unsigned int		op_type:2;
	unsigned int		op_notify:1;
	unsigned int		op_recverr:1;
	unsigned int		op_silent:1;
	unsigned int		op_mapped:1;
	unsigned int		op_masked:1;
	unsigned int		op_use_once:1;
	union {
		struct {
			u64	compare;
			u64	swap;
			u64	compare_mask;
			u64	swap_mask;
		} op_m_cswp;
		struct {
			u64	add;
			u64	nocarry_mask;
		} op_m_fadd;
	};
	u32			op_rkey;
	u64			op_remote_addr;
	struct scatterlist	*op_sg;
	struct rds_notifier	*op_notifier;
	void			*op_pin;
};

#define RDS_ATOMIC_TYPE_CSWP	0
#define RDS_ATOMIC_TYPE_FADD	1

/**
 * struct rds_message - a message on the send side
 * @m_refcount: references; see rds_message_addref()/rds_message_put()
 * @m_sock_item: entry in rs->rs_send_queue (under rs_lock)
 * @m_conn_item: entry in cp_send_queue/cp_retrans (under cp_lock)
 * @m_inc: the header lives in m_inc.i_hdr; the loop transport also uses
 *	m_inc to deliver the message itself, without a copy
 * @m_ack_seq: sequence number (valid when RDS_MSG_HAS_ACK_SEQ is set)
 * @m_daddr: destination address
 * @m_flags: RDS_MSG_* bits (atomic bitops)
 * @m_rs_lock: protects m_rs and the sock link
 * @m_rs: socket that sent it (a reference is held while m_rs is set);
 *	NULL for kernel messages (pongs, congestion updates)
 * @m_conn_path: path it is queued on
 * @m_rdma_cookie: cookie of an RDMA_DEST/MAP cmsg (sent as RDMA_DEST)
 * @m_final_op: the op whose completion releases the message (transport)
 * @m_payload_len: payload bytes (== be32_to_cpu(m_inc.i_hdr.h_len))
 * @data: the payload
 * @rdma: the RDMA op (rdma.op_active)
 * @atomic: the atomic op (atomic.op_active)
 * @m_rdma_mr: MR of an RDS_CMSG_RDMA_MAP/DEST (a reference), or NULL
 * @m_reg_notifier: with RDS_RECVERR, the report that m_rdma_mr's
 *	registration failed (RDS_RDMA_OTHER_ERROR, user_token = the cookie);
 *	preallocated when that registration may still fail, or NULL
 * @m_ops_state: who reports the ops' outcome, the sender that posted them
 *	or a cancel that came first (RDS_OPS_*, cmpxchg; see rdma.c)
 * @m_zcopy: MSG_ZEROCOPY state (cookie, memlock charge), or NULL
 * @m_nents: entries of m_sg
 * @m_sg: storage of data.op_sg (allocated with the message)
 */
struct rds_message {
	refcount_t		m_refcount;
	struct list_head	m_sock_item;
	struct list_head	m_conn_item;
	struct rds_incoming	m_inc;
	u64			m_ack_seq;
	struct in6_addr		m_daddr;
	unsigned long		m_flags;
	spinlock_t		m_rs_lock;
	struct rds_sock		*m_rs;
	struct rds_conn_path	*m_conn_path;
	u64			m_rdma_cookie;
	void			*m_final_op;
	unsigned int		m_payload_len;
	struct rm_data_op	data;
	struct rm_rdma_op	rdma;
	struct rm_atomic_op	atomic;
	struct rds_mr		*m_rdma_mr;
	struct rds_notifier	*m_reg_notifier;
	u32			m_ops_state;
	struct rds_zcopy	*m_zcopy;
	unsigned int		m_nents;
	struct scatterlist	m_sg[];
};

/*
 * RDMA cookies.  In-tree format: rkey | (u64)offset << 32, and an issuer
 * addresses cookie offset + remote_vec.addr.  Our MRs are registered at the
 * iova in the offset field: the page offset of the buffer, a device
 * instance's epoch, and bit 31 for our use-once keys (see
 * Documentation/networking/rds.rst, "How the issuer learns ...").
 */
#define RDS_MR_IOVA_USE_ONCE	0x80000000U
/*
 * Bits 21..30 of the iova tell a device's instances apart (set by the
 * transport: rds_rdma.ko's per-GUID device epoch, see "Keys never come
 * back" in rds.rst).  An MR spans at most RDS_MAX_MSG_SIZE plus the
 * unaligned page from its page offset, so its addresses stay below the
 * next epoch and below bit 31.
 */
#define RDS_MR_IOVA_EPOCH_SHIFT	21
#define RDS_MR_IOVA_EPOCH_BITS	10
#define RDS_MR_IOVA_EPOCH_MASK	(((1U << RDS_MR_IOVA_EPOCH_BITS) - 1) << \
				 RDS_MR_IOVA_EPOCH_SHIFT)
static_assert(!(RDS_MR_IOVA_EPOCH_MASK & RDS_MR_IOVA_USE_ONCE));
static_assert(RDS_MAX_MSG_SIZE + 2 * PAGE_SIZE <=
	      1UL << RDS_MR_IOVA_EPOCH_SHIFT);

/**
 * rds_msg_has_send - does a SEND follow @rm's RDMA and atomic ops?
 * @rm: the message
 *
 * Every message is sent, except one with no payload and no cookie whose
 * ops are all RDS_RDMA_SILENT: then its last op is its final one and
 * reports its success.  Any op of a message that has a SEND (also a
 * silent one next to a non-silent one) is reported by the SEND's
 * completion and must follow the rules of an op with a SEND behind it
 * (a READ holds it back).
 */
static inline bool rds_msg_has_send(const struct rds_message *rm)
{
	return rm->m_payload_len || rm->m_rdma_cookie ||
	       (rm->rdma.op_active && !rm->rdma.op_silent) ||
	       (rm->atomic.op_active && !rm->atomic.op_silent);
}

static inline u64 rds_rdma_make_cookie(u32 r_key, u32 offset)
{
	return r_key | ((u64)offset << 32);
}

static inline u32 rds_rdma_cookie_key(u64 cookie)
{
	return (u32)cookie;
}

static inline u32 rds_rdma_cookie_offset(u64 cookie)
{
	return (u32)(cookie >> 32);
}

/* r_state bits of struct rds_mr */
#define RDS_MR_IN_TREE		0	/* in rs->rs_mr_tree */
#define RDS_MR_TRANS_FREED	1	/* ->free_mr()/->unuse_mr() called */
#define RDS_MR_REG_PENDING	2	/* REG posted, key not valid yet */
#define RDS_MR_REG_FAILED	3	/* that registration failed */

/**
 * struct rds_mr - one registered memory region of a socket
 * @r_node: entry in rs->rs_mr_tree, keyed by r_key (rds.ko)
 * @r_refcount: references: the socket's tree, each message that names it
 *	(MAP/DEST), and the transport's (handed to it with the ->get_mr()
 *	call); the last rds_mr_put() unpins the pages (from a
 *	work item, so any context may put) and frees the object
 * @r_state: RDS_MR_* bits (atomic bitops)
 * @r_sync_lock: orders ->sync_mr() against the transport letting go of
 *	its object (RDS_MR_TRANS_FREED is set under it; rds.ko)
 * @r_key: the rkey; set by the transport in ->get_mr()
 * @r_iova: in: the iova rds.ko wants (RDS_MR_IOVA_USE_ONCE if use-once |
 *	page offset of the buffer); the transport registers the MR at it, or
 *	at another and stores that: bit 31 as asked, bits of
 *	RDS_MR_IOVA_EPOCH_MASK, and otherwise an offset within a page (that
 *	of the DMA address); the cookie's offset
 * @r_use_once: RDS_RDMA_USE_ONCE: dies when the peer's completing message
 *	arrives (->unuse_mr())
 * @r_invalidate: RDS_RDMA_INVALIDATE: invalidate now when freed
 * @r_write: RDS_RDMA_READWRITE was asked (access rights: the transport
 *	grants REMOTE_READ always, REMOTE_WRITE when set, REMOTE_ATOMIC when
 *	it can do atomics)
 * @r_reg_async: RDS_CMSG_RDMA_MAP: ->get_mr() may return before the key
 *	is valid (see @get_mr of struct rds_transport)
 * @r_reg_waiters: paths whose next message names this MR and waits for
 *	its registration (cp_reg_item, under rds.ko's registration lock)
 * @r_addr: user address of the buffer
 * @r_len: its length in bytes (<= RDS_MAX_MSG_SIZE)
 * @r_nents: entries in r_sg (= pinned pages)
 * @r_sg: the pinned pages, one entry per page, the first starting at the
 *	page offset of r_addr and the last ending at r_addr + r_len (rds.ko)
 * @r_pages: the pinned pages (rds.ko)
 * @r_sock: owning socket (no reference; NULL once it closed)
 * @r_trans: transport that registered it
 * @r_trans_private: the transport's object (pool MR, device)
 * @r_free_work: deferred unpin (rds.ko)
 * @r_mm_pinned: pages accounted to r_user against RLIMIT_MEMLOCK (rds.ko)
 * @r_user: user charged (rds.ko)
 */
struct rds_mr {
	struct rb_node		r_node;
	refcount_t		r_refcount;
	unsigned long		r_state;
	spinlock_t		r_sync_lock;
	u32			r_key;
	u64			r_iova;
	unsigned int		r_use_once:1;
	unsigned int		r_invalidate:1;
	unsigned int		r_write:1;
	unsigned int		r_reg_async:1;
	struct list_head	r_reg_waiters;
	u64			r_addr;
	u64			r_len;
	unsigned int		r_nents;
	struct scatterlist	*r_sg;
	struct page		**r_pages;
	struct rds_sock		*r_sock;
	struct rds_transport	*r_trans;
	void			*r_trans_private;
	struct work_struct	r_free_work;
	unsigned long		r_mm_pinned;
	struct user_struct	*r_user;
};

/*
 * The contract between rds.ko and a transport module, bumped whenever an
 * op's meaning changes while its prototype does not (2: ->get_mr() takes
 * over the caller's page pin; 3: ->xmit() may return -EINPROGRESS for
 * ops posted with their SEND held; 4: t_zcopy_sges, and payload sg entries
 * of any offset and length; 5: ->mr_reg_ordered(), and ->get_mr() gets the
 * message's connection for RDS_CMSG_RDMA_MAP).  rds_trans_register() refuses a transport
 * built for another one; the t_abi field also changes the structure's
 * layout, so module versioning refuses the older pairs at load time.
 */
#define RDS_TRANSPORT_ABI	5

/**
 * struct rds_transport - what a transport provides to rds.ko
 * @t_name: name shown by SO_RDS_TRANSPORT users and RDS_INFO
 * @t_type: RDS_TRANS_IB, RDS_TRANS_TCP, ... (uapi values)
 * @t_abi: RDS_TRANSPORT_ABI the transport was built for
 * @t_zcopy_sges: MSG_ZEROCOPY payloads are sent from the user's pages
 *	when no 4 KiB fragment spans more than this many scatterlist entries
 *	(at most RDS_ZCOPY_MAX_SGES; any offsets and lengths); 0: copy them
 *	(a transport that hands the pages to the receiver in place)
 * @t_owner: module that implements it; pinned while sockets use it
 * @t_item: entry in the transport list (rds.ko)
 * @laddr_check: 0 if this transport can bind @addr, -EADDRNOTAVAIL (or
 *	-EPROTOTYPE) if it cannot, -ENOMEM if it could not tell for lack of
 *	memory: rds.ko passes that one on (process context, may sleep)
 * @conn_alloc: allocate the transport half of every path of @conn and set
 *	cp_transport_data (process or atomic context as @gfp says; must not
 *	start any I/O)
 * @conn_free: free what conn_alloc made (@data is cp_transport_data;
 *	process context, the path is DOWN and quiet)
 * @conn_path_connect: start connecting the path (connect worker, process
 *	context, cp_cm_lock held, state CONNECTING).  Return 0 when the
 *	attempt is under way; it ends with rds_connect_path_complete() or
 *	rds_conn_path_drop().  An error return drops the path.
 * @conn_path_shutdown: tear the path down and return once nothing of the
 *	transport can touch the path or its messages any more (shutdown
 *	worker, process context, may sleep, cp_cm_lock held; state is
 *	DISCONNECTING).  Must drop every message reference the transport
 *	holds (rds_message_put()), and must tolerate a path that never
 *	connected.
 * @xmit: send (part of) @rm on @cp.  Called with RDS_IN_XMIT held, so never
 *	concurrently for one path, in process context (send worker or
 *	sendmsg) with BHs enabled, must not sleep.  @hdr_off is how much of
 *	the header was consumed already (0 or sizeof(struct rds_header)),
 *	@sg/@off where in data.op_sg to resume.  Return the bytes consumed,
 *	counting the header (sizeof(struct rds_header) + payload bytes); the
 *	core calls again with updated offsets until the whole message is
 *	consumed.  Return -EAGAIN when the ring is full: the core sets
 *	RDS_LL_SEND_FULL and stops; the transport must call
 *	rds_send_path_kick() when room appears.  Return -ENOMEM when short
 *	of memory: the core retries from the send worker two jiffies later,
 *	nobody needs to kick.  Any other error drops the path.  The transport takes its own reference (rds_message_addref())
 *	if it needs @rm after returning, and fills h_ack/h_credit/h_csum in
 *	its copy of the header.  Messages with RDS_FLAG_CONG_BITMAP are
 *	ordinary 8192-byte messages (their pages belong to the map) with
 *	sequence number 0: they are not put on cp_retrans, not acknowledged
 *	and never retransmitted (a fresh one follows every reconnect), so a
 *	transport should not let their h_sequence move its ACK state.  The
 *	core has already set RDS_FLAG_ACK_REQUIRED and RDS_FLAG_RETRANSMITTED
 *	in rm->m_inc.i_hdr.h_flags when they apply.
 * @xmit_path_prepare: optional, called before a batch of ->xmit() calls
 * @xmit_path_complete: optional, called after a batch of ->xmit() calls
 *	(ring the doorbell, post the chain, send a pending ACK)
 * @xmit_rdma: optional, post rm->rdma (NULL: RDMA cmsgs get EOPNOTSUPP).
 *	Called by rds_send_xmit() like ->xmit() (RDS_IN_XMIT held; process
 *	context, may sleep), before the message's ->xmit() and after its
 *	->xmit_atomic(), once per transmission; @op is &rm->rdma
 *	(container_of for rm).  Messages with RDMA/atomic ops are never
 *	retransmitted: after a reconnect rds.ko drops them with
 *	RDS_RDMA_DROPPED.  Return 0 or, like ->xmit(), -EAGAIN when the ring
 *	is full or -ENOMEM (called again, nothing posted) or another error
 *	(drops the path).  Return -ECANCELED when the op can never be posted
 *	and was reported (rds_rdma_send_complete()): the message is then
 *	completed unsent and taken off the path at once.  Return
 *	-EINPROGRESS when the op was posted but holds the message back (the
 *	SEND must wait for its completion): rds.ko counts the op as posted,
 *	so that a cancel no longer reports it, and calls again once kicked;
 *	that call returns -EAGAIN while the hold lasts, then 0.  When
 *	rds_msg_has_send() is false, ->xmit() is not called for the message:
 *	the RDMA WR is then its final op.  The transport reports the outcome
 *	with rds_rdma_send_complete() once (from the completion of the final
 *	op of the message: the SEND, or the RDMA WR when silent).
 * @xmit_atomic: optional, post rm->atomic (NULL: atomic cmsgs get
 *	EOPNOTSUPP); as @xmit_rdma, reporting with rds_atomic_send_complete()
 *	(-ECANCELED: the atomic is reported and never posted; an RDMA op of
 *	the message is then reported RDS_RDMA_OTHER_ERROR, never posted)
 * @recv_path: refill receive buffers (receive worker, process context,
 *	may sleep); -ENOMEM/-EAGAIN retries later
 * @inc_copy_to_user: copy up to iov_iter_count(@to) payload bytes of @inc
 *	to @to; return bytes copied or -EFAULT.  Called from recvmsg (user
 *	iterators) and by the core with kernel (bvec) iterators for the
 *	congestion map in whatever context rds_recv_incoming() runs, so it
 *	must not sleep for kernel iterators
 * @inc_free: release an incoming message (last reference dropped; any
 *	context)
 * @get_tos_map: map a user TOS to the TOS used on the wire (NULL: 1:1)
 * @is_acked: optional; true if the transport knows @rm was received (for
 *	transports that ACK by other means; IB leaves it NULL)
 * @get_mr: optional (NULL: RDS_GET_MR and RDS_CMSG_RDMA_MAP get
 *	EOPNOTSUPP): register @mr->r_sg (@mr->r_nents pages, pinned by rds.ko)
 *	for remote access by any peer, at @mr->r_iova, honouring r_write and
 *	r_use_once; set r_key (and r_iova if it differs) and r_trans_private.
 *	@rs is the bound socket (its bound address names the device), @conn
 *	the connection for RDS_CMSG_RDMA_MAP (may be ignored), NULL for the
 *	socket options: registration must not need a connection.  Process
 *	context, may sleep, lock_sock() may be held.  rds.ko hands the
 *	transport one reference on @mr with the call.  Return 0 (the key is
 *	valid in the HCA on return; the transport keeps the reference until
 *	the key is dead, see @free_mr), -EMSGSIZE above its registration
 *	limit, -ENOMEM/-EAGAIN when out of MRs, -ENODEV when the address has
 *	no device, -EINTR on a fatal signal, other errors as they come.  On
 *	error the transport drops the reference: at once if nothing reached
 *	the HCA, else only once the key (whose state a failed registration
 *	leaves unknown) is dead and the pages are DMA-unmapped, possibly
 *	after returning: the pages stay pinned until then.
 *	With @mr->r_reg_async (RDS_CMSG_RDMA_MAP) the transport may instead
 *	set RDS_MR_REG_PENDING in r_state before it starts the registration
 *	and return 0 at once; it then calls rds_mr_reg_complete() exactly
 *	once when the registration succeeded or failed, and rds.ko sends no
 *	message naming @mr (MAP or DEST) before that.  ->free_mr() may come
 *	first: the key must then die once it is registered.
 * @free_mr: required with @get_mr: the MR left the socket (RDS_FREE_MR,
 *	socket close, or a failed sendmsg that had mapped it).  Called once
 *	per successful ->get_mr() (unless ->unuse_mr() was called instead),
 *	any context but hardirq, no rds.ko spinlock held.  The transport
 *	invalidates the key now if @invalidate (RDS_RDMA_INVALIDATE), else
 *	when it likes (batched, lazily), and drops its reference with
 *	rds_mr_put() only once the key is dead in the HCA and the pages are
 *	DMA unmapped: the pages stay pinned until then.
 * @unuse_mr: optional: a message completing an RDMA on use-once @mr has
 *	arrived (RDS_EXTHDR_RDMA with its rkey); rds.ko has taken @mr off the
 *	socket and passes the transport's reference over as for ->free_mr().
 *	The key must be dead before @inc is delivered: if it already is (the
 *	peer invalidated it remotely: the transport saw IB_WC_WITH_INVALIDATE
 *	for this rkey on @inc's receive completion) the transport releases
 *	the MR and returns; otherwise it calls rds_inc_hold(@inc) before
 *	returning, queues the invalidation, and calls rds_inc_unhold(@inc)
 *	when it completed (or failed: then after dropping the connection, so
 *	that the key cannot be used by this peer any more).  Called from
 *	rds_recv_incoming() (its context; no rds.ko spinlock held).  NULL:
 *	rds.ko calls ->free_mr(@mr, true) and delivers at once.
 * @sync_mr: optional: make DMA into/out of @mr visible (@direction is a
 *	DMA_* direction); called when a non-use-once MR is named by an
 *	RDS_EXTHDR_RDMA (FROM_DEVICE) or sent as RDMA_DEST (TO_DEVICE)
 * @flush_mrs: optional: invalidate and release every MR freed but not yet
 *	invalidated (RDS_FREE_MR with cookie 0; NULL: that gets EINVAL).
 *	Process context, may sleep.
 * @mr_reg_ordered: optional, with @get_mr: may a message naming @mr,
 *	whose asynchronous registration is still pending, leave on @cp now
 *	because the transport posted the registration ahead of it on the
 *	queue @cp sends on?  Called with RDS_IN_XMIT held and under
 *	rds.ko's registration lock (never sleeps); NULL: such a message
 *	waits for rds_mr_reg_complete().
 * @info_counters: optional: produce the transport's RDS_INFO_COUNTERS
 *	rows with rds_info_counter(), after rds.ko's own (process context;
 *	the transport is registered for the whole call)
 * @atomic_check: optional: can the device behind @rs (and @conn, which may
 *	not be connected yet) do the atomic; @masked: a MASKED_* op (the
 *	transport may emulate it).  0, -EOPNOTSUPP which sendmsg() returns
 *	(never a false success on a device without atomics), or -ENOMEM
 *	when the device could not be looked up for lack of memory.  Process
 *	context.  NULL with @xmit_atomic set: always possible.
 * @sock_release: optional: the socket is being released (close()); drop
 *	what the transport cached in it (rs_trans_dev).  Process context.
 */
struct rds_transport {
	char			t_name[16];
	unsigned int		t_type;
	unsigned int		t_abi;
	unsigned int		t_zcopy_sges;
	struct module		*t_owner;
	struct list_head	t_item;

	int (*laddr_check)(struct net *net, const struct in6_addr *addr,
			   __u32 scope_id);
	int (*conn_alloc)(struct rds_connection *conn, gfp_t gfp);
	void (*conn_free)(void *data);
	int (*conn_path_connect)(struct rds_conn_path *cp);
	void (*conn_path_shutdown)(struct rds_conn_path *cp);
	int (*xmit)(struct rds_conn_path *cp, struct rds_message *rm,
		    unsigned int hdr_off, unsigned int sg, unsigned int off);
	void (*xmit_path_prepare)(struct rds_conn_path *cp);
	void (*xmit_path_complete)(struct rds_conn_path *cp);
	int (*xmit_rdma)(struct rds_conn_path *cp, struct rm_rdma_op *op);
	int (*xmit_atomic)(struct rds_conn_path *cp, struct rm_atomic_op *op);
	int (*recv_path)(struct rds_conn_path *cp);
	int (*inc_copy_to_user)(struct rds_incoming *inc, struct iov_iter *to);
	void (*inc_free)(struct rds_incoming *inc);
	u8 (*get_tos_map)(u8 tos);
	bool (*is_acked)(struct rds_message *rm, u64 ack);

	/* RDMA; see rdma.c */
	int (*get_mr)(struct rds_sock *rs, struct rds_mr *mr,
		      struct rds_connection *conn);
	void (*free_mr)(struct rds_mr *mr, bool invalidate);
	void (*unuse_mr)(struct rds_mr *mr, struct rds_incoming *inc);
	void (*sync_mr)(struct rds_mr *mr, int direction);
	void (*flush_mrs)(struct rds_sock *rs);
	bool (*mr_reg_ordered)(struct rds_conn_path *cp, struct rds_mr *mr);
	int (*atomic_check)(struct rds_sock *rs, struct rds_connection *conn,
			    bool masked);
	void (*sock_release)(struct rds_sock *rs);
	void (*info_counters)(struct rds_info_iter *it);
};

/* transport.c */

/**
 * rds_trans_register - make a transport available to sockets
 * @trans: the transport; t_type must be unique
 *
 * Process context.  Return: 0 or -EEXIST.
 */
int rds_trans_register(struct rds_transport *trans);

/**
 * rds_trans_unregister - withdraw a transport and destroy its connections
 * @trans: the transport
 *
 * After it returns no new socket can bind to @trans and every connection of
 * @trans has been shut down (->conn_path_shutdown()) and freed
 * (->conn_free()).  Call it first in the module exit, while the transport's
 * devices still exist.  Process context, sleeps; no locks held.
 */
void rds_trans_unregister(struct rds_transport *trans);
struct rds_transport *rds_trans_get_preferred(struct net *net,
					      const struct in6_addr *addr,
					      __u32 scope_id);
struct rds_transport *rds_trans_get(int t_type);
void rds_trans_put(struct rds_transport *trans);

/**
 * struct rds_bind_key - what the bind table is keyed by
 * @net: network namespace of the socket (the table is per-netns in effect)
 * @addr: bound address (IPv4 as ::ffff:a.b.c.d)
 * @scope_id: interface of a link-local address, 0 otherwise
 * @port: RDS port, network order
 * @pad: zero, so that the key can be hashed and compared as bytes
 */
struct rds_bind_key {
	struct net	*net;
	struct in6_addr	addr;
	__u32		scope_id;
	__be16		port;
	u16		pad;
};

/**
 * struct rds_sock - the RDS socket
 * @rs_sk: the generic socket; must be first
 * @rs_bound: bound address, port and scope; addr is zero when unbound
 * @rs_bound_node: entry in the bind table
 * @rs_conn_addr: default destination (connect())
 * @rs_conn_port: default destination port, network order
 * @rs_transport: transport chosen at bind or with SO_RDS_TRANSPORT
 * @rs_trans_pinned: rs_transport was set with SO_RDS_TRANSPORT: it carries
 *	traffic to local destinations too (not the loop transport)
 * @rs_conn: last connection used for sending (cache, no reference: a
 *	connection outlives the sockets of its transport)
 * @rs_tos: TOS set with SIOCRDSSETTOS
 * @rs_lock: protects the send side: rs_send_queue, rs_snd_bytes
 * @rs_send_queue: messages sent and not yet acknowledged or cancelled
 * @rs_snd_bytes: bytes charged for rs_send_queue (rds_msg_charge())
 * @rs_recv_lock: protects rs_recv_queue, rs_rcv_bytes, rs_cong_notify
 * @rs_recv_queue: struct rds_incoming waiting for recvmsg()
 * @rs_rcv_bytes: bytes charged for rs_recv_queue (rds_msg_charge())
 * @rs_congested: the port is marked congested in the local map
 * @rs_cong_item: entry in the list of monitoring sockets
 * @rs_cong_monitor: RDS_CONG_MONITOR set
 * @rs_cong_mask: ports (mod 64) the application monitors
 * @rs_cong_notify: uncongested ports (mod 64) not yet reported
 * @rs_cong_track: congestion generation last seen by poll()
 * @rs_recverr: RDS_RECVERR set
 * @rs_rx_traces: number of rx latency trace points requested
 * @rs_rx_trace: the trace points
 * @rs_notify_queue: struct rds_notifier waiting for recvmsg(), under
 *	rs_recv_lock
 * @rs_rdma_lock: protects rs_mr_tree, rs_trans_dev and rs_trans_dev_gen
 * @rs_mr_tree: the socket's MRs (struct rds_mr), keyed by r_key
 * @rs_trans_dev: the transport's cache of the device behind rs_bound_addr
 *	(owned by rs_transport, released by its ->sock_release())
 * @rs_trans_dev_gen: the transport's generation rs_trans_dev was found in
 * @rs_seen_congestion: a send met a congested port; poll() also waits for
 *	congestion map updates
 * @rs_info_item: entry in the list of every socket (info.c)
 * @rs_zcookie_lock: protects rs_zcookie_queue and rs_zcookie_dead (leaf
 *	lock, any context)
 * @rs_zcookie_queue: batches of MSG_ZEROCOPY cookies for recvmsg()
 * @rs_zcookie_dead: the socket was released: drop cookies
 */
struct rds_sock {
	struct sock		rs_sk;
	struct rds_bind_key	rs_bound;
	struct rhash_head	rs_bound_node;
	struct in6_addr		rs_conn_addr;
	__be16			rs_conn_port;
	struct rds_transport	*rs_transport;
	struct rds_connection	*rs_conn;
	u8			rs_tos;
	bool			rs_trans_pinned;

	spinlock_t		rs_lock;
	struct list_head	rs_send_queue;
	u32			rs_snd_bytes;

	spinlock_t		rs_recv_lock;
	struct list_head	rs_recv_queue;
	u32			rs_rcv_bytes;
	bool			rs_congested;

	struct list_head	rs_cong_item;
	bool			rs_cong_monitor;
	u64			rs_cong_mask;
	u64			rs_cong_notify;
	unsigned long		rs_cong_track;

	bool			rs_recverr;
	u8			rs_rx_traces;
	u8			rs_rx_trace[RDS_MSG_RX_DGRAM_TRACE_MAX];
	struct list_head	rs_notify_queue;
	bool			rs_seen_congestion;

	spinlock_t		rs_rdma_lock;
	struct rb_root		rs_mr_tree;
	void			*rs_trans_dev;
	unsigned int		rs_trans_dev_gen;
	struct list_head	rs_info_item;

	spinlock_t		rs_zcookie_lock;
	struct list_head	rs_zcookie_queue;
	bool			rs_zcookie_dead;
};

#define rs_bound_addr		rs_bound.addr
#define rs_bound_port		rs_bound.port
#define rs_bound_scope_id	rs_bound.scope_id

static inline struct rds_sock *rds_sk_to_rs(const struct sock *sk)
{
	return container_of(sk, struct rds_sock, rs_sk);
}

static inline struct sock *rds_rs_to_sk(struct rds_sock *rs)
{
	return &rs->rs_sk;
}

/* The in-tree payload limits: half of what SO_SNDBUF/SO_RCVBUF stored. */
static inline u32 rds_sk_sndbuf(struct rds_sock *rs)
{
	return READ_ONCE(rds_rs_to_sk(rs)->sk_sndbuf) / 2;
}

static inline u32 rds_sk_rcvbuf(struct rds_sock *rs)
{
	return READ_ONCE(rds_rs_to_sk(rs)->sk_rcvbuf) / 2;
}

/* af_rds.c */
void rds_wake_sk(struct rds_sock *rs);

/* bind.c */
int rds_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len);
void rds_remove_bound(struct rds_sock *rs);
struct rds_sock *rds_find_bound(struct net *net, const struct in6_addr *addr,
				__be16 port, __u32 scope_id);
int rds_bind_lock_init(void);
void rds_bind_lock_destroy(void);

/* transport.c */
int rds_trans_init(void);
void rds_trans_exit(void);

/* ------------------------------------------------------------------------
 * connection.c: what a transport calls about connections and paths
 * ------------------------------------------------------------------------
 */

/**
 * rds_conn_create - find or create the connection for a passive (incoming)
 *	request
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @trans: transport
 * @tos: TOS (already mapped)
 * @dev_if: interface of a link-local IPv6 pair, else 0
 * @gfp: allocation flags (GFP_KERNEL from process context)
 *
 * Does not start connecting.  Any context allowed by @gfp; no locks held.
 * Return: the connection (no reference to drop: it lives until
 * rds_trans_unregister()) or an ERR_PTR.
 */
struct rds_connection *rds_conn_create(struct net *net,
				       const struct in6_addr *laddr,
				       const struct in6_addr *faddr,
				       struct rds_transport *trans, u8 tos,
				       int dev_if, gfp_t gfp);

/* 127.0.0.0/8 (also v4-mapped) or ::1? */
static inline bool rds_addr_is_loopback(const struct in6_addr *addr)
{
	if (ipv6_addr_v4mapped(addr))
		return ipv4_is_loopback(addr->s6_addr32[3]);
	return ipv6_addr_loopback(addr);
}

/**
 * rds_addr_is_local - is @addr an address of this host in @net?
 * @net: namespace
 * @addr: address (v4-mapped for IPv4)
 * @dev_if: interface of a link-local IPv6 address, else 0
 *
 * RCU inside; any context.
 *
 * Return: true if it is.
 */
bool rds_addr_is_local(struct net *net, const struct in6_addr *addr,
		       int dev_if);

/**
 * rds_conn_create_outgoing - like rds_conn_create(), for the sending side
 * @net: namespace
 * @laddr: local address
 * @faddr: remote address
 * @trans: transport of the socket
 * @pinned: @trans was chosen with SO_RDS_TRANSPORT
 * @tos: TOS (already mapped)
 * @dev_if: interface of a link-local IPv6 pair, else 0
 * @gfp: allocation flags
 *
 * A local @faddr gets the loop transport, unless @pinned, @faddr is not
 * @laddr nor a loopback address, and @trans can serve @faddr (its
 * ->laddr_check(), asked when the connection is made): a pinned socket's
 * traffic to another local address goes through @trans (for IB, the HCA's
 * loopback), as in-tree.  An address talking to itself always uses loop:
 * both ends would be one connection.  Process context.
 *
 * Return: the connection or an ERR_PTR.
 */
struct rds_connection *rds_conn_create_outgoing(struct net *net,
						const struct in6_addr *laddr,
						const struct in6_addr *faddr,
						struct rds_transport *trans,
						bool pinned, u8 tos, int dev_if,
						gfp_t gfp);

/**
 * rds_conn_path_transition - change a path's state if it is @old
 * @cp: path
 * @old: expected state
 * @new: new state
 *
 * Any context, lockless (cmpxchg).  Return: true if the state changed.
 */
DECLARE_TRACEPOINT(rds_conn_state);
void rds_trace_conn_state(struct rds_conn_path *cp, int old, int new);

static inline bool rds_conn_path_transition(struct rds_conn_path *cp,
					    int old, int new)
{
	if (atomic_cmpxchg(&cp->cp_state, old, new) != old)
		return false;
	/* A static key: nothing but a NOP unless the event is enabled. */
	if (tracepoint_enabled(rds_conn_state))
		rds_trace_conn_state(cp, old, new);
	return true;
}

/**
 * rds_connect_path_complete - the transport's connection attempt succeeded
 * @cp: path
 * @curr: state the path must be in (normally RDS_CONN_CONNECTING)
 *
 * Moves the path to UP, resets the reconnect backoff and kicks the send and
 * receive workers.  If the state was not @curr the path is dropped instead.
 * Any context (CM handler), no locks required.
 */
void rds_connect_path_complete(struct rds_conn_path *cp, int curr);

/**
 * rds_connect_complete - rds_connect_path_complete() for path 0
 * @conn: connection
 */
void rds_connect_complete(struct rds_connection *conn);

/**
 * rds_conn_path_drop - drop a path because of an error or a remote close
 * @cp: path
 * @destroy: the connection is being destroyed: do not reconnect
 *
 * Moves the path to ERROR and queues the shutdown worker, which calls
 * ->conn_path_shutdown(), requeues unacknowledged messages for
 * retransmission and reconnects with backoff if anything is queued.
 * Idempotent.  Any context (completion handler, CM handler, softirq);
 * takes no sleeping lock; must not be called with cp_lock held.
 */
void rds_conn_path_drop(struct rds_conn_path *cp, bool destroy);

/**
 * rds_conn_drop - rds_conn_path_drop() for path 0
 * @conn: connection
 */
void rds_conn_drop(struct rds_connection *conn);

/**
 * rds_conn_path_drop_reason - rds_conn_path_drop() saying why
 * @cp: path
 * @reason: enum rds_drop_reason
 * @detail: reason-specific number (wc status, CM event, errno), or 0
 * @why: text for debugfs and the tracepoint; a string constant (literal,
 *	ib_wc_status_msg(), rdma_event_msg()) that lives as long as the
 *	transport's module, or NULL
 *
 * The reason is recorded (and counted) only when this call moves the
 * path to ERROR; a path already going down keeps its first reason.  The
 * rds_conn_drop tracepoint fires either way.  Context as for
 * rds_conn_path_drop().
 */
void rds_conn_path_drop_reason(struct rds_conn_path *cp, int reason,
			       int detail, const char *why);

/**
 * rds_conn_path_connect_if_down - queue a connect if the path is down
 * @cp: path
 *
 * Any context.
 */
void rds_conn_path_connect_if_down(struct rds_conn_path *cp);

/**
 * rds_conn_path_error - drop a path and log why (rate limited)
 * @cp: path
 * @fmt: printk format of the reason
 */
__printf(2, 3)
void rds_conn_path_error(struct rds_conn_path *cp, const char *fmt, ...);

/**
 * rds_queue_reconnect - schedule a connection attempt with backoff
 * @cp: path (DOWN)
 *
 * The first attempt after a successful connection is immediate; later ones
 * wait a random time below a bound that doubles up to
 * net.rds.reconnect_max_delay_ms.  Any context.
 */
void rds_queue_reconnect(struct rds_conn_path *cp);

/**
 * rds_conn_path_destroy_pending - true while the connection is destroyed
 * @cp: path
 */
static inline bool rds_conn_path_destroy_pending(const struct rds_conn_path *cp)
{
	return test_bit(RDS_DESTROY_PENDING, &cp->cp_flags);
}

/* The workqueue every per-path worker runs on (threads.c). */
extern struct workqueue_struct *rds_wq;

/* ------------------------------------------------------------------------
 * send.c
 * ------------------------------------------------------------------------
 */

/**
 * rds_send_drop_acked - free messages the peer acknowledged
 * @cp: path the ACK came on
 * @ack: highest sequence number acknowledged (h_ack or CM ack_seq)
 * @is_acked: optional predicate for transports with their own ACK notion
 *
 * Removes every message with sequence <= @ack from cp_retrans, takes it off
 * its socket, wakes senders waiting for send buffer space.  Any context
 * (receive completion handler in softirq, CM handler); takes cp_lock, then
 * (after dropping it) m_rs_lock and rs_lock; call with none held.
 */
void rds_send_drop_acked(struct rds_conn_path *cp, u64 ack,
			 bool (*is_acked)(struct rds_message *rm, u64 ack));

/**
 * rds_send_path_kick - the transport has room again: resume sending
 * @cp: path
 *
 * Clears RDS_LL_SEND_FULL and queues the send worker.  Any context
 * (send completion handler); no locks required.
 */
void rds_send_path_kick(struct rds_conn_path *cp);

/**
 * rds_send_xmit - push queued messages of a path to the transport
 * @cp: path
 *
 * Process context, no locks held.  Return: 0 when the queue was drained or
 * someone else is sending, -EAGAIN when it stopped early (ring full, batch
 * limit) and the worker will continue, -ENOMEM on allocation failure.
 */
int rds_send_xmit(struct rds_conn_path *cp);

/**
 * rds_send_path_reset - put unacknowledged messages back for retransmission
 * @cp: path (DISCONNECTING: nobody is transmitting)
 *
 * Called by the shutdown worker after ->conn_path_shutdown(); exported for
 * transports that reset a path themselves.  Process context.
 */
void rds_send_path_reset(struct rds_conn_path *cp);

/* The send worker (cp_send_w); transports queue cp_send_w, never call it. */
void rds_send_worker(struct work_struct *work);

/* ------------------------------------------------------------------------
 * recv.c
 * ------------------------------------------------------------------------
 */

/**
 * rds_inc_init - initialise an incoming message embedded in a transport
 *	object
 * @inc: the message
 * @cp: path it came on
 * @saddr: source address (the peer; for loop the sending address)
 *
 * Sets the reference count to 1 (the caller's).  Any context.
 */
void rds_inc_init(struct rds_incoming *inc, struct rds_conn_path *cp,
		  const struct in6_addr *saddr);

/**
 * rds_inc_addref - take a reference on an incoming message
 * @inc: the message
 */
static inline void rds_inc_addref(struct rds_incoming *inc)
{
	refcount_inc(&inc->i_refcount);
}

/**
 * rds_inc_put - drop a reference; the last one calls ->inc_free()
 * @inc: the message
 *
 * Any context.
 */
void rds_inc_put(struct rds_incoming *inc);

/**
 * rds_recv_incoming - a complete message arrived on a path
 * @cp: path it came on
 * @saddr: source address (the sender)
 * @daddr: destination address (a local address)
 * @inc: the message, its i_hdr filled in from the wire (first fragment)
 * @gfp: allocation flags for the context (GFP_ATOMIC in softirq)
 *
 * Discards duplicates (sequence < cp_next_rx_seq with RETRANSMITTED set),
 * advances cp_next_rx_seq, answers pings (dport 0), applies congestion map
 * updates (h_flags == RDS_FLAG_CONG_BITMAP), parses the RDMA and RDMA_DEST
 * extension headers (i_rdma_cookie), and queues everything else on the
 * destination socket, taking its own reference.  The caller keeps its
 * reference and drops it with rds_inc_put() afterwards.  The header
 * checksum must have been verified by the transport (rds_header_csum_ok()).
 * Calls for one path must be serialised by the transport (one receive
 * completion context per path).  Process or softirq context; takes
 * rs_recv_lock (irqsave) and, for pings, cp_lock; call with neither held.
 */
void rds_recv_incoming(struct rds_conn_path *cp, const struct in6_addr *saddr,
		       const struct in6_addr *daddr, struct rds_incoming *inc,
		       gfp_t gfp);

/* ------------------------------------------------------------------------
 * message.c
 * ------------------------------------------------------------------------
 */

/**
 * rds_message_alloc - allocate a message with room for @nents sg entries
 * @nents: payload sg entries
 * @gfp: allocation flags
 *
 * Return: the message with one reference, header zeroed, or NULL.
 */
struct rds_message *rds_message_alloc(unsigned int nents, gfp_t gfp);

/**
 * rds_message_addref - take a reference on a message
 * @rm: the message
 *
 * Any context.  A transport that keeps @rm beyond ->xmit() takes one.
 */
static inline void rds_message_addref(struct rds_message *rm)
{
	refcount_inc(&rm->m_refcount);
}

/**
 * rds_message_put - drop a reference; the last one frees pages and message
 * @rm: the message
 *
 * Any context (send completion handler); takes no lock.
 */
void rds_message_put(struct rds_message *rm);

/**
 * rds_message_unmapped - the transport has DMA-unmapped @rm
 * @rm: the message
 *
 * Clears RDS_MSG_MAPPED.  Any context.
 */
void rds_message_unmapped(struct rds_message *rm);

/**
 * rds_message_populate_header - fill in the fixed part of a header
 * @hdr: header
 * @sport: source port (network order)
 * @dport: destination port (network order)
 * @seq: sequence number
 *
 * Clears h_ack, h_flags, h_credit, h_csum and the extension space.
 */
void rds_message_populate_header(struct rds_header *hdr, __be16 sport,
				 __be16 dport, u64 seq);

/**
 * rds_message_add_extension - append an extension header
 * @hdr: header
 * @type: RDS_EXTHDR_* (must have a known length)
 * @data: the extension's data (rds_exthdr_size(@type) bytes)
 *
 * Appends after any extensions already present (a 6.1 peer parses several)
 * and keeps the terminating 0 when there is room.  Return: 0, or -ENOSPC
 * when it does not fit, -EINVAL for an unknown type.
 */
int rds_message_add_extension(struct rds_header *hdr, unsigned int type,
			      const void *data);

/**
 * rds_message_next_extension - iterate over a header's extensions
 * @hdr: header
 * @pos: cursor; start with 0
 * @buf: where to copy the extension's data
 * @buflen: in: size of @buf; out: length of the data copied
 *
 * Stops at type 0, an unknown type or the end of the space.
 * Return: the extension type, or RDS_EXTHDR_NONE at the end.
 */
int rds_message_next_extension(const struct rds_header *hdr,
			       unsigned int *pos, void *buf,
			       unsigned int *buflen);

/**
 * rds_message_add_rdma_dest_extension - add an RDMA_DEST extension
 * @hdr: header
 * @r_key: rkey
 * @offset: offset
 *
 * Return: as rds_message_add_extension().
 */
int rds_message_add_rdma_dest_extension(struct rds_header *hdr, u32 r_key,
					u32 offset);

/**
 * rds_exthdr_size - data length of an extension type
 * @type: RDS_EXTHDR_*
 *
 * Return: the length, or 0 for types we do not know (parsing stops there).
 */
unsigned int rds_exthdr_size(unsigned int type);

/**
 * rds_header_csum_set - compute and store the header checksum
 * @hdr: header; h_csum is overwritten
 *
 * ip_fast_csum() over the 48 bytes with h_csum zero.  A result of 0 stays
 * 0, which the receiver reads as "no checksum"; that is what in-tree does.
 * Any context.
 */
void rds_header_csum_set(struct rds_header *hdr);

/**
 * rds_header_csum_ok - verify a received header's checksum
 * @hdr: header
 *
 * Return: true if h_csum is 0 (none) or matches.  Any context.
 */
bool rds_header_csum_ok(const struct rds_header *hdr);

/* ------------------------------------------------------------------------
 * cong.c
 * ------------------------------------------------------------------------
 */

/**
 * struct rds_cong_map - congestion bitmap of one address (65536 ports)
 * @m_node: entry in the map table
 * @m_net: namespace
 * @m_addr: the address
 * @m_conn_list: connections whose c_lcong is this map (under rds_cong_lock)
 * @m_waitq: senders waiting for a port to become uncongested
 * @m_page_addrs: the bitmap, little-endian bit order, one port per bit
 */
struct rds_cong_map {
	struct rb_node		m_node;
	struct net		*m_net;
	struct in6_addr		m_addr;
	struct list_head	m_conn_list;
	wait_queue_head_t	m_waitq;
	unsigned long		m_page_addrs[RDS_CONG_MAP_PAGES];
};

/**
 * rds_cong_map_updated - the peer's map changed: wake senders and monitors
 * @map: the map (a c_fcong)
 * @portmask: ports (mod 64) that became uncongested; ~0 if unknown
 *
 * Any context, takes rds_cong_lock briefly when monitors exist.
 */
void rds_cong_map_updated(struct rds_cong_map *map, u64 portmask);

/**
 * rds_cong_recv - apply a received CONG_BITMAP message to c_fcong
 * @cp: path it came on
 * @inc: the message (8192 bytes of payload)
 *
 * Called by rds_recv_incoming(); copies the map with ->inc_copy_to_user()
 * and a kernel iterator.  Process or softirq context.
 */
void rds_cong_recv(struct rds_conn_path *cp, struct rds_incoming *inc);

/**
 * rds_cong_build_update - build the message carrying our map to the peer
 * @map: the map (c_lcong of the path's connection)
 *
 * The payload pages are the map's own (RDS_MSG_PAGEVEC).  The transport
 * sends it like any other message.  Return: the message or NULL.
 */
struct rds_message *rds_cong_build_update(struct rds_cong_map *map);

/* ------------------------------------------------------------------------
 * stats.c: per-CPU counters (names as in-tree for RDS_INFO_COUNTERS)
 * ------------------------------------------------------------------------
 */
struct rds_statistics {
	u64	s_conn_reset;
	u64	s_recv_drop_bad_checksum;
	u64	s_recv_drop_old_seq;
	u64	s_recv_drop_no_sock;
	u64	s_recv_drop_dead_sock;
	u64	s_recv_deliver_raced;
	u64	s_recv_delivered;
	u64	s_recv_queued;
	u64	s_recv_immediate_retry;
	u64	s_recv_delayed_retry;
	u64	s_recv_ack_required;
	u64	s_recv_rdma_bytes;
	u64	s_recv_ping;
	u64	s_send_queue_empty;
	u64	s_send_queue_full;
	u64	s_send_lock_contention;
	u64	s_send_lock_queue_raced;
	u64	s_send_immediate_retry;
	u64	s_send_delayed_retry;
	u64	s_send_drop_acked;
	u64	s_send_ack_required;
	u64	s_send_queued;
	u64	s_send_rdma;
	u64	s_send_rdma_bytes;
	u64	s_send_pong;
	u64	s_page_remainder_hit;
	u64	s_page_remainder_miss;
	u64	s_copy_to_user;
	u64	s_copy_from_user;
	u64	s_cong_update_queued;
	u64	s_cong_update_received;
	u64	s_cong_send_error;
	u64	s_cong_send_blocked;
	u64	s_recv_bytes_added_to_socket;
	u64	s_recv_bytes_removed_from_socket;
	u64	s_send_stuck_rm;
	u64	s_send_zcopy;
	u64	s_send_zcopy_copied;
	u64	s_send_zcopy_bytes;
};

DECLARE_PER_CPU_SHARED_ALIGNED(struct rds_statistics, rds_stats);

/* Any context; per-CPU, no lock. */
#define rds_stats_add(member, count) \
	this_cpu_add(rds_stats.member, (count))
#define rds_stats_inc(member)	rds_stats_add(member, 1)

/**
 * rds_stats_sum - sum the core counters over all CPUs
 * @out: where to write them
 */
void rds_stats_sum(struct rds_statistics *out);

/* Names of the core counters, in struct order. */
extern const char *const rds_stat_names[];
#define RDS_STAT_COUNT	(sizeof(struct rds_statistics) / sizeof(u64))

/* Drops and reconnects by enum rds_drop_reason (stats.c, debugfs). */
const char *rds_drop_reason_name(int reason);
void rds_stats_conn_drop(int reason);
void rds_stats_conn_reconnect(int reason);
void rds_stats_drop_show(struct seq_file *m);

/* ------------------------------------------------------------------------
 * info.c: the RDS_INFO_* getsockopt tables (protocol in info.c)
 * ------------------------------------------------------------------------
 */

/* A table's source: produces every item with rds_info_item_begin/end(). */
typedef void (*rds_info_fn)(struct rds_info_iter *it);

int rds_info_register(int optname, size_t each, rds_info_fn fn);
void rds_info_unregister(int optname, rds_info_fn fn);
struct net *rds_info_net(const struct rds_info_iter *it);
void *rds_info_item_begin(struct rds_info_iter *it);
void rds_info_item_end(struct rds_info_iter *it);
void rds_info_counter(struct rds_info_iter *it, const char *name, u64 value);
void rds_info_message(struct rds_info_iter *it, const struct rds_header *hdr,
		      const struct in6_addr *laddr,
		      const struct in6_addr *faddr, __be16 lport,
		      __be16 fport, u8 tos, bool v6);
void rds_info_for_each_conn(struct rds_info_iter *it,
			    void (*visit)(struct rds_info_iter *it,
					  struct rds_connection *conn));

/* ------------------------------------------------------------------------
 * sysctl.c: core tunables (net.rds.*), readable by transports
 * ------------------------------------------------------------------------
 */
extern unsigned long rds_sysctl_reconnect_min_jiffies;
extern unsigned long rds_sysctl_reconnect_max_jiffies;
extern unsigned int rds_sysctl_max_unacked_packets;
extern unsigned int rds_sysctl_max_unacked_bytes;
extern unsigned int rds_sysctl_ping_enable;

/**
 * rds_param_set_uint_range - set a uint module parameter within a range
 * @val: the text given at load time or written to /sys/module/.../parameters
 * @kp: the parameter; @kp->arg points to its unsigned int
 * @min: smallest value accepted
 * @max: largest value accepted
 *
 * For the ->set of a parameter's kernel_param_ops.  A value that is not an
 * integer or lies outside @min..@max is refused with a message naming the
 * parameter and its range; the variable is left as it was, and at load time
 * the module load fails with -EINVAL.
 *
 * Context: the caller holds the kernel_param lock (module load or sysfs).
 * Return:
 *   0 - the value was stored
 *   %-EINVAL - not an integer, or outside @min..@max (logged)
 */
static inline int rds_param_set_uint_range(const char *val,
					   const struct kernel_param *kp,
					   unsigned int min, unsigned int max)
{
	unsigned int v;

	if (!val || kstrtouint(val, 0, &v) || v < min || v > max) {
		pr_err("%s: %s=%.*s refused: must be an integer in %u..%u\n",
		       KBUILD_MODNAME, kp->name,
		       val ? (int)strcspn(val, "\n") : 0, val ?: "", min, max);
		return -EINVAL;
	}
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

/**
 * RDS_PARAM_UINT - define a uint module parameter checked against a range
 * @name: the parameter's name (/sys/module/<module>/parameters/@name)
 * @var: the unsigned int it sets
 * @min: smallest value accepted
 * @max: largest value accepted
 * @perm: sysfs permissions: 0444 (load time only) or 0644 (also live)
 * @desc: its MODULE_PARM_DESC text
 *
 * Every value, at load and through sysfs, goes through
 * rds_param_set_uint_range(); reads use param_get_uint().
 */
#define RDS_PARAM_UINT(name, var, min, max, perm, desc)			\
static int name##_set(const char *val, const struct kernel_param *kp)	\
{									\
	return rds_param_set_uint_range(val, kp, min, max);		\
}									\
static const struct kernel_param_ops name##_ops = {			\
	.set	= name##_set,						\
	.get	= param_get_uint,					\
};									\
module_param_cb(name, &name##_ops, &var, perm);				\
__MODULE_PARM_TYPE(name, "uint");					\
MODULE_PARM_DESC(name, desc)

/* ------------------------------------------------------------------------
 * Internal to rds.ko (not for transports)
 * ------------------------------------------------------------------------
 */
struct rds_connection *rds_conn_lookup_or_create(struct rds_sock *rs,
						 const struct in6_addr *faddr,
						 int dev_if, gfp_t gfp);
void rds_conn_destroy_trans(struct rds_transport *trans);
int rds_conn_init(void);
void rds_conn_exit(void);
int rds_threads_init(void);
void rds_threads_exit(void);
void rds_connect_worker(struct work_struct *work);
void rds_recv_worker(struct work_struct *work);
void rds_shutdown_worker(struct work_struct *work);

int rds_sendmsg(struct socket *sock, struct msghdr *msg, size_t payload_len);
void rds_send_drop_to(struct rds_sock *rs, const struct in6_addr *daddr,
		      __be16 dport);
void rds_send_path_purge(struct rds_conn_path *cp);
int rds_send_pong(struct rds_conn_path *cp, __be16 dport, gfp_t gfp);
bool rds_send_has_room(struct rds_sock *rs);

/* ------------------------------------------------------------------------
 * zcopy.c: MSG_ZEROCOPY pinning and completion cookies
 * ------------------------------------------------------------------------
 */

/*
 * Pieces of a MSG_ZEROCOPY scatterlist a transport may have to send in one
 * 4 KiB fragment: 2 covers one contiguous buffer at any alignment.  A
 * transport's t_zcopy_sges is at most this.
 */
#define RDS_ZCOPY_MAX_SGES	2

int rds_zcopy_parse_cookie(struct rds_sock *rs, struct rds_message *rm,
			   struct cmsghdr *cmsg, bool zcopy);
int rds_zcopy_attach(struct rds_message *rm, struct rds_transport *trans,
		     struct iov_iter *from, size_t len);
void rds_zcopy_queued(struct rds_message *rm);
void rds_zcopy_free(struct rds_message *rm);
void rds_zcopy_sent(struct rds_message *rm);
bool rds_zcopy_recv(struct rds_sock *rs, struct msghdr *msg);
bool rds_zcopy_pending(struct rds_sock *rs);
void rds_zcopy_sock_init(struct rds_sock *rs);
void rds_zcopy_sock_release(struct rds_sock *rs);

int rds_recvmsg(struct socket *sock, struct msghdr *msg, size_t size,
		int msg_flags);
void rds_clear_recv_queue(struct rds_sock *rs);
bool rds_recv_pending(struct rds_sock *rs);

int rds_message_copy_from_user(struct rds_message *rm, struct iov_iter *from,
			       size_t len);
int rds_message_inc_copy_to_user(struct rds_incoming *inc,
				 struct iov_iter *to);
void rds_message_exit(void);

/* ------------------------------------------------------------------------
 * rdma.c: MRs, RDMA/atomic ops, notifications
 * ------------------------------------------------------------------------
 */

int rds_cmsg_rdma(struct rds_sock *rs, struct rds_connection *conn,
		  struct rds_message *rm,
		  struct cmsghdr *cmsg);
int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen);
void rds_rdma_sock_init(struct rds_sock *rs);
void rds_op_pins_exit(void);
void rds_rdma_drop_keys(struct rds_sock *rs);
void rds_rdma_unuse(struct rds_sock *rs, u32 r_key);
void rds_rdma_unuse_inc(struct rds_sock *rs, struct rds_incoming *inc,
			u32 r_key);
int rds_rdma_check_send(struct rds_sock *rs, struct rds_message *rm,
			struct rds_connection *conn);
void rds_rdma_free_ops(struct rds_message *rm);
bool rds_rdma_msg_drop(struct rds_message *rm, int status);
void rds_rdma_msg_cancel(struct rds_message *rm);
int rds_notify_recv(struct rds_sock *rs, struct msghdr *msg);
bool rds_inc_held(struct rds_incoming *inc);
void rds_rdma_sendmsg_failed(struct rds_sock *rs, struct rds_message *rm);
int rds_rdma_xmit_ops(struct rds_conn_path *cp, struct rds_message *rm);
void rds_rdma_path_unwait(struct rds_conn_path *cp);

/**
 * rds_mr_reg_complete - an asynchronous registration finished
 * @mr: the MR whose ->get_mr() set RDS_MR_REG_PENDING
 * @ok: the key is valid in the HCA now; false: it never will be
 *
 * Messages naming @mr may leave now; after a failure they are dropped
 * unsent.  The transport still holds its reference on @mr.  Any context.
 */
void rds_mr_reg_complete(struct rds_mr *mr, bool ok);

/**
 * rds_mr_get - take a reference on an MR
 * @mr: the MR
 */
static inline void rds_mr_get(struct rds_mr *mr)
{
	refcount_inc(&mr->r_refcount);
}

/**
 * rds_mr_put - drop a reference on an MR
 * @mr: the MR
 *
 * The last one unpins the pages (from a work item) and frees @mr.  A
 * transport calls it once the key is dead and the pages are DMA unmapped.
 * Any context.
 */
void rds_mr_put(struct rds_mr *mr);

/**
 * rds_rdma_send_complete - the transport finished the RDMA op of @rm
 * @rm: the message
 * @status: RDS_RDMA_SUCCESS only if the op completed;
 *	RDS_RDMA_REMOTE_ERROR for a remote access/invalid request/operation
 *	error (bad or stale key), RDS_RDMA_DROPPED for a flushed WR (the
 *	connection went down), RDS_RDMA_OTHER_ERROR otherwise
 *
 * Queues the op's notification (always with NOTIFY_ME, on failure with
 * RDS_RECVERR) on the sending socket and wakes it; later calls for the
 * same op do nothing.  Any context.
 */
void rds_rdma_send_complete(struct rds_message *rm, int status);

/**
 * rds_atomic_send_complete - the transport finished the atomic op of @rm
 * @rm: the message
 * @status: as for rds_rdma_send_complete()
 *
 * The 8-byte result must have been written to the local buffer.
 * Any context.
 */
void rds_atomic_send_complete(struct rds_message *rm, int status);

/**
 * rds_inc_hold - hold delivery of @inc until rds_inc_unhold()
 * @inc: the message (from ->unuse_mr())
 *
 * Takes a reference on @inc too.  Any context.
 */
void rds_inc_hold(struct rds_incoming *inc);

/**
 * rds_inc_unhold - release a hold taken with rds_inc_hold()
 * @inc: the message
 *
 * When the last hold goes the message (and those after it) become
 * readable.  Drops the reference rds_inc_hold() took.  Any context.
 */
void rds_inc_unhold(struct rds_incoming *inc);

int rds_cong_init(void);
void rds_cong_exit(void);
struct rds_cong_map *rds_cong_from_addr(struct net *net,
					const struct in6_addr *addr, gfp_t gfp);
void rds_cong_add_conn(struct rds_connection *conn);
void rds_cong_remove_conn(struct rds_connection *conn);
void rds_cong_add_socket(struct rds_sock *rs);
void rds_cong_remove_socket(struct rds_sock *rs);
int rds_cong_wait(struct rds_cong_map *map, __be16 port, int nonblock,
		  struct rds_sock *rs, long *timeo);
void rds_cong_set_bit(struct rds_cong_map *map, __be16 port);
void rds_cong_clear_bit(struct rds_cong_map *map, __be16 port);
bool rds_cong_test_bit(struct rds_cong_map *map, __be16 port);
void rds_cong_queue_updates(struct rds_cong_map *map);
bool rds_cong_updated_since(unsigned long *recent);
extern wait_queue_head_t rds_poll_waitq;

extern struct rds_transport rds_loop_transport;
int rds_loop_init(void);
void rds_loop_exit(void);

int rds_sysctl_init(void);
void rds_sysctl_exit(void);
int rds_stats_init(void);
void rds_stats_exit(void);
void rds_conn_debugfs_show(struct seq_file *m);
int rds_debugfs_init(void);
void rds_debugfs_exit(void);

/* Fault injection sites, /sys/kernel/debug/rds/fail_* (debugfs.c). */
enum rds_fault {
	RDS_FAULT_CONN,		/* connection set-up */
	RDS_FAULT_RX,		/* receive side: softirq, refill, first refill */
	RDS_FAULT_TX,		/* congestion updates, atomics, pongs */
	RDS_FAULT_NR
};

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
bool rds_should_fail(enum rds_fault site);
#else
static inline bool rds_should_fail(enum rds_fault site)
{
	return false;
}
#endif

int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen);
void rds_info_sock_add(struct rds_sock *rs);
void rds_info_sock_del(struct rds_sock *rs);
int rds_info_init(void);
void rds_info_exit(void);
int rds_conn_info_init(void);
void rds_conn_info_exit(void);
void rds_trans_info_counters(struct rds_info_iter *it);

#endif /* _RDS_RDS_H */
