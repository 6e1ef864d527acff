// SPDX-License-Identifier: GPL-2.0
/*
 * Datagram semantics of sendmsg()/recvmsg() between two sockets on the
 * local address (the loopback path), IPv4 and IPv6:
 * message boundaries and content, msg_name is the source, 0-byte messages,
 * sizes up to the 1 MiB maximum, EMSGSIZE beyond it and beyond sndbuf/2,
 * MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC, scatter/gather, unaligned buffers,
 * the connect()ed default destination, per-sender ordering.
 * Facts from in-tree rds_sendmsg()/rds_recvmsg().
 */
#include "rds_test.h"

FIXTURE(sr)
{
	int a, b;
	struct sockaddr_storage aa, ba;	/* bound addresses */
	char *buf, *rbuf;
};

FIXTURE_VARIANT(sr)
{
	int family;
};

FIXTURE_VARIANT_ADD(sr, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(sr, ipv6)
{
	.family = AF_INET6,
};

#define BUFSZ (RDS_MAX_PAYLOAD + 4096)

FIXTURE_SETUP(sr)
{
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(variant->family, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	self->buf = malloc(BUFSZ);
	self->rbuf = malloc(BUFSZ);
	ASSERT_NE(NULL, self->buf);
	ASSERT_NE(NULL, self->rbuf);
}

FIXTURE_TEARDOWN(sr)
{
	close(self->a);
	close(self->b);
	free(self->buf);
	free(self->rbuf);
}

/* Send len bytes a -> b and check what b receives, content and source. */
static void xfer(struct __test_metadata *_metadata,
		 FIXTURE_DATA(sr) *self, size_t len, uint32_t seed)
{
	struct sockaddr_storage from;
	struct iovec iov;
	struct msghdr msg;
	ssize_t r;

	rds_fill(self->buf, len, seed);
	r = rds_sendto(self->a, self->buf, len, 0, &self->ba);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("send %zu: %s", len, strerror(errno));

	memset(&from, 0, sizeof(from));
	iov.iov_base = self->rbuf;
	iov.iov_len = BUFSZ;
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = &from;
	msg.msg_namelen = sizeof(from);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	r = rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("recv %zu: %zd %s", len, r, strerror(errno));
	EXPECT_EQ(0, msg.msg_flags & MSG_TRUNC);
	EXPECT_EQ(rds_sslen(&self->aa), msg.msg_namelen);
	EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
	EXPECT_TRUE(rds_check(self->rbuf, len, seed))
		TH_LOG("content mismatch, len %zu", len);
}

TEST_F(sr, basic)
{
	xfer(_metadata, self, 100, 1);
}

TEST_F(sr, zero_bytes)
{
	xfer(_metadata, self, 0, 2);
	/* and with a NULL buffer */
	ASSERT_EQ(0, rds_sendto(self->a, NULL, 0, 0, &self->ba));
	ASSERT_EQ(0, rds_recv_wait(self->b, NULL, 0, 0, NULL, RDS_WAIT_MS));
}

TEST_F(sr, sizes)
{
	static const size_t sizes[] = {
		1, 2, 63, 64, 1000, 4095, 4096, 4097, 8191, 8192, 8193,
		65535, 65536, 65537, 100000,
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		TH_LOG("size %zu", sizes[i]);
		xfer(_metadata, self, sizes[i], 10 + i);
	}
}

TEST_F_TIMEOUT(sr, max_size, 120)
{
	ASSERT_EQ(0, rds_big_sndbuf(self->a, RDS_MAX_PAYLOAD));
	xfer(_metadata, self, RDS_MAX_PAYLOAD - 1, 40);
	xfer(_metadata, self, RDS_MAX_PAYLOAD, 41);
}

TEST_F(sr, over_max_size)
{
	/* sndbuf big enough that only the 1 MiB limit applies */
	ASSERT_EQ(0, rds_big_sndbuf(self->a, 2 * RDS_MAX_PAYLOAD));
	EXPECT_ERRNO(rds_sendto(self->a, self->buf, RDS_MAX_PAYLOAD + 1, 0,
				&self->ba), EMSGSIZE);
	EXPECT_ERRNO(rds_sendto(self->a, self->buf, RDS_MAX_PAYLOAD + 1,
				MSG_DONTWAIT, &self->ba), EMSGSIZE);
	EXPECT_ERRNO(rds_sendto(self->a, self->buf, BUFSZ, 0, &self->ba),
		     EMSGSIZE);
	/* nothing was delivered */
	EXPECT_ERRNO(recv(self->b, self->rbuf, 16, MSG_DONTWAIT), EAGAIN);
}

/* The payload limit is half the SO_SNDBUF value the kernel reports. */
TEST_F(sr, sndbuf_limit)
{
	int val = 16384, got = 0;
	socklen_t len = sizeof(got);

	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &val, sizeof(val)));
	ASSERT_EQ(0, getsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &got, &len));
	TH_LOG("SO_SNDBUF %d -> %d, payload limit %d", val, got, got / 2);
	ASSERT_LT(1000, got / 2);
	EXPECT_ERRNO(rds_sendto(self->a, self->buf, got / 2 + 1, 0, &self->ba),
		     EMSGSIZE);
	xfer(_metadata, self, got / 2, 50);
	/* the default send buffer is far below 1 MiB: large sends fail */
	got = 0;
	close(self->a);
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a);
	len = sizeof(got);
	ASSERT_EQ(0, getsockopt(self->a, SOL_SOCKET, SO_SNDBUF, &got, &len));
	if (got / 2 < (int)RDS_MAX_PAYLOAD)
		EXPECT_ERRNO(rds_sendto(self->a, self->buf, got / 2 + 1, 0,
					&self->ba), EMSGSIZE);
}

