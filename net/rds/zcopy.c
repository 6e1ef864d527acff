// SPDX-License-Identifier: GPL-2.0
/*
 * zcopy.c - MSG_ZEROCOPY sends: pinning the user's pages, and the
 * completion cookies that tell the user it may reuse them.
 *
 * Theory of operation
 * ===================
 *
 * ABI (that of the in-tree RDS/TCP zerocopy): a socket with SO_ZEROCOPY
 * sends with MSG_ZEROCOPY and one RDS_CMSG_ZCOPY_COOKIE cmsg carrying a
 * u32 of its choice.  When the kernel no longer references the payload the
 * cookie is queued on the socket; poll() reports EPOLLIN and recvmsg()
 * hands the cookies out, up to RDS_MAX_ZCOOKIES at a time, in an
 * RDS_CMSG_ZCOPY_COMPLETION cmsg (struct rds_zcopy_cookies).
 *
 * Pinning.  When the connection's transport can send from arbitrary
 * pages (t_zcopy_sges) and the payload is at least zcopy_min_bytes, the
 * user's pages are referenced (iov_iter_get_pages2()) and become the
 * message's scatterlist as they are: any offset, any length, one entry per
 * page of each iovec.  A transport sends a 4 KiB fragment from at most
 * t_zcopy_sges entries, so a layout that would need more (many tiny
 * iovecs) is copied instead; so are payloads below the threshold and
 * messages on transports that deliver the sender's pages in place (the
 * loopback transport: the receiver would read the pages after the cookie
 * said they were free).  A copied MSG_ZEROCOPY message still gets its
 * cookie, as soon as sendmsg() queued it.  The pages referenced (not the
 * bytes) are charged to RLIMIT_MEMLOCK (mm_account_pinned_pages(),
 * skipped with CAP_IPC_LOCK); over the limit sendmsg() fails with
 * %-ENOMEM, as in-tree.  Adjacent iovecs in one page make one piece.
 *
 * Completion.  A pinned message's cookie is queued when the message is
 * freed: after the peer acknowledged it (or it was cancelled or failed)
 * *and* the transport dropped its references, i.e. its send completed
 * and its DMA mapping is gone.  A pinned message asks for its ACK at
 * once (RDS_MSG_ACK_REQUIRED), or a lone one would wait for unrelated
 * traffic: an idle path ACKs every max_unacked_packets messages.  Until then a retransmission after a reconnect still
 * reads the pages, so the user must not write them before the cookie.
 * A message that never made it onto the socket's queue (sendmsg() failed)
 * reports nothing.  Each message's struct rds_zcopy holds a reference on
 * the socket, so the queue outlives every message; after close() cookies
 * are dropped (rs_zcookie_dead).  The memlock charge is returned with
 * the cookie.  Each message's struct rds_zcopy is charged to the socket's
 * option memory (sock_kmalloc(), as TCP charges its notifications) until
 * its cookie is read or merged into an earlier batch: a socket whose
 * cookies go unread gets %-ENOBUFS instead of growing the queue without
 * bound.
 *
 * Context: rds_zcopy_attach() runs in sendmsg() (may sleep);
 * rds_zcopy_free() wherever the last message reference goes (any context,
 * so rs_zcookie_lock is taken with interrupts off and is a leaf lock).
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/uio.h>
#include <linux/skbuff.h>
#include <net/sock.h>
#include <net/compat.h>

#include "rds.h"

static unsigned int rds_zcopy_min_bytes = 16384;

RDS_PARAM_UINT(zcopy_min_bytes, rds_zcopy_min_bytes, 0, RDS_MAX_MSG_SIZE,
	       0644,
	       " MSG_ZEROCOPY payloads shorter than this are copied (0..1048576, default 16384)");

/**
 * struct rds_zcopy - the zerocopy state of one message
 * @zc_item: entry in rs_zcookie_queue once it carries cookies
 * @zc_rs: the sending socket (holds a reference)
 * @zc_mmp: the RLIMIT_MEMLOCK charge of the pinned pages
 * @zc_cookie: the user's cookie
 * @zc_queued: the message reached the socket's send queue
 * @zc_pinned: the payload is the user's pages (not a copy)
 * @zc_done: the cookies handed out by one recvmsg()
 */
struct rds_zcopy {
	struct list_head	zc_item;
	struct rds_sock		*zc_rs;
	struct mmpin		zc_mmp;
	u32			zc_cookie;
	bool			zc_queued;
	bool			zc_pinned;
	struct rds_zcopy_cookies zc_done;
};

