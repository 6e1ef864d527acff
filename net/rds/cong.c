// SPDX-License-Identifier: GPL-2.0
/*
 * cong.c - congestion maps.
 *
 * Theory of operation
 * ===================
 *
 * Every address (per netns) has one map: 65536 bits, one per RDS port,
 * 8192 bytes in little-endian bit order, the in-tree wire layout.  A bit is
 * set while the socket bound to that port has more than sk_rcvbuf/2 bytes
 * queued (recv.c).  Our own maps (local addresses) are sent to peers as an
 * ordinary 8192-byte message with h_flags == CONG_BITMAP, on every
 * non-loop connection whose local address is the map's, between data
 * messages (RDS_CONG_UPDATE_QUEUED on the path) and again whenever a path
 * comes up, empty or not, as in-tree: an update is never retransmitted, so
 * one in flight when the connection dropped is lost, and a reconnecting
 * peer still holds what we sent before (a port uncongested meanwhile
 * would stay blocked there for good).  Peers' maps arrive the same way and are
 * copied into the map of the peer's address (c_fcong); a sender consults it
 * before queueing (rds_cong_wait(): ENOBUFS or sleep).  A loop connection's
 * c_fcong is the destination's own local map, so local congestion needs no
 * messages at all; an RDMA connection between two local addresses (a
 * pinned socket's) carries updates, and the receiver ignores them (the
 * map they would overwrite is the live local one).
 *
 * When a map loses bits (ports uncongested), blocked senders on the map are
 * woken, poll() of sockets that saw congestion reports EPOLLIN|EPOLLWRBAND
 * (a generation counter), and sockets with RDS_CONG_MONITOR get the ports
 * (mod 64) they were refused on in an RDS_CMSG_CONG_UPDATE.
 *
 * Locks: rds_cong_lock protects the map tree and each map's connection
 * list (taken when connections come and go and when a port flips, never per
 * message); rds_cong_monitor_lock the list of monitoring sockets.  Bits are
 * atomic bitops, read without locks.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/rbtree.h>
#include <linux/bitops.h>
#include <linux/uio.h>
#include <net/sock.h>

#include "rds.h"

#define RDS_CONG_BITS_PER_PAGE	(PAGE_SIZE * 8)

static struct rb_root rds_cong_tree = RB_ROOT;
static DEFINE_SPINLOCK(rds_cong_lock);
static LIST_HEAD(rds_cong_monitor);
static DEFINE_RWLOCK(rds_cong_monitor_lock);
static atomic_t rds_cong_generation = ATOMIC_INIT(0);
DECLARE_WAIT_QUEUE_HEAD(rds_poll_waitq);

static int rds_cong_cmp(const struct net *net, const struct in6_addr *addr,
			const struct rds_cong_map *map)
{
	if (net != map->m_net)
		return net < map->m_net ? -1 : 1;
	return memcmp(addr, &map->m_addr, sizeof(*addr));
}

static struct rds_cong_map *rds_cong_tree_walk(struct net *net,
					       const struct in6_addr *addr,
					       struct rds_cong_map *insert)
{
	struct rb_node **p = &rds_cong_tree.rb_node, *parent = NULL;
	struct rds_cong_map *map;
	int c;

	while (*p) {
		parent = *p;
		map = rb_entry(parent, struct rds_cong_map, m_node);
		c = rds_cong_cmp(net, addr, map);
		if (c < 0)
			p = &(*p)->rb_left;
		else if (c > 0)
			p = &(*p)->rb_right;
		else
			return map;
	}
	if (insert) {
		rb_link_node(&insert->m_node, parent, p);
		rb_insert_color(&insert->m_node, &rds_cong_tree);
	}
	return NULL;
}

static void rds_cong_map_free(struct rds_cong_map *map)
{
	unsigned int i;

	for (i = 0; i < RDS_CONG_MAP_PAGES; i++)
		free_page(map->m_page_addrs[i]);
	kfree(map);
}

struct rds_cong_map *rds_cong_from_addr(struct net *net,
					const struct in6_addr *addr, gfp_t gfp)
{
	struct rds_cong_map *map, *found;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&rds_cong_lock, flags);
	found = rds_cong_tree_walk(net, addr, NULL);
	spin_unlock_irqrestore(&rds_cong_lock, flags);
	if (found)
		return found;

	map = kzalloc(sizeof(*map), gfp);
	if (!map)
		return NULL;
	map->m_net = net;
	map->m_addr = *addr;
	INIT_LIST_HEAD(&map->m_conn_list);
	init_waitqueue_head(&map->m_waitq);
	for (i = 0; i < RDS_CONG_MAP_PAGES; i++) {
		map->m_page_addrs[i] = get_zeroed_page(gfp);
		if (!map->m_page_addrs[i]) {
			rds_cong_map_free(map);
			return NULL;
		}
	}

	spin_lock_irqsave(&rds_cong_lock, flags);
	found = rds_cong_tree_walk(net, addr, map);
	spin_unlock_irqrestore(&rds_cong_lock, flags);
	if (found) {
		rds_cong_map_free(map);
		return found;
	}
	return map;
}

void rds_cong_add_conn(struct rds_connection *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&rds_cong_lock, flags);
	list_add_tail(&conn->c_cong_item, &conn->c_lcong->m_conn_list);
	spin_unlock_irqrestore(&rds_cong_lock, flags);
}

void rds_cong_remove_conn(struct rds_connection *conn)
{
	unsigned long flags;

	spin_lock_irqsave(&rds_cong_lock, flags);
	list_del_init(&conn->c_cong_item);
	spin_unlock_irqrestore(&rds_cong_lock, flags);
}

/* Queue our map to every peer connection of its address. */
void rds_cong_queue_updates(struct rds_cong_map *map)
{
	struct rds_connection *conn;
	unsigned long flags;

	spin_lock_irqsave(&rds_cong_lock, flags);
	list_for_each_entry(conn, &map->m_conn_list, c_cong_item) {
		struct rds_conn_path *cp = rds_conn_path0(conn);

		if (test_and_set_bit(RDS_CONG_UPDATE_QUEUED, &cp->cp_flags))
			continue;
		rds_stats_inc(s_cong_update_queued);
		if (rds_conn_path_up(cp) && !rds_conn_path_destroy_pending(cp))
			queue_delayed_work(rds_wq, &cp->cp_send_w, 0);
	}
	spin_unlock_irqrestore(&rds_cong_lock, flags);
}

