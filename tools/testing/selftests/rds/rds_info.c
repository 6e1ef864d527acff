// SPDX-License-Identifier: GPL-2.0
/*
 * RDS_INFO_* getsockopts (in-tree info.c and its sources):
 *  - every table's item size (the getsockopt return value) and layout,
 *    the optnames nobody provides (10002, CONNECTION_STATS, IWARP, TCP
 *    without rds_tcp) give ENOPROTOOPT;
 *  - the length protocol: len 0 probes, too small gives ENOSPC with the
 *    needed length in optlen, success sets optlen to the bytes written and
 *    leaves the rest of the buffer alone;
 *  - hostile arguments: optlen NULL/kernel/read-only (EFAULT), negative,
 *    huge or wrapping lengths (EINVAL), a buffer that cannot be pinned
 *    (NULL, kernel address, read-only, partly unmapped: EAGAIN, in-tree's
 *    errno), unaligned buffers and items across a page boundary;
 *  - contents: sockets (bound, unbound, v4/v6, inode, buffers), receive and
 *    send queues, connections and RDMA connections to the peer (flags,
 *    GIDs, ring sizes), IPv4 tables without IPv6 entries and RDS6 tables
 *    with both, counters (in-tree names and order, increasing with
 *    traffic), no byte of padding or beyond a string's NUL that is not 0;
 *  - a socket in another network namespace sees none of this one's
 *    sockets, connections or messages.
 * Every user buffer is filled with a pattern first, so stale kernel bytes
 * or writes beyond optlen show up.
 */
#include <sched.h>
#include <sys/mman.h>
#include <limits.h>
#include <stddef.h>
#include "rds_test.h"

#define PAT		0xa5
#define BIG		(1 << 20)

/* Layouts checked against the D61 uapi header (rds-reference.md 1.6). */
_Static_assert(sizeof(struct rds_info_counter) == 40, "counter");
_Static_assert(sizeof(struct rds_info_connection) == 42, "connection");
_Static_assert(sizeof(struct rds6_info_connection) == 65, "connection6");
_Static_assert(sizeof(struct rds_info_message) == 26, "message");
_Static_assert(sizeof(struct rds6_info_message) == 50, "message6");
_Static_assert(sizeof(struct rds_info_socket) == 28, "socket");
_Static_assert(sizeof(struct rds6_info_socket) == 52, "socket6");
_Static_assert(sizeof(struct rds_info_tcp_socket) == 41, "tcp");
_Static_assert(sizeof(struct rds6_info_tcp_socket) == 64, "tcp6");
_Static_assert(sizeof(struct rds_info_rdma_connection) == 68, "rdma");
_Static_assert(sizeof(struct rds6_info_rdma_connection) == 92, "rdma6");

static const struct {
	int opt;
	int size;
	bool ib;
} tables[] = {
	{ RDS_INFO_COUNTERS, sizeof(struct rds_info_counter) },
	{ RDS_INFO_CONNECTIONS, sizeof(struct rds_info_connection) },
	{ RDS_INFO_SEND_MESSAGES, sizeof(struct rds_info_message) },
	{ RDS_INFO_RETRANS_MESSAGES, sizeof(struct rds_info_message) },
	{ RDS_INFO_RECV_MESSAGES, sizeof(struct rds_info_message) },
	{ RDS_INFO_SOCKETS, sizeof(struct rds_info_socket) },
	{ RDS_INFO_IB_CONNECTIONS, sizeof(struct rds_info_rdma_connection), true },
	{ RDS6_INFO_CONNECTIONS, sizeof(struct rds6_info_connection) },
	{ RDS6_INFO_SEND_MESSAGES, sizeof(struct rds6_info_message) },
	{ RDS6_INFO_RETRANS_MESSAGES, sizeof(struct rds6_info_message) },
	{ RDS6_INFO_RECV_MESSAGES, sizeof(struct rds6_info_message) },
	{ RDS6_INFO_SOCKETS, sizeof(struct rds6_info_socket) },
	{ RDS6_INFO_IB_CONNECTIONS, sizeof(struct rds6_info_rdma_connection), true },
};

/*
 * The 36 core counters, in-tree names and order (stats.c); ours adds its
 * own after them (send_zcopy*), before the rds_rdma ones.
 */
static const char *const core_names[] = {
	"conn_reset", "recv_drop_bad_checksum", "recv_drop_old_seq",
	"recv_drop_no_sock", "recv_drop_dead_sock", "recv_deliver_raced",
	"recv_delivered", "recv_queued", "recv_immediate_retry",
	"recv_delayed_retry", "recv_ack_required", "recv_rdma_bytes",
	"recv_ping", "send_queue_empty", "send_queue_full",
	"send_lock_contention", "send_lock_queue_raced",
	"send_immediate_retry", "send_delayed_retry", "send_drop_acked",
	"send_ack_required", "send_queued", "send_rdma", "send_rdma_bytes",
	"send_pong", "page_remainder_hit", "page_remainder_miss",
	"copy_to_user", "copy_from_user", "cong_update_queued",
	"cong_update_received", "cong_send_error", "cong_send_blocked",
	"recv_bytes_added_to_sock", "recv_bytes_freed_fromsock",
	"send_stuck_rm",
};