/**
 * rds_zcopy_parse_cookie - take the cookie of a MSG_ZEROCOPY sendmsg()
 * @rs: the socket
 * @rm: the message being built
 * @cmsg: an RDS_CMSG_ZCOPY_COOKIE cmsg
 * @zcopy: the sendmsg() has MSG_ZEROCOPY (and SO_ZEROCOPY is on)
 *
 * Return: 0, or %-EINVAL for a cookie without MSG_ZEROCOPY, a short cmsg
 * or a second cookie; %-ENOBUFS when the socket's option memory
 * (net.core.optmem_max) is used up by messages in flight and unread
 * cookies.
 */
int rds_zcopy_parse_cookie(struct rds_sock *rs, struct rds_message *rm,
			   struct cmsghdr *cmsg, bool zcopy)
{
	struct rds_zcopy *zc;
	u32 cookie;

	if (!zcopy || rm->m_zcopy ||
	    cmsg->cmsg_len < CMSG_LEN(sizeof(cookie)))
		return -EINVAL;
	memcpy(&cookie, CMSG_DATA(cmsg), sizeof(cookie));
	/* Charged like TCP's notifications: in flight and unread. */
	zc = sock_kmalloc(rds_rs_to_sk(rs), sizeof(*zc), GFP_KERNEL);
	if (!zc)
		return -ENOBUFS;
	memset(zc, 0, sizeof(*zc));
	INIT_LIST_HEAD(&zc->zc_item);
	zc->zc_cookie = cookie;
	zc->zc_rs = rs;
	sock_hold(rds_rs_to_sk(rs));
	rm->m_zcopy = zc;
	return 0;
}

/* The most pieces of @rm's scatterlist any 4 KiB fragment spans. */
static unsigned int rds_zcopy_max_pieces(struct rds_message *rm)
{
	unsigned int i, pieces = 0, worst = 0;
	u64 pos = 0, cur = U64_MAX;

	for (i = 0; i < rm->data.op_nents; i++) {
		u32 len = rm->data.op_sg[i].length;
		u64 first = pos >> RDS_FRAG_SHIFT;
		u64 last = (pos + len - 1) >> RDS_FRAG_SHIFT;

		/* Another piece of the fragment the last one ended in? */
		pieces = first == cur ? pieces + 1 : 1;
		worst = max(worst, pieces);
		/* A piece that crosses a boundary opens the fragment it ends in. */
		if (last != first)
			pieces = 1;
		cur = last;
		pos += len;
	}
	return worst;
}

/* Undo rds_zcopy_pin() after @done bytes: pages, charge and iterator. */
static void rds_zcopy_unpin(struct rds_message *rm, struct iov_iter *from,
			    size_t done)
{
	struct rds_zcopy *zc = rm->m_zcopy;
	unsigned int i;

	iov_iter_revert(from, done);
	for (i = 0; i < rm->data.op_nents; i++)
		put_page(sg_page(&rm->data.op_sg[i]));
	rm->data.op_nents = 0;
	sg_init_table(rm->data.op_sg, rm->m_nents);
	mm_unaccount_pinned_pages(&zc->zc_mmp);
	memset(&zc->zc_mmp, 0, sizeof(zc->zc_mmp));
}

/*
 * Reference the user's pages into @rm.  Return: 1 when pinned, 0 when the
 * layout needs a copy (iterator restored), -EFAULT, -ENOMEM.
 */
static int rds_zcopy_pin(struct rds_message *rm, struct iov_iter *from,
			 size_t len, unsigned int max_pieces)
{
	struct rds_zcopy *zc = rm->m_zcopy;
	struct scatterlist *sg = rm->data.op_sg;
	size_t left = len;
	int npages;

	npages = iov_iter_npages(from, rm->m_nents + 1);
	if (npages > rm->m_nents)
		return 0;
	/* Every page referenced counts, however little of it is sent. */
	if (mm_account_pinned_pages(&zc->zc_mmp, (size_t)npages << PAGE_SHIFT))
		return -ENOMEM;
	while (left) {
		struct page *page;
		size_t start;
		ssize_t n;

		if (rm->data.op_nents == rm->m_nents)
			goto copy;	/* cannot happen: npages said so */
		n = iov_iter_get_pages2(from, &page, left, 1, &start);
		if (n <= 0) {
			rds_zcopy_unpin(rm, from, len - left);
			return n ? (int)n : -EFAULT;
		}
		left -= n;
		/* Adjacent iovecs in one page: one piece. */
		if (rm->data.op_nents && sg_page(sg - 1) == page &&
		    (sg - 1)->offset + (sg - 1)->length == start) {
			(sg - 1)->length += n;
			put_page(page);
			continue;
		}
		sg_set_page(sg, page, n, start);
		rm->data.op_nents++;
		sg++;
	}
	if (rds_zcopy_max_pieces(rm) <= max_pieces)
		return 1;
copy:
	rds_zcopy_unpin(rm, from, len - left);
	return 0;
}

