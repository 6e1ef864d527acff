// SPDX-License-Identifier: GPL-2.0
/*
 * send.c - sendmsg(), the per-path send queue, the transmit loop, the
 * retransmit list and ACK processing.
 *
 * Theory of operation
 * ===================
 *
 * sendmsg() validates everything first (flags, address, sizes, cmsgs),
 * copies the payload into a new message, finds the connection (the socket's
 * cached one in the common case) and queues the message, under the socket's
 * rs_lock and then the path's cp_lock, on both the socket's send queue and
 * the path's send queue, assigning the next sequence number.  The socket's
 * payload bytes in flight (rs_snd_bytes) are limited to sk_sndbuf/2, the
 * in-tree limit, each message counting at least RDS_MSG_MIN_CHARGE (an
 * empty one is not free): a full socket gets EAGAIN or sleeps
 * (SO_SNDTIMEO).  A congested destination port (peer's map) gets ENOBUFS
 * or sleeps.  Pongs are not a socket's: a path holds at most
 * RDS_MAX_PONGS of them until the peer ACKs them, and leaves further
 * pings unanswered.
 *
 * rds_send_xmit() hands queued messages to the transport.  Only one context
 * per path is inside it at a time (the RDS_IN_XMIT bit, taken with acquire
 * semantics); another context that finds it busy sets RDS_XMIT_RETRY and
 * leaves, and the holder re-checks before it goes, so no wakeup is lost and
 * nobody spins.  The loop runs in the sending thread when the path is idle
 * (lowest latency) and in the path's send worker otherwise, in batches of
 * rds_send_batch_count messages with ->xmit_path_complete() after each batch
 * so the transport can post a whole chain at once.  A message moves to
 * cp_retrans as it is handed over, and is freed when the peer's ACK covers
 * it (rds_send_drop_acked(), called by the transport from its receive
 * completion).  Every max_unacked_packets messages or max_unacked_bytes
 * bytes, and when a socket's send buffer is half full, a message asks for
 * an ACK (ACK_REQUIRED), so ACKs are coalesced and the sender's queue
 * still drains.
 *
 * Message ownership: whoever clears RDS_MSG_ON_CONN (under cp_lock) owns the
 * path's reference and list linkage; whoever clears RDS_MSG_ON_SOCK (under
 * rs_lock) owns the socket's reference, the byte accounting and m_rs.
 * Cancel (RDS_CANCEL_SENT_TO, close) and ACK processing can therefore race
 * freely.
 */
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/sched/signal.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "rds.h"
#include <trace/events/rds.h>

#define RDS_SEND_BATCH_MAX	(1U << 20)

static unsigned int rds_send_batch_count = 1024;

/* Read-only: set at load time only (validated there). */
RDS_PARAM_UINT(send_batch_count, rds_send_batch_count, 1, RDS_SEND_BATCH_MAX,
	       0444,
	       " Messages handed to the transport per pass of the send loop (1..1048576, default 1024)");

bool rds_send_has_room(struct rds_sock *rs)
{
	return READ_ONCE(rs->rs_snd_bytes) < rds_sk_sndbuf(rs);
}

/* Take the message off its socket, if the socket still has it. */
static void rds_send_unlink_sock(struct rds_message *rm, struct rds_sock **wake)
{
	struct rds_sock *rs;
	unsigned long flags;
	bool owned = false;

	spin_lock_irqsave(&rm->m_rs_lock, flags);
	rs = rm->m_rs;
	if (rs) {
		spin_lock(&rs->rs_lock);
		if (test_and_clear_bit(RDS_MSG_ON_SOCK, &rm->m_flags)) {
			list_del_init(&rm->m_sock_item);
			rs->rs_snd_bytes -= rds_msg_charge(rm->m_payload_len);
			owned = true;
		}
		spin_unlock(&rs->rs_lock);
		if (owned)
			rm->m_rs = NULL;
	}
	spin_unlock_irqrestore(&rm->m_rs_lock, flags);

	if (!owned)
		return;
	/* Batch the wakeups: one per socket and run of messages. */
	if (*wake != rs) {
		if (*wake) {
			rds_wake_sk(*wake);
			sock_put(rds_rs_to_sk(*wake));
		}
		*wake = rs;
	} else {
		sock_put(rds_rs_to_sk(rs));
	}
	rds_message_put(rm);
}

/* Free messages already taken off their path (ON_CONN cleared). */
static void rds_send_free_list(struct list_head *list)
{
	struct rds_message *rm, *tmp;
	struct rds_sock *wake = NULL;

	list_for_each_entry_safe(rm, tmp, list, m_conn_item) {
		list_del_init(&rm->m_conn_item);
		if (test_bit(RDS_MSG_PONG, &rm->m_flags))
			atomic_dec(&rm->m_conn_path->cp_pongs);
		rds_send_unlink_sock(rm, &wake);
		rds_message_put(rm);
	}
	if (wake) {
		rds_wake_sk(wake);
		sock_put(rds_rs_to_sk(wake));
	}
}

