/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib.h - internal interfaces of rds_rdma.ko.
 *
 * Objects
 * =======
 *
 * struct rds_ib_device      one per RDMA device (ib.c): capabilities, PD,
 *                           the list of endpoints that use it.
 * struct rds_ib_connection  the transport half of one RDS connection path
 *                           (cp_transport_data); lives as long as the
 *                           connection and survives reconnects.
 * struct rds_ib_ep          one rdma_cm attempt: cm_id, QP, CQs, send and
 *                           receive rings.  An endpoint is made for every
 *                           connect attempt (active) or accepted request
 *                           (passive) and destroyed as a whole; nothing in
 *                           it is reused across reconnects.  That makes the
 *                           single recovery policy simple: on any error the
 *                           path is dropped, the endpoint drained (RQ, then
 *                           SQ) and destroyed, and the next connect builds a
 *                           fresh one.
 * struct rds_ib_incoming    a received message: the header and the pages
 *                           of its fragments, handed to rds.ko.
 *
 * File map: ib.c (device client, module), ib_cm.c (rdma_cm, negotiation,
 * endpoint set-up and teardown), ib_send.c (send ring, fragments, ACKs,
 * credits), ib_recv.c (receive ring, reassembly), ib_mr.c (FRWR MR pools,
 * key lifecycle), ib_regqp.c (registration QP, self-connected, and its
 * recovery), ib_inv.c (invalidation policy: remote
 * or batched local), ib_rdma.c (RDMA READ/WRITE of a message), ib_atomic.c
 * (atomics and masked-atomic emulation), ib_sysctl.c, ib_stats.c,
 * ib_info.c (RDS_INFO_IB_CONNECTIONS and the counters).
 */
#ifndef _RDS_IB_H
#define _RDS_IB_H

#include <linux/kref.h>
#include <linux/percpu.h>
#include <linux/percpu_counter.h>
#include <linux/wait.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rw.h>

#include "rds.h"

/* Wire and protocol constants shared with the in-tree rds_rdma. */
#define RDS_IB_PORT			18634	/* IPv4 listener */
#define RDS_IB_CM_PORT6			16385	/* IPv6 listener */
#define RDS_IB_BACKLOG			128
#define RDS_IB_RESOLVE_TIMEOUT_MS	5000
#define RDS_IB_RECV_SGE			2	/* header + one fragment */
#define RDS_IB_MAX_SGE			8	/* header + up to 7 data pieces */

/* RDS_PROTOCOL_* versions are in rds.h. */
/* What we propose as the active side: what the in-tree module proposes. */
#define RDS_IB_PROPOSED_VERSION		RDS_PROTOCOL_3_1
#define RDS_IB_MINOR_MASK		0x0003	/* 4.0 and 4.1 */

/* Reject reasons, a host-endian int in the REJ private data. */
#define RDS_IB_REJ_INCOMPAT		1	/* also "busy" for in-tree */
/*
 * Only ever sent to a peer that advertised RDS_IB_CAP_EXT: "we are the
 * side that wins a simultaneous connect; wait for our request".  The
 * in-tree module ignores rejects with a value above 1, so it must never see
 * this one.
 */
#define RDS_IB_REJ_RACED		0x52445301

/*
 * Extension capabilities, carried in the reserved1 byte of the private data
 * (offset 5 of the common part).  The in-tree module zeroes that byte when
 * it sends and never reads it when it receives (checked in Debian 6.1
 * ib_cm.c: only major, minor, mask, tos, ack_seq and credit are read), so
 * an in-tree peer neither sets nor notices these bits.  reserved2 is not
 * used: UEK gives it a meaning (fragment size).
 *
 * RDS_IB_CAP_EXT  the peer runs this module (enables the deterministic
 *                 simultaneous-connect rule and future negotiation).
 * Bits 1..7 are left for the memory registration issue (remote
 * invalidation, atomics); a capability is in use only if both sides set it.
 */
#define RDS_IB_CAP_EXT			0x01
/*
 * RDS_IB_CAP_SEND_INV  "I accept IB_WR_SEND_WITH_INV for my use-once keys"
 *                      (ib_inv.c); advertised per connection by the owner.
 */
#define RDS_IB_CAP_SEND_INV		0x02
/*
 * RDS_IB_CAP_IW_FIRST  iWARP only: "as the active side I send a frame as
 *                      soon as the connection is established", so the
 *                      passive side may wait for it before it sends (MPA
 *                      without RTR, RFC 5044: the responder must not
 *                      send first).  Set in the REQ by our active side on
 *                      iWARP devices (never in a REP); read by the passive
 *                      side only.
 */
#define RDS_IB_CAP_IW_FIRST		0x04
#define RDS_IB_CAP_MASK_OURS		(RDS_IB_CAP_EXT | RDS_IB_CAP_SEND_INV | \
					 RDS_IB_CAP_IW_FIRST)