/* The 39 rds_rdma counters in-tree exports, in its order (ib_stats.c). */
static const char *const ib_names[] = {
	"ib_connect_raced", "ib_listen_closed_stale", "ib_evt_handler_call",
	"ib_tasklet_call", "ib_tx_cq_event", "ib_tx_ring_full",
	"ib_tx_throttle", "ib_tx_sg_mapping_failure", "ib_tx_stalled",
	"ib_tx_credit_updates", "ib_rx_cq_event", "ib_rx_ring_empty",
	"ib_rx_refill_from_cq", "ib_rx_refill_from_thread",
	"ib_rx_alloc_limit", "ib_rx_total_frags", "ib_rx_total_incs",
	"ib_rx_credit_updates", "ib_ack_sent", "ib_ack_send_failure",
	"ib_ack_send_delayed", "ib_ack_send_piggybacked", "ib_ack_received",
	"ib_rdma_mr_8k_alloc", "ib_rdma_mr_8k_free", "ib_rdma_mr_8k_used",
	"ib_rdma_mr_8k_pool_flush", "ib_rdma_mr_8k_pool_wait",
	"ib_rdma_mr_8k_pool_depleted", "ib_rdma_mr_1m_alloc",
	"ib_rdma_mr_1m_free", "ib_rdma_mr_1m_used",
	"ib_rdma_mr_1m_pool_flush", "ib_rdma_mr_1m_pool_wait",
	"ib_rdma_mr_1m_pool_depleted", "ib_rdma_mr_8k_reused",
	"ib_rdma_mr_1m_reused", "ib_atomic_cswp", "ib_atomic_fadd",
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static bool have_module(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	return access(path, F_OK) == 0;
}

static bool have_ib(void)
{
	return have_module("rds_rdma");
}

/* getsockopt with an int length; returns the call's result, errno kept. */
static int info_raw(int fd, int opt, void *buf, int *len)
{
	socklen_t l = *len;
	int r = getsockopt(fd, SOL_RDS, opt, buf, &l);

	*len = l;
	return r;
}

/*
 * One table: a buffer of BIG bytes filled with PAT.  Returns the item size
 * (or -1, errno set); *len gets the bytes written.  Checks that nothing
 * past *len was touched.
 */
static int info_get(int fd, int opt, uint8_t **buf, int *len)
{
	uint8_t *b = malloc(BIG);
	int r, i;

	if (!b)
		return -1;
	memset(b, PAT, BIG);
	*len = BIG;
	r = info_raw(fd, opt, b, len);
	if (r < 0) {
		int e = errno;

		free(b);
		errno = e;
		return -1;
	}
	for (i = *len; i < BIG; i++)
		if (b[i] != PAT) {
			free(b);
			errno = EOVERFLOW;	/* wrote past optlen */
			return -1;
		}
	*buf = b;
	return r;
}

static bool all_zero(const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		if (*b++)
			return false;
	return true;
}

/* A fixed-size string field: NUL-terminated, nothing but 0 after it. */
static bool clean_string(const uint8_t *s, size_t n)
{
	size_t l = strnlen((const char *)s, n);

	return l < n && all_zero(s + l, n - l);
}

static void mapped(const char *v4, struct in6_addr *a)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = 0xff;
	a->s6_addr[11] = 0xff;
	inet_pton(AF_INET, v4, &a->s6_addr[12]);
}

static void addr6_of(int family, const char *s, struct in6_addr *a)
{
	if (family == AF_INET)
		mapped(s, a);
	else
		inet_pton(AF_INET6, s, a);
}

static uint32_t addr4(const char *s)
{
	struct in_addr a;

	inet_pton(AF_INET, s, &a);
	return a.s_addr;
}

static uint64_t inode_of(int fd)
{
	struct stat st;

	return fstat(fd, &st) ? 0 : st.st_ino;
}

/* Value of a counter, -1 if absent. */
static long long counter(int fd, const char *name)
{
	struct rds_info_counter *c;
	long long v = -1;
	uint8_t *buf;
	int len, i;

	if (info_get(fd, RDS_INFO_COUNTERS, &buf, &len) != sizeof(*c))
		return -1;
	c = (struct rds_info_counter *)buf;
	for (i = 0; i < len / (int)sizeof(*c); i++)
		if (!strncmp((char *)c[i].name, name, sizeof(c[i].name)))
			v = c[i].value;
	free(buf);
	return v;
}

TEST(item_sizes)
{
	int fd = rds_socket();
	unsigned int i;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_LEN(tables); i++) {
		uint8_t *buf;
		int len, r;

		if (tables[i].ib && !have_ib())
			continue;
		TH_LOG("optname %d", tables[i].opt);
		r = info_get(fd, tables[i].opt, &buf, &len);
		ASSERT_EQ(tables[i].size, r) TH_LOG("errno %s", strerror(errno));
		EXPECT_EQ(0, len % tables[i].size);
		free(buf);

		/* the probe: 0 bytes, or ENOSPC with a whole number of items */
		len = 0;
		r = info_raw(fd, tables[i].opt, NULL, &len);
		if (r < 0) {
			EXPECT_EQ(ENOSPC, errno);
			EXPECT_LT(0, len);
			EXPECT_EQ(0, len % tables[i].size);
		} else {
			EXPECT_EQ(tables[i].size, r);
			EXPECT_EQ(0, len);
		}
	}
	close(fd);
}

TEST(not_provided)
{
	static const int opts[] = { 10002, RDS_INFO_CONNECTION_STATS,
				    RDS_INFO_IWARP_CONNECTIONS };
	static char buf[4096];
	int fd = rds_socket();
	unsigned int i;
	int len;

	ASSERT_LE(0, fd);
	for (i = 0; i < ARRAY_LEN(opts); i++) {
		TH_LOG("optname %d", opts[i]);
		len = 0;
		EXPECT_ERRNO(info_raw(fd, opts[i], NULL, &len), ENOPROTOOPT);
		len = sizeof(buf);
		EXPECT_ERRNO(info_raw(fd, opts[i], buf, &len), ENOPROTOOPT);
		EXPECT_EQ((int)sizeof(buf), len);
	}
	if (!have_module("rds_tcp")) {
		len = sizeof(buf);
		EXPECT_ERRNO(info_raw(fd, RDS_INFO_TCP_SOCKETS, buf, &len),
			     ENOPROTOOPT);
		len = sizeof(buf);
		EXPECT_ERRNO(info_raw(fd, RDS6_INFO_TCP_SOCKETS, buf, &len),
			     ENOPROTOOPT);
	}
	if (!have_ib()) {
		len = sizeof(buf);
		EXPECT_ERRNO(info_raw(fd, RDS_INFO_IB_CONNECTIONS, buf, &len),
			     ENOPROTOOPT);
	}
	close(fd);
}

