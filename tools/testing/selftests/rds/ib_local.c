// SPDX-License-Identifier: GPL-2.0
/*
 * ib_local.c - SO_RDS_TRANSPORT is honoured for local destinations
 * (issue 10, item 2).
 *
 * The kernel's own RDS selftest pins its sockets to RDS_TRANS_IB so that
 * the traffic between two addresses of one machine crosses the RDMA
 * device, not the loopback transport.  On node 0 this test adds a second
 * address to the cluster NIC (192.0.2.101, 2001:db8::65; rxe makes RoCE
 * GIDs of them) and checks, with hashed messages of 1 B to 64 KiB, one at
 * a time each way, and our ib_rx_total_incs counter:
 *
 *   pinned        two sockets pinned to IB, bound to the two addresses:
 *                 every message arrives intact and went through the HCA
 *                 (one IB receive per message, on this node, both ways);
 *   unpinned      the same pair without SO_RDS_TRANSPORT: the loopback
 *                 transport carries it (no IB receive);
 *   same address  two pinned sockets on one address: loopback too (both
 *                 ends would be one connection);
 *   to loopback   a pinned socket to one bound to 127.0.0.1 / ::1, which
 *                 IB cannot serve: loopback, delivered;
 *   rdma          a use-once key of the pinned receiver, written by the
 *                 pinned sender through the HCA: data in place, SUCCESS;
 *                 a second WRITE with the same cookie REMOTE_ERROR and
 *                 memory untouched;
 *   rdma_rw       READs and WRITEs through the RDMA core's R/W API
 *                 (rdma_rw_ctx) in every local layout: 1 byte, a page,
 *                 257 unaligned pages, and iovec lists whose pieces do
 *                 not meet on page boundaries (3, 12, 24 pieces); content
 *                 checked both ways.  Run again with ib_core.force_mr=1
 *                 (the forcemr tier, RDS_FORCE_MR=1), where every op goes
 *                 through MRs as READs do on iWARP: then the op needs at
 *                 least two WRs per MR (REG_MR, the RDMA), a gapped list
 *                 needs one MR per run, and the 24-run READ, more MRs
 *                 than a connection's pool has (16), must end
 *                 RDS_RDMA_OTHER_ERROR with the local buffer untouched,
 *                 counted in ib_rdma_unpostable, and the connection must
 *                 stay up for the next op.  Then one message with a
 *                 fetch-and-add and a WRITE of 12, and of 24, pieces:
 *                 when the WRITE is unpostable neither op may run (both
 *                 OTHER_ERROR, the word untouched, the connection up).
 *
 * For IPv4 and IPv6.  The addresses are removed at the end.  Our modules
 * only (the in-tree IB transport sends unpinned local traffic through the
 * HCA as well).
 */
#include <poll.h>
#include "rds_test.h"

#define NMSG		120
#define MAXMSG		65536
#define WAIT_MS		15000
#define RDMA_LEN	8192

static const char *second_str(int family)
{
	return family == AF_INET6 ? "2001:db8::65" : "192.0.2.101";
}

/* GID table entry text of the second address (rxe's sysfs format). */
static const char *second_gid(int family)
{
	return family == AF_INET6 ? "2001:0db8:0000:0000:0000:0000:0000:0065" :
				    "0000:0000:0000:0000:0000:ffff:c000:0265";
}

static int addrs(bool add)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "dev=$(ip -o -4 addr show to %s | awk '{ print $2; exit }'); "
		 "[ -n \"$dev\" ] && ip addr %s %s/24 dev $dev && "
		 "ip -6 addr %s %s/64 dev $dev",
		 rds_local_str(AF_INET), add ? "replace" : "del",
		 second_str(AF_INET), add ? "replace" : "del",
		 second_str(AF_INET6));
	return system(cmd);
}

/* Wait (bounded) until rxe lists the GIDs of both second addresses. */
static int wait_gids(void)
{
	char cmd[512];
	int i;

	snprintf(cmd, sizeof(cmd),
		 "cat /sys/class/infiniband/*/ports/*/gids/* 2>/dev/null | grep -q %s && "
		 "cat /sys/class/infiniband/*/ports/*/gids/* 2>/dev/null | grep -q %s",
		 second_gid(AF_INET), second_gid(AF_INET6));
	for (i = 0; i < 100; i++) {
		if (!system(cmd))
			return 0;
		rds_msleep(100);
	}
	return -1;
}