/**
 * rds_zcopy_attach - attach the payload of a MSG_ZEROCOPY message
 * @rm: message with its cookie parsed (rm->m_zcopy), sg table of
 *	rm->m_nents entries
 * @trans: the transport of the connection it goes on
 * @from: user data
 * @len: payload bytes (> 0)
 *
 * Pins the pages when @trans and the layout allow it and @len is at least
 * zcopy_min_bytes; copies them otherwise.
 *
 * Return: 0, %-EFAULT or %-ENOMEM (RLIMIT_MEMLOCK or memory).
 */
int rds_zcopy_attach(struct rds_message *rm, struct rds_transport *trans,
		     struct iov_iter *from, size_t len)
{
	int ret = 0;
	unsigned int sges = READ_ONCE(trans->t_zcopy_sges);

	if (sges && user_backed_iter(from) &&
	    len >= READ_ONCE(rds_zcopy_min_bytes))
		ret = rds_zcopy_pin(rm, from, len, sges);
	if (ret < 0)
		return ret;
	if (ret) {
		rm->m_zcopy->zc_pinned = true;
		rm->m_payload_len = len;
		rm->m_inc.i_hdr.h_len = cpu_to_be32(len);
		rds_stats_inc(s_send_zcopy);
		rds_stats_add(s_send_zcopy_bytes, len);
		return 0;
	}
	rds_stats_inc(s_send_zcopy_copied);
	return rds_message_copy_from_user(rm, from, len);
}

/**
 * rds_zcopy_queued - the message reached the socket's send queue
 * @rm: the message (called under rs_lock)
 *
 * From now on its cookie is reported.  A pinned message asks the peer for
 * an ACK at once: its cookie waits for that ACK, and an idle path would
 * otherwise not ACK it before max_unacked_packets more messages.
 */
void rds_zcopy_queued(struct rds_message *rm)
{
	if (!rm->m_zcopy)
		return;
	rm->m_zcopy->zc_queued = true;
	if (rm->m_zcopy->zc_pinned)
		set_bit(RDS_MSG_ACK_REQUIRED, &rm->m_flags);
}

/* Return the charge and queue the cookie of a message that was queued. */
static void rds_zcopy_complete(struct rds_zcopy *zc)
{
	struct rds_sock *rs = zc->zc_rs;
	struct rds_zcopy *tail;
	unsigned long flags;
	bool wake = false;

	mm_unaccount_pinned_pages(&zc->zc_mmp);

	spin_lock_irqsave(&rs->rs_zcookie_lock, flags);
	if (zc->zc_queued && !rs->rs_zcookie_dead) {
		tail = list_empty(&rs->rs_zcookie_queue) ? NULL :
			list_last_entry(&rs->rs_zcookie_queue,
					struct rds_zcopy, zc_item);
		if (tail && tail->zc_done.num < RDS_MAX_ZCOOKIES) {
			tail->zc_done.cookies[tail->zc_done.num++] =
				zc->zc_cookie;
		} else {
			zc->zc_done.num = 1;
			zc->zc_done.cookies[0] = zc->zc_cookie;
			list_add_tail(&zc->zc_item, &rs->rs_zcookie_queue);
			zc = NULL;
		}
		wake = true;
	}
	spin_unlock_irqrestore(&rs->rs_zcookie_lock, flags);

	if (wake)
		rds_wake_sk(rs);
	if (zc)
		sock_kfree_s(rds_rs_to_sk(rs), zc, sizeof(*zc));
	sock_put(rds_rs_to_sk(rs));
}

/**
 * rds_zcopy_free - the message's pages are free: queue its cookie
 * @rm: message being freed, its payload pages already released
 *
 * Any context.
 */