TEST(probe_enospc)
{
	const int each = sizeof(struct rds_info_counter);
	int fd = rds_socket();
	int need, len, i;
	uint8_t *buf;

	ASSERT_LE(0, fd);
	need = 0;
	ASSERT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, NULL, &need), ENOSPC);
	ASSERT_LE((int)ARRAY_LEN(core_names) * each, need);
	ASSERT_EQ(0, need % each);

	buf = malloc(need + 4096);
	ASSERT_NE(NULL, buf);

	/* one byte short, one item short, one item: all ENOSPC, need told */
	for (i = 0; i < 3; i++) {
		len = i == 0 ? need - 1 : i == 1 ? need - each : each;
		memset(buf, PAT, need + 4096);
		EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, buf, &len), ENOSPC);
		EXPECT_EQ(need, len);
		/* nothing beyond the offered length was written */
		EXPECT_EQ(PAT, buf[(i == 0 ? need - 1 : i == 1 ? need - each
					   : each)]);
	}
	/* a kernel address with len 0 is a probe too: nothing is touched */
	len = 0;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, RDS_KERNEL_PTR, &len),
		     ENOSPC);
	EXPECT_EQ(need, len);

	/* exactly enough, and more than enough */
	for (i = 0; i < 2; i++) {
		len = need + i * 4096;
		memset(buf, PAT, need + 4096);
		EXPECT_EQ(each, info_raw(fd, RDS_INFO_COUNTERS, buf, &len));
		EXPECT_EQ(need, len);
		EXPECT_EQ(PAT, buf[need]);
	}
	free(buf);
	close(fd);
}

TEST(bad_lengths)
{
	static char buf[4096];
	int fd = rds_socket();
	int *ro, len;

	ASSERT_LE(0, fd);
	/* optlen itself */
	EXPECT_ERRNO(getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, NULL),
		     EFAULT);
	EXPECT_ERRNO(getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf,
				RDS_KERNEL_PTR), EFAULT);
	/* a read-only optlen: readable, but the answer cannot be written */
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	EXPECT_ERRNO(getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL,
				(socklen_t *)ro), EFAULT);
	munmap(ro, 4096);

	/* negative, huge and wrapping lengths */
	len = -1;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, buf, &len), EINVAL);
	len = INT_MIN;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, buf, &len), EINVAL);
	len = INT_MAX;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, buf, &len), EINVAL);
	len = 8192;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, (void *)(~0UL - 4095),
			      &len), EINVAL);
	/* the bad length was not written back */
	len = -5;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_SOCKETS, buf, &len), EINVAL);
	EXPECT_EQ(-5, len);
	close(fd);
}

TEST(bad_buffers)
{
	int fd = rds_socket();
	uint8_t *two, *ro, *ok;
	long pg = sysconf(_SC_PAGESIZE);
	int len;

	ASSERT_LE(0, fd);
	/* NULL, a kernel address: the buffer cannot be pinned */
	len = 4096;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, NULL, &len), EAGAIN);
	len = 4096;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, RDS_KERNEL_PTR, &len),
		     EAGAIN);
	/* even for a table that would be empty, or nobody's */
	len = 4096;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_RETRANS_MESSAGES, NULL, &len),
		     EAGAIN);
	len = 4096;
	EXPECT_ERRNO(info_raw(fd, 10002, NULL, &len), EAGAIN);
	/* read-only memory */
	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	len = pg;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, ro, &len), EAGAIN);
	EXPECT_TRUE(all_zero(ro, pg));
	munmap(ro, pg);
	/* the second page of the buffer is not mapped */
	two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, munmap(two + pg, pg));
	len = 2 * pg;
	EXPECT_ERRNO(info_raw(fd, RDS_INFO_COUNTERS, two, &len), EAGAIN);
	munmap(two, pg);
	/* and the socket still answers */
	EXPECT_EQ((int)sizeof(struct rds_info_counter),
		  info_get(fd, RDS_INFO_COUNTERS, &ok, &len));
	free(ok);
	close(fd);
}

/* A buffer at an odd address, its items across a page boundary. */
TEST(unaligned_buffer)
{
	const int each = sizeof(struct rds6_info_socket);
	struct sockaddr_storage ss;
	long pg = sysconf(_SC_PAGESIZE);
	int fds[12], i, len, len2, n;
	uint8_t *ref, *area, *b;

	for (i = 0; i < 12; i++) {
		fds[i] = rds_bound_socket(i & 1 ? AF_INET6 : AF_INET, 0, &ss);
		ASSERT_LE(0, fds[i]);
	}
	ASSERT_EQ(each, info_get(fds[0], RDS6_INFO_SOCKETS, &ref, &len));
	n = len / each;
	ASSERT_LE(12, n);
	area = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, area);
	memset(area, PAT, 3 * pg);
	/* item 3 starts 7 bytes before the page boundary */
	b = area + pg - 3 * each - 7;
	len2 = 2 * pg;
	ASSERT_EQ(each, info_raw(fds[0], RDS6_INFO_SOCKETS, b, &len2));
	ASSERT_EQ(len, len2);
	EXPECT_EQ(0, memcmp(ref, b, len));
	EXPECT_EQ(PAT, b[-1]);
	EXPECT_EQ(PAT, b[len]);
	munmap(area, 3 * pg);
	free(ref);
	for (i = 0; i < 12; i++)
		close(fds[i]);
}