/* A socket bound to addr, pinned to IB first if pin. */
static int sock_at(int family, const char *addr, bool pin,
		   struct sockaddr_storage *out)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(family, addr, 0, &ss);
	int fd = rds_socket(), t = RDS_TRANS_IB;

	if (fd < 0)
		return -1;
	if ((pin && setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &t, sizeof(t))) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 ||
	    rds_big_sndbuf(fd, 4 * MAXMSG)) {
		close(fd);
		return -1;
	}
	len = sizeof(*out);
	if (getsockname(fd, (struct sockaddr *)out, &len) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static ssize_t recv_wait(int fd, void *buf, size_t len,
			 struct sockaddr_storage *from, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	socklen_t flen = sizeof(*from);

	if (poll(&p, 1, ms) != 1)
		return -1;
	return recvfrom(fd, buf, len, MSG_DONTWAIT, (struct sockaddr *)from,
			&flen);
}

/* Send n hashed messages from a to b, one at a time; count the good ones. */
static int one_way(int a, const struct sockaddr_storage *aa, int b,
		   const struct sockaddr_storage *ba, int n, uint32_t seed0)
{
	static const size_t sizes[] = { 1, 100, 4096, 4097, 9000, MAXMSG };
	static char out[MAXMSG], in[MAXMSG + 1];
	struct sockaddr_storage from;
	int i, good = 0, tries;

	for (i = 0; i < n; i++) {
		size_t len = sizes[i % (sizeof(sizes) / sizeof(sizes[0]))];
		ssize_t r;

		rds_fill(out, len, seed0 + i);
		for (tries = 0; tries < 1000; tries++) {
			r = rds_sendto(a, out, len, 0, ba);
			if (r >= 0 || (errno != ENOBUFS && errno != EAGAIN &&
				       errno != ENOMEM))
				break;
			rds_msleep(10);
		}
		if (r != (ssize_t)len) {
			printf("# message %d: sendto %zd (%s)\n", i, r,
			       strerror(errno));
			break;
		}
		r = recv_wait(b, in, sizeof(in), &from, WAIT_MS);
		if (r != (ssize_t)len || !rds_check(in, len, seed0 + i) ||
		    !rds_addr_eq(&from, aa)) {
			printf("# message %d of %zu bytes: got %zd\n", i, len, r);
			break;
		}
		good++;
	}
	return good;
}

/*
 * NMSG messages each way between a socket on addr_a and one on addr_b;
 * *ib gets the IB receives this node counted meanwhile.
 */
static bool exchange(int family, const char *addr_a, bool pin_a,
		     const char *addr_b, bool pin_b, long long *ib)
{
	struct sockaddr_storage aa, ba;
	long long ib0 = rds_counter("ib_rx_total_incs");
	int a, b, ab = -1, bk = -1;

	a = sock_at(family, addr_a, pin_a, &aa);
	b = sock_at(family, addr_b, pin_b, &ba);
	if (a >= 0 && b >= 0) {
		ab = one_way(a, &aa, b, &ba, NMSG, 1000);
		bk = one_way(b, &ba, a, &aa, NMSG, 5000);
	}
	printf("# %s -> %s: %d/%d, back: %d/%d\n", addr_a, addr_b, ab, NMSG,
	       bk, NMSG);
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	*ib = rds_counter("ib_rx_total_incs") - ib0;
	return ab == NMSG && bk == NMSG;
}

FIXTURE(il) {
	int family;
	const char *la, *sa;
};

FIXTURE_VARIANT(il) {
	int family;
};

FIXTURE_VARIANT_ADD(il, ipv4) { .family = AF_INET };
FIXTURE_VARIANT_ADD(il, ipv6) { .family = AF_INET6 };

FIXTURE_SETUP(il)
{
	if (rds_intree())
		SKIP(return, "in-tree sends unpinned local traffic over IB too");
	if (rds_counter("ib_rx_total_incs") < 0)
		SKIP(return, "no ib_rx_total_incs counter");
	self->family = variant->family;
	self->la = rds_local_str(self->family);
	self->sa = second_str(self->family);
	ASSERT_EQ(0, addrs(true));
	ASSERT_EQ(0, wait_gids()) TH_LOG("no RoCE GIDs for the second addresses");
}

/* The addresses stay for every test (see main()). */
FIXTURE_TEARDOWN(il)
{
}

/* Pinned to IB, two local addresses: intact, and through the HCA. */
TEST_F(il, pinned)
{
	long long ib;

	EXPECT_TRUE(exchange(self->family, self->la, true, self->sa, true,
			     &ib));
	TH_LOG("IB receives: %lld", ib);
	EXPECT_GE(ib, 2 * NMSG);
}

/* Not pinned, the same pair: the loopback transport. */
TEST_F(il, unpinned)
{
	long long ib;

	EXPECT_TRUE(exchange(self->family, self->la, false, self->sa, false,
			     &ib));
	TH_LOG("IB receives: %lld", ib);
	EXPECT_LT(ib, NMSG);
}

/* Pinned, one address both ends: loopback (one connection both ends). */
TEST_F(il, same_address)
{
	long long ib;

	EXPECT_TRUE(exchange(self->family, self->la, true, self->la, true,
			     &ib));
	TH_LOG("IB receives: %lld", ib);
	EXPECT_LT(ib, NMSG);
}

/* Pinned to IB, to a loopback-bound socket: IB cannot serve it, loopback. */
TEST_F(il, to_loopback)
{
	long long ib;

	EXPECT_TRUE(exchange(self->family, self->la, true,
			     rds_loop_str(self->family), false, &ib));
	TH_LOG("IB receives: %lld", ib);
	EXPECT_LT(ib, NMSG);
}

/* A use-once key of a pinned socket, written twice through the HCA. */
TEST_F(il, rdma)
{
	static char local[RDMA_LEN], target[RDMA_LEN];
	struct sockaddr_storage aa, ba;
	uint64_t cookie = 0;
	int a, b, st;

	a = sock_at(self->family, self->la, true, &aa);
	ASSERT_LE(0, a);
	b = sock_at(self->family, self->sa, true, &ba);
	ASSERT_LE(0, b);
	memset(target, 0x11, sizeof(target));
	rds_fill(local, sizeof(local), 77);
	ASSERT_EQ(0, rds_get_mr(b, target, sizeof(target), &cookie,
				RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE));
	EXPECT_EQ(RDS_RDMA_SUCCESS,
		  rds_do_rdma(a, &ba, "w", 1, cookie, local, sizeof(local),
			      true, 1, WAIT_MS));
	EXPECT_EQ(0, memcmp(local, target, sizeof(target)));
	memset(target, 0x22, sizeof(target));
	/*
	 * The dead key moves the responder QP to error; its flushed
	 * receives drop the connection, and the disconnect can reach the
	 * requester QP before the NAK does (both QPs on this node): then the
	 * op ends DROPPED. Either way the target must stay untouched.
	 */
	st = rds_do_rdma(a, &ba, "w", 1, cookie, local, sizeof(local), true, 2,
			 WAIT_MS);
	if (st == RDS_RDMA_DROPPED)
		TH_LOG("second write DROPPED (disconnect before the NAK)");
	else
		EXPECT_EQ(RDS_RDMA_REMOTE_ERROR, st);
	EXPECT_EQ(0x22, target[0]);
	EXPECT_EQ(0x22, target[RDMA_LEN - 1]);
	close(a);
	close(b);
}

/* Layouts of the local side of rdma_rw: pieces at offsets in the arena. */
#define RW_ARENA	(4 << 20)
#define RW_TARGET	(1 << 20)
#define RW_MAXV		24

struct rw_layout {
	const char *name;
	unsigned int n;			/* pieces */
	unsigned int off, len, step;	/* piece i at off + i * step */
};

static const struct rw_layout rw_layouts[] = {
	{ "1 byte",		1,	100,	1,	0 },
	{ "one page",		1,	0,	4096,	0 },
	{ "257 pages",		1,	123,	RW_TARGET,	0 },
	{ "3 pieces",		3,	10,	3000,	12288 + 7 },
	{ "12 pieces",		12,	1000,	700,	8192 },
	{ "24 pieces",		RW_MAXV, 300,	1500,	8192 + 100 },
};

/*
 * One READ or WRITE of layout l between the arena and the start of the
 * owner's key, from a to the owner at ba, waited for through its
 * notification.  The owner's copies of the messages pile up on its
 * socket (the caller drains them).  Return: the status, or -1.
 */
static int rw_send(int a, const struct sockaddr_storage *ba, uint64_t cookie,
		   uint64_t raddr, char *arena, const struct rw_layout *l,
		   bool write, uint64_t token)
{
	/* Messages of ops past the MR pool are 3 bytes: rw_unsent() */
	size_t mlen = l->n > 16 ? 3 : 2;
	struct rds_iovec v[RW_MAXV];
	struct rds_rdma_args args = {
		.cookie = cookie,
		.local_vec_addr = (uintptr_t)v,
		.nr_local = l->n,
		.flags = RDS_RDMA_NOTIFY_ME | (write ? RDS_RDMA_READWRITE : 0),
		.user_token = token,
	};
	unsigned int i;

	for (i = 0; i < l->n; i++) {
		v[i].addr = (uintptr_t)arena + l->off + i * l->step;
		v[i].bytes = l->len;
	}
	args.remote_vec.addr = raddr;
	args.remote_vec.bytes = (uint64_t)l->n * l->len;
	return rds_send_cmsg(a, ba, "rw!", mlen, RDS_CMSG_RDMA_ARGS, &args,
			     sizeof(args), WAIT_MS) < 0 ? -1 : 0;
}

/*
 * Messages of 3 payload bytes on this node's retransmit queues: those of
 * unpostable ops must be gone at once (no ACK will ever name them).
 * Waits up to 300 ms for them to go; -1 on error.
 */
static int rw_unsent(void)
{
	static struct rds6_info_message m[1024];
	int i, n = 0, tries;

	for (tries = 0; tries < 30; tries++) {
		socklen_t len = sizeof(m);
		int fd = rds_socket();

		if (fd < 0)
			return -1;
		if (getsockopt(fd, SOL_RDS, RDS6_INFO_RETRANS_MESSAGES, m,
			       &len) < 0) {
			close(fd);
			return -1;
		}
		close(fd);
		for (i = 0, n = 0; i < (int)(len / sizeof(m[0])); i++)
			n += m[i].len == 3;
		if (!n)
			break;
		rds_msleep(10);
	}
	return n;
}

/*
 * After a run: exactly @want messages reached the key's owner (socket b),
 * and with @unsent, no message of an unpostable op (3 bytes) is left on
 * this node's retransmit queues.  Logs under @what.
 */
static bool rw_owner_check(struct __test_metadata *_metadata, int b,
			   int want, bool unsent, const char *what)
{
	bool ok = true;
	int n;

	n = rds_drain(b, 200);
	if (n != want) {
		TH_LOG("%s: the owner got %d messages", what, n);
		ok = false;
	}
	/* (Messages that went are ACKed in the peer's own time.) */
	n = unsent ? rw_unsent() : 0;
	if (n) {
		TH_LOG("%s: %d unsent messages still queued on the sender",
		       what, n);
		ok = false;
	}
	return ok;
}

static int rw_op(int a, const struct sockaddr_storage *ba, uint64_t cookie,
		 char *arena, const struct rw_layout *l, bool write,
		 uint64_t token)
{
	uint64_t got = 0;
	int st;

	if (rw_send(a, ba, cookie, 0, arena, l, write, token))
		return -1;
	st = rds_wait_note(a, &got, WAIT_MS);
	return st >= 0 && got == token ? st : -1;
}

/* Do the arena's pieces of l hold the first bytes of target? */
static bool rw_same(const char *arena, const struct rw_layout *l,
		    const char *target)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (memcmp(arena + l->off + i * l->step,
			   target + (size_t)i * l->len, l->len))
			return false;
	return true;
}

