// SPDX-License-Identifier: GPL-2.0
/*
 * socket(PF_RDS, ...): accepted types and protocols, and the socket calls
 * RDS does not implement.  In-tree: rds_create() accepts only
 * SOCK_SEQPACKET with protocol 0 (-ESOCKTNOSUPPORT otherwise); socketpair,
 * listen, accept and shutdown are the sock_no_* stubs (-EOPNOTSUPP).
 */
#include "rds_test.h"

TEST(seqpacket_proto0)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	int type = 0, dom = 0;
	socklen_t len = sizeof(type);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len));
	EXPECT_EQ(SOCK_SEQPACKET, type);
	len = sizeof(dom);
	ASSERT_EQ(0, getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &len));
	EXPECT_EQ(AF_RDS, dom);
	EXPECT_EQ(0, close(fd));
}

TEST(pf_rds_alias)
{
	int fd = socket(PF_RDS, SOCK_SEQPACKET, 0);

	ASSERT_LE(0, fd);
	close(fd);
}

TEST(flags_nonblock_cloexec)
{
	int fd = socket(AF_RDS, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	char buf[16];

	ASSERT_LE(0, fd);
	EXPECT_TRUE(fcntl(fd, F_GETFL) & O_NONBLOCK);
	EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	/* O_NONBLOCK makes an empty recv fail at once */
	EXPECT_ERRNO(recv(fd, buf, sizeof(buf), 0), EAGAIN);
	close(fd);
}

TEST(wrong_types)
{
	static const int types[] = {
		SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_RDM, SOCK_DCCP,
		SOCK_PACKET,
	};
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		TH_LOG("type %d", types[i]);
		EXPECT_ERRNO(socket(AF_RDS, types[i], 0), ESOCKTNOSUPPORT);
	}
}

TEST(wrong_protocols)
{
	static const int protos[] = { 1, IPPROTO_TCP, IPPROTO_UDP, 255, -1,
				      AF_RDS };
	unsigned int i;

	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++) {
		TH_LOG("protocol %d", protos[i]);
		EXPECT_ERRNO(socket(AF_RDS, SOCK_SEQPACKET, protos[i]),
			     ESOCKTNOSUPPORT);
	}
}

TEST(unsupported_calls)
{
	int sv[2];
	int fd = rds_socket();

	ASSERT_LE(0, fd);
	EXPECT_ERRNO(socketpair(AF_RDS, SOCK_SEQPACKET, 0, sv), EOPNOTSUPP);
	EXPECT_ERRNO(listen(fd, 1), EOPNOTSUPP);
	EXPECT_ERRNO(accept(fd, NULL, NULL), EOPNOTSUPP);
	EXPECT_ERRNO(shutdown(fd, SHUT_RDWR), EOPNOTSUPP);
	close(fd);
}

TEST(many_sockets)
{
	int fds[256];
	int i;

	for (i = 0; i < 256; i++) {
		fds[i] = rds_socket();
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < 256; i++)
		EXPECT_EQ(0, close(fds[i]));
}

RDS_TEST_MAIN