void rds_cong_map_updated(struct rds_cong_map *map, u64 portmask)
{
	struct rds_sock *rs;
	unsigned long flags;

	if (wq_has_sleeper(&map->m_waitq))
		wake_up_all(&map->m_waitq);
	atomic_inc(&rds_cong_generation);
	if (wq_has_sleeper(&rds_poll_waitq))
		wake_up_all(&rds_poll_waitq);

	if (!portmask || list_empty(&rds_cong_monitor))
		return;
	read_lock_irqsave(&rds_cong_monitor_lock, flags);
	list_for_each_entry(rs, &rds_cong_monitor, rs_cong_item) {
		u64 notify;

		spin_lock(&rs->rs_recv_lock);
		rs->rs_cong_notify |= rs->rs_cong_mask & portmask;
		rs->rs_cong_mask &= ~portmask;
		notify = rs->rs_cong_notify;
		spin_unlock(&rs->rs_recv_lock);
		if (notify)
			rds_wake_sk(rs);
	}
	read_unlock_irqrestore(&rds_cong_monitor_lock, flags);
}
EXPORT_SYMBOL_GPL(rds_cong_map_updated);

bool rds_cong_updated_since(unsigned long *recent)
{
	unsigned long gen = atomic_read(&rds_cong_generation);

	if (likely(*recent == gen))
		return false;
	*recent = gen;
	return true;
}

void rds_cong_add_socket(struct rds_sock *rs)
{
	unsigned long flags;

	write_lock_irqsave(&rds_cong_monitor_lock, flags);
	if (list_empty(&rs->rs_cong_item))
		list_add(&rs->rs_cong_item, &rds_cong_monitor);
	write_unlock_irqrestore(&rds_cong_monitor_lock, flags);
}

void rds_cong_remove_socket(struct rds_sock *rs)
{
	unsigned long flags;

	write_lock_irqsave(&rds_cong_monitor_lock, flags);
	list_del_init(&rs->rs_cong_item);
	write_unlock_irqrestore(&rds_cong_monitor_lock, flags);
}

static void *rds_cong_bit_page(struct rds_cong_map *map, unsigned int port,
			       unsigned int *off)
{
	*off = port % RDS_CONG_BITS_PER_PAGE;
	return (void *)map->m_page_addrs[port / RDS_CONG_BITS_PER_PAGE];
}

void rds_cong_set_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned int off;
	void *p = rds_cong_bit_page(map, be16_to_cpu(port), &off);

	set_bit_le(off, p);
}

void rds_cong_clear_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned int off;
	void *p = rds_cong_bit_page(map, be16_to_cpu(port), &off);

	clear_bit_le(off, p);
}

bool rds_cong_test_bit(struct rds_cong_map *map, __be16 port)
{
	unsigned int off;
	void *p = rds_cong_bit_page(map, be16_to_cpu(port), &off);

	return test_bit_le(off, p);
}

int rds_cong_wait(struct rds_cong_map *map, __be16 port, int nonblock,
		  struct rds_sock *rs, long *timeo)
{
	unsigned long flags;
	long t;

	if (!rds_cong_test_bit(map, port))
		return 0;
	WRITE_ONCE(rs->rs_seen_congestion, true);
	if (nonblock) {
		if (rs->rs_cong_monitor) {
			spin_lock_irqsave(&rs->rs_recv_lock, flags);
			rs->rs_cong_mask |= RDS_CONG_MONITOR_MASK(be16_to_cpu(port));
			spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
			/* An update may have come in meanwhile. */
			if (!rds_cong_test_bit(map, port))
				return 0;
		}
		rds_stats_inc(s_cong_send_error);
		return -ENOBUFS;
	}