static bool rds_send_is_acked(struct rds_message *rm, u64 ack,
			      bool (*is_acked)(struct rds_message *rm, u64 ack))
{
	if (is_acked)
		return is_acked(rm, ack);
	return be64_to_cpu(rm->m_inc.i_hdr.h_sequence) <= ack;
}

void rds_send_drop_acked(struct rds_conn_path *cp, u64 ack,
			 bool (*is_acked)(struct rds_message *rm, u64 ack))
{
	struct rds_message *rm, *tmp;
	unsigned long flags;
	unsigned int n = 0;
	LIST_HEAD(list);

	spin_lock_irqsave(&cp->cp_lock, flags);
	list_for_each_entry_safe(rm, tmp, &cp->cp_retrans, m_conn_item) {
		if (!rds_send_is_acked(rm, ack, is_acked))
			break;
		list_move_tail(&rm->m_conn_item, &list);
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
		n++;
	}
	spin_unlock_irqrestore(&cp->cp_lock, flags);

	if (n) {
		rds_stats_add(s_send_drop_acked, n);
		rds_send_free_list(&list);
	}
}
EXPORT_SYMBOL_GPL(rds_send_drop_acked);

void rds_send_path_reset(struct rds_conn_path *cp)
{
	struct rds_message *rm;
	unsigned long flags;

	spin_lock_irqsave(&cp->cp_lock, flags);
	list_for_each_entry(rm, &cp->cp_retrans, m_conn_item) {
		set_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags);
		set_bit(RDS_MSG_RETRANSMITTED, &rm->m_flags);
	}
	list_splice_init(&cp->cp_retrans, &cp->cp_send_queue);
	cp->cp_unacked_packets = READ_ONCE(rds_sysctl_max_unacked_packets);
	cp->cp_unacked_bytes = READ_ONCE(rds_sysctl_max_unacked_bytes);
	spin_unlock_irqrestore(&cp->cp_lock, flags);
}
EXPORT_SYMBOL_GPL(rds_send_path_reset);

/**
 * rds_send_path_purge - drop everything queued on a path (destroy)
 * @cp: path, DOWN and with no worker left
 */
void rds_send_path_purge(struct rds_conn_path *cp)
{
	struct rds_message *rm;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&cp->cp_lock, flags);
	list_splice_init(&cp->cp_retrans, &list);
	list_splice_tail_init(&cp->cp_send_queue, &list);
	list_for_each_entry(rm, &list, m_conn_item)
		clear_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	spin_unlock_irqrestore(&cp->cp_lock, flags);
	rds_send_free_list(&list);
}

/**
 * rds_send_drop_to - cancel a socket's messages to one destination, or all
 * @rs: socket
 * @daddr: destination address, NULL for every message (close)
 * @dport: destination port (ignored when @daddr is NULL)
 *
 * Process context (close(), setsockopt()): may sleep.
 */
void rds_send_drop_to(struct rds_sock *rs, const struct in6_addr *daddr,
		      __be16 dport)
{
	struct rds_message *rm, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->rs_lock, flags);
	list_for_each_entry_safe(rm, tmp, &rs->rs_send_queue, m_sock_item) {
		if (daddr && (!ipv6_addr_equal(daddr, &rm->m_daddr) ||
			      dport != rm->m_inc.i_hdr.h_dport))
			continue;
		list_move_tail(&rm->m_sock_item, &list);
		clear_bit(RDS_MSG_ON_SOCK, &rm->m_flags);
		rs->rs_snd_bytes -= rds_msg_charge(rm->m_payload_len);
	}
	spin_unlock_irqrestore(&rs->rs_lock, flags);

	if (list_empty(&list))
		return;
	rds_wake_sk(rs);

	/*
	 * Off their paths first, each path's messages in one hold of its
	 * lock: the send loop takes a path's queue in order under that lock,
	 * so it has sent a prefix of them and none of the rest, and what is
	 * never sent is the newest of the socket's messages on each path.
	 * Their ops are cancelled only then, so that no message the loop
	 * still takes completes unsent (ops cancelled) ahead of one it sends.
	 */
	while (!list_empty(&list)) {
		struct rds_conn_path *cp;
		LIST_HEAD(batch);
		LIST_HEAD(unlinked);

		cp = list_first_entry(&list, struct rds_message,
				      m_sock_item)->m_conn_path;
		list_for_each_entry_safe(rm, tmp, &list, m_sock_item)
			if (rm->m_conn_path == cp)
				list_move_tail(&rm->m_sock_item, &batch);
		if (cp) {
			spin_lock_irqsave(&cp->cp_lock, flags);
			list_for_each_entry(rm, &batch, m_sock_item)
				if (test_and_clear_bit(RDS_MSG_ON_CONN,
						       &rm->m_flags))
					list_move_tail(&rm->m_conn_item,
						       &unlinked);
			spin_unlock_irqrestore(&cp->cp_lock, flags);
		}
		/* The path's references; the socket's keep them alive. */
		list_for_each_entry_safe(rm, tmp, &unlinked, m_conn_item) {
			list_del_init(&rm->m_conn_item);
			rds_message_put(rm);
		}

		list_for_each_entry_safe(rm, tmp, &batch, m_sock_item) {
			list_del_init(&rm->m_sock_item);
			rds_rdma_msg_cancel(rm);
			spin_lock_irqsave(&rm->m_rs_lock, flags);
			rm->m_rs = NULL;
			spin_unlock_irqrestore(&rm->m_rs_lock, flags);
			sock_put(rds_rs_to_sk(rs));
			rds_message_put(rm);
		}
		/* Many destinations: one pass over @list per path. */
		cond_resched();
	}
}