/**
 * struct rds_ib_conn_priv_cmn - common part of the CM private data (wire)
 * @ricpc_protocol_major: proposed (REQ) or chosen (REP) major version
 * @ricpc_protocol_minor: minor version
 * @ricpc_protocol_minor_mask: minor versions of major 4 understood (be16)
 * @ricpc_dp_toss: TOS of the connection
 * @ricpc_caps: RDS_IB_CAP_* (reserved1 in-tree, ignored there)
 * @ricpc_reserved2: zero
 * @ricpc_ack_seq: last sequence number received in order (may be unaligned)
 * @ricpc_credit: receive credits; non-zero offers flow control
 */
struct rds_ib_conn_priv_cmn {
	u8	ricpc_protocol_major;
	u8	ricpc_protocol_minor;
	__be16	ricpc_protocol_minor_mask;
	u8	ricpc_dp_toss;
	u8	ricpc_caps;
	__be16	ricpc_reserved2;
	__be64	ricpc_ack_seq;
	__be32	ricpc_credit;
};

/* IPv4 private data: 32 bytes on the wire. */
struct rds_ib_connect_private {
	__be32				dp_saddr;
	__be32				dp_daddr;
	struct rds_ib_conn_priv_cmn	dp_cmn;
};

/* IPv6 private data: 56 bytes, all an IB CM REQ can carry. */
struct rds6_ib_connect_private {
	struct in6_addr			dp_saddr;
	struct in6_addr			dp_daddr;
	struct rds_ib_conn_priv_cmn	dp_cmn;
};

static_assert(sizeof(struct rds_ib_connect_private) == 32);
static_assert(sizeof(struct rds6_ib_connect_private) == 56);

union rds_ib_conn_priv {
	struct rds_ib_connect_private	ricp_v4;
	struct rds6_ib_connect_private	ricp_v6;
};

/* Defaults of the net.rds.ib sysctls (the in-tree values). */
#define RDS_IB_DEFAULT_SEND_WR		256
#define RDS_IB_DEFAULT_RECV_WR		1024
#define RDS_IB_DEFAULT_UNSIG_WR		16
#define RDS_IB_MAX_RING			(1U << 20)	/* sysctl bound */
/* Rings are clamped further so credits fit their 16-bit fields. */
#define RDS_IB_MAX_RING_USED		0xfff0
/*
 * Transport retries of the RC QP.  In-tree defaults to 1, which makes a
 * slow or lossy fabric (soft-RoCE under load) tear connections down for
 * nothing.  Not 7 either: soft-RoCE takes a retry_cnt of 7 as "retry
 * forever" (the IB spec gives that meaning to rnr_retry only), and a lost
 * READ response whose responder resource is gone is then retried forever,
 * the work request never completing and nothing reporting an error.
 * Module parameter rds_ib_retry_count, as in-tree, 0..7.
 */
#define RDS_IB_DEFAULT_RETRY_COUNT	6
extern unsigned int rds_ib_retry_count;
/*
 * Local ACK timeout of the RC QP, as the 5-bit exponent of the IB spec
 * (4.096 us << n): how long a sender waits for an ACK before it resends.
 * 0 leaves rdma_cm's choice (on RoCE about a second, from its packet
 * lifetime), which makes every lost packet a stall of that length on a
 * lossy link.  Module parameter rds_ib_ack_timeout (ours), read when a
 * connection is set up; not used on iWARP.
 */
extern unsigned int rds_ib_ack_timeout;
/*
 * RDMA op watchdog (ib_rdma.c): while RDMA ops are outstanding on an
 * endpoint and none completed for rds_ib_rdma_kick_ms, a zero-length RDMA
 * WRITE is posted to wake the provider's requester; with none completed for
 * rds_ib_rdma_timeout_ms (0: never) the connection is dropped, which
 * flushes the ops (RDS_RDMA_DROPPED) and reconnects.
 */
/*
 * REG_MRs of RDS_CMSG_RDMA_MAP registrations a connection QP may have in
 * flight (ib_mr.c, rds_ib_mr_conn_post()); more go to the registration QP.
 */
#define RDS_IB_REG_SQ			16
/*
 * Send queue entries beyond the rings: the ACK WR, the drain marker, the
 * kick, and the REG_MRs above
 */
#define RDS_IB_SQ_EXTRA			(3 + RDS_IB_REG_SQ)
#define RDS_IB_DEFAULT_RDMA_KICK_MS	1000
#define RDS_IB_DEFAULT_RDMA_TIMEOUT_MS	60000
extern unsigned int rds_ib_rdma_kick_ms;
extern unsigned int rds_ib_rdma_timeout_ms;

extern unsigned long rds_ib_sysctl_max_send_wr;
extern unsigned long rds_ib_sysctl_max_recv_wr;
extern unsigned long rds_ib_sysctl_max_unsig_wrs;
extern unsigned long rds_ib_sysctl_max_recv_allocation;
extern int rds_ib_sysctl_flow_control;