TEST_F(sr, dontwait_empty)
{
	int fd;

	EXPECT_ERRNO(recv(self->b, self->rbuf, 16, MSG_DONTWAIT), EAGAIN);
	EXPECT_ERRNO(recvfrom(self->b, self->rbuf, 16, MSG_DONTWAIT, NULL, NULL),
		     EAGAIN);
	/* an unbound socket just has nothing queued */
	fd = rds_socket();
	ASSERT_LE(0, fd);
	EXPECT_ERRNO(recv(fd, self->rbuf, 16, MSG_DONTWAIT), EAGAIN);
	close(fd);
}

TEST_F(sr, dontwait_send)
{
	ASSERT_EQ(10, rds_sendto(self->a, self->buf, 10, MSG_DONTWAIT, &self->ba));
	ASSERT_EQ(10, rds_recv_wait(self->b, self->rbuf, BUFSZ, 0, NULL,
				    RDS_WAIT_MS));
}

TEST_F(sr, peek)
{
	struct sockaddr_storage from;
	int i;

	rds_fill(self->buf, 300, 60);
	ASSERT_EQ(300, rds_sendto(self->a, self->buf, 300, 0, &self->ba));
	for (i = 0; i < 3; i++) {
		memset(self->rbuf, 0, 300);
		memset(&from, 0, sizeof(from));
		ASSERT_EQ(300, rds_recv_wait(self->b, self->rbuf, BUFSZ, MSG_PEEK,
					     &from, RDS_WAIT_MS));
		EXPECT_TRUE(rds_check(self->rbuf, 300, 60));
		EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
	}
	/* a short peek does not consume either */
	ASSERT_EQ(10, recv(self->b, self->rbuf, 10, MSG_PEEK | MSG_DONTWAIT));
	memset(self->rbuf, 0, 300);
	ASSERT_EQ(300, recv(self->b, self->rbuf, BUFSZ, MSG_DONTWAIT));
	EXPECT_TRUE(rds_check(self->rbuf, 300, 60));
	EXPECT_ERRNO(recv(self->b, self->rbuf, BUFSZ, MSG_DONTWAIT), EAGAIN);
}