static bool rds_acquire_in_xmit(struct rds_conn_path *cp)
{
	return !test_and_set_bit_lock(RDS_IN_XMIT, &cp->cp_flags);
}

static void rds_release_in_xmit(struct rds_conn_path *cp)
{
	clear_bit_unlock(RDS_IN_XMIT, &cp->cp_flags);
	smp_mb__after_atomic();
	if (waitqueue_active(&cp->cp_waitq))
		wake_up_all(&cp->cp_waitq);
}

/*
 * @rm is complete but went nowhere, its ops reported (RDS_MSG_UNSENT): no
 * ACK will ever name its sequence number, so take it off cp_retrans and
 * its socket now, as an ACK would (unless one did already).  An ACK it
 * was to ask for is asked for by the next message.
 */
static void rds_send_drop_unsent(struct rds_conn_path *cp,
				 struct rds_message *rm)
{
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&cp->cp_lock, flags);
	if (test_and_clear_bit(RDS_MSG_ON_CONN, &rm->m_flags))
		list_move_tail(&rm->m_conn_item, &list);
	if (test_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags))
		cp->cp_unacked_packets = 0;
	spin_unlock_irqrestore(&cp->cp_lock, flags);
	rds_send_free_list(&list);
}

/* Advance the transmit cursor by @bytes; true when the message is done. */
static bool rds_send_advance(struct rds_conn_path *cp, struct rds_message *rm,
			     unsigned int bytes)
{
	unsigned int hdr = sizeof(struct rds_header);

	if (cp->cp_xmit_hdr_off < hdr) {
		unsigned int n = min(bytes, hdr - cp->cp_xmit_hdr_off);

		cp->cp_xmit_hdr_off += n;
		bytes -= n;
	}
	while (bytes && cp->cp_xmit_sg < rm->data.op_nents) {
		struct scatterlist *sg = &rm->data.op_sg[cp->cp_xmit_sg];
		unsigned int n = min(bytes, sg->length - cp->cp_xmit_data_off);

		cp->cp_xmit_data_off += n;
		bytes -= n;
		if (cp->cp_xmit_data_off == sg->length) {
			cp->cp_xmit_sg++;
			cp->cp_xmit_data_off = 0;
		}
	}
	return cp->cp_xmit_hdr_off == hdr &&
	       cp->cp_xmit_sg == rm->data.op_nents;
}

/*
 * Next message to transmit: a congestion update first, then the queue.  An
 * update that cannot be built (no memory) stays queued and sets *cong_nomem,
 * so that the caller retries it later instead of at once.
 */