/* The item of socket inode ino in a SOCKETS table (IPv4 or RDS6), or NULL. */
static void *find_sock(uint8_t *buf, int len, bool v6, uint64_t ino)
{
	int each = v6 ? sizeof(struct rds6_info_socket) :
			sizeof(struct rds_info_socket);
	size_t off = v6 ? offsetof(struct rds6_info_socket, inum) :
			  offsetof(struct rds_info_socket, inum);
	uint64_t inum;
	int i;

	for (i = 0; i < len / each; i++) {
		memcpy(&inum, buf + i * each + off, sizeof(inum));
		if (inum == ino)
			return buf + i * each;
	}
	return NULL;
}

TEST(sockets)
{
	struct sockaddr_storage a4, a6, dst;
	struct rds6_info_socket *s6;
	struct rds_info_socket *s4;
	struct in6_addr want, any = {};
	int f4, f6, fu, len, sndbuf, rcvbuf;
	socklen_t sl = sizeof(int);
	uint8_t *buf;

	f4 = rds_bound_socket(AF_INET, 0, &a4);
	ASSERT_LE(0, f4);
	f6 = rds_bound_socket(AF_INET6, 0, &a6);
	ASSERT_LE(0, f6);
	fu = rds_socket();
	ASSERT_LE(0, fu);
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), 4000, &dst);
	ASSERT_EQ(0, connect(f4, (struct sockaddr *)&dst, rds_sslen(&dst)));
	ASSERT_EQ(0, getsockopt(f4, SOL_SOCKET, SO_SNDBUF, &sndbuf, &sl));
	ASSERT_EQ(0, getsockopt(f4, SOL_SOCKET, SO_RCVBUF, &rcvbuf, &sl));

	/* IPv4 table: the IPv4-bound socket only */
	ASSERT_EQ((int)sizeof(*s4), info_get(fu, RDS_INFO_SOCKETS, &buf, &len));
	s4 = find_sock(buf, len, false, inode_of(f4));
	ASSERT_NE(NULL, s4);
	EXPECT_EQ(addr4(rds_local_str(AF_INET)), s4->bound_addr);
	EXPECT_EQ(htons(rds_port_of(&a4)), s4->bound_port);
	EXPECT_EQ(addr4(rds_peer_str(AF_INET)), s4->connected_addr);
	EXPECT_EQ(htons(4000), s4->connected_port);
	EXPECT_EQ((uint32_t)sndbuf / 2, s4->sndbuf);
	EXPECT_EQ((uint32_t)rcvbuf / 2, s4->rcvbuf);
	EXPECT_EQ(NULL, find_sock(buf, len, false, inode_of(f6)));
	EXPECT_EQ(NULL, find_sock(buf, len, false, inode_of(fu)));
	free(buf);

	/* RDS6 table: all three */
	ASSERT_EQ((int)sizeof(*s6), info_get(fu, RDS6_INFO_SOCKETS, &buf, &len));
	s6 = find_sock(buf, len, true, inode_of(f4));
	ASSERT_NE(NULL, s6);
	mapped(rds_local_str(AF_INET), &want);
	EXPECT_EQ(0, memcmp(&want, &s6->bound_addr, 16));
	mapped(rds_peer_str(AF_INET), &want);
	EXPECT_EQ(0, memcmp(&want, &s6->connected_addr, 16));
	EXPECT_EQ(htons(4000), s6->connected_port);
	EXPECT_EQ((uint32_t)sndbuf / 2, s6->sndbuf);
	s6 = find_sock(buf, len, true, inode_of(f6));
	ASSERT_NE(NULL, s6);
	inet_pton(AF_INET6, rds_local_str(AF_INET6), &want);
	EXPECT_EQ(0, memcmp(&want, &s6->bound_addr, 16));
	EXPECT_EQ(htons(rds_port_of(&a6)), s6->bound_port);
	EXPECT_EQ(0, memcmp(&any, &s6->connected_addr, 16));
	EXPECT_EQ(0, s6->connected_port);
	s6 = find_sock(buf, len, true, inode_of(fu));
	ASSERT_NE(NULL, s6);
	EXPECT_EQ(0, memcmp(&any, &s6->bound_addr, 16));
	EXPECT_EQ(0, s6->bound_port);
	free(buf);

	/* a closed socket is gone */
	close(fu);
	ASSERT_EQ((int)sizeof(*s6), info_get(f4, RDS6_INFO_SOCKETS, &buf, &len));
	EXPECT_NE(NULL, find_sock(buf, len, true, inode_of(f4)));
	free(buf);
	close(f4);
	close(f6);
}

/*
 * An IPv4 item and its RDS6 twin differ only in the size of their
 * addresses.  A view of either: the addresses point into the item (4 or
 * 16 bytes, see addr_is()), the other fields are copied out.  The VIEW
 * macros fill one from an item of either type.
 */
struct msg_view {
	const void *laddr, *faddr;
	uint64_t seq;
	uint32_t len;
	uint16_t lport, fport;	/* network order */
	uint8_t flags, tos;
};

#define MSG_VIEW(v, m)							\
	(*(v) = (struct msg_view){ &(m)->laddr, &(m)->faddr, (m)->seq,	\
				   (m)->len, (m)->lport, (m)->fport,	\
				   (m)->flags, (m)->tos })

static void msg_at(const uint8_t *buf, int i, bool v6, struct msg_view *v)
{
	if (v6)
		MSG_VIEW(v, (const struct rds6_info_message *)buf + i);
	else
		MSG_VIEW(v, (const struct rds_info_message *)buf + i);
}

static int msg_size(bool v6)
{
	return v6 ? sizeof(struct rds6_info_message) :
		    sizeof(struct rds_info_message);
}

/* An item's address is want (IPv4 items: its last word, as in-tree). */
static bool addr_is(bool v6, const void *item, const struct in6_addr *want)
{
	return v6 ? !memcmp(item, want, 16) :
		    !memcmp(item, &want->s6_addr32[3], 4);
}