TEST_F(sr, truncation)
{
	struct iovec iov = { .iov_base = self->rbuf, .iov_len = 100 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	rds_fill(self->buf, 1000, 70);
	ASSERT_EQ(1000, rds_sendto(self->a, self->buf, 1000, 0, &self->ba));
	ASSERT_EQ(1000, rds_sendto(self->a, self->buf, 1000, 0, &self->ba));
	ASSERT_EQ(1000, rds_sendto(self->a, self->buf, 1000, 0, &self->ba));

	/* short buffer: the head of the message, MSG_TRUNC in msg_flags,
	 * the rest is discarded */
	ASSERT_EQ(100, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC);
	EXPECT_TRUE(rds_check(self->rbuf, 100, 70));

	/* MSG_TRUNC: the real length is returned */
	msg.msg_flags = 0;
	ASSERT_EQ(1000, rds_recvmsg_wait(self->b, &msg, MSG_TRUNC, RDS_WAIT_MS));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC);

	/* MSG_PEEK|MSG_TRUNC: real length, still queued */
	msg.msg_flags = 0;
	ASSERT_EQ(1000, rds_recvmsg_wait(self->b, &msg, MSG_PEEK | MSG_TRUNC,
					 RDS_WAIT_MS));
	iov.iov_len = 0;
	msg.msg_flags = 0;
	/* a zero-length buffer consumes the whole message */
	ASSERT_EQ(0, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));
	EXPECT_TRUE(msg.msg_flags & MSG_TRUNC);
	EXPECT_ERRNO(recv(self->b, self->rbuf, BUFSZ, MSG_DONTWAIT), EAGAIN);
}

TEST_F(sr, source_address)
{
	struct sockaddr_storage ca, from;
	int c = rds_bound_socket(variant->family, 0, &ca);
	int i;

	ASSERT_LE(0, c);
	ASSERT_EQ(1, rds_sendto(self->a, "a", 1, 0, &self->ba));
	ASSERT_EQ(1, rds_sendto(c, "c", 1, 0, &self->ba));
	for (i = 0; i < 2; i++) {
		char ch = 0;

		memset(&from, 0, sizeof(from));
		ASSERT_EQ(1, rds_recv_wait(self->b, &ch, 1, 0, &from, RDS_WAIT_MS));
		if (ch == 'a') {
			EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
		} else if (ch == 'c') {
			EXPECT_TRUE(rds_addr_eq(&ca, &from));
		} else {
			ASSERT_TRUE(false) TH_LOG("unexpected byte %d", ch);
		}
	}
	close(c);
}

TEST_F(sr, source_name_buffer)
{
	struct sockaddr_in small;
	char big[200];
	struct iovec iov = { .iov_base = self->rbuf, .iov_len = 16 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	/* no name buffer: fine */
	ASSERT_EQ(3, rds_sendto(self->a, "xyz", 3, 0, &self->ba));
	ASSERT_EQ(3, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));

	/* a name buffer too small: truncated, full length reported */
	ASSERT_EQ(3, rds_sendto(self->a, "xyz", 3, 0, &self->ba));
	msg.msg_name = &small;
	msg.msg_namelen = 4;
	ASSERT_EQ(3, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));
	EXPECT_EQ(rds_sslen(&self->aa), msg.msg_namelen);
	EXPECT_EQ(variant->family, small.sin_family);

	/* a large one: exact length */
	ASSERT_EQ(3, rds_sendto(self->a, "xyz", 3, 0, &self->ba));
	msg.msg_name = big;
	msg.msg_namelen = sizeof(big);
	ASSERT_EQ(3, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));
	EXPECT_EQ(rds_sslen(&self->aa), msg.msg_namelen);
	EXPECT_TRUE(rds_addr_eq(&self->aa, (struct sockaddr_storage *)big));
}