void rds_zcopy_free(struct rds_message *rm)
{
	struct rds_zcopy *zc = xchg(&rm->m_zcopy, NULL);

	if (zc)
		rds_zcopy_complete(zc);
}

/**
 * rds_zcopy_sent - sendmsg() queued the message
 * @rm: the message (the caller holds a reference)
 *
 * A copied payload does not need the user's pages once sendmsg() has
 * queued it: its cookie goes at once, without waiting for an ACK, the
 * transport or, over loopback, the receiving socket.  Process context.
 */
void rds_zcopy_sent(struct rds_message *rm)
{
	struct rds_zcopy *zc = READ_ONCE(rm->m_zcopy);

	if (zc && !zc->zc_pinned) {
		zc = xchg(&rm->m_zcopy, NULL);
		if (zc)
			rds_zcopy_complete(zc);
	}
}

/**
 * rds_zcopy_recv - hand the oldest batch of cookies to recvmsg()
 * @rs: the socket
 * @msg: the user's msghdr
 *
 * Only for a socket with SO_ZEROCOPY and room for the whole cmsg (as
 * the caller's ABI, native or compat, sizes it); the batch stays queued
 * when put_cmsg() fails.
 *
 * Return: true when a batch was delivered.
 */
bool rds_zcopy_recv(struct rds_sock *rs, struct msghdr *msg)
{
	size_t space = CMSG_SPACE(sizeof(struct rds_zcopy_cookies));
	struct rds_zcopy *zc;
	unsigned long flags;

#ifdef CONFIG_COMPAT
	/* A 32-bit process sizes its buffer with its own CMSG_SPACE(). */
	if (msg->msg_flags & MSG_CMSG_COMPAT)
		space = ALIGN(sizeof(struct compat_cmsghdr), sizeof(s32)) +
			ALIGN(sizeof(struct rds_zcopy_cookies), sizeof(s32));
#endif
	if (!msg->msg_control || msg->msg_controllen < space ||
	    !rds_zcopy_pending(rs))
		return false;

	spin_lock_irqsave(&rs->rs_zcookie_lock, flags);
	zc = list_first_entry_or_null(&rs->rs_zcookie_queue, struct rds_zcopy,
				      zc_item);
	if (zc)
		list_del_init(&zc->zc_item);
	spin_unlock_irqrestore(&rs->rs_zcookie_lock, flags);
	if (!zc)
		return false;

	if (put_cmsg(msg, SOL_RDS, RDS_CMSG_ZCOPY_COMPLETION,
		     sizeof(zc->zc_done), &zc->zc_done)) {
		spin_lock_irqsave(&rs->rs_zcookie_lock, flags);
		list_add(&zc->zc_item, &rs->rs_zcookie_queue);
		spin_unlock_irqrestore(&rs->rs_zcookie_lock, flags);
		return false;
	}
	sock_kfree_s(rds_rs_to_sk(rs), zc, sizeof(*zc));
	return true;
}

/**
 * rds_zcopy_pending - are cookies waiting for recvmsg()?
 * @rs: the socket
 *
 * Only with SO_ZEROCOPY set (as in-tree, recvmsg() hands them out only
 * then, so poll() does not report what recvmsg() would not return).
 */
bool rds_zcopy_pending(struct rds_sock *rs)
{
	return sock_flag(rds_rs_to_sk(rs), SOCK_ZEROCOPY) &&
	       !list_empty_careful(&rs->rs_zcookie_queue);
}

/**
 * rds_zcopy_sock_release - drop the cookies of a socket being closed
 * @rs: the socket
 *
 * Cookies of messages freed later are dropped as they come.
 */
void rds_zcopy_sock_release(struct rds_sock *rs)
{
	struct rds_zcopy *zc, *tmp;
	unsigned long flags;
	LIST_HEAD(list);

	spin_lock_irqsave(&rs->rs_zcookie_lock, flags);
	rs->rs_zcookie_dead = true;
	list_splice_init(&rs->rs_zcookie_queue, &list);
	spin_unlock_irqrestore(&rs->rs_zcookie_lock, flags);
	list_for_each_entry_safe(zc, tmp, &list, zc_item)
		sock_kfree_s(rds_rs_to_sk(rs), zc, sizeof(*zc));
}

void rds_zcopy_sock_init(struct rds_sock *rs)
{
	spin_lock_init(&rs->rs_zcookie_lock);
	INIT_LIST_HEAD(&rs->rs_zcookie_queue);
}