/* Messages of a table matching the addresses/ports, in table order. */
static int find_msgs(uint8_t *buf, int len, bool v6,
		     const struct in6_addr *laddr, uint16_t lport,
		     const struct in6_addr *faddr, uint16_t fport,
		     uint32_t *lens, uint64_t *seqs, int max)
{
	struct msg_view m;
	int i, n = 0;

	for (i = 0; i < len / msg_size(v6); i++) {
		msg_at(buf, i, v6, &m);
		if (!addr_is(v6, m.laddr, laddr) || !addr_is(v6, m.faddr, faddr) ||
		    m.lport != htons(lport) || m.fport != htons(fport))
			continue;
		if (m.flags || m.tos)
			return -1;
		if (n < max) {
			lens[n] = m.len;
			seqs[n] = m.seq;
		}
		n++;
	}
	return n;
}

/* Log a message table (diagnostics of a failed match). */
static void dump_msgs(struct __test_metadata *_metadata, int fd, int opt,
		      bool v6)
{
	char l[INET6_ADDRSTRLEN], f[INET6_ADDRSTRLEN];
	int af = v6 ? AF_INET6 : AF_INET;
	struct msg_view m;
	uint8_t *buf;
	int i, len;

	if (info_get(fd, opt, &buf, &len) < 0) {
		TH_LOG("optname %d: %s", opt, strerror(errno));
		return;
	}
	TH_LOG("optname %d: %d items", opt, len / msg_size(v6));
	for (i = 0; i < len / msg_size(v6); i++) {
		msg_at(buf, i, v6, &m);
		inet_ntop(af, m.laddr, l, sizeof(l));
		inet_ntop(af, m.faddr, f, sizeof(f));
		TH_LOG("  %s:%u -> %s:%u seq %llu len %u flags %u tos %u",
		       l, ntohs(m.lport), f, ntohs(m.fport),
		       (unsigned long long)m.seq, m.len, m.flags, m.tos);
	}
	free(buf);
}

/* Wait (bounded) until @opt lists @want matching messages; returns count. */
static int wait_msgs(int fd, int opt, bool v6, const struct in6_addr *laddr,
		     uint16_t lport, const struct in6_addr *faddr,
		     uint16_t fport, uint32_t *lens, uint64_t *seqs, int want)
{
	int tries, n = -1, len;
	uint8_t *buf;

	for (tries = 0; tries < 100; tries++) {
		if (info_get(fd, opt, &buf, &len) < 0)
			return -1;
		n = find_msgs(buf, len, v6, laddr, lport, faddr, fport, lens,
			      seqs, want);
		free(buf);
		if (n == want || n < 0)
			break;
		rds_msleep(50);
	}
	return n;
}

static void recv_queue_case(struct __test_metadata *_metadata, int family)
{
	struct sockaddr_storage aa, ba;
	struct in6_addr la;
	uint32_t lens[4];
	uint64_t seqs[4];
	char msg[64] = "x";
	int a, b, i, n;

	a = rds_bound_socket(family, 0, &aa);
	ASSERT_LE(0, a);
	b = rds_bound_socket(family, 0, &ba);
	ASSERT_LE(0, b);
	addr6_of(family, rds_local_str(family), &la);
	for (i = 1; i <= 3; i++)
		ASSERT_EQ(10 * i, rds_sendto(a, msg, 10 * i, 0, &ba));

	/* receive queue of b: laddr/lport are b's, faddr/fport a's */
	n = wait_msgs(a, family == AF_INET ? RDS_INFO_RECV_MESSAGES
					   : RDS6_INFO_RECV_MESSAGES,
		      family == AF_INET6, &la, rds_port_of(&ba), &la,
		      rds_port_of(&aa), lens, seqs, 3);
	ASSERT_EQ(3, n);
	for (i = 0; i < 3; i++)
		EXPECT_EQ((uint32_t)(10 * (i + 1)), lens[i]);
	EXPECT_LT(seqs[0], seqs[1]);
	EXPECT_LT(seqs[1], seqs[2]);
	/* the RDS6 table has them too, the IPv4 one only IPv4 ones */
	if (family == AF_INET)
		n = wait_msgs(a, RDS6_INFO_RECV_MESSAGES, true, &la,
			      rds_port_of(&ba), &la, rds_port_of(&aa), lens,
			      seqs, 3);
	else
		n = wait_msgs(a, RDS_INFO_RECV_MESSAGES, false, &la,
			      rds_port_of(&ba), &la, rds_port_of(&aa), lens,
			      seqs, 0);
	EXPECT_EQ(family == AF_INET ? 3 : 0, n);

	/* read one: two left */
	ASSERT_EQ(10, rds_recv_wait(b, msg, sizeof(msg), 0, NULL, RDS_WAIT_MS));
	n = wait_msgs(a, family == AF_INET ? RDS_INFO_RECV_MESSAGES
					   : RDS6_INFO_RECV_MESSAGES,
		      family == AF_INET6, &la, rds_port_of(&ba), &la,
		      rds_port_of(&aa), lens, seqs, 2);
	EXPECT_EQ(2, n);
	EXPECT_EQ(20, lens[0]);
	close(b);
	n = wait_msgs(a, RDS6_INFO_RECV_MESSAGES, true, &la, rds_port_of(&ba),
		      &la, rds_port_of(&aa), lens, seqs, 0);
	EXPECT_EQ(0, n);
	close(a);
}

TEST(recv_queue4)
{
	recv_queue_case(_metadata, AF_INET);
}

TEST(recv_queue6)
{
	recv_queue_case(_metadata, AF_INET6);
}