static struct rds_message *rds_send_next(struct rds_conn_path *cp,
					 bool *cong_nomem)
{
	struct rds_connection *conn = cp->cp_conn;
	struct rds_message *rm;
	unsigned long flags;

	if (test_and_clear_bit(RDS_CONG_UPDATE_QUEUED, &cp->cp_flags)) {
		rm = rds_cong_build_update(conn->c_lcong);
		if (rm) {
			rm->m_conn_path = cp;
			rm->m_inc.i_conn = conn;
			rm->m_inc.i_conn_path = cp;
			return rm;
		}
		set_bit(RDS_CONG_UPDATE_QUEUED, &cp->cp_flags);
		rds_stats_inc(s_cong_send_error);
		*cong_nomem = true;
	}

	spin_lock_irqsave(&cp->cp_lock, flags);
	if (list_empty(&cp->cp_send_queue)) {
		spin_unlock_irqrestore(&cp->cp_lock, flags);
		return NULL;
	}
	rm = list_first_entry(&cp->cp_send_queue, struct rds_message,
			      m_conn_item);
	list_move_tail(&rm->m_conn_item, &cp->cp_retrans);
	rds_message_addref(rm);		/* the cursor's reference */

	if (test_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags) ||
	    --cp->cp_unacked_packets <= 0 ||
	    (cp->cp_unacked_bytes -= rm->m_payload_len) <= 0) {
		set_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags);
		cp->cp_unacked_packets = READ_ONCE(rds_sysctl_max_unacked_packets);
		cp->cp_unacked_bytes = READ_ONCE(rds_sysctl_max_unacked_bytes);
		rds_stats_inc(s_send_ack_required);
	}
	spin_unlock_irqrestore(&cp->cp_lock, flags);

	if (test_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags))
		rm->m_inc.i_hdr.h_flags |= RDS_FLAG_ACK_REQUIRED;
	if (test_bit(RDS_MSG_RETRANSMITTED, &rm->m_flags))
		rm->m_inc.i_hdr.h_flags |= RDS_FLAG_RETRANSMITTED;
	return rm;
}

int rds_send_xmit(struct rds_conn_path *cp)
{
	struct rds_transport *trans = cp->cp_conn->c_trans;
	unsigned int limit = max(READ_ONCE(rds_send_batch_count), 1U);
	unsigned int batch = 0;
	struct rds_message *rm;
	bool more, cong_nomem;
	int ret;

restart:
	cong_nomem = false;
	if (!rds_acquire_in_xmit(cp)) {
		rds_stats_inc(s_send_lock_contention);
		set_bit(RDS_XMIT_RETRY, &cp->cp_flags);
		/* The holder may have checked just before we set the bit. */
		smp_mb__after_atomic();
		if (!rds_acquire_in_xmit(cp))
			return 0;
	}
	clear_bit(RDS_XMIT_RETRY, &cp->cp_flags);

	if (!rds_conn_path_up(cp)) {
		rds_release_in_xmit(cp);
		rds_conn_path_connect_if_down(cp);
		return 0;
	}
	WRITE_ONCE(cp->cp_send_gen, cp->cp_send_gen + 1);

	if (trans->xmit_path_prepare)
		trans->xmit_path_prepare(cp);

	ret = 0;
	for (;;) {
		rm = cp->cp_xmit_rm;
		if (!rm) {
			if (batch >= limit) {
				ret = -EAGAIN;
				break;
			}
			rm = rds_send_next(cp, &cong_nomem);
			if (!rm)
				break;
			cp->cp_xmit_rm = rm;
			cp->cp_xmit_hdr_off = 0;
			cp->cp_xmit_sg = 0;
			cp->cp_xmit_data_off = 0;
			cp->cp_xmit_rdma_sent = 0;
			cp->cp_xmit_atomic_sent = 0;
			trace_rds_send(cp, &rm->m_inc.i_hdr);
		}

		ret = rds_rdma_xmit_ops(cp, rm);
		if (!ret)
			ret = trans->xmit(cp, rm, cp->cp_xmit_hdr_off,
					  cp->cp_xmit_sg, cp->cp_xmit_data_off);
		if (ret <= 0) {
			/* Nobody kicks for memory: -ENOMEM is retried below. */
			if (ret == 0 || ret == -EAGAIN) {
				set_bit(RDS_LL_SEND_FULL, &cp->cp_flags);
				ret = -EAGAIN;
			} else if (ret != -ENOMEM) {
				rds_conn_path_error(cp, "xmit failed: %d\n", ret);
			}
			break;
		}
		if (rds_send_advance(cp, rm, ret)) {
			cp->cp_xmit_rm = NULL;
			if (test_bit(RDS_MSG_UNSENT, &rm->m_flags))
				rds_send_drop_unsent(cp, rm);
			rds_message_put(rm);
			batch++;
		}
		ret = 0;
		if (!rds_conn_path_up(cp))
			break;
	}

	if (trans->xmit_path_complete)
		trans->xmit_path_complete(cp);
	rds_release_in_xmit(cp);

	if (ret == -EAGAIN && test_bit(RDS_LL_SEND_FULL, &cp->cp_flags)) {
		/* The transport kicks us; a kick that came early set RETRY. */
		if (test_and_clear_bit(RDS_XMIT_RETRY, &cp->cp_flags)) {
			clear_bit(RDS_LL_SEND_FULL, &cp->cp_flags);
			queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
		}
		return ret;
	}
	if (ret == -ENOMEM) {
		/* The transport is short of memory: try again shortly. */
		queue_delayed_work(rds_wq, &cp->cp_send_w, 2);
		return ret;
	}
	if (ret == -EAGAIN) {
		/* Batch limit: let others run, continue from the worker. */
		rds_stats_inc(s_send_immediate_retry);
		queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
		return ret;
	}
	if (ret)
		return ret;

	/*
	 * Did someone queue or knock while we were finishing?  A congestion
	 * update we could not build is not such a knock: retrying it at once
	 * would spin for as long as memory is short; the worker tries again
	 * shortly, as for -ENOMEM.
	 */
	smp_mb();
	more = test_bit(RDS_XMIT_RETRY, &cp->cp_flags) ||
	       (!cong_nomem &&
		test_bit(RDS_CONG_UPDATE_QUEUED, &cp->cp_flags)) ||
	       !list_empty(&cp->cp_send_queue);
	if (more && rds_conn_path_up(cp)) {
		rds_stats_inc(s_send_lock_queue_raced);
		if (batch < limit)
			goto restart;
		queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
	} else if (!more) {
		if (cong_nomem)
			queue_delayed_work(rds_wq, &cp->cp_send_w, 2);
		else
			rds_stats_inc(s_send_queue_empty);
	}
	return 0;
}
EXPORT_SYMBOL_GPL(rds_send_xmit);

