// SPDX-License-Identifier: GPL-2.0
/*
 * info.c - the RDS_INFO_* getsockopts: read-only tables of the stack.
 *
 * Theory of operation
 * ===================
 *
 * getsockopt(SOL_RDS, RDS_INFO_*, buf, &len) returns a table: an array of
 * fixed-size items (the rds_info_* structs of <linux/rds.h>).  The protocol
 * is the in-tree one, which rds-info and every RDS tool speak:
 *
 *   - len == 0 is a probe: nothing is copied;
 *   - a table that does not fit in len fails with -ENOSPC and writes the
 *     bytes it needs to *optlen;
 *   - a table that fits is copied to buf, *optlen is set to the bytes
 *     written and the call returns the size of one item (a positive value,
 *     which is why getsockopt() returns it and not 0);
 *   - len < 0, or a buffer that would wrap, is -EINVAL; an unreadable
 *     optlen or an unwritable optlen on return is -EFAULT; a buffer that
 *     cannot be pinned (NULL, a kernel address, read-only memory) is
 *     -EAGAIN, the in-tree errno; an optname nobody provides (the
 *     deprecated 10002, CONNECTION_STATS, IWARP_CONNECTIONS, TCP_SOCKETS
 *     here, IB_CONNECTIONS without rds_rdma.ko) is -ENOPROTOOPT.
 *
 * One call is one pass over the source under the source's own locks, so a
 * table is a consistent snapshot per lock (a connection's queue, a
 * socket's receive queue) and no position is kept between calls.  Because
 * the sources hold spinlocks while they produce items, the caller's whole
 * buffer is pinned before the pass (pin_user_pages_fast()) and items are
 * written straight into the pinned pages; nothing sleeps during the pass.
 *
 * A source is a function registered for one optname with the size of its
 * items (rds_info_register(); rds.ko's own here and in connection.c,
 * rds_rdma.ko registers IB_CONNECTIONS).  It produces each item with
 * rds_info_item_begin(), which hands out a zeroed scratch item, and
 * rds_info_item_end(), which counts the item and copies it if it still
 * fits.  The scratch item is zeroed by the framework, so padding and fields
 * a source does not set reach user space as zeroes, never as stale kernel
 * memory.  Registrations are protected by an rwsem held (read) across the
 * call of a source: once rds_info_unregister() returns, the source is not
 * running and will not run, so a module can unregister and go.
 *
 * Every table is limited to the caller's network namespace (connections
 * and sockets of other namespaces are invisible); the counters are global,
 * as in-tree.  This file also keeps the list of every RDS socket (bound
 * or not), which RDS_INFO_SOCKETS and RDS_INFO_RECV_MESSAGES walk.
 */
#include <linux/kernel.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/rwsem.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <net/ipv6.h>

#include "rds.h"

/* The largest item of any table (rds6_info_rdma_connection is 92). */
#define RDS_INFO_ITEM_MAX	128
#define RDS_INFO_NR		(RDS_INFO_LAST - RDS_INFO_FIRST + 1)

/**
 * struct rds_info_iter - one pass of a source over its table
 * @it_net: namespace of the calling socket
 * @it_pages: the pinned pages of the caller's buffer; NULL for a probe
 * @it_first_off: offset of the buffer in it_pages[0]
 * @it_room: bytes the caller offered
 * @it_each: item size of the table
 * @it_nr: items produced so far (copied or not)
 * @it_item: the scratch item, zeroed by rds_info_item_begin()
 */
struct rds_info_iter {
	struct net	*it_net;
	struct page	**it_pages;
	unsigned int	it_first_off;
	size_t		it_room;
	size_t		it_each;
	unsigned long	it_nr;
	u64		it_item[RDS_INFO_ITEM_MAX / sizeof(u64)];
};

struct rds_info_source {
	rds_info_fn	is_fn;
	size_t		is_each;
};

static DECLARE_RWSEM(rds_info_sem);
static struct rds_info_source rds_info_sources[RDS_INFO_NR];

/* Every RDS socket, for the socket tables (BH-safe: sock_i_ino()). */
static LIST_HEAD(rds_info_socks);
static DEFINE_SPINLOCK(rds_info_socks_lock);

/**
 * rds_info_register - provide the table of one RDS_INFO_* optname
 * @optname: RDS_INFO_FIRST..RDS_INFO_LAST
 * @each: size of one item, at most RDS_INFO_ITEM_MAX
 * @fn: the source
 *
 * Context: process context.
 * Return: 0, or
 *   %-EINVAL - bad optname or item size;
 *   %-EEXIST - the optname already has a source.
 */