/*
 * Posted receive credits worth an ACK of their own (in-tree: 16), and
 * free receive slots worth a refill from the completion handler: at most
 * this, and half the ring on a smaller one (rds_ib_rx_batch()).
 */
#define RDS_IB_CREDIT_ACK_THRESH	16
/* The smallest receive ring made, whatever max_recv_wr says. */
#define RDS_IB_RECV_MIN			8
/*
 * Written into a receive slot's header buffer when the slot is posted: no
 * sender uses this sequence number, so a completion whose header still
 * carries it was never written by the HCA (rds_ib_recv_done_fn()).
 */
#define RDS_IB_RX_HDR_POISON		cpu_to_be64(U64_MAX)
/* Receive buffers reposted in one ib_post_recv() chain. */
#define RDS_IB_RECV_BATCH		16

/**
 * struct rds_ib_statistics - per-CPU counters, in-tree names and order
 */
struct rds_ib_statistics {
	u64	s_ib_connect_raced;
	u64	s_ib_listen_closed_stale;
	u64	s_ib_evt_handler_call;
	u64	s_ib_tasklet_call;
	u64	s_ib_tx_cq_event;
	u64	s_ib_tx_ring_full;
	u64	s_ib_tx_throttle;
	u64	s_ib_tx_sg_mapping_failure;
	u64	s_ib_tx_stalled;
	u64	s_ib_tx_credit_updates;
	u64	s_ib_rx_cq_event;
	u64	s_ib_rx_ring_empty;
	u64	s_ib_rx_refill_from_cq;
	u64	s_ib_rx_refill_from_thread;
	u64	s_ib_rx_alloc_limit;
	u64	s_ib_rx_total_frags;
	u64	s_ib_rx_total_incs;
	u64	s_ib_rx_credit_updates;
	u64	s_ib_ack_sent;
	u64	s_ib_ack_send_failure;
	u64	s_ib_ack_send_delayed;
	u64	s_ib_ack_send_piggybacked;
	u64	s_ib_ack_received;
	u64	s_ib_rdma_mr_8k_alloc;
	u64	s_ib_rdma_mr_8k_free;
	u64	s_ib_rdma_mr_8k_used;
	u64	s_ib_rdma_mr_8k_pool_flush;
	u64	s_ib_rdma_mr_8k_pool_wait;
	u64	s_ib_rdma_mr_8k_pool_depleted;
	u64	s_ib_rdma_mr_1m_alloc;
	u64	s_ib_rdma_mr_1m_free;
	u64	s_ib_rdma_mr_1m_used;
	u64	s_ib_rdma_mr_1m_pool_flush;
	u64	s_ib_rdma_mr_1m_pool_wait;
	u64	s_ib_rdma_mr_1m_pool_depleted;
	u64	s_ib_rdma_mr_8k_reused;
	u64	s_ib_rdma_mr_1m_reused;
	u64	s_ib_atomic_cswp;
	u64	s_ib_atomic_fadd;
	/* memory registration and invalidation (ib_mr.c, ib_inv.c) */
	u64	s_ib_rdma_reg_wrs;
	u64	s_ib_rdma_reg_completions;
	u64	s_ib_rdma_reg_waits;
	u64	s_ib_rdma_remote_inv;
	u64	s_ib_rdma_remote_inv_bogus;
	u64	s_ib_rdma_local_inv;
	u64	s_ib_rdma_inv_batches;
	u64	s_ib_rdma_inv_completions;
	u64	s_ib_rdma_ops;
	u64	s_ib_rdma_wrs;
	u64	s_ib_rdma_completions;
	u64	s_ib_rdma_send_inv;
	u64	s_ib_rdma_unpostable;
	u64	s_ib_atomic_wrs;
	u64	s_ib_atomic_completions;
	u64	s_ib_atomic_emulated_retries;
	u64	s_ib_atomic_emulated;
	u64	s_ib_atomic_emulated_exhausted;
	u64	s_ib_rx_inc_reserve_used;
	u64	s_ib_rdma_mr_retired;
	u64	s_ib_rdma_mr_parked;
	u64	s_ib_rdma_mr_adopted;
	u64	s_ib_rdma_mr_key_exhausted;
	u64	s_ib_rdma_regqp_foreign_req;
	u64	s_ib_dev_lookups;
	u64	s_ib_rdma_mr_reaped;
	u64	s_ib_rdma_mr_unmap_keyed;
	u64	s_ib_rdma_reg_timeouts;
	u64	s_ib_rdma_reg_abandoned;
	u64	s_ib_rdma_kicks;
	u64	s_ib_rdma_timeouts;
	u64	s_ib_rx_stale_header;
	u64	s_ib_rx_stale_seq;
	u64	s_ib_cm_id_parked;
	u64	s_ib_cm_id_unparked;
	u64	s_ib_disc_wait_timeouts;
	u64	s_ib_tx_posts;
	u64	s_ib_iw_initiator_waits;
	u64	s_ib_rdma_reg_conn_wrs;
	u64	s_ib_rdma_reg_conn_early_inv;
};