/* Connection entry for (laddr, faddr) in a CONNECTIONS table, or NULL. */
static void *find_conn(uint8_t *buf, int len, bool v6,
		       const struct in6_addr *l, const struct in6_addr *f)
{
	int i, each = v6 ? sizeof(struct rds6_info_connection) :
			   sizeof(struct rds_info_connection);
	size_t lo = v6 ? offsetof(struct rds6_info_connection, laddr) :
			 offsetof(struct rds_info_connection, laddr);
	size_t fo = v6 ? offsetof(struct rds6_info_connection, faddr) :
			 offsetof(struct rds_info_connection, faddr);

	for (i = 0; i < len / each; i++) {
		uint8_t *c = buf + i * each;

		if (addr_is(v6, c + lo, l) && addr_is(v6, c + fo, f))
			return c;
	}
	return NULL;
}

/* An RDMA connection item, IPv4 or RDS6 (see struct msg_view). */
struct rdma_view {
	const void *src, *dst;
	const uint8_t *src_gid, *dst_gid;
	uint32_t max_send_wr, max_recv_wr, max_send_sge;
	uint32_t rdma_mr_max, rdma_mr_size;
	uint8_t tos;
	const uint8_t *pad;	/* the 2 bytes after sl */
	uint32_t cache_allocs;
};

#define RDMA_VIEW(v, r)							\
	(*(v) = (struct rdma_view){ &(r)->src_addr, &(r)->dst_addr,	\
				    (r)->src_gid, (r)->dst_gid,		\
				    (r)->max_send_wr, (r)->max_recv_wr,	\
				    (r)->max_send_sge, (r)->rdma_mr_max, \
				    (r)->rdma_mr_size, (r)->tos,	\
				    &(r)->sl + 1, (r)->cache_allocs })

static void rdma_at(const uint8_t *buf, int i, bool v6, struct rdma_view *v)
{
	if (v6)
		RDMA_VIEW(v, (const struct rds6_info_rdma_connection *)buf + i);
	else
		RDMA_VIEW(v, (const struct rds_info_rdma_connection *)buf + i);
}

static int rdma_size(bool v6)
{
	return v6 ? sizeof(struct rds6_info_rdma_connection) :
		    sizeof(struct rds_info_rdma_connection);
}

TEST(send_queue)
{
	struct sockaddr_storage aa, dst;
	struct rds_info_connection *c;
	struct in6_addr la, fa, zero = {};
	uint32_t lens[4];
	uint64_t seqs[4];
	char msg[100] = "q";
	uint8_t *buf;
	int a, n, len;

	a = rds_bound_socket(AF_INET, 0, &aa);
	ASSERT_LE(0, a);
	rds_mkaddr(AF_INET, rds_unreach_str(AF_INET), 4321, &dst);
	mapped(rds_local_str(AF_INET), &la);
	mapped(rds_unreach_str(AF_INET), &fa);
	ASSERT_EQ(77, rds_sendto(a, msg, 77, MSG_DONTWAIT, &dst));
	ASSERT_EQ(0, rds_sendto(a, msg, 0, MSG_DONTWAIT, &dst));

	/*
	 * Nobody answers there: both stay on the send queue.  The in-tree
	 * IPv4 send/retransmit tables report 0.0.0.0 for both addresses (they
	 * read the first word of the v4-mapped in6_addr); ours the addresses.
	 */
	n = wait_msgs(a, RDS_INFO_SEND_MESSAGES, false,
		      rds_intree() ? &zero : &la, rds_port_of(&aa),
		      rds_intree() ? &zero : &fa, 4321, lens, seqs, 2);
	if (n != 2) {
		TH_LOG("our port %u", rds_port_of(&aa));
		dump_msgs(_metadata, a, RDS_INFO_SEND_MESSAGES, false);
		dump_msgs(_metadata, a, RDS_INFO_RETRANS_MESSAGES, false);
		dump_msgs(_metadata, a, RDS6_INFO_SEND_MESSAGES, true);
	}
	ASSERT_EQ(2, n);
	EXPECT_EQ(77, lens[0]);
	EXPECT_EQ(0, lens[1]);
	EXPECT_LT(seqs[0], seqs[1]);
	n = wait_msgs(a, RDS6_INFO_SEND_MESSAGES, true, &la, rds_port_of(&aa),
		      &fa, 4321, lens, seqs, 2);
	EXPECT_EQ(2, n);

	/* the connection exists and is not up; the name is clean */
	ASSERT_EQ((int)sizeof(*c), info_get(a, RDS_INFO_CONNECTIONS, &buf, &len));
	c = find_conn(buf, len, false, &la, &fa);
	ASSERT_NE(NULL, c);
	EXPECT_STREQ("infiniband", (char *)c->transport);
	EXPECT_TRUE(clean_string(c->transport, sizeof(c->transport)));
	EXPECT_EQ(0, c->flags & RDS_INFO_CONNECTION_FLAG_CONNECTED);
	EXPECT_EQ(0, c->tos);
	EXPECT_LE(3, c->next_tx_seq);
	free(buf);

	/* the RDMA table: addresses, nothing of an endpoint that is not up */
	if (have_ib()) {
		struct rdma_view r;
		int i, found = 0;

		ASSERT_EQ(rdma_size(false),
			  info_get(a, RDS_INFO_IB_CONNECTIONS, &buf, &len));
		for (i = 0; i < len / rdma_size(false); i++) {
			rdma_at(buf, i, false, &r);
			if (!addr_is(false, r.src, &la) ||
			    !addr_is(false, r.dst, &fa))
				continue;
			found++;
			EXPECT_TRUE(all_zero(r.src_gid, 16));
			EXPECT_TRUE(all_zero(r.dst_gid, 16));
			EXPECT_EQ(0, r.max_send_wr);
			EXPECT_EQ(0, r.max_recv_wr);
			EXPECT_TRUE(all_zero(r.pad, 2));
		}
		EXPECT_EQ(1, found);
		free(buf);
	}

	/* closing the socket drops its messages */
	close(a);
	a = rds_socket();
	n = wait_msgs(a, RDS6_INFO_SEND_MESSAGES, true, &la, rds_port_of(&aa),
		      &fa, 4321, lens, seqs, 0);
	EXPECT_EQ(0, n);
	close(a);
}