void rds_send_worker(struct work_struct *work)
{
	struct rds_conn_path *cp = container_of(to_delayed_work(work),
						struct rds_conn_path,
						cp_send_w);

	if (rds_conn_path_destroy_pending(cp) || !rds_conn_path_up(cp))
		return;
	/* rds_send_xmit() requeues us itself, -ENOMEM included. */
	rds_send_xmit(cp);
}
EXPORT_SYMBOL_GPL(rds_send_worker);

void rds_send_path_kick(struct rds_conn_path *cp)
{
	clear_bit(RDS_LL_SEND_FULL, &cp->cp_flags);
	set_bit(RDS_XMIT_RETRY, &cp->cp_flags);
	if (!rds_conn_path_destroy_pending(cp))
		queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
}
EXPORT_SYMBOL_GPL(rds_send_path_kick);

/* Queue a kernel-made message (pong) on a path. */
static void rds_send_queue_kernel(struct rds_conn_path *cp,
				  struct rds_message *rm)
{
	unsigned long flags;

	rm->m_conn_path = cp;
	rm->m_inc.i_conn = cp->cp_conn;
	rm->m_inc.i_conn_path = cp;
	spin_lock_irqsave(&cp->cp_lock, flags);
	rm->m_inc.i_hdr.h_sequence = cpu_to_be64(cp->cp_next_tx_seq++);
	rm->m_ack_seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);
	set_bit(RDS_MSG_HAS_ACK_SEQ, &rm->m_flags);
	rds_message_addref(rm);
	list_add_tail(&rm->m_conn_item, &cp->cp_send_queue);
	set_bit(RDS_MSG_ON_CONN, &rm->m_flags);
	spin_unlock_irqrestore(&cp->cp_lock, flags);
}

/**
 * rds_send_pong - answer a ping
 * @cp: path to answer on
 * @dport: the ping's source port
 * @gfp: allocation flags of the caller's context
 *
 * A path holds at most RDS_MAX_PONGS pongs until the peer ACKs them: a
 * peer that floods pings and never ACKs gets no more answers.
 *
 * Return: 0, -ENOBUFS (too many pongs held) or -ENOMEM.
 */
int rds_send_pong(struct rds_conn_path *cp, __be16 dport, gfp_t gfp)
{
	struct rds_message *rm;

	if (atomic_inc_return(&cp->cp_pongs) > RDS_MAX_PONGS) {
		atomic_dec(&cp->cp_pongs);
		return -ENOBUFS;
	}
	rm = rds_should_fail(RDS_FAULT_TX) ? NULL : rds_message_alloc(0, gfp);
	if (!rm) {
		atomic_dec(&cp->cp_pongs);
		return -ENOMEM;
	}
	rds_message_populate_header(&rm->m_inc.i_hdr, 0, dport, 0);
	rm->m_daddr = cp->cp_conn->c_faddr;
	set_bit(RDS_MSG_PONG, &rm->m_flags);
	rds_send_queue_kernel(cp, rm);
	rds_message_put(rm);
	rds_stats_inc(s_send_pong);

	if (rds_conn_path_up(cp)) {
		if (!rds_conn_path_destroy_pending(cp))
			queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
	} else {
		rds_conn_path_connect_if_down(cp);
	}
	return 0;
}

/*
 * Parse the sendmsg cmsgs.  @zcopy: MSG_ZEROCOPY, which needs exactly one
 * RDS_CMSG_ZCOPY_COOKIE (and the cookie needs MSG_ZEROCOPY).
 */