DECLARE_PER_CPU_SHARED_ALIGNED(struct rds_ib_statistics, rds_ib_stats);
#define rds_ib_stats_inc(member)	this_cpu_inc(rds_ib_stats.member)
#define rds_ib_stats_add(member, n)	this_cpu_add(rds_ib_stats.member, n)

unsigned int rds_ib_stats_count(void);
const char *rds_ib_stats_name(unsigned int i);
void rds_ib_stats_sum(u64 *values);

/**
 * struct rds_ib_device - what we know about one RDMA device
 * @rid_dev: the verbs device
 * @rid_item: entry in rds_ib_devices
 * @rid_ref: references; the ib_client holds one until remove
 * @rid_pd: protection domain for everything RDS does on this device
 * @rid_frwr: FRWR registration possible (IB_DEVICE_MEM_MGT_EXTENSIONS)
 * @rid_max_frpl: max_fast_reg_page_list_len (pages per FRWR MR)
 * @rid_send_inv: the device can take remote invalidation (same flag as FRWR)
 * @rid_atomic_cap: atomic_cap
 * @rid_masked_atomic_cap: masked_atomic_cap
 * @rid_iwarp: iWARP device (no atomics at all)
 * @rid_max_wrs: max_qp_wr
 * @rid_max_cqe: max_cqe
 * @rid_max_sge: max_send_sge
 * @rid_max_rd_atom: max_qp_rd_atom (responder resources we can give)
 * @rid_max_init_rd_atom: max_qp_init_rd_atom (initiator depth we can use)
 * @rid_lock: protects @rid_eps, @rid_dead and @rid_parked
 * @rid_eps: endpoints on this device (struct rds_ib_ep.e_rid_item)
 * @rid_dead: the device is being removed; no new endpoint may use it
 * @rid_wait: woken when @rid_eps becomes empty
 * @rid_mr: registration state (ib_mr.c), made on the first registration
 * @rid_parked: cm_ids of destroyed endpoints waiting for their port to be
 *	active again before rdma_destroy_id() sends a CM message (ib_cm.c,
 *	rds_ib_cm_id_park()); protected by @rid_lock
 * @rid_events: port events of the device (ib.c, rds_ib_port_event())
 * @rid_unpark_work: destroys the parked cm_ids whose port is active, and
 *	rechecks while some wait
 * @rid_iova_epoch: this instance's epoch (ib.c, rds_ib_guid_epoch()),
 *	shifted into bits RDS_MR_IOVA_EPOCH_MASK of every MR's iova
 */
struct rds_ib_parked_id;

struct rds_ib_device {
	struct ib_device	*rid_dev;
	struct list_head	rid_item;
	struct kref		rid_ref;
	struct ib_pd		*rid_pd;
	bool			rid_frwr;
	u32			rid_max_frpl;
	bool			rid_send_inv;
	enum ib_atomic_cap	rid_atomic_cap;
	enum ib_atomic_cap	rid_masked_atomic_cap;
	bool			rid_iwarp;
	u32			rid_max_wrs;
	u32			rid_max_cqe;
	u32			rid_max_sge;
	u32			rid_max_rd_atom;
	u32			rid_max_init_rd_atom;
	spinlock_t		rid_lock;
	struct list_head	rid_eps;
	bool			rid_dead;
	wait_queue_head_t	rid_wait;
	struct rds_ib_mr_dev	*rid_mr;
	struct list_head	rid_parked;
	struct ib_event_handler	rid_events;
	struct delayed_work	rid_unpark_work;
	u32			rid_iova_epoch;
};

struct rds_ib_device *rds_ib_device_get(struct ib_device *dev);
void rds_ib_device_put(struct rds_ib_device *rid);
struct rds_ib_device *rds_ib_sock_device(struct rds_sock *rs);

/**
 * struct rds_ib_send_slot - one send ring entry (one fragment on the wire)
 * @ss_cqe: completion; done = rds_ib_send_done
 * @ss_wr: the SEND work request
 * @ss_sge: header SGE and the data SGEs (one per page of a copied payload;
 *	up to RDS_ZCOPY_MAX_SGES for a MSG_ZEROCOPY one)
 * @ss_rm: the message, on the slot of its last fragment only; the slot
 *	holds a reference and the DMA mapping until the send completes
 * @ss_seq: ring sequence number of this use of the slot
 *
 * Only two SGEs: the header and one piece of a fragment.  A message's
 * payload pages are whole pages, so a 4 KiB fragment never spans two of
 * them; rds_ib_frag_sges() refuses (EMSGSIZE) a fragment that would need
 * more, whatever the QP's max_send_sge.
 */