/* Is every byte of buf c? */
static bool all_c(const char *buf, size_t len, char c)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != c)
			return false;
	return true;
}

/* Is every piece of l still filled with byte c? */
static bool rw_all(const char *arena, const struct rw_layout *l, char c)
{
	unsigned int i;

	for (i = 0; i < l->n; i++)
		if (!all_c(arena + l->off + i * l->step, l->len, c))
			return false;
	return true;
}

/*
 * A WRITE then a READ of layout l.  With MRs forced, the 24-piece READ
 * and WRITE need 24 MRs: unpostable.  Returns true if all went as
 * expected; logs what did not.
 */
static bool rw_layout_run(struct __test_metadata *_metadata, int a,
			  const struct sockaddr_storage *ba, int b,
			  uint64_t cookie, char *arena, char *target,
			  const struct rw_layout *l, bool forced,
			  uint64_t *token)
{
	bool too_many = forced && l->n > 16;
	int expect = too_many ? RDS_RDMA_OTHER_ERROR : RDS_RDMA_SUCCESS;
	size_t total = (size_t)l->n * l->len;
	unsigned int i;
	bool ok = true;
	int st;

	/* WRITE: the arena's pieces land one after the other in target. */
	memset(arena, 0, RW_ARENA);
	for (i = 0; i < l->n; i++)
		rds_fill(arena + l->off + i * l->step, l->len, 1000 + i);
	memset(target, 0x5a, RW_TARGET);
	st = rw_op(a, ba, cookie, arena, l, true, ++*token);
	if (st != expect) {
		TH_LOG("%s: WRITE ended %d, not %d", l->name, st, expect);
		ok = false;
	} else if (!too_many && !rw_same(arena, l, target)) {
		TH_LOG("%s: WRITE: target differs", l->name);
		ok = false;
	} else if (too_many && !all_c(target, RW_TARGET, 0x5a)) {
		TH_LOG("%s: unpostable WRITE touched the target", l->name);
		ok = false;
	}
	/* READ: target's first bytes spread over the pieces. */
	rds_fill(target, total, 77);
	memset(arena, 0x33, RW_ARENA);
	st = rw_op(a, ba, cookie, arena, l, false, ++*token);
	if (st != expect) {
		TH_LOG("%s: READ ended %d, not %d", l->name, st, expect);
		ok = false;
	} else if (!too_many && !rw_same(arena, l, target)) {
		TH_LOG("%s: READ: local pieces differ", l->name);
		ok = false;
	} else if (too_many && !rw_all(arena, l, 0x33)) {
		TH_LOG("%s: unpostable READ touched the local pieces", l->name);
		ok = false;
	}
	/*
	 * An unpostable op's message must not reach the key's owner, nor
	 * wait on the sender's side for an ACK that will never come.
	 */
	return rw_owner_check(_metadata, b, too_many ? 0 : 2, too_many,
			      l->name) && ok;
}