TEST_F(sr, connected_default_destination)
{
	struct sockaddr_storage from;
	char ch;

	ASSERT_EQ(0, connect(self->a, (struct sockaddr *)&self->ba,
			     rds_sslen(&self->ba)));
	ASSERT_EQ(1, send(self->a, "d", 1, 0));
	/* write() sets MSG_EOR (SOCK_SEQPACKET), which RDS refuses */
	EXPECT_ERRNO(write(self->a, "w", 1), EOPNOTSUPP);
	ASSERT_EQ(1, rds_recv_wait(self->b, &ch, 1, MSG_PEEK, &from, RDS_WAIT_MS));
	EXPECT_EQ('d', ch);
	EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
	/* read() works */
	ASSERT_EQ(1, read(self->b, &ch, 1));
	EXPECT_EQ('d', ch);
	/* an explicit destination overrides the default */
	ASSERT_EQ(1, rds_sendto(self->a, "s", 1, 0, &self->aa));
	ASSERT_EQ(1, rds_recv_wait(self->a, &ch, 1, 0, &from, RDS_WAIT_MS));
	EXPECT_EQ('s', ch);
	EXPECT_TRUE(rds_addr_eq(&self->aa, &from));
}

TEST_F(sr, send_to_self)
{
	char ch;

	ASSERT_EQ(1, rds_sendto(self->a, "q", 1, 0, &self->aa));
	ASSERT_EQ(1, rds_recv_wait(self->a, &ch, 1, 0, NULL, RDS_WAIT_MS));
	EXPECT_EQ('q', ch);
}

TEST_F(sr, unbound_port_drops)
{
	struct sockaddr_storage dst = self->ba;
	int c;
	uint16_t port;

	/* find a port nobody has: bind, note, close */
	c = rds_bound_socket(variant->family, 0, &dst);
	ASSERT_LE(0, c);
	port = rds_port_of(&dst);
	close(c);
	/* the send succeeds; the message is dropped at the receiver */
	ASSERT_EQ(5, rds_sendto(self->a, "hello", 5, 0, &dst));
	/* a later message on the same connection arriving proves the first
	 * one was processed */
	xfer(_metadata, self, 10, 81);
	/* then a later socket on that port does not see it */
	c = rds_bound_socket(variant->family, port, NULL);
	if (c >= 0) {
		char buf[16];

		rds_msleep(300);
		EXPECT_ERRNO(recv(c, buf, sizeof(buf), MSG_DONTWAIT), EAGAIN);
		close(c);
	}
	/* and traffic to live ports still flows */
	xfer(_metadata, self, 10, 80);
}

TEST_F(sr, ordering)
{
	uint32_t i, v;
	const uint32_t n = 500;

	for (i = 0; i < n; i++)
		ASSERT_EQ(4, rds_sendto(self->a, &i, 4, 0, &self->ba))
			TH_LOG("send %u: %s", i, strerror(errno));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(4, rds_recv_wait(self->b, &v, 4, 0, NULL, RDS_WAIT_MS))
			TH_LOG("recv %u: %s", i, strerror(errno));
		ASSERT_EQ(i, v);
	}
}

TEST_F(sr, scatter_gather)
{
	struct iovec siov[3], riov[4];
	struct msghdr msg = { 0 };
	char *r = self->rbuf;

	rds_fill(self->buf, 10000, 90);
	siov[0] = (struct iovec){ self->buf, 1 };
	siov[1] = (struct iovec){ self->buf + 1, 4999 };
	siov[2] = (struct iovec){ self->buf + 5000, 5000 };
	msg.msg_name = &self->ba;
	msg.msg_namelen = rds_sslen(&self->ba);
	msg.msg_iov = siov;
	msg.msg_iovlen = 3;
	ASSERT_EQ(10000, sendmsg(self->a, &msg, 0));

	memset(r, 0, 20000);
	riov[0] = (struct iovec){ r, 4097 };
	riov[1] = (struct iovec){ r + 4097, 0 };
	riov[2] = (struct iovec){ r + 4097, 3 };
	riov[3] = (struct iovec){ r + 4100, 10000 };
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = riov;
	msg.msg_iovlen = 4;
	ASSERT_EQ(10000, rds_recvmsg_wait(self->b, &msg, 0, RDS_WAIT_MS));
	EXPECT_TRUE(rds_check(r, 10000, 90));
}