int rds_info_register(int optname, size_t each, rds_info_fn fn)
{
	struct rds_info_source *src;
	int ret = 0;

	if (optname < RDS_INFO_FIRST || optname > RDS_INFO_LAST || !each ||
	    each > RDS_INFO_ITEM_MAX || !fn)
		return -EINVAL;
	src = &rds_info_sources[optname - RDS_INFO_FIRST];
	down_write(&rds_info_sem);
	if (src->is_fn) {
		ret = -EEXIST;
	} else {
		src->is_fn = fn;
		src->is_each = each;
	}
	up_write(&rds_info_sem);
	return ret;
}
EXPORT_SYMBOL_GPL(rds_info_register);

/**
 * rds_info_unregister - withdraw a source
 * @optname: as registered
 * @fn: as registered (a mismatch is ignored)
 *
 * Waits for calls of @fn in progress.  Context: process context.
 */
void rds_info_unregister(int optname, rds_info_fn fn)
{
	struct rds_info_source *src;

	if (optname < RDS_INFO_FIRST || optname > RDS_INFO_LAST)
		return;
	src = &rds_info_sources[optname - RDS_INFO_FIRST];
	down_write(&rds_info_sem);
	if (src->is_fn == fn) {
		src->is_fn = NULL;
		src->is_each = 0;
	}
	up_write(&rds_info_sem);
}
EXPORT_SYMBOL_GPL(rds_info_unregister);

/**
 * rds_info_net - the namespace a table is for
 * @it: the pass
 *
 * Return: the calling socket's namespace.
 */
struct net *rds_info_net(const struct rds_info_iter *it)
{
	return it->it_net;
}
EXPORT_SYMBOL_GPL(rds_info_net);

/**
 * rds_info_item_begin - start the next item of a table
 * @it: the pass
 *
 * The source fills in the returned item and calls rds_info_item_end(), or
 * drops it by not calling it.  Any context.
 *
 * Return: the scratch item, it_each bytes, all zero.
 */
void *rds_info_item_begin(struct rds_info_iter *it)
{
	memset(it->it_item, 0, it->it_each);
	return it->it_item;
}
EXPORT_SYMBOL_GPL(rds_info_item_begin);

/* Copy @len bytes to byte @pos of the caller's (pinned) buffer. */
static void rds_info_copy_out(struct rds_info_iter *it, size_t pos,
			      const void *data, size_t len)
{
	size_t at = it->it_first_off + pos;

	while (len) {
		struct page *page = it->it_pages[at >> PAGE_SHIFT];
		size_t off = at & ~PAGE_MASK;
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		void *va = kmap_local_page(page);

		memcpy(va + off, data, n);
		kunmap_local(va);
		flush_dcache_page(page);
		data += n;
		at += n;
		len -= n;
	}
}

/**
 * rds_info_item_end - count the item started last and copy it if it fits
 * @it: the pass
 *
 * Any context (sources hold their spinlocks here).
 */
void rds_info_item_end(struct rds_info_iter *it)
{
	size_t pos = it->it_nr * it->it_each;

	it->it_nr++;
	if (it->it_pages && pos + it->it_each <= it->it_room)
		rds_info_copy_out(it, pos, it->it_item, it->it_each);
}
EXPORT_SYMBOL_GPL(rds_info_item_end);

/**
 * rds_info_counter - produce one rds_info_counter item
 * @it: the pass (of RDS_INFO_COUNTERS)
 * @name: counter name, shorter than 32 bytes (longer ones are truncated)
 * @value: its value
 *
 * Any context.
 */
void rds_info_counter(struct rds_info_iter *it, const char *name, u64 value)
{
	struct rds_info_counter *c = rds_info_item_begin(it);

	WARN_ON_ONCE(strscpy((char *)c->name, name, sizeof(c->name)) < 0);
	c->value = value;
	rds_info_item_end(it);
}
EXPORT_SYMBOL_GPL(rds_info_counter);

/**
 * rds_info_getsockopt - getsockopt(SOL_RDS, RDS_INFO_*)
 * @sock: the calling socket
 * @optname: RDS_INFO_FIRST..RDS_INFO_LAST
 * @optval: the caller's buffer
 * @optlen: in: its size; out: bytes written or needed
 *
 * Context: process context, sleeps (pins the buffer).
 * Return: the item size on success, or
 *   %-EFAULT - @optlen unreadable or unwritable;
 *   %-EINVAL - negative or wrapping length;
 *   %-EAGAIN - the buffer cannot be pinned for writing;
 *   %-ENOMEM - no memory for the page array;
 *   %-ENOPROTOOPT - nobody provides @optname;
 *   %-ENOSPC - the table does not fit; *@optlen says what it needs.
 */
