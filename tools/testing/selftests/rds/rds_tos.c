// SPDX-License-Identifier: GPL-2.0
/*
 * SIOCRDSSETTOS / SIOCRDSGETTOS (in-tree rds_ioctl()):
 *  - GETTOS always works (0 until set);
 *  - SETTOS needs a transport with a TOS (bound to an RDMA address, or
 *    SO_RDS_TRANSPORT), else the ioctl is unknown to RDS and the socket
 *    layer answers ENOTTY: unbound, and bound to loopback (127/8, ::1);
 *  - SETTOS works once, and only before the socket has sent (has a
 *    connection): EINVAL otherwise;
 *  - bad argument pointer: EFAULT; any other SIOCPROTOPRIVATE+n: ENOTTY;
 *  - ioctls RDS does not know go to the socket layer: SIOCGIFCONF works
 *    (EFAULT for a bad pointer), bound or not;
 *  - deliberate difference (rds.rst): a sendmsg() that fails on its
 *    control messages leaves no connection behind here, so SETTOS still
 *    works; in-tree the socket took its connection first (EINVAL).
 * A message sent with a TOS arrives (over its own connection).
 */
#include <net/if.h>

#include "rds_test.h"

FIXTURE(tos)
{
	int a, b, u;
	struct sockaddr_storage aa, ba;
};

RDS_FAMILY_VARIANTS(tos);

FIXTURE_SETUP(tos)
{
	rds_setup_abu(_metadata, variant->family, &self->a, &self->aa,
		      &self->b, &self->ba, &self->u);
}

FIXTURE_TEARDOWN(tos)
{
	close(self->a);
	close(self->b);
	close(self->u);
}

/*
 * The argument buffer is larger than an rds_tos_t: when RDS does not know
 * an ioctl, the socket layer reads a struct ifreq from the same pointer.
 */
union tosarg {
	rds_tos_t tos;
	char pad[64];
};

static int gettos(int fd)
{
	union tosarg t;

	memset(&t, 0xee, sizeof(t));
	if (ioctl(fd, SIOCRDSGETTOS, &t) < 0)
		return -1;
	return t.tos;
}

static int settos(int fd, rds_tos_t v)
{
	union tosarg t;

	memset(&t, 0, sizeof(t));
	t.tos = v;
	return ioctl(fd, SIOCRDSSETTOS, &t);
}

TEST_F(tos, values)
{
	ASSERT_EQ(0x89e0, SIOCRDSSETTOS);
	ASSERT_EQ(0x89e1, SIOCRDSGETTOS);
	ASSERT_EQ(1, sizeof(rds_tos_t));
}

TEST_F(tos, get_default)
{
	EXPECT_EQ(0, gettos(self->u));
	EXPECT_EQ(0, gettos(self->a));
}

TEST_F(tos, set_get)
{
	ASSERT_EQ(0, settos(self->a, 5));
	EXPECT_EQ(5, gettos(self->a));
	ASSERT_EQ(0, settos(self->b, 255));
	EXPECT_EQ(255, gettos(self->b));
}

TEST_F(tos, set_once)
{
	ASSERT_EQ(0, settos(self->a, 3));
	EXPECT_ERRNO(settos(self->a, 4), EINVAL);
	EXPECT_ERRNO(settos(self->a, 3), EINVAL);
	EXPECT_EQ(3, gettos(self->a));
}

TEST_F(tos, set_unbound)
{
	EXPECT_ERRNO(settos(self->u, 1), ENOTTY);
	EXPECT_EQ(0, gettos(self->u));
}