TEST_F(sr, unaligned_buffers)
{
	size_t len = 6001;

	rds_fill(self->buf + 3, len, 95);
	ASSERT_EQ((ssize_t)len, rds_sendto(self->a, self->buf + 3, len, 0,
					   &self->ba));
	ASSERT_EQ((ssize_t)len, rds_recv_wait(self->b, self->rbuf + 5, len, 0,
					      NULL, RDS_WAIT_MS));
	EXPECT_TRUE(rds_check(self->rbuf + 5, len, 95));
}

TEST_F(sr, recv_bad_buffer_keeps_message)
{
	rds_fill(self->buf, 100, 96);
	ASSERT_EQ(100, rds_sendto(self->a, self->buf, 100, 0, &self->ba));
	ASSERT_EQ(100, rds_recv_wait(self->b, self->rbuf, BUFSZ, MSG_PEEK, NULL,
				     RDS_WAIT_MS));
	EXPECT_ERRNO(recv(self->b, RDS_KERNEL_PTR, 100, MSG_DONTWAIT), EFAULT);
	EXPECT_ERRNO(recv(self->b, NULL, 100, MSG_DONTWAIT), EFAULT);
	/* the message is still there */
	ASSERT_EQ(100, recv(self->b, self->rbuf, BUFSZ, MSG_DONTWAIT));
	EXPECT_TRUE(rds_check(self->rbuf, 100, 96));
}

TEST_F(sr, blocking_recv_wakes)
{
	pid_t pid;
	int status;
	char ch = 0;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		rds_msleep(200);
		_exit(rds_sendto(self->a, "z", 1, 0, &self->ba) == 1 ? 0 : 1);
	}
	alarm(20);
	ASSERT_EQ(1, recv(self->b, &ch, 1, 0));
	alarm(0);
	EXPECT_EQ('z', ch);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status);
}

/*
 * The same datagrams across the wire: node 1 runs "rds_sendrecv echo",
 * which sends every message it receives back to its source.  With
 * --peer-mods intree this is the interop check of sizes and content.
 */
#define ECHO_BIN "/tests/rds_sendrecv"
#define ECHO_SECS 240

static int echo_serve(int family, const char *addr, int port, int secs)
{
	static char buf[RDS_MAX_PAYLOAD + 16];
	struct sockaddr_storage ss, from;
	socklen_t len = rds_mkaddr(family, addr, port, &ss);
	struct timespec t0;
	int fd = rds_socket(), big = 2 * RDS_MAX_PAYLOAD;

	alarm(secs + 10);
	if (!len || fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0) {
		perror("echo: bind");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	close(open("/tmp/rds_echo.ready", O_CREAT | O_WRONLY, 0644));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&t0) < secs * 1000L) {
		ssize_t n = rds_recv_wait(fd, buf, sizeof(buf), 0, &from, 1000);

		if (n < 0)
			continue;
		if (n == 4 && !memcmp(buf, "QUIT", 4))
			break;
		if (rds_sendto(fd, buf, n, 0, &from) != n)
			perror("echo: send");
	}
	close(fd);
	return 0;
}