int rds_info_getsockopt(struct socket *sock, int optname,
			char __user *optval, int __user *optlen)
{
	struct rds_info_iter *it;
	struct rds_info_source *src;
	unsigned long start, nr_pages = 0;
	size_t total;
	int len, ret;

	if (get_user(len, optlen))
		return -EFAULT;
	start = (unsigned long)optval;
	if (len < 0 || len > INT_MAX - PAGE_SIZE + 1 || start + len < start)
		return -EINVAL;

	it = kzalloc(sizeof(*it), GFP_KERNEL);
	if (!it)
		return -ENOMEM;
	it->it_net = sock_net(sock->sk);
	it->it_room = len;
	it->it_first_off = start & ~PAGE_MASK;

	if (len) {
		long pinned;

		nr_pages = (PAGE_ALIGN(start + len) - (start & PAGE_MASK)) >>
			   PAGE_SHIFT;
		it->it_pages = kvmalloc_array(nr_pages, sizeof(struct page *),
					      GFP_KERNEL);
		if (!it->it_pages) {
			ret = -ENOMEM;
			goto out;
		}
		pinned = pin_user_pages_fast(start & PAGE_MASK, nr_pages,
					     FOLL_WRITE, it->it_pages);
		if (pinned != nr_pages) {
			nr_pages = pinned > 0 ? pinned : 0;
			ret = -EAGAIN;
			goto out;
		}
	}

	down_read(&rds_info_sem);
	src = &rds_info_sources[optname - RDS_INFO_FIRST];
	if (!src->is_fn) {
		up_read(&rds_info_sem);
		ret = -ENOPROTOOPT;
		goto out;
	}
	it->it_each = src->is_each;
	src->is_fn(it);
	up_read(&rds_info_sem);

	total = it->it_nr * it->it_each;
	if (total > (size_t)len) {
		ret = -ENOSPC;
		len = min_t(size_t, total, INT_MAX);
	} else {
		ret = it->it_each;
		len = total;
	}
	if (put_user(len, optlen))
		ret = -EFAULT;
out:
	if (it->it_pages) {
		unpin_user_pages_dirty_lock(it->it_pages, nr_pages, true);
		kvfree(it->it_pages);
	}
	kfree(it);
	return ret;
}

/* ------------------------------------------------------------------------
 * The socket tables
 * ------------------------------------------------------------------------
 */

/**
 * rds_info_sock_add - list a new socket for the socket tables
 * @rs: the socket (rds_create())
 */
void rds_info_sock_add(struct rds_sock *rs)
{
	spin_lock_bh(&rds_info_socks_lock);
	list_add_tail(&rs->rs_info_item, &rds_info_socks);
	spin_unlock_bh(&rds_info_socks_lock);
}

/**
 * rds_info_sock_del - unlist a socket being released
 * @rs: the socket (rds_release(), before it is orphaned)
 */
void rds_info_sock_del(struct rds_sock *rs)
{
	spin_lock_bh(&rds_info_socks_lock);
	list_del_init(&rs->rs_info_item);
	spin_unlock_bh(&rds_info_socks_lock);
}

static void rds_info_sockets_cmn(struct rds_info_iter *it, bool v6)
{
	struct rds_sock *rs;

	spin_lock_bh(&rds_info_socks_lock);
	list_for_each_entry(rs, &rds_info_socks, rs_info_item) {
		struct sock *sk = rds_rs_to_sk(rs);

		if (!net_eq(sock_net(sk), it->it_net))
			continue;
		if (v6) {
			struct rds6_info_socket *s = rds_info_item_begin(it);

			s->sndbuf = rds_sk_sndbuf(rs);
			s->rcvbuf = rds_sk_rcvbuf(rs);
			s->bound_addr = rs->rs_bound_addr;
			s->connected_addr = rs->rs_conn_addr;
			s->bound_port = rs->rs_bound_port;
			s->connected_port = rs->rs_conn_port;
			s->inum = sock_i_ino(sk);
		} else {
			struct rds_info_socket *s;

			/* IPv4 table: sockets bound to an IPv4 address. */
			if (!ipv6_addr_v4mapped(&rs->rs_bound_addr))
				continue;
			s = rds_info_item_begin(it);
			s->sndbuf = rds_sk_sndbuf(rs);
			s->rcvbuf = rds_sk_rcvbuf(rs);
			s->bound_addr = rs->rs_bound_addr.s6_addr32[3];
			s->connected_addr = rs->rs_conn_addr.s6_addr32[3];
			s->bound_port = rs->rs_bound_port;
			s->connected_port = rs->rs_conn_port;
			s->inum = sock_i_ino(sk);
		}
		rds_info_item_end(it);
	}
	spin_unlock_bh(&rds_info_socks_lock);
}

static void rds_info_sockets(struct rds_info_iter *it)
{
	rds_info_sockets_cmn(it, false);
}

static void rds6_info_sockets(struct rds_info_iter *it)
{
	rds_info_sockets_cmn(it, true);
}