/* Ping @family's peer address until a pong comes back. */
static int ping_peer(int fd, int family)
{
	struct sockaddr_storage dst, from;
	char buf[16];
	int i;

	rds_mkaddr(family, rds_peer_str(family), 0, &dst);
	for (i = 0; i < 5; i++) {
		if (rds_sendto(fd, NULL, 0, 0, &dst) < 0 && errno != ENOBUFS)
			return -1;
		if (rds_recv_wait(fd, buf, sizeof(buf), 0, &from, 10000) == 0)
			return 0;
	}
	return -1;
}

static void peer_case(struct __test_metadata *_metadata, int family)
{
	bool v6 = family == AF_INET6;
	struct sockaddr_storage aa;
	struct in6_addr la, fa;
	uint8_t *buf;
	int a, len, i, t, found;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	a = rds_bound_socket(family, 0, &aa);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, ping_peer(a, family));
	addr6_of(family, rds_local_str(family), &la);
	addr6_of(family, rds_peer_str(family), &fa);

	/*
	 * RDS6_INFO_CONNECTIONS lists it whatever the family.  Its items have
	 * no TOS: other TOS to the peer that earlier tests left (or that the
	 * peer brought back first after a reload) look the same, so the one
	 * we pinged on is the entry for these addresses that is up and has
	 * sent and received.
	 */
	ASSERT_EQ((int)sizeof(struct rds6_info_connection),
		  info_get(a, RDS6_INFO_CONNECTIONS, &buf, &len));
	found = 0;
	for (i = 0; i < len / (int)sizeof(struct rds6_info_connection); i++) {
		struct rds6_info_connection *c = (void *)(buf + i * 65);

		if (!addr_is(true, &c->laddr, &la) ||
		    !addr_is(true, &c->faddr, &fa))
			continue;
		EXPECT_STREQ("infiniband", (char *)c->transport);
		EXPECT_TRUE(clean_string(c->transport, sizeof(c->transport)));
		found += (c->flags & RDS_INFO_CONNECTION_FLAG_CONNECTED) &&
			 !(c->flags & RDS_INFO_CONNECTION_FLAG_CONNECTING) &&
			 c->next_tx_seq >= 2 && c->next_rx_seq >= 1;
	}
	EXPECT_LE(1, found);
	free(buf);

	/* RDS_INFO_CONNECTIONS only for IPv4 */
	ASSERT_EQ((int)sizeof(struct rds_info_connection),
		  info_get(a, RDS_INFO_CONNECTIONS, &buf, &len));
	found = 0;
	for (i = 0; i < len / (int)sizeof(struct rds_info_connection); i++) {
		struct rds_info_connection *c = (void *)(buf + i * 42);

		EXPECT_TRUE(clean_string(c->transport, sizeof(c->transport)));
		/* Earlier tests of the boot may have left other TOS up. */
		if (!v6 && c->laddr == la.s6_addr32[3] &&
		    c->faddr == fa.s6_addr32[3] && !c->tos) {
			found++;
			EXPECT_TRUE(c->flags & RDS_INFO_CONNECTION_FLAG_CONNECTED);
		}
	}
	EXPECT_EQ(v6 ? 0 : 1, found);
	free(buf);

	if (!have_ib()) {
		close(a);
		return;
	}
	/*
	 * RDMA connection: the GIDs of RoCE are the IP addresses.  The RDS6
	 * table lists it whatever the family, the IPv4 one only for IPv4.
	 */
	for (t = 0; t < 2; t++) {
		bool t6 = t == 0;
		struct rdma_view r;

		ASSERT_EQ(rdma_size(t6),
			  info_get(a, t6 ? RDS6_INFO_IB_CONNECTIONS :
					   RDS_INFO_IB_CONNECTIONS, &buf, &len));
		found = 0;
		for (i = 0; i < len / rdma_size(t6); i++) {
			rdma_at(buf, i, t6, &r);
			EXPECT_TRUE(all_zero(r.pad, 2));	/* padding */
			if ((v6 && !t6) || !addr_is(t6, r.src, &la) ||
			    !addr_is(t6, r.dst, &fa) || r.tos)
				continue;
			found++;
			EXPECT_EQ(0, memcmp(r.src_gid, &la, 16));
			EXPECT_EQ(0, memcmp(r.dst_gid, &fa, 16));
			EXPECT_LT(0, r.max_send_wr);
			EXPECT_LT(0, r.max_recv_wr);
			EXPECT_LT(0, r.max_send_sge);
			EXPECT_LT(0, r.rdma_mr_max);
			EXPECT_LT(0, r.rdma_mr_size);
			/* ours has no receive fragment cache (in-tree: KiB in it) */
			if (t6 && !rds_intree())
				EXPECT_EQ(0, r.cache_allocs);
		}
		EXPECT_EQ(v6 && !t6 ? 0 : 1, found);
		free(buf);
	}
	close(a);
}

TEST(peer_connections4)
{
	peer_case(_metadata, AF_INET);
}

TEST(peer_connections6)
{
	peer_case(_metadata, AF_INET6);
}