static int run_quiet(const char *cmd)
{
	int st = system(cmd);

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

FIXTURE(peer)
{
	int a;
	struct sockaddr_storage aa, echo;
	char *buf, *rbuf;
};

FIXTURE_VARIANT(peer)
{
	int family;
};

FIXTURE_VARIANT_ADD(peer, ipv4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(peer, ipv6)
{
	.family = AF_INET6,
};

FIXTURE_SETUP(peer)
{
	char cmd[256];
	int i, port;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	self->a = rds_bound_socket(variant->family, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, rds_big_sndbuf(self->a, RDS_MAX_PAYLOAD));
	self->buf = malloc(BUFSZ);
	self->rbuf = malloc(BUFSZ);
	ASSERT_NE(NULL, self->buf);
	ASSERT_NE(NULL, self->rbuf);
	port = 20000 + getpid() % 10000;
	rds_mkaddr(variant->family, rds_peer_str(variant->family), port, &self->echo);
	snprintf(cmd, sizeof(cmd),
		 "rds-peer -t 30 1 'rm -f /tmp/rds_echo.ready; %s echo %d %s %d %d "
		 ">/tmp/rds_echo.log 2>&1 &' >/dev/null 2>&1", ECHO_BIN,
		 variant->family == AF_INET6 ? 6 : 4, rds_peer_str(variant->family),
		 port, ECHO_SECS);
	ASSERT_EQ(0, run_quiet(cmd)) TH_LOG("%s", cmd);
	for (i = 0; i < 60; i++) {
		if (run_quiet("rds-peer -t 10 1 'test -f /tmp/rds_echo.ready' "
			      ">/dev/null 2>&1") == 0)
			break;
		rds_msleep(500);
	}
	ASSERT_LT(i, 60) TH_LOG("echo server did not start");
}

FIXTURE_TEARDOWN(peer)
{
	rds_sendto(self->a, "QUIT", 4, MSG_DONTWAIT, &self->echo);
	close(self->a);
	free(self->buf);
	free(self->rbuf);
}

static void echo_xfer(struct __test_metadata *_metadata, FIXTURE_DATA(peer) *self,
		      size_t len, uint32_t seed)
{
	struct sockaddr_storage from;
	ssize_t r;

	rds_fill(self->buf, len, seed);
	r = rds_sendto(self->a, self->buf, len, 0, &self->echo);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("send %zu: %s", len, strerror(errno));
	memset(&from, 0, sizeof(from));
	memset(self->rbuf, 0, len < 64 ? 64 : len);
	r = rds_recv_wait(self->a, self->rbuf, BUFSZ, 0, &from, 60000);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("echo of %zu: %zd %s", len, r, strerror(errno));
	EXPECT_TRUE(rds_addr_eq(&self->echo, &from));
	EXPECT_TRUE(rds_check(self->rbuf, len, seed)) TH_LOG("content, len %zu", len);
}

TEST_F_TIMEOUT(peer, sizes, 300)
{
	static const size_t sizes[] = {
		0, 1, 2, 100, 4095, 4096, 4097, 8192, 65536, 100000,
		RDS_MAX_PAYLOAD - 1, RDS_MAX_PAYLOAD,
	};
	unsigned int i;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		TH_LOG("size %zu", sizes[i]);
		echo_xfer(_metadata, self, sizes[i], 200 + i);
	}
}

TEST_F_TIMEOUT(peer, burst_in_order, 300)
{
	const uint32_t n = 2000;
	uint32_t i, v;

	for (i = 0; i < n; i++)
		ASSERT_EQ(4, rds_sendto(self->a, &i, 4, 0, &self->echo))
			TH_LOG("send %u: %s", i, strerror(errno));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(4, rds_recv_wait(self->a, &v, 4, 0, NULL, 60000))
			TH_LOG("echo %u: %s", i, strerror(errno));
		ASSERT_EQ(i, v);
	}
}

TEST_F_TIMEOUT(peer, unbound_remote_port, 120)
{
	struct sockaddr_storage d = self->echo;

	/* a port nobody has on the peer: accepted and dropped there */
	rds_set_port(&d, rds_port_of(&self->echo) + 1);
	ASSERT_EQ(3, rds_sendto(self->a, "abc", 3, 0, &d));
	echo_xfer(_metadata, self, 10, 300);
	rds_msleep(200);
	EXPECT_ERRNO(recv(self->a, self->rbuf, 16, MSG_DONTWAIT), EAGAIN);
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "echo"))
		return echo_serve(atoi(argv[2]) == 6 ? AF_INET6 : AF_INET, argv[3],
				  atoi(argv[4]), atoi(argv[5]));
	rds_test_prepare();
	return test_harness_run(argc, argv);
}