/*
 * Three WRITEs of 12, 12 and 24 gapped pieces sent at once, into three
 * regions of the owner's key: with MRs forced the second needs the
 * first's MRs (12 + 12 > 16) unless the first already completed, and the
 * third needs more runs than the pool has MRs: unpostable.  Each is
 * notified once, with its data in place.  (No counter shows whether the
 * second did wait.)
 */
static bool rw_pool_wait(struct __test_metadata *_metadata, int a,
			 const struct sockaddr_storage *ba, int b,
			 uint64_t cookie, char *arena, char *target,
			 bool forced, uint64_t *token)
{
	static const uint64_t where[3] = { 0, 512 << 10, 256 << 10 };
	const struct rw_layout *ls[3] = { &rw_layouts[4], &rw_layouts[4],
					  &rw_layouts[5] };
	char *parts[3];
	uint64_t got = 0;
	bool ok = true, seen[3] = { false, false, false };
	int i, k, st;

	memset(target, 0x5a, RW_TARGET);
	for (i = 0; i < 3; i++) {
		/* Each its own arena third: the pieces stay apart. */
		parts[i] = arena + i * (RW_ARENA / 3 & ~4095);
		for (k = 0; k < (int)ls[i]->n; k++)
			rds_fill(parts[i] + ls[i]->off + k * ls[i]->step,
				 ls[i]->len, 2000 + 100 * i + k);
		if (rw_send(a, ba, cookie, where[i], parts[i], ls[i], true,
			    *token + 1 + i)) {
			TH_LOG("pool wait: send %d failed: %s", i,
			       strerror(errno));
			return false;
		}
	}
	for (k = 0; k < 3; k++) {
		st = rds_wait_note(a, &got, WAIT_MS);
		i = (int)(got - *token - 1);
		if (st < 0 || i < 0 || i > 2 || seen[i]) {
			TH_LOG("pool wait: note %d: status %d token %llu", k,
			       st, (unsigned long long)got);
			ok = false;
			break;
		}
		seen[i] = true;
		if (st != (i == 2 && forced ? RDS_RDMA_OTHER_ERROR :
					      RDS_RDMA_SUCCESS)) {
			TH_LOG("pool wait: op %d ended %d", i, st);
			ok = false;
		} else if (st == RDS_RDMA_SUCCESS &&
			   !rw_same(parts[i], ls[i], target + where[i])) {
			TH_LOG("pool wait: op %d: target differs", i);
			ok = false;
		}
	}
	if (forced && !all_c(target + where[2],
			     (size_t)ls[2]->n * ls[2]->len, 0x5a)) {
		TH_LOG("pool wait: the unpostable WRITE touched the target");
		ok = false;
	}
	*token += 3;
	return rw_owner_check(_metadata, b, forced ? 2 : 3, forced,
			      "pool wait") && ok;
}