struct rds_ib_send_slot {
	struct ib_cqe		ss_cqe;
	struct ib_send_wr	ss_wr;
	struct ib_sge		ss_sge[1 + RDS_ZCOPY_MAX_SGES];
	struct rds_message	*ss_rm;
	u32			ss_seq;
};

/**
 * struct rds_ib_recv_slot - one receive ring entry
 * @rs_cqe: completion; done = rds_ib_recv_done
 * @rs_wr: the RECV work request
 * @rs_sge: header SGE and fragment SGE
 * @rs_page: the fragment page, owned by the slot while posted
 * @rs_dma: DMA address of @rs_page
 *
 * A slot belongs to the HCA from its post until its completion, and to the
 * completion handler until that handler advances e_recv_tail (under
 * e_recv_lock) after it took the page, unmapped it and copied the header
 * out.  Only then may a refill post it again.
 */
struct rds_ib_recv_slot {
	struct ib_cqe		rs_cqe;
	struct ib_recv_wr	rs_wr;
	struct ib_sge		rs_sge[RDS_IB_RECV_SGE];
	struct page		*rs_page;
	u64			rs_dma;
};

/**
 * struct rds_ib_incoming - a received message
 * @ii_inc: what rds.ko sees; the header is in ii_inc.i_hdr
 * @ii_nr_frags: fragments expected (1 for a 0-byte message)
 * @ii_got: fragments received so far
 * @ii_reserve: allocated from the reserve mempool (ib_recv.c)
 * @ii_pages: one page per fragment; @ii_got are valid
 */
struct rds_ib_incoming {
	struct rds_incoming	ii_inc;
	u32			ii_nr_frags;
	u32			ii_got;
	bool			ii_reserve;
	struct page		*ii_pages[];
};

/* Endpoint flags (e_flags). */
enum {
	RDS_IB_EP_UP,		/* ESTABLISHED handled, rings live */
	RDS_IB_EP_ERROR,	/* drop requested (once) */
	RDS_IB_EP_DEAD,		/* detached from its connection */
	RDS_IB_EP_FLOWCTL,	/* we obey the peer's credits */
	RDS_IB_EP_ADV_CREDITS,	/* the peer may obey ours: advertise them */
	RDS_IB_EP_ACK_REQUESTED,/* an ACK should go out */
	RDS_IB_EP_ACK_IN_FLIGHT,/* the ACK WR is posted */
	RDS_IB_EP_ON_DEVICE,	/* on rid_eps */
	RDS_IB_EP_TX_FULL,	/* xmit ran out of slots or credits: kick */
	RDS_IB_EP_KICK_IN_FLIGHT,/* the RDMA watchdog's kick WR is posted */
	RDS_IB_EP_IW_GATE,	/* iWARP passive: up only once the peer spoke */
	RDS_IB_EP_IW_HALF,	/* ESTABLISHED or the first receive: one of two */
	RDS_IB_EP_IW_HEARD,	/* the first receive was seen */
	RDS_IB_EP_WIRED,	/* ESTABLISHED seen: the peer may send */
	RDS_IB_EP_CM_DONE,	/* DISCONNECTED or another final CM event */
	RDS_IB_EP_CREDIT_OWED,	/* peer spent credits: see ib_send.c */
};

/* e_credits packs send credits (low 16 bits) and posted credits (high). */
#define RDS_IB_SEND_CREDITS(v)		((v) & 0xffff)
#define RDS_IB_POST_CREDITS(v)		((u32)(v) >> 16)
#define RDS_IB_SET_SEND_CREDITS(v)	((v) & 0xffff)
#define RDS_IB_SET_POST_CREDITS(v)	((v) << 16)

struct rds_ib_connection;