static int rds_send_cmsgs(struct rds_sock *rs, struct rds_connection *conn,
			  struct rds_message *rm, struct msghdr *msg,
			  bool zcopy)
{
	struct cmsghdr *cmsg;
	int ret = 0;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_ARGS:
		case RDS_CMSG_RDMA_DEST:
		case RDS_CMSG_RDMA_MAP:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
			ret = rds_cmsg_rdma(rs, conn, rm, cmsg);
			break;
		case RDS_CMSG_ZCOPY_COOKIE:
			ret = rds_zcopy_parse_cookie(rs, rm, cmsg, zcopy);
			break;
		default:
			return -EINVAL;
		}
		if (ret)
			return ret;
	}
	return zcopy && !rm->m_zcopy ? -EINVAL : 0;
}

/**
 * rds_send_cmsg_precheck - the cmsg checks made before the size checks
 * @msg: the user's message
 *
 * In the in-tree order: a malformed cmsg header or an RDMA_ARGS cmsg too
 * short for its arguments is %-EINVAL before any size is judged, and the
 * RDMA bytes the RDMA_ARGS cmsgs announce (remote_vec.bytes) count against
 * RDS_MAX_MSG_SIZE like the payload.  rds_send_cmsgs() checks the rest.
 *
 * Return: 0, %-EINVAL or %-EMSGSIZE.
 */
static int rds_send_cmsg_precheck(struct msghdr *msg)
{
	struct rds_rdma_args args;
	struct cmsghdr *cmsg;
	u64 bytes = 0;

	for_each_cmsghdr(cmsg, msg) {
		if (!CMSG_OK(msg, cmsg))
			return -EINVAL;
		if (cmsg->cmsg_level != SOL_RDS ||
		    cmsg->cmsg_type != RDS_CMSG_RDMA_ARGS)
			continue;
		if (cmsg->cmsg_len < CMSG_LEN(sizeof(args)))
			return -EINVAL;
		memcpy(&args, CMSG_DATA(cmsg), sizeof(args));
		/* Each term is checked first: the sum cannot wrap. */
		if (args.remote_vec.bytes > RDS_MAX_MSG_SIZE)
			return -EMSGSIZE;
		bytes += args.remote_vec.bytes;
	}
	return bytes > RDS_MAX_MSG_SIZE ? -EMSGSIZE : 0;
}

/**
 * rds_send_cmsg_kinds - the cmsg checks made after the size checks
 * @msg: the user's message
 * @zcopy: MSG_ZEROCOPY
 *
 * In the in-tree order (its rds_rm_size()), before the message is
 * allocated and the connection looked up or made: an SOL_RDS cmsg of an
 * unknown type, cmsgs that hand over a cookie (RDMA_DEST, RDMA_MAP) mixed
 * with ops (RDMA_ARGS, atomics), and MSG_ZEROCOPY without a
 * RDS_CMSG_ZCOPY_COOKIE are %-EINVAL.  rds_send_cmsgs() checks the rest.
 *
 * Return: 0 or %-EINVAL.
 */
static int rds_send_cmsg_kinds(struct msghdr *msg, bool zcopy)
{
	bool cookie = false, op = false, zcookie = false;
	struct cmsghdr *cmsg;

	for_each_cmsghdr(cmsg, msg) {
		if (cmsg->cmsg_level != SOL_RDS)
			continue;
		switch (cmsg->cmsg_type) {
		case RDS_CMSG_RDMA_DEST:
		case RDS_CMSG_RDMA_MAP:
			cookie = true;
			break;
		case RDS_CMSG_RDMA_ARGS:
		case RDS_CMSG_ATOMIC_CSWP:
		case RDS_CMSG_ATOMIC_FADD:
		case RDS_CMSG_MASKED_ATOMIC_CSWP:
		case RDS_CMSG_MASKED_ATOMIC_FADD:
			op = true;
			break;
		case RDS_CMSG_ZCOPY_COOKIE:
			zcookie = true;
			break;
		default:
			return -EINVAL;
		}
	}
	return (cookie && op) || (zcopy && !zcookie) ? -EINVAL : 0;
}