	rds_stats_inc(s_cong_send_blocked);
	t = wait_event_interruptible_timeout(map->m_waitq,
					     !rds_cong_test_bit(map, port),
					     *timeo);
	if (t > 0 || t == MAX_SCHEDULE_TIMEOUT) {
		*timeo = t;
		return 0;
	}
	return t ? sock_intr_errno(t) : -ETIMEDOUT;
}

struct rds_message *rds_cong_build_update(struct rds_cong_map *map)
{
	unsigned int i, left = RDS_CONG_MAP_BYTES;
	struct rds_message *rm;

	if (rds_should_fail(RDS_FAULT_TX))
		return NULL;
	rm = rds_message_alloc(RDS_CONG_MAP_PAGES, GFP_NOWAIT | __GFP_NOWARN);
	if (!rm)
		return NULL;
	set_bit(RDS_MSG_PAGEVEC, &rm->m_flags);
	for (i = 0; i < RDS_CONG_MAP_PAGES; i++) {
		unsigned int n = min_t(unsigned int, left, PAGE_SIZE);

		sg_set_page(&rm->m_sg[i], virt_to_page(map->m_page_addrs[i]),
			    n, 0);
		left -= n;
	}
	rm->data.op_nents = RDS_CONG_MAP_PAGES;
	rm->m_payload_len = RDS_CONG_MAP_BYTES;
	rm->m_inc.i_hdr.h_len = cpu_to_be32(RDS_CONG_MAP_BYTES);
	rds_message_populate_header(&rm->m_inc.i_hdr, 0, 0, 0);
	rm->m_inc.i_hdr.h_flags = RDS_FLAG_CONG_BITMAP;
	rm->m_daddr = map->m_addr;
	return rm;
}
EXPORT_SYMBOL_GPL(rds_cong_build_update);

void rds_cong_recv(struct rds_conn_path *cp, struct rds_incoming *inc)
{
	struct rds_connection *conn = cp->cp_conn;
	struct rds_cong_map *map = conn->c_fcong;
	struct kvec kv[RDS_CONG_MAP_PAGES];
	struct iov_iter to;
	u64 uncongested = 0;
	unsigned int i, w;
	__le64 *buf;
	int ret;

	if (be32_to_cpu(inc->i_hdr.h_len) != RDS_CONG_MAP_BYTES)
		return;
	rds_stats_inc(s_cong_update_received);
	/*
	 * From a local address (a pinned socket's connection through the
	 * HCA): the map is our own, kept up to date here; the copy could
	 * only be older.  Checked now, not at connect: addresses move.
	 */
	if (rds_addr_is_local(rds_conn_net(conn), &conn->c_faddr,
			      conn->c_dev_if))
		return;

	buf = rds_should_fail(RDS_FAULT_RX) ? NULL :
	      kmalloc(RDS_CONG_MAP_BYTES, GFP_ATOMIC | __GFP_NOWARN);
	if (!buf) {
		/* Straight into the map; we cannot tell what changed. */
		for (i = 0; i < RDS_CONG_MAP_PAGES; i++) {
			kv[i].iov_base = (void *)map->m_page_addrs[i];
			kv[i].iov_len = min_t(size_t, PAGE_SIZE,
					      RDS_CONG_MAP_BYTES - i * PAGE_SIZE);
		}
		iov_iter_kvec(&to, ITER_DEST, kv, RDS_CONG_MAP_PAGES,
			      RDS_CONG_MAP_BYTES);
		conn->c_trans->inc_copy_to_user(inc, &to);
		rds_cong_map_updated(map, ~0ULL);
		return;
	}

	kv[0].iov_base = buf;
	kv[0].iov_len = RDS_CONG_MAP_BYTES;
	iov_iter_kvec(&to, ITER_DEST, kv, 1, RDS_CONG_MAP_BYTES);
	ret = conn->c_trans->inc_copy_to_user(inc, &to);
	if (ret != RDS_CONG_MAP_BYTES) {
		kfree(buf);
		return;
	}

	for (i = 0; i < RDS_CONG_MAP_PAGES; i++) {
		__le64 *page = (__le64 *)map->m_page_addrs[i];
		__le64 *src = buf + i * (PAGE_SIZE / sizeof(u64));
		unsigned int words = min_t(size_t, PAGE_SIZE,
					   RDS_CONG_MAP_BYTES - i * PAGE_SIZE) /
				     sizeof(u64);

		/* Bit b of LE word w is port 64w + b: port % 64 is b. */
		for (w = 0; w < words; w++) {
			uncongested |= le64_to_cpu(page[w] & ~src[w]);
			WRITE_ONCE(page[w], src[w]);
		}
	}
	kfree(buf);
	rds_cong_map_updated(map, uncongested);
}
EXPORT_SYMBOL_GPL(rds_cong_recv);

int rds_cong_init(void)
{
	return 0;
}

void rds_cong_exit(void)
{
	struct rds_cong_map *map, *tmp;

	rbtree_postorder_for_each_entry_safe(map, tmp, &rds_cong_tree, m_node) {
		WARN_ON(!list_empty(&map->m_conn_list));
		rds_cong_map_free(map);
	}
	rds_cong_tree = RB_ROOT;
}