/**
 * struct rds_ib_ep - one rdma_cm attempt and everything it owns
 * @e_ic: the connection this attempt is for
 * @e_id: the cm_id; its context points back here
 * @e_rid: device record (a reference), set once the address resolved
 * @e_rid_item: entry in e_rid->rid_eps
 * @e_qp: the RC QP
 * @e_scq: send CQ
 * @e_rcq: receive CQ
 * @e_flags: RDS_IB_EP_*
 * @e_active: we sent the REQ
 * @e_isv6: IPv6 private data layout
 * @e_version: negotiated protocol version
 * @e_peer_caps: RDS_IB_CAP_* the peer advertised
 * @e_tos: TOS of the connection
 * @e_destroy_work: destroys an endpoint abandoned by a connect race
 * @e_race_work: gives up waiting for the winner of a connect race (active)
 *	or for the iWARP initiator's first frame (passive, RDS_IB_EP_IW_GATE)
 * @e_parked: preallocated entry for parking @e_id at teardown (ib_cm.c)
 * @e_max_send_sge: SGEs per send WR (QP capability)
 * @e_rdma_sq: send queue entries for RDMA/atomic WRs (rds_ib_ep_setup_qp)
 * @e_reg_avail: free send queue entries for REG_MRs (RDS_IB_REG_SQ)
 * @e_gen: number of this endpoint, unique for the module's life: an MR
 *	whose REG_MR was posted on our QP records it (m_reg_ep_gen)
 * @e_rw_mrs: max_rdma_ctxs of the QP: MRs of the RDMA core's pool where
 *	it uses MRs (iWARP, force_mr), else only send queue entries
 * @e_rw_mr_pages: pages one of them maps (the RDMA core's limit)
 * @e_send_nr: send ring size
 * @e_sends: send ring
 * @e_send_hdrs: one DMA-mapped header per send slot
 * @e_send_hdrs_dma: their DMA address (contiguous)
 * @e_send_head: ring sequence of the next slot to post (xmit only)
 * @e_send_tail: ring sequence of the oldest unreleased slot (completion)
 * @e_send_head_idx: slot of @e_send_head (xmit only)
 * @e_send_tail_idx: slot of @e_send_tail (completion)
 * @e_send_free: free send slots
 * @e_unsig: sends posted since the last signalled one (xmit only)
 * @e_pend_first: first slot of the chain built but not posted yet (xmit
 *	only; posted by rds_ib_send_flush())
 * @e_pend_last: its last slot
 * @e_pend_n: its length in WRs
 * @e_xmit_rm: message whose fragments are being posted (xmit only)
 * @e_xmit_frag: next fragment of @e_xmit_rm to post
 * @e_xmit_sg: position in @e_xmit_rm's scatterlist
 * @e_xmit_sgoff: offset within that entry
 * @e_ack_cqe: completion of the ACK WR; done = rds_ib_ack_done
 * @e_ack_wr: the ACK-only SEND
 * @e_ack_sge: its one SGE
 * @e_ack_hdr: the ACK header buffer
 * @e_ack_dma: its DMA address
 * @e_ack_lock: orders posting the ACK, and every other WR posted outside
 *	the transmit path, against endpoint death (drain)
 * @e_ack_next: highest sequence number received in order
 * @e_ack_recv: highest ACK the peer sent us
 * @e_credits: flow control credits (RDS_IB_*_CREDITS)
 * @e_recv_nr: receive ring size
 * @e_recvs: receive ring
 * @e_recv_hdrs: one DMA-mapped header per receive slot, e_recv_hdr_stride
 *	bytes apart (rds_ib_recv_hdr())
 * @e_recv_hdrs_dma: their DMA address (contiguous)
 * @e_recv_hdr_stride: a header rounded up to the DMA cache alignment
 * @e_recv_lock: serialises refills (completion vs worker) and every
 *	update of @e_recv_head, @e_recv_tail and @e_recv_head_idx
 * @e_recv_head: ring sequence of the next slot to post (e_recv_lock)
 * @e_recv_tail: ring sequence of the next slot to complete (e_recv_lock)
 * @e_recv_head_idx: slot of @e_recv_head (e_recv_lock)
 * @e_recv_inc: message being reassembled
 * @e_refill_work: refills the ring in process context
 */
struct rds_ib_ep {
	struct rds_ib_connection *e_ic;
	struct rdma_cm_id	*e_id;
	struct rds_ib_device	*e_rid;
	struct list_head	e_rid_item;
	struct ib_qp		*e_qp;
	struct ib_cq		*e_scq;
	struct ib_cq		*e_rcq;
	unsigned long		e_flags;
	bool			e_active;
	bool			e_isv6;
	u16			e_version;
	u8			e_peer_caps;
	u8			e_tos;
	struct work_struct	e_destroy_work;
	struct delayed_work	e_race_work;
	struct rds_ib_parked_id	*e_parked;

	/* send side */
	u32			e_max_send_sge;
	u32			e_rdma_sq;
	atomic_t		e_reg_avail;
	u64			e_gen;
	u32			e_rw_mrs;
	u32			e_rw_mr_pages;
	u32			e_send_nr;
	struct rds_ib_send_slot	*e_sends;
	struct rds_header	*e_send_hdrs;
	u64			e_send_hdrs_dma;
	u32			e_send_head;
	u32			e_send_tail;
	u32			e_send_head_idx;
	u32			e_send_tail_idx;
	atomic_t		e_send_free;
	u32			e_unsig;
	struct rds_ib_send_slot	*e_pend_first;
	struct rds_ib_send_slot	*e_pend_last;
	u32			e_pend_n;
	struct rds_message	*e_xmit_rm;
	u32			e_xmit_frag;
	u32			e_xmit_sg;
	u32			e_xmit_sgoff;