/* Parse msg_name like the in-tree module; IPv4 comes back v4-mapped. */
static int rds_send_parse_name(struct msghdr *msg, struct in6_addr *daddr,
			       __be16 *dport, __u32 *scope_id)
{
	const struct sockaddr_in *sin = msg->msg_name;
	const struct sockaddr_in6 *sin6 = msg->msg_name;
	int addr_type;
	__be32 a;

	*scope_id = 0;
	if (msg->msg_namelen < (int)sizeof(*sin))
		return -EINVAL;
	switch (sin->sin_family) {
	case AF_INET:
		a = sin->sin_addr.s_addr;
		if (a == htonl(INADDR_ANY) || a == htonl(INADDR_BROADCAST) ||
		    ipv4_is_multicast(a))
			return -EINVAL;
		ipv6_addr_set_v4mapped(a, daddr);
		*dport = sin->sin_port;
		return 0;
#if IS_ENABLED(CONFIG_IPV6)
	case AF_INET6:
		if (msg->msg_namelen < (int)sizeof(*sin6))
			return -EINVAL;
		addr_type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(addr_type & IPV6_ADDR_UNICAST)) {
			if (!(addr_type & IPV6_ADDR_MAPPED))
				return -EINVAL;
			a = sin6->sin6_addr.s6_addr32[3];
			if (a == htonl(INADDR_ANY) ||
			    a == htonl(INADDR_BROADCAST) ||
			    ipv4_is_multicast(a))
				return -EINVAL;
		}
		if (addr_type & IPV6_ADDR_LINKLOCAL) {
			if (!sin6->sin6_scope_id)
				return -EINVAL;
			*scope_id = sin6->sin6_scope_id;
		}
		*daddr = sin6->sin6_addr;
		*dport = sin6->sin6_port;
		return 0;
#endif
	default:
		return -EINVAL;
	}
}

/*
 * Queue @rm on the socket and the path if the send buffer has room.
 * Returns true when queued.
 */
static bool rds_send_queue_rm(struct rds_sock *rs, struct rds_conn_path *cp,
			      struct rds_message *rm, __be16 sport,
			      __be16 dport, bool *queued)
{
	unsigned long flags;
	u32 sndbuf;

	if (*queued)
		return true;

	spin_lock_irqsave(&rs->rs_lock, flags);
	sndbuf = rds_sk_sndbuf(rs);
	if (rs->rs_snd_bytes < sndbuf) {
		rs->rs_snd_bytes += rds_msg_charge(rm->m_payload_len);
		/* Half full: ask the peer to ACK soon so it drains. */
		if (rs->rs_snd_bytes >= sndbuf / 2)
			set_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags);

		rds_message_addref(rm);
		sock_hold(rds_rs_to_sk(rs));
		rm->m_rs = rs;
		list_add_tail(&rm->m_sock_item, &rs->rs_send_queue);
		set_bit(RDS_MSG_ON_SOCK, &rm->m_flags);
		rds_zcopy_queued(rm);

		rm->m_conn_path = cp;
		rm->m_inc.i_conn = cp->cp_conn;
		rm->m_inc.i_conn_path = cp;
		rds_message_addref(rm);

		spin_lock(&cp->cp_lock);
		rm->m_ack_seq = cp->cp_next_tx_seq++;
		rm->m_inc.i_hdr.h_sequence = cpu_to_be64(rm->m_ack_seq);
		set_bit(RDS_MSG_HAS_ACK_SEQ, &rm->m_flags);
		list_add_tail(&rm->m_conn_item, &cp->cp_send_queue);
		set_bit(RDS_MSG_ON_CONN, &rm->m_flags);
		spin_unlock(&cp->cp_lock);
		*queued = true;
	}
	spin_unlock_irqrestore(&rs->rs_lock, flags);
	return *queued;
}

