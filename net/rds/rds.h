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
 * transport, netns).  A connection has one path (struct rds_conn_path) for
 * the RDMA transport; the path is the unit of the state machine.
 *
 * State machine of a path (cp_state, changed only by rds_conn_path_transition):
 *
 *   DOWN --connect work--> CONNECTING --transport says up--> UP
 *   CONNECTING/UP --error or drop--> ERROR --shutdown work--> DISCONNECTING
 *   DISCONNECTING --transport shut down, queues reset--> DOWN --> (reconnect
 *   with bounded exponential backoff when there is something to send)
 *
 * The transport never frees a connection; rds.ko calls ->conn_path_shutdown()
 * from its shutdown work, in process context, and the transport returns only
 * once its QP is drained and no completion can reference the path any more.
 *
 * Messages on the send side are struct rds_message: a wire header plus a
 * scatterlist of payload pages.  The core queues them per path and calls the
 * transport's ->xmit() from the send worker (or directly from sendmsg when the
 * path is idle); a message stays on cp_retrans after it was sent until the
 * peer's ACK covers its sequence number (rds_send_drop_acked()).
 *
 * Received data comes up as struct rds_incoming, embedded in a transport
 * object that owns the payload; the core queues it on the destination socket
 * and copies it out with ->inc_copy_to_user().
 */
#ifndef _RDS_RDS_H
#define _RDS_RDS_H

#include <linux/types.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/refcount.h>
#include <linux/scatterlist.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/rhashtable.h>
#include <linux/uio.h>
#include <linux/rds.h>
#include <net/sock.h>

#include "rds_compat.h"

/* Wire constants: these must never change (interop with in-tree rds). */
#define RDS_FRAG_SHIFT		12
#define RDS_FRAG_SIZE		(1UL << RDS_FRAG_SHIFT)
#define RDS_MAX_MSG_SIZE	(1UL << 20)	/* payload and RDMA bytes */
#define RDS_CONG_MAP_BYTES	(65536 / 8)
#define RDS_CONG_MAP_PAGES	(PAGE_ALIGN(RDS_CONG_MAP_BYTES) / PAGE_SIZE)
#define RDS_PROBE_PORT		1

#define RDS_FLAG_CONG_BITMAP	0x01
#define RDS_FLAG_ACK_REQUIRED	0x02
#define RDS_FLAG_RETRANSMITTED	0x04
#define RDS_MAX_ADV_CREDIT	255

#define RDS_HEADER_EXT_SPACE	16

/**
 * struct rds_header - the 48-byte RDS header, identical on every transport
 * @h_sequence: per-path sequence number, from 1; 0 in ACK-only headers
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

struct rds_sock;
struct rds_connection;
struct rds_conn_path;
struct rds_message;
struct rds_incoming;
struct rds_transport;

/* Path states. */
enum rds_conn_state {
	RDS_CONN_DOWN = 0,
	RDS_CONN_CONNECTING,
	RDS_CONN_DISCONNECTING,
	RDS_CONN_UP,
	RDS_CONN_RESETTING,
	RDS_CONN_ERROR,
};

/**
 * struct rds_transport - what a transport provides to rds.ko
 * @t_name: name shown by SO_RDS_TRANSPORT users and RDS_INFO
 * @t_type: RDS_TRANS_IB, RDS_TRANS_TCP, ... (uapi values)
 * @t_owner: module that implements it; pinned while sockets use it
 * @t_item: entry in the transport list (rds.ko)
 * @t_prefer_loopback: local destinations use the loopback transport
 * @laddr_check: 0 if this transport can bind @addr, -EADDRNOTAVAIL otherwise
 * @conn_alloc: allocate the transport half of a connection (cp_transport_data)
 * @conn_free: free what conn_alloc made
 * @conn_path_connect: start connecting the path (process context)
 * @conn_path_shutdown: tear down the path and wait until it is quiet
 * @xmit: send (part of) @rm; returns bytes of header+payload consumed, or errno
 * @xmit_path_complete: called when the send worker has nothing more to send
 * @recv_path: refill receive buffers (process context)
 * @inc_copy_to_user: copy an incoming message's payload to @to
 * @inc_free: release an incoming message (last reference dropped)
 * @get_tos_map: map a user TOS to the TOS used on the wire
 */
struct rds_transport {
	char			t_name[16];
	unsigned int		t_type;
	struct module		*t_owner;
	struct list_head	t_item;
	unsigned int		t_prefer_loopback:1;

	int (*laddr_check)(struct net *net, const struct in6_addr *addr,
			   __u32 scope_id);
	int (*conn_alloc)(struct rds_connection *conn, gfp_t gfp);
	void (*conn_free)(void *data);
	int (*conn_path_connect)(struct rds_conn_path *cp);
	void (*conn_path_shutdown)(struct rds_conn_path *cp);
	int (*xmit)(struct rds_connection *conn, struct rds_message *rm,
		    unsigned int hdr_off, unsigned int sg, unsigned int off);
	void (*xmit_path_complete)(struct rds_conn_path *cp);
	int (*recv_path)(struct rds_conn_path *cp);
	int (*inc_copy_to_user)(struct rds_incoming *inc, struct iov_iter *to);
	void (*inc_free)(struct rds_incoming *inc);
	u8 (*get_tos_map)(u8 tos);
};

int rds_trans_register(struct rds_transport *trans);
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
 */
struct rds_sock {
	struct sock		rs_sk;
	struct rds_bind_key	rs_bound;
	struct rhash_head	rs_bound_node;
	struct in6_addr		rs_conn_addr;
	__be16			rs_conn_port;
	struct rds_transport	*rs_transport;
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

#endif /* _RDS_RDS_H */