	struct ib_cqe		e_ack_cqe;
	struct ib_send_wr	e_ack_wr;
	struct ib_sge		e_ack_sge;
	struct rds_header	*e_ack_hdr;
	u64			e_ack_dma;
	spinlock_t		e_ack_lock;
	atomic64_t		e_ack_next;
	u64			e_ack_recv;
	atomic_t		e_credits;

	/* receive side */
	u64			e_rx_last_seq;	/* of a first fragment */
	/* rds_ib_recv_replay_every (test): the message to replay */
	struct page		*e_replay_page;
	struct rds_header	e_replay_hdr;
	u32			e_replay_len;
	u32			e_recv_nr;
	struct rds_ib_recv_slot	*e_recvs;
	void			*e_recv_hdrs;
	u64			e_recv_hdrs_dma;
	u32			e_recv_hdr_stride;
	spinlock_t		e_recv_lock;
	u32			e_recv_head;
	u32			e_recv_tail;
	u32			e_recv_head_idx;
	struct rds_ib_incoming	*e_recv_inc;
	struct delayed_work	e_refill_work;

	/* RDMA and atomic WRs in flight (ib_rdma.c, ib_atomic.c) */
	atomic_t		e_rdma_inuse;

	/* RDMA op watchdog (ib_rdma.c, rds_ib_rdma_wd_worker()) */
	atomic_t		e_rdma_posted;
	atomic_t		e_rdma_done;
	u32			e_wd_done;
	unsigned long		e_wd_since;
	struct delayed_work	e_rdma_wd;
	struct ib_cqe		e_kick_cqe;
	struct ib_rdma_wr	e_kick_wr;
};

/*
 * Ring sequence numbers (e_send_head/tail, e_recv_head/tail) are u32 and
 * wrap; only their differences are used (slots in use).  Ring sizes need
 * not be powers of two, so a slot is never "sequence % size": each ring
 * keeps the slot of its head (and the send ring of its tail) and steps it
 * with rds_ib_ring_next(), which stays right across the 2^32 wrap.
 */
static inline u32 rds_ib_ring_next(u32 idx, u32 nr)
{
	return idx + 1 == nr ? 0 : idx + 1;
}

/*
 * Receive buffers a new connection needs posted to come up: the two
 * fragments of the peer's congestion update, and with flow control one
 * more than the credit its sender keeps back (ib_cm.c).
 */
#define RDS_IB_RECV_SETUP_MIN		3U

/**
 * rds_ib_rx_batch - receive slots that make a refill, and credits an ACK
 * @ep: endpoint (e_recv_nr set)
 *
 * Half the ring, 4 to RDS_IB_CREDIT_ACK_THRESH.  Both must stay reachable
 * on any ring: a sender without flow control stops on RNR once the ring is
 * empty, one with it keeps its last credit for a credit update, so a ring
 * that is refilled, or credits that are advertised, only once more slots
 * are free than the sender can use stop the flow for good.  The lower
 * bound keeps ACK-only messages, which use a receive slot each, from
 * answering each other for ever.  A ring that max_recv_allocation keeps
 * below this many posted buffers never makes the batch: its credits go out
 * by the "peer may be out of credits" rule of rds_ib_credit_update_due().
 */
static inline u32 rds_ib_rx_batch(const struct rds_ib_ep *ep)
{
	return clamp_t(u32, ep->e_recv_nr / 2, 4, RDS_IB_CREDIT_ACK_THRESH);
}

/* First ring sequence of a new endpoint (test knob: start near the wrap). */
extern unsigned int rds_ib_ring_seq_start;

/*
 * Send queue entries of a connection QP beyond the send ring, for RDMA
 * and atomics: at least this many (e_rdma_sq may be more).
 */
#define RDS_IB_RDMA_SQ			256

/*
 * MRs in a connection QP's pool for the RDMA core (rdma_rw_ctx), made on
 * devices that must register RDMA READ sinks (iWARP) and under
 * ib_core.force_mr; none where MRs are only an optimisation (mlx5's
 * max_sgl_rd: the core then falls back to SGEs).  Two cover the largest
 * op (257 pages at up to 256 per MR); a READ holds its path, so the rest
 * serves silent READs and WRITEs in flight at the same time.
 */
#define RDS_IB_RW_MRS			16
/* Pages per MR of the RDMA core's pool, at most (rdma_rw_fr_page_list_len) */
#define RDS_IB_RW_MR_PAGES		256

/**
 * struct rds_ib_connection - transport state of one connection path
 * @ic_conn: the connection
 * @ic_cp: its (only) path
 * @ic_mutex: serialises CM events, connect and shutdown of this path
 * @ic_ep: current endpoint, or NULL; changed under ic_mutex and
 *	ic_ep_lock, read under either
 * @ic_ep_lock: lets atomic context (ib_info.c) read @ic_ep and the
 *	endpoint it points to
 * @ic_nr_eps: endpoints alive for this connection (current + abandoned)
 * @ic_wait: woken when @ic_nr_eps drops, and when an endpoint's CM
 *	connection is over (RDS_IB_EP_CM_DONE)
 * @ic_last_ack: last in-order sequence received, kept across reconnects
 *	for the private data ack_seq
 */