/*
 * One message carrying a fetch-and-add of 5 on the key's word at offset
 * 1 MiB - 8 and a WRITE of layout l (from the arena, to the key's start),
 * both with NOTIFY_ME.  With MRs forced and 24 pieces the WRITE can never
 * be posted: the atomic must not be posted either (once it has been it
 * cannot be taken back, and before 2026-12-07 the path was dropped):
 * both ops OTHER_ERROR, the word and the target untouched, no message to
 * the owner, none left queued.  Otherwise both SUCCESS, the word added
 * to, the data in place, one message.
 *
 * With busy, the add is a masked one (emulated on rxe: the message is
 * held by its compare-and-swap loop before the WRITE goes), and a plain
 * WRITE of 12 pieces is sent just before it: with MRs forced it holds 12
 * of the pool's 16 MRs, so the check of the combined message's WRITE may
 * have to wait for them (the path is kicked by their completion).
 */
static bool rw_atomic_run(struct __test_metadata *_metadata, int a,
			  const struct sockaddr_storage *ba, int b,
			  uint64_t cookie, char *arena, char *target,
			  const struct rw_layout *l, bool forced, bool busy,
			  uint64_t *token)
{
	const struct rw_layout *pl = &rw_layouts[4];
	const uint64_t pwhere = 512 << 10;
	char *parena = arena + (2 << 20);
	bool too_many = forced && l->n > 16;
	int expect = too_many ? RDS_RDMA_OTHER_ERROR : RDS_RDMA_SUCCESS;
	const uint64_t woff = RW_TARGET - 8, old = 0x1122334455667700ULL;
	uint64_t *word = (uint64_t *)(target + woff), *res, got = 0;
	struct rds_iovec v[RW_MAXV];
	struct rds_rdma_args ra = {
		.cookie = cookie,
		.local_vec_addr = (uintptr_t)v,
		.nr_local = l->n,
		.flags = RDS_RDMA_NOTIFY_ME | RDS_RDMA_READWRITE,
		.user_token = *token + 1,
	};
	struct rds_atomic_args at = {
		.cookie = cookie,
		.remote_addr = woff,
		.fadd = { .add = 5 },
		.flags = RDS_RDMA_NOTIFY_ME,
		.user_token = *token + 2,
	};
	struct rds_cm cm[2] = {
		{ RDS_CMSG_ATOMIC_FADD, &at, sizeof(at), 0 },
		{ RDS_CMSG_RDMA_ARGS, &ra, sizeof(ra), 0 },
	};
	bool ok = true, seen[3] = { false, false, false };
	unsigned int i, nnotes = busy ? 3 : 2;
	char what[64];
	int k, st;

	/* The result word: 8-byte aligned, past the pieces. */
	res = (uint64_t *)(arena + RW_ARENA - 8);
	at.local_addr = (uintptr_t)res;
	*res = 0x5555;
	memset(arena, 0, RW_ARENA - 8);
	for (i = 0; i < l->n; i++) {
		v[i].addr = (uintptr_t)arena + l->off + i * l->step;
		v[i].bytes = l->len;
		rds_fill(arena + l->off + i * l->step, l->len, 3000 + i);
	}
	ra.remote_vec.addr = 0;
	ra.remote_vec.bytes = (uint64_t)l->n * l->len;
	memset(target, 0x5a, RW_TARGET);
	*word = old;
	if (busy) {
		cm[0].type = RDS_CMSG_MASKED_ATOMIC_FADD;
		at.m_fadd.add = 5;
		at.m_fadd.nocarry_mask = 1ULL << 63;	/* no effect on +5 */
		for (i = 0; i < pl->n; i++)
			rds_fill(parena + pl->off + i * pl->step, pl->len,
				 4000 + i);
		if (rw_send(a, ba, cookie, pwhere, parena, pl, true,
			    *token + 3)) {
			TH_LOG("%s + FADD: the WRITE before: %s", l->name,
			       strerror(errno));
			return false;
		}
	}
	/* 3 bytes when unpostable, as rw_send(): rw_unsent() counts them */
	if (rds_sendmsg_cm(a, ba, "at!", too_many ? 3 : 2, cm, 2,
			   WAIT_MS) < 0) {
		TH_LOG("%s + FADD: sendmsg: %s", l->name, strerror(errno));
		return false;
	}
	for (k = 0; k < (int)nnotes; k++) {
		st = rds_wait_note(a, &got, WAIT_MS);
		i = (unsigned int)(got - *token - 1);
		if (st < 0 || i >= nnotes || seen[i]) {
			TH_LOG("%s + FADD: note %d: status %d token %llu",
			       l->name, k, st, (unsigned long long)got);
			ok = false;
			break;
		}
		seen[i] = true;
		if (st != (i == 2 ? RDS_RDMA_SUCCESS : expect)) {
			TH_LOG("%s + FADD: %s ended %d", l->name,
			       i == 2 ? "the WRITE before" :
			       i ? "the atomic" : "the WRITE", st);
			ok = false;
		}
	}
	*token += nnotes;
	if (busy && !rw_same(parena, pl, target + pwhere)) {
		TH_LOG("%s + FADD: the WRITE before: target differs", l->name);
		ok = false;
	}
	if (too_many) {
		if (*word != old || *res != 0x5555) {
			TH_LOG("%s + FADD: the atomic ran (word %#llx)",
			       l->name, (unsigned long long)*word);
			ok = false;
		}
		if (!all_c(target, busy ? pwhere : RW_TARGET - 8, 0x5a) ||
		    (busy && !all_c(target + pwhere + pl->n * pl->len,
				    RW_TARGET - 8 - pwhere -
				    pl->n * pl->len, 0x5a))) {
			TH_LOG("%s + FADD: the WRITE touched the target",
			       l->name);
			ok = false;
		}
	} else if (*word != old + 5 || *res != old ||
		   !rw_same(arena, l, target)) {
		TH_LOG("%s + FADD: word %#llx result %#llx data %s", l->name,
		       (unsigned long long)*word, (unsigned long long)*res,
		       rw_same(arena, l, target) ? "ok" : "differs");
		ok = false;
	}
	snprintf(what, sizeof(what), "%s + FADD", l->name);
	return rw_owner_check(_metadata, b, (too_many ? 0 : 1) + busy,
			      too_many, what) && ok;
}