/**
 * rds_info_message - produce one rds_info_message or rds6_info_message
 * @it: the pass
 * @hdr: the message's header (sequence, length, ports)
 * @laddr: local address
 * @faddr: remote address
 * @lport: local port
 * @fport: remote port
 * @tos: TOS of its connection
 * @v6: the table is an RDS6_* one
 *
 * Any context.
 */
void rds_info_message(struct rds_info_iter *it, const struct rds_header *hdr,
		      const struct in6_addr *laddr,
		      const struct in6_addr *faddr, __be16 lport,
		      __be16 fport, u8 tos, bool v6)
{
	if (v6) {
		struct rds6_info_message *m = rds_info_item_begin(it);

		m->seq = be64_to_cpu(hdr->h_sequence);
		m->len = be32_to_cpu(hdr->h_len);
		m->laddr = *laddr;
		m->faddr = *faddr;
		m->lport = lport;
		m->fport = fport;
		m->tos = tos;
	} else {
		struct rds_info_message *m = rds_info_item_begin(it);

		m->seq = be64_to_cpu(hdr->h_sequence);
		m->len = be32_to_cpu(hdr->h_len);
		m->laddr = laddr->s6_addr32[3];
		m->faddr = faddr->s6_addr32[3];
		m->lport = lport;
		m->fport = fport;
		m->tos = tos;
	}
	rds_info_item_end(it);
}

static void rds_info_recv_cmn(struct rds_info_iter *it, bool v6)
{
	struct rds_incoming *inc;
	unsigned long flags;
	struct rds_sock *rs;

	spin_lock_bh(&rds_info_socks_lock);
	list_for_each_entry(rs, &rds_info_socks, rs_info_item) {
		if (!net_eq(sock_net(rds_rs_to_sk(rs)), it->it_net))
			continue;
		if (!v6 && !ipv6_addr_v4mapped(&rs->rs_bound_addr))
			continue;
		spin_lock_irqsave(&rs->rs_recv_lock, flags);
		list_for_each_entry(inc, &rs->rs_recv_queue, i_item)
			rds_info_message(it, &inc->i_hdr, &rs->rs_bound_addr,
					 &inc->i_saddr, inc->i_hdr.h_dport,
					 inc->i_hdr.h_sport,
					 inc->i_conn ? inc->i_conn->c_tos : 0,
					 v6);
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	}
	spin_unlock_bh(&rds_info_socks_lock);
}

static void rds_info_recv(struct rds_info_iter *it)
{
	rds_info_recv_cmn(it, false);
}

static void rds6_info_recv(struct rds_info_iter *it)
{
	rds_info_recv_cmn(it, true);
}

/* ------------------------------------------------------------------------
 * Counters: the core's, then every transport's
 * ------------------------------------------------------------------------
 */

static void rds_info_counters(struct rds_info_iter *it)
{
	struct rds_statistics *st;
	const u64 *v;
	unsigned int i;

	st = kmalloc(sizeof(*st), GFP_KERNEL);
	if (st) {
		rds_stats_sum(st);
		v = (const u64 *)st;
		for (i = 0; i < RDS_STAT_COUNT; i++)
			rds_info_counter(it, rds_stat_names[i], v[i]);
		kfree(st);
	}
	rds_trans_info_counters(it);
}

/* ------------------------------------------------------------------------
 * Set-up
 * ------------------------------------------------------------------------
 */

static const struct {
	int		optname;
	size_t		each;
	rds_info_fn	fn;
} rds_info_core[] = {
	{ RDS_INFO_COUNTERS, sizeof(struct rds_info_counter),
	  rds_info_counters },
	{ RDS_INFO_SOCKETS, sizeof(struct rds_info_socket),
	  rds_info_sockets },
	{ RDS6_INFO_SOCKETS, sizeof(struct rds6_info_socket),
	  rds6_info_sockets },
	{ RDS_INFO_RECV_MESSAGES, sizeof(struct rds_info_message),
	  rds_info_recv },
	{ RDS6_INFO_RECV_MESSAGES, sizeof(struct rds6_info_message),
	  rds6_info_recv },
};

void rds_info_exit(void)
{
	unsigned int i;

	rds_conn_info_exit();
	for (i = 0; i < ARRAY_SIZE(rds_info_core); i++)
		rds_info_unregister(rds_info_core[i].optname,
				    rds_info_core[i].fn);
}

int rds_info_init(void)
{
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(rds_info_core); i++) {
		ret = rds_info_register(rds_info_core[i].optname,
					rds_info_core[i].each,
					rds_info_core[i].fn);
		if (ret)
			goto fail;
	}
	ret = rds_conn_info_init();
	if (ret)
		goto fail;
	return 0;
fail:
	rds_info_exit();
	return ret;
}