struct rds_ib_connection {
	struct rds_connection	*ic_conn;
	struct rds_conn_path	*ic_cp;
	struct mutex		ic_mutex;
	struct rds_ib_ep	*ic_ep;
	spinlock_t		ic_ep_lock;
	atomic_t		ic_nr_eps;
	wait_queue_head_t	ic_wait;
	u64			ic_last_ack;
};

/* ib.c */
extern struct rds_transport rds_ib_transport;
extern struct workqueue_struct *rds_ib_wq;
extern struct percpu_counter rds_ib_rx_allocated;

/* ib_cm.c */
int rds_ib_listen_init(void);
void rds_ib_listen_stop(void);
int rds_ib_conn_path_connect(struct rds_conn_path *cp);
void rds_ib_conn_path_shutdown(struct rds_conn_path *cp);
void rds_ib_ep_fail(struct rds_ib_ep *ep, int reason, int detail,
		    const char *why);
/* A failure with no more specific enum rds_drop_reason. */
#define rds_ib_ep_error(ep, why) rds_ib_ep_fail(ep, RDS_DROP_TRANSPORT, 0, why)
/* Posting a WR on the endpoint's QP failed: the errno is the detail. */
#define rds_ib_ep_post_error(ep, err, why) \
	rds_ib_ep_fail(ep, RDS_DROP_POST_ERROR, err, why)
#define rds_ib_ep_proto_error(ep, why) \
	rds_ib_ep_fail(ep, RDS_DROP_PROTOCOL, 0, why)
/* A failed completion: the wc status is the detail and the text. */
#define rds_ib_ep_wc_error(ep, wc) \
	rds_ib_ep_fail(ep, RDS_DROP_WC_ERROR, (wc)->status, \
		       ib_wc_status_msg((wc)->status))
void rds_ib_device_drop_eps(struct rds_ib_device *rid);
bool rds_ib_cm_unpark(struct rds_ib_device *rid, bool all);
void rds_ib_unpark_worker(struct work_struct *work);
void rds_ib_cm_unpark_wait(void);

/* ib_rdma.c: the RDMA op watchdog */
void rds_ib_rdma_wd_init(struct rds_ib_ep *ep);
void rds_ib_rdma_wd_stop(struct rds_ib_ep *ep);
void rds_ib_rdma_wd_arm(struct rds_ib_ep *ep);

/* ib_send.c */
int rds_ib_send_ring_alloc(struct rds_ib_ep *ep);
void rds_ib_send_ring_free(struct rds_ib_ep *ep);
int rds_ib_xmit(struct rds_conn_path *cp, struct rds_message *rm,
		unsigned int hdr_off, unsigned int sg, unsigned int off);
void rds_ib_xmit_path_complete(struct rds_conn_path *cp);
int rds_ib_send_flush(struct rds_ib_ep *ep);
void rds_ib_send_add_credits(struct rds_ib_ep *ep, unsigned int credits);
void rds_ib_tx_kick(struct rds_ib_ep *ep, struct rds_conn_path *cp);
void rds_ib_advertise_credits(struct rds_ib_ep *ep, unsigned int posted);
void rds_ib_credit_owed(struct rds_ib_ep *ep);
void rds_ib_attempt_ack(struct rds_ib_ep *ep);
void rds_ib_ep_iw_heard(struct rds_ib_ep *ep);
void rds_ib_set_ack(struct rds_ib_ep *ep, u64 seq, bool required);
void rds_ib_header_csum(struct rds_header *hdr);

/* ib_recv.c */
int rds_ib_recv_init(void);
void rds_ib_recv_exit(void);
int rds_ib_recv_ring_alloc(struct rds_ib_ep *ep);
void rds_ib_recv_ring_free(struct rds_ib_ep *ep);
int rds_ib_recv_refill(struct rds_ib_ep *ep, gfp_t gfp);
void rds_ib_refill_worker(struct work_struct *work);
int rds_ib_recv_path(struct rds_conn_path *cp);
void rds_ib_recv_done_fn(struct ib_cq *cq, struct ib_wc *wc);
int rds_ib_inc_copy_to_user(struct rds_incoming *inc, struct iov_iter *to);
void rds_ib_inc_free(struct rds_incoming *inc);

/* ib_info.c */
int rds_ib_info_init(void);
void rds_ib_info_exit(void);
void rds_ib_info_counters(struct rds_info_iter *it);

/* ib_sysctl.c */
int rds_ib_sysctl_init(void);
void rds_ib_sysctl_exit(void);

#include "ib_mr.h"

#endif /* _RDS_IB_H */