/*
 * READs and WRITEs through rdma_rw_ctx in every layout; with
 * RDS_FORCE_MR=1 (ib_core.force_mr=1) through MRs, checked by counters.
 */
TEST_F(il, rdma_rw)
{
	bool forced = !strcmp(rds_env("RDS_FORCE_MR", "0"), "1");
	long long ops0, wrs0, unp0, drops0, ops, wrs, unp, drops;
	struct sockaddr_storage aa, ba;
	char *arena, *target;
	uint64_t cookie = 0, token = 0;
	unsigned int i;
	int a, b;

	arena = mmap(NULL, RW_ARENA, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, arena);
	target = mmap(NULL, RW_TARGET, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, target);
	a = sock_at(self->family, self->la, true, &aa);
	ASSERT_LE(0, a);
	b = sock_at(self->family, self->sa, true, &ba);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, rds_get_mr(b, target, RW_TARGET, &cookie,
				RDS_RDMA_READWRITE));
	ops0 = rds_counter("ib_rdma_ops");
	wrs0 = rds_counter("ib_rdma_wrs");
	unp0 = rds_counter("ib_rdma_unpostable");
	drops0 = rds_counter("conn_reset");
	ASSERT_LE(0, unp0) TH_LOG("no ib_rdma_unpostable counter");
	for (i = 0; i < ARRAY_SIZE(rw_layouts); i++)
		EXPECT_TRUE(rw_layout_run(_metadata, a, &ba, b, cookie, arena,
					  target, &rw_layouts[i], forced,
					  &token));
	EXPECT_TRUE(rw_pool_wait(_metadata, a, &ba, b, cookie, arena, target,
				 forced, &token));
	EXPECT_TRUE(rw_atomic_run(_metadata, a, &ba, b, cookie, arena, target,
				  &rw_layouts[4], forced, false, &token));
	EXPECT_TRUE(rw_atomic_run(_metadata, a, &ba, b, cookie, arena, target,
				  &rw_layouts[5], forced, false, &token));
	EXPECT_TRUE(rw_atomic_run(_metadata, a, &ba, b, cookie, arena, target,
				  &rw_layouts[4], forced, true, &token));
	EXPECT_TRUE(rw_atomic_run(_metadata, a, &ba, b, cookie, arena, target,
				  &rw_layouts[5], forced, true, &token));
	ops = rds_counter("ib_rdma_ops") - ops0;
	wrs = rds_counter("ib_rdma_wrs") - wrs0;
	unp = rds_counter("ib_rdma_unpostable") - unp0;
	drops = rds_counter("conn_reset") - drops0;
	TH_LOG("force_mr %d: %lld ops posted, %lld WRs, %lld unpostable, %lld resets",
	       forced, ops, wrs, unp, drops);
	EXPECT_EQ(0, drops);
	if (forced) {
		/* Each op posted: at least a REG_MR and its RDMA per MR. */
		EXPECT_EQ(2 * (ARRAY_SIZE(rw_layouts) - 1) + 2 + 1 + 3, ops);
		EXPECT_GE(wrs, 2 * ops);
		EXPECT_EQ(5, unp);
	} else {
		EXPECT_EQ(2 * ARRAY_SIZE(rw_layouts) + 3 + 2 + 4, ops);
		EXPECT_EQ(0, unp);
	}
	close(a);
	close(b);
	munmap(arena, RW_ARENA);
	munmap(target, RW_TARGET);
}

static pid_t main_pid;

/* True when a socket can bind the node's own address of family. */
static bool own_addr_bindable(int family)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(family, rds_local_str(family), 0, &ss);
	int fd = rds_socket(), ret;

	if (fd < 0)
		return false;
	ret = bind(fd, (struct sockaddr *)&ss, len);
	close(fd);
	return ret == 0;
}

/*
 * Remove the second addresses, then wait (bounded, 10 s) until the node's
 * own addresses bind again: rxe rebuilds its GID table after a deletion,
 * and the next test must not meet EADDRNOTAVAIL in that window.
 */
static void addrs_del(void)
{
	int i;

	if (getpid() != main_pid)
		return;
	addrs(false);
	for (i = 0; i < 100; i++) {
		if (own_addr_bindable(AF_INET) && own_addr_bindable(AF_INET6))
			return;
		rds_msleep(100);
	}
	fprintf(stderr, "# own addresses still not bindable 10 s after removing the second ones\n");
}

/* Added once by the first fixture set-up, removed at exit. */
int main(int argc, char **argv)
{
	rds_test_prepare();
	main_pid = getpid();
	atexit(addrs_del);
	return test_harness_run(argc, argv);
}