TEST(counter_names)
{
	struct rds_info_counter *c;
	int fd = rds_socket();
	unsigned int i, j, n, ib;
	uint8_t *buf;
	int len;

	ASSERT_LE(0, fd);
	ASSERT_EQ((int)sizeof(*c), info_get(fd, RDS_INFO_COUNTERS, &buf, &len));
	c = (void *)buf;
	n = len / sizeof(*c);
	ASSERT_LE(ARRAY_LEN(core_names), n);
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(clean_string(c[i].name, sizeof(c[i].name)))
			TH_LOG("counter %u", i);
		EXPECT_NE(0, c[i].name[0]);
		for (j = 0; j < i; j++)
			EXPECT_NE(0, strncmp((char *)c[i].name,
					     (char *)c[j].name, 32))
				TH_LOG("duplicate %.32s", c[i].name);
	}
	for (i = 0; i < ARRAY_LEN(core_names); i++)
		EXPECT_STREQ(core_names[i], (char *)c[i].name);
	/* Core counters only ours has come next (none in-tree). */
	for (ib = ARRAY_LEN(core_names); ib < n; ib++)
		if (!strncmp((char *)c[ib].name, "ib_", 3))
			break;
	if (rds_intree())
		EXPECT_EQ(ARRAY_LEN(core_names), ib);
	if (have_ib()) {
		ASSERT_LE(ib + ARRAY_LEN(ib_names), n);
		for (i = 0; i < ARRAY_LEN(ib_names); i++)
			EXPECT_STREQ(ib_names[i], (char *)c[ib + i].name);
	}
	free(buf);
	close(fd);
}

TEST(counters_loopback)
{
	struct sockaddr_storage aa, ba;
	long long q0, d0, c0, f0, q1, d1, c1, f1;
	char msg[200] = "c";
	int a, b, i;

	a = rds_bound_socket(AF_INET, 0, &aa);
	ASSERT_LE(0, a);
	b = rds_bound_socket(AF_INET, 0, &ba);
	ASSERT_LE(0, b);
	q0 = counter(a, "send_queued");
	d0 = counter(a, "recv_delivered");
	c0 = counter(a, "recv_queued");
	f0 = counter(a, "copy_from_user");
	ASSERT_LE(0, q0);
	for (i = 0; i < 10; i++)
		ASSERT_EQ(100, rds_sendto(a, msg, 100, 0, &ba));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(100, rds_recv_wait(b, msg, sizeof(msg), 0, NULL,
					     RDS_WAIT_MS));
	q1 = counter(a, "send_queued");
	d1 = counter(a, "recv_delivered");
	c1 = counter(a, "recv_queued");
	f1 = counter(a, "copy_from_user");
	TH_LOG("send_queued %lld->%lld recv_queued %lld->%lld recv_delivered %lld->%lld copy_from_user %lld->%lld",
	       q0, q1, c0, c1, d0, d1, f0, f1);
	EXPECT_LE(10, q1 - q0);
	EXPECT_LE(10, c1 - c0);
	EXPECT_LE(10, d1 - d0);
	EXPECT_LE(1000, f1 - f0);
	close(a);
	close(b);
}

TEST(counters_peer)
{
	long long q0, r0, t0, q1, r1, t1;	/* recv_queued: the pongs */
	struct sockaddr_storage aa;
	int a, i;

	if (!rds_have_peer() || !have_ib())
		SKIP(return, "no peer node or no rds_rdma");
	a = rds_bound_socket(AF_INET, 0, &aa);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, ping_peer(a, AF_INET));	/* connection up */
	q0 = counter(a, "send_queued");
	r0 = counter(a, "recv_queued");
	t0 = counter(a, "ib_tx_cq_event");
	for (i = 0; i < 5; i++)
		ASSERT_EQ(0, ping_peer(a, AF_INET));
	q1 = counter(a, "send_queued");
	r1 = counter(a, "recv_queued");
	t1 = counter(a, "ib_tx_cq_event");
	TH_LOG("send_queued %lld->%lld recv_queued %lld->%lld ib_tx_cq_event %lld->%lld",
	       q0, q1, r0, r1, t0, t1);
	EXPECT_LE(5, q1 - q0);
	EXPECT_LE(5, r1 - r0);
	EXPECT_LT(t0, t1);
	close(a);
}

/* Another namespace sees none of ours (tables are per netns). */
TEST(other_netns)
{
	struct sockaddr_storage aa, ba;
	int a, b, st;
	pid_t pid;

	a = rds_bound_socket(AF_INET, 0, &aa);
	ASSERT_LE(0, a);
	b = rds_bound_socket(AF_INET, 0, &ba);
	ASSERT_LE(0, b);
	ASSERT_EQ(5, rds_sendto(a, "netns", 5, 0, &ba));	/* queued on b */
	rds_msleep(200);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		uint8_t *buf;
		int fd, len, bad = 0;

		alarm(60);
		if (unshare(CLONE_NEWNET))
			_exit(20);
		fd = rds_socket();
		if (fd < 0)
			_exit(21);
		/* only itself */
		if (info_get(fd, RDS6_INFO_SOCKETS, &buf, &len) < 0)
			_exit(22);
		bad |= len != (int)sizeof(struct rds6_info_socket) ||
		       ((struct rds6_info_socket *)buf)->inum != inode_of(fd);
		free(buf);
		if (info_get(fd, RDS_INFO_SOCKETS, &buf, &len) < 0)
			_exit(23);
		bad |= (len != 0) << 1;
		free(buf);
		if (info_get(fd, RDS6_INFO_CONNECTIONS, &buf, &len) < 0)
			_exit(24);
		bad |= (len != 0) << 2;
		free(buf);
		if (info_get(fd, RDS6_INFO_RECV_MESSAGES, &buf, &len) < 0)
			_exit(25);
		bad |= (len != 0) << 3;
		free(buf);
		if (have_ib()) {
			if (info_get(fd, RDS6_INFO_IB_CONNECTIONS, &buf, &len) < 0)
				_exit(26);
			bad |= (len != 0) << 4;
			free(buf);
		}
		/* the counters are global */
		if (info_get(fd, RDS_INFO_COUNTERS, &buf, &len) !=
		    (int)sizeof(struct rds_info_counter))
			_exit(27);
		free(buf);
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(a);
	close(b);
}

RDS_TEST_MAIN