int rds_sendmsg(struct socket *sock, struct msghdr *msg, size_t payload_len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	int nonblock = msg->msg_flags & MSG_DONTWAIT;
	long timeo = sock_sndtimeo(sk, nonblock);
	struct rds_connection *conn;
	struct rds_message *rm = NULL;
	struct rds_conn_path *cp;
	struct in6_addr daddr;
	bool queued = false, cache_conn = false;
	__u32 scope_id = 0;
	__be16 dport, sport;
	unsigned int nents;
	bool zcopy;
	int ret;

	if (msg->msg_flags & ~(MSG_DONTWAIT | MSG_CMSG_COMPAT | MSG_ZEROCOPY))
		return -EOPNOTSUPP;

	if (msg->msg_namelen) {
		ret = rds_send_parse_name(msg, &daddr, &dport, &scope_id);
		if (ret)
			return ret;
	}

	lock_sock(sk);
	if (!msg->msg_namelen) {
		daddr = rs->rs_conn_addr;
		dport = rs->rs_conn_port;
		scope_id = rs->rs_bound_scope_id;
	}
	if (ipv6_addr_any(&rs->rs_bound_addr) || ipv6_addr_any(&daddr)) {
		release_sock(sk);
		return -ENOTCONN;
	}
	if (msg->msg_namelen) {
		/* No IPv4 destination from an IPv6 socket or the reverse. */
		if (ipv6_addr_v4mapped(&daddr) ^
		    ipv6_addr_v4mapped(&rs->rs_bound_addr)) {
			release_sock(sk);
			return -EOPNOTSUPP;
		}
		if (scope_id != rs->rs_bound_scope_id) {
			if (!scope_id) {
				scope_id = rs->rs_bound_scope_id;
			} else if (rs->rs_bound_scope_id) {
				release_sock(sk);
				return -EINVAL;
			}
		}
	}
	sport = rs->rs_bound_port;
	release_sock(sk);

	ret = rds_send_cmsg_precheck(msg);
	if (ret)
		return ret;
	if (payload_len > RDS_MAX_MSG_SIZE || payload_len > rds_sk_sndbuf(rs))
		return -EMSGSIZE;

	zcopy = msg->msg_flags & MSG_ZEROCOPY;
	if (zcopy && (!sock_flag(sk, SOCK_ZEROCOPY) || !payload_len))
		return -EINVAL;

	nents = DIV_ROUND_UP(payload_len, PAGE_SIZE);
	if (zcopy) {
		/*
		 * Room for the user's pages as they lie, unless they are
		 * spread too thin to be sent from in place anyway.
		 */
		unsigned int most = RDS_ZCOPY_MAX_SGES *
			DIV_ROUND_UP(payload_len, RDS_FRAG_SIZE) + 1;

		nents = max_t(unsigned int, nents,
			      iov_iter_npages(&msg->msg_iter, most));
	}
	ret = rds_send_cmsg_kinds(msg, zcopy);
	if (ret)
		return ret;
	rm = rds_message_alloc(nents, GFP_KERNEL);
	if (!rm)
		return -ENOMEM;
	rm->m_daddr = daddr;
	/* The header first: cmsgs may add extension headers to it. */
	rds_message_populate_header(&rm->m_inc.i_hdr, sport, dport, 0);

	lock_sock(sk);
	conn = rs->rs_conn;
	if (!conn || !ipv6_addr_equal(&conn->c_faddr, &daddr) ||
	    conn->c_tos != rs->rs_tos || conn->c_dev_if != (int)scope_id ||
	    !ipv6_addr_equal(&conn->c_laddr, &rs->rs_bound_addr)) {
		conn = rds_conn_create_outgoing(sock_net(sk),
						&rs->rs_bound_addr, &daddr,
						rs->rs_transport,
						rs->rs_trans_pinned,
						rs->rs_tos, scope_id,
						GFP_KERNEL);
		if (IS_ERR(conn)) {
			release_sock(sk);
			ret = PTR_ERR(conn);
			goto out;
		}
		cache_conn = true;
	}
	release_sock(sk);
	cp = rds_conn_path0(conn);

	/*
	 * cmsgs before the copy: a bad cmsg costs no page.  After the
	 * connection, as in-tree: RDMA_MAP registers for it.
	 */
	ret = rds_send_cmsgs(rs, conn, rm, msg, zcopy);
	if (ret)
		goto out;
	/*
	 * The socket keeps the connection only now: a sendmsg() refused for
	 * its cmsgs leaves the socket as it was (SIOCRDSSETTOS still works;
	 * rds.rst, differences).
	 */
	if (cache_conn) {
		lock_sock(sk);
		rs->rs_conn = conn;
		release_sock(sk);
	}

	/* The payload: the connection's transport decides on zerocopy. */
	if (zcopy)
		ret = rds_zcopy_attach(rm, conn->c_trans, &msg->msg_iter,
				       payload_len);
	else if (payload_len)
		ret = rds_message_copy_from_user(rm, &msg->msg_iter,
						 payload_len);
	if (ret)
		goto out;

	ret = rds_rdma_check_send(rs, rm, conn);
	if (ret)
		goto out;
	if (rds_conn_path_destroy_pending(cp)) {
		ret = -EAGAIN;
		goto out;
	}
	rds_conn_path_connect_if_down(cp);

	ret = rds_cong_wait(conn->c_fcong, dport, nonblock, rs, &timeo);
	if (ret)
		goto out;

	while (!rds_send_queue_rm(rs, cp, rm, sport, dport, &queued)) {
		rds_stats_inc(s_send_queue_full);
		if (nonblock) {
			ret = -EAGAIN;
			goto out;
		}
		timeo = wait_event_interruptible_timeout(*sk_sleep(sk),
				rds_send_queue_rm(rs, cp, rm, sport, dport,
						  &queued),
				timeo);
		if (timeo > 0 || timeo == MAX_SCHEDULE_TIMEOUT)
			continue;
		ret = timeo ? sock_intr_errno(timeo) : -ETIMEDOUT;
		goto out;
	}
	rds_stats_inc(s_send_queued);
	rds_zcopy_sent(rm);

	if (rds_conn_path_up(cp))
		rds_send_xmit(cp);
	else
		rds_conn_path_connect_if_down(cp);

	rds_message_put(rm);
	return payload_len;

out:
	rds_rdma_sendmsg_failed(rs, rm);
	rds_message_put(rm);
	return ret;
}
