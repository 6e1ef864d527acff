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
 *                 memory untouched.
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