/* The loopback transport has no TOS map: unknown ioctl, nothing set. */
TEST_F(tos, set_loopback_bound)
{
	struct sockaddr_storage la;
	char c;
	int lo;

	lo = rds_bound_socket_at(variant->family, rds_loop_str(variant->family),
				 0, &la);
	ASSERT_LE(0, lo) TH_LOG("bind %s: %s", rds_loop_str(variant->family),
				strerror(errno));
	EXPECT_ERRNO(settos(lo, 1), ENOTTY);
	EXPECT_ERRNO(settos(lo, 0), ENOTTY);
	EXPECT_EQ(0, gettos(lo));
	EXPECT_ERRNO(ioctl(lo, SIOCRDSSETTOS, NULL), EFAULT);
	ASSERT_EQ(1, rds_sendto(lo, "l", 1, 0, &la));
	ASSERT_EQ(1, rds_recv_wait(lo, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_ERRNO(settos(lo, 1), ENOTTY);
	close(lo);
}

/* SO_RDS_TRANSPORT alone (unbound) is enough for a TOS. */
TEST_F(tos, set_with_transport_unbound)
{
	ASSERT_EQ(0, setsockopt(self->u, SOL_RDS, SO_RDS_TRANSPORT,
				&(int){ RDS_TRANS_IB }, sizeof(int)));
	EXPECT_EQ(0, settos(self->u, 4));
	EXPECT_EQ(4, gettos(self->u));
	EXPECT_ERRNO(settos(self->u, 5), EINVAL);
}

TEST_F(tos, set_after_send)
{
	char c;

	ASSERT_EQ(1, rds_sendto(self->a, "t", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &c, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_ERRNO(settos(self->a, 2), EINVAL);
	EXPECT_EQ(0, gettos(self->a));
}

TEST_F(tos, bad_pointer)
{
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSSETTOS, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSSETTOS, RDS_KERNEL_PTR), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSGETTOS, NULL), EFAULT);
	EXPECT_ERRNO(ioctl(self->a, SIOCRDSGETTOS, RDS_KERNEL_PTR), EFAULT);
	EXPECT_ERRNO(ioctl(self->u, SIOCRDSSETTOS, NULL), EFAULT);
	/* nothing was set */
	EXPECT_EQ(0, gettos(self->a));
	EXPECT_EQ(0, settos(self->a, 9));
}

TEST_F(tos, unknown_ioctl)
{
	union tosarg t;

	memset(&t, 0, sizeof(t));
	EXPECT_ERRNO(ioctl(self->a, SIOCPROTOPRIVATE + 2, &t), ENOTTY);
	EXPECT_ERRNO(ioctl(self->a, SIOCPROTOPRIVATE + 15, &t), ENOTTY);
	EXPECT_ERRNO(ioctl(self->u, SIOCPROTOPRIVATE + 2, &t), ENOTTY);
}

/*
 * RDS does not know SIOCGIFCONF: the socket layer answers it for any
 * socket, and its EFAULTs are those of the ifconf and the buffer.
 */
TEST_F(tos, socket_layer_ifconf)
{
	struct ifreq ifr[32];
	struct ifconf ifc;
	int fds[2] = { self->a, self->u };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		memset(&ifc, 0, sizeof(ifc));
		ifc.ifc_len = sizeof(ifr);
		ifc.ifc_req = ifr;
		EXPECT_EQ(0, ioctl(fds[i], SIOCGIFCONF, &ifc));
		EXPECT_LT(0, ifc.ifc_len);
		/* the length alone */
		ifc.ifc_len = 0;
		ifc.ifc_req = NULL;
		EXPECT_EQ(0, ioctl(fds[i], SIOCGIFCONF, &ifc));
		EXPECT_LT(0, ifc.ifc_len);
		EXPECT_ERRNO(ioctl(fds[i], SIOCGIFCONF, NULL), EFAULT);
		EXPECT_ERRNO(ioctl(fds[i], SIOCGIFCONF, RDS_KERNEL_PTR), EFAULT);
		ifc.ifc_len = sizeof(ifr);
		ifc.ifc_buf = RDS_KERNEL_PTR;
		EXPECT_ERRNO(ioctl(fds[i], SIOCGIFCONF, &ifc), EFAULT);
	}
	/* and the TOS is untouched */
	EXPECT_EQ(0, gettos(self->a));
	EXPECT_EQ(0, settos(self->a, 3));
}

/*
 * A send that fails on its control message (an RDMA_DEST cookie the socket
 * never registered: EINVAL on both).  In-tree the socket was already given
 * its connection, so SETTOS is EINVAL afterwards; here a failed sendmsg()
 * changes nothing and the TOS can still be set (rds.rst, differences).
 */
TEST_F(tos, set_after_failed_send)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint64_t))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = "f", .iov_len = 1 };
	struct msghdr m = {
		.msg_name = &self->ba, .msg_namelen = rds_sslen(&self->ba),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	uint64_t cookie = 0x1234500000000ULL;
	char got;

	memset(u.buf, 0, sizeof(u.buf));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_DEST;
	c->cmsg_len = CMSG_LEN(sizeof(cookie));
	memcpy(CMSG_DATA(c), &cookie, sizeof(cookie));
	EXPECT_ERRNO(sendmsg(self->a, &m, 0), EINVAL);
	if (rds_intree()) {
		EXPECT_ERRNO(settos(self->a, 6), EINVAL);
		EXPECT_EQ(0, gettos(self->a));
	} else {
		EXPECT_EQ(0, settos(self->a, 6));
		EXPECT_EQ(6, gettos(self->a));
	}
	/* either way the socket still sends */
	ASSERT_EQ(1, rds_sendto(self->a, "g", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_recv_wait(self->b, &got, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('g', got);
}

TEST_F(tos, send_with_tos)
{
	struct sockaddr_storage from;
	char buf[64];
	int i;

	ASSERT_EQ(0, settos(self->a, 7));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(10, rds_sendto(self->a, "0123456789", 10, 0, &self->ba));
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(10, rds_recv_wait(self->b, buf, sizeof(buf), 0, &from,
					    RDS_WAIT_MS)) TH_LOG("message %d", i);
		EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
	}
	/* replies on TOS 0 to the same address still flow */
	ASSERT_EQ(2, rds_sendto(self->b, "ok", 2, 0, &self->aa));
	ASSERT_EQ(2, rds_recv_wait(self->a, buf, sizeof(buf), 0, NULL, RDS_WAIT_MS));
}

RDS_TEST_MAIN
