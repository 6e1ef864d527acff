// SPDX-License-Identifier: GPL-2.0
/*
 * rds_zcopy.c - MSG_ZEROCOPY over RDS (the ABI of the in-tree RDS/TCP
 * zerocopy in <linux/rds.h>): SO_ZEROCOPY, sendmsg(MSG_ZEROCOPY) with an
 * RDS_CMSG_ZCOPY_COOKIE, the cookies coming back as
 * RDS_CMSG_ZCOPY_COMPLETION (struct rds_zcopy_cookies) on the sending
 * socket once the kernel no longer references the user pages.
 *
 *   rds_zcopy echo ADDR PORT SECS   peer side (node 1, through rds-peer):
 *                                   echo every message back to its source
 *                                   (ordinary sends), "QUIT" ends it, so
 *                                   does SECS in all or 120 s idle
 *   rds_zcopy [harness options]     node 0: the cases below
 *
 * Cases:
 *   local.errors          the EINVAL cases, refused before any traffic
 *   local.loopback        to a local address: always copied, content and
 *                         cookie, send_zcopy_copied +1, send_zcopy +0
 *   zc.content            to node 1 over IB with zcopy_min_bytes=0: sizes 1
 *                         to 1 MiB - 100 from page-unaligned buffers, a
 *                         2-iovec message, a 64-iovec one (copied); echoes
 *                         checked byte for byte, every cookie exactly once,
 *                         send_zcopy/send_zcopy_bytes/copy_from_user
 *   zc.below_threshold    zcopy_min_bytes=16384: 1000 bytes are copied
 *   zc.lone_message       3 x 32 KiB one at a time to a port nobody binds
 *                         on node 1 (no reply traffic): each cookie within
 *                         10 s (the message asks for its ACK at once; an
 *                         idle path would ACK only every 8th message)
 *   zc.unmap_in_flight    32 x 256 KiB, munmap() after the last sendmsg
 *   zc.close_in_flight    16 x 128 KiB, close() at once; a new socket works
 *   zc.memlock            no CAP_IPC_LOCK, RLIMIT_MEMLOCK 64 KiB: 256 KiB
 *                         ENOMEM, 32 KiB fine, the charge comes back
 *
 * zcopy_min_bytes is set per case and restored in the teardown and, in case
 * a case was killed by its timeout, once more when the harness is done.
 * With the in-tree modules on node 0 (RDS_TEST_INTREE) MSG_ZEROCOPY over IB
 * is EOPNOTSUPP: the cases check that and skip.
 */
#include <sys/resource.h>
#include "rds_test.h"

#define ZC_PARAM	"/sys/module/rds/parameters/zcopy_min_bytes"
#define ZC_BIN		"/tests/rds_zcopy"
#define ZC_ECHO_SECS	600
#define ZC_CTL_LEN	(CMSG_SPACE(sizeof(struct rds_zcopy_cookies)) + 256)
#define ZC_MAXC		64		/* cookies tracked per case */
#define ZC_OFF		123		/* page-unaligned start in a region */
#define ZC_BIGBUF	(32 << 20)	/* socket buffers */
#define ZC_RBUF		(RDS_MAX_PAYLOAD + 4096)
#define PAGE		4096UL

/* ------------------------------------------------------------- helpers */

/* The cookies a case expects: base .. base + n - 1. */
struct zc_state {
	uint32_t base;
	unsigned int n;
	unsigned int times[ZC_MAXC];	/* deliveries of each */
	unsigned int got;		/* distinct ones delivered */
	unsigned int dup, stray;	/* twice; not ours */
	unsigned int batches, maxbatch, bad_num, ctrunc, empty;
	uint32_t stray_val;
};

static void zc_init(struct zc_state *st, uint32_t base, unsigned int n)
{
	memset(st, 0, sizeof(*st));
	st->base = base;
	st->n = n;
}

static bool zc_all(const struct zc_state *st)
{
	return st->got >= st->n;
}

/* Record the completion cmsgs of a received msghdr; returns cookies seen. */
static int zc_parse(struct msghdr *m, struct zc_state *st)
{
	struct cmsghdr *c;
	int seen = 0;

	if (m->msg_flags & MSG_CTRUNC)
		st->ctrunc++;
	for (c = CMSG_FIRSTHDR(m); c; c = CMSG_NXTHDR(m, c)) {
		struct rds_zcopy_cookies z;
		unsigned int i;

		if (c->cmsg_level != SOL_RDS ||
		    c->cmsg_type != RDS_CMSG_ZCOPY_COMPLETION)
			continue;
		if (c->cmsg_len < CMSG_LEN(sizeof(z))) {
			st->bad_num++;
			continue;
		}
		memcpy(&z, CMSG_DATA(c), sizeof(z));
		if (z.num == 0 || z.num > RDS_MAX_ZCOOKIES) {
			st->bad_num++;
			continue;
		}
		st->batches++;
		if (z.num > st->maxbatch)
			st->maxbatch = z.num;
		for (i = 0; i < z.num; i++) {
			uint32_t k = z.cookies[i] - st->base;

			seen++;
			if (z.cookies[i] < st->base || k >= st->n) {
				st->stray++;
				st->stray_val = z.cookies[i];
				continue;
			}
			if (st->times[k]++)
				st->dup++;
			else
				st->got++;
		}
	}
	return seen;
}

#define ZC_COOKIES_ONLY	(-2)
#define ZC_CLEN_NONE	(-1)	/* zc_sendv(): a cookie cmsg without data */

/*
 * Wait at most ms for POLLIN, then one recvmsg(MSG_DONTWAIT) with room for
 * a completion cmsg.  Returns the length of a data message (into buf,
 * *from), ZC_COOKIES_ONLY for a receive that returned cookies and no
 * message, -1 on timeout (errno ETIME) or error.  Cookies that come with a
 * data message are recorded as well.
 */
static ssize_t zc_recv(int fd, void *buf, size_t len,
		       struct sockaddr_storage *from, struct zc_state *st,
		       int ms)
{
	struct sockaddr_storage dummy;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (!from)
		from = &dummy;
	for (;;) {
		union {
			char b[ZC_CTL_LEN];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = buf, .iov_len = len };
		struct msghdr m = {
			.msg_name = from, .msg_namelen = sizeof(*from),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.b, .msg_controllen = sizeof(u.b),
		};
		long left = ms - rds_ms_since(&t0);
		ssize_t r;
		int n;

		if (left < 0)
			left = 0;
		if (rds_wait(fd, POLLIN, left) & POLLIN) {
			memset(from, 0, sizeof(*from));
			r = recvmsg(fd, &m, MSG_DONTWAIT);
			if (r >= 0) {
				n = zc_parse(&m, st);
				if (r == 0 && m.msg_namelen == 0) {
					if (n > 0)
						return ZC_COOKIES_ONLY;
					st->empty++;	/* neither: odd */
				} else {
					return r;
				}
			} else if (errno != EAGAIN && errno != EINTR) {
				return -1;
			}
		}
		if (rds_ms_since(&t0) >= ms) {
			errno = ETIME;
			return -1;
		}
		poll(NULL, 0, 5);	/* a stale POLLIN: do not spin */
	}
}

/* What zc_collect() does with a data message. */
typedef void (*zc_data_fn)(void *ctx, const void *buf, ssize_t len);

/*
 * Receive on fd until every cookie of st came (if cookies) and want data
 * messages arrived, at most ms.  on_data (may be NULL) sees each data
 * message.  Returns the number of data messages received.
 */
static unsigned int zc_collect(int fd, struct zc_state *st, bool cookies,
			       unsigned int want, void *buf, size_t len,
			       zc_data_fn on_data, void *ctx, int ms)
{
	unsigned int data = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while ((cookies && !zc_all(st)) || data < want) {
		long left = ms - rds_ms_since(&t0);
		ssize_t r;

		if (left <= 0)
			break;
		r = zc_recv(fd, buf, len, NULL, st, left);
		if (r == -1)
			break;
		if (r >= 0) {
			data++;
			if (on_data)
				on_data(ctx, buf, r);
		}
	}
	return data;
}

/*
 * After all cookies: nothing more may come within ms (no duplicate, no
 * stray); a final receive must say EAGAIN.  Returns true if so.
 */
static bool zc_quiet(int fd, struct zc_state *st, int ms)
{
	char b[64];
	unsigned int before = st->dup + st->stray;
	union {
		char c[ZC_CTL_LEN];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = b, .iov_len = sizeof(b) };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.c, .msg_controllen = sizeof(u.c),
	};
	ssize_t r;

	while (zc_recv(fd, b, sizeof(b), NULL, st, ms) != -1)
		;
	r = recvmsg(fd, &m, MSG_DONTWAIT);
	return r == -1 && errno == EAGAIN && st->dup + st->stray == before;
}

/*
 * sendmsg(flags | MSG_DONTWAIT) of iov to @to with ncookie
 * RDS_CMSG_ZCOPY_COOKIE cmsgs (cookie[i]); clen (if > 0) overrides the
 * data length each cmsg_len says, ZC_CLEN_NONE makes it 0.  With
 * retry_ms > 0 a full buffer, a congested peer or a connection on its way
 * (EAGAIN, ENOBUFS, ENOTCONN, EINTR) is retried for at most retry_ms;
 * anything else (ENOMEM, EINVAL...) is returned at once.
 */
static ssize_t zc_sendv(int fd, const struct sockaddr_storage *to,
			const struct iovec *iov, int niov, int flags,
			const uint32_t *cookie, int ncookie, int clen,
			int retry_ms)
{
	union {
		char b[4 * CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
		.msg_name = (void *)to, .msg_namelen = to ? rds_sslen(to) : 0,
		.msg_iov = (struct iovec *)iov, .msg_iovlen = niov,
	};
	struct cmsghdr *c;
	int i;

	memset(&u, 0, sizeof(u));
	if (ncookie > 4)
		ncookie = 4;
	if (ncookie) {
		m.msg_control = u.b;
		m.msg_controllen = ncookie * CMSG_SPACE(sizeof(uint32_t));
	}
	for (c = ncookie ? CMSG_FIRSTHDR(&m) : NULL, i = 0; i < ncookie;
	     i++, c = CMSG_NXTHDR(&m, c)) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = RDS_CMSG_ZCOPY_COOKIE;
		c->cmsg_len = CMSG_LEN(clen == ZC_CLEN_NONE ? 0 :
				       clen > 0 ? clen : sizeof(uint32_t));
		memcpy(CMSG_DATA(c), &cookie[i], sizeof(uint32_t));
	}
	return rds_sendmsg_retry(fd, &m, flags, retry_ms);
}

/* One flat buffer, MSG_ZEROCOPY, one cookie. */
static ssize_t zc_send(int fd, const struct sockaddr_storage *to,
		       const void *buf, size_t len, uint32_t cookie,
		       int retry_ms)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return zc_sendv(fd, to, &iov, 1, MSG_ZEROCOPY, &cookie, 1, 0,
			retry_ms);
}

static int zc_enable(int fd)
{
	int one = 1;

	return setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one));
}

static void *zc_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t zc_round(size_t len)
{
	return (len + PAGE - 1) & ~(PAGE - 1);
}

/* Counters of this node read together. */
struct zc_ctr {
	long long zc, copied, bytes, cfu;
};

static void zc_ctr_read(struct zc_ctr *c)
{
	c->zc = rds_counter("send_zcopy");
	c->copied = rds_counter("send_zcopy_copied");
	c->bytes = rds_counter("send_zcopy_bytes");
	c->cfu = rds_counter("copy_from_user");
}

static int zc_param_get(char *buf, size_t len)
{
	if (rds_read_file(ZC_PARAM, buf, len))
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

static int zc_param_set(const char *val)
{
	return rds_knob(ZC_PARAM, val);
}

/*
 * The in-tree modules on node 0: MSG_ZEROCOPY on a socket with
 * SO_ZEROCOPY, sent to @to, must be EOPNOTSUPP (zerocopy is RDS/TCP only
 * there).  Returns the errno the probe got (0: it was accepted).
 */
static int zc_intree_probe(int fd, const struct sockaddr_storage *to)
{
	static char buf[65536];
	ssize_t r;

	if (zc_enable(fd))
		return errno;
	r = zc_send(fd, to, buf, sizeof(buf), 1, 0);
	return r < 0 ? errno : 0;
}

/* --------------------------------------------------------- peer echo */

static int echo_serve(const char *addr, int port, int secs)
{
	static char buf[RDS_MAX_PAYLOAD + 16];
	struct sockaddr_storage ss, from;
	int family = strchr(addr, ':') ? AF_INET6 : AF_INET;
	socklen_t len = rds_mkaddr(family, addr, port, &ss);
	struct timespec t0, idle;
	int fd = rds_socket(), big = ZC_BIGBUF;

	alarm(secs + 10);
	if (!len || fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0) {
		perror("echo: bind");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	close(open("/tmp/rds_zcopy_echo.ready", O_CREAT | O_WRONLY, 0644));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	idle = t0;
	while (rds_ms_since(&t0) < secs * 1000L &&
	       rds_ms_since(&idle) < 120000) {
		ssize_t n = rds_recv_wait(fd, buf, sizeof(buf), 0, &from, 1000);

		if (n < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &idle);
		if (n == 4 && !memcmp(buf, "QUIT", 4)) {
			/* acknowledged; close() would cancel it if unsent */
			rds_send_cmsg(fd, &from, buf, n, 0, NULL, 0, 2000);
			rds_msleep(500);
			break;
		}
		if (rds_send_cmsg(fd, &from, buf, n, 0, NULL, 0, 20000) != n)
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

/* ------------------------------------------------ local (loopback) cases */

FIXTURE(local)
{
	int a, b;
	struct sockaddr_storage aa, ba;
	char *map;
	size_t maplen;
};

FIXTURE_SETUP(local)
{
	self->a = rds_bound_socket(AF_INET, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	self->b = rds_bound_socket(AF_INET, 0, &self->ba);
	ASSERT_LE(0, self->b) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, rds_big_sndbuf(self->a, ZC_BIGBUF));
	ASSERT_EQ(0, setsockopt(self->b, SOL_SOCKET, SO_RCVBUFFORCE,
				&(int){ ZC_BIGBUF }, sizeof(int)));
	self->maplen = 256 * 1024;
	self->map = zc_map(self->maplen);
	ASSERT_NE(NULL, self->map);
	if (rds_intree()) {
		int e = zc_intree_probe(self->a, &self->ba);

		SKIP(return, "in-tree modules on node 0: MSG_ZEROCOPY to a local address gave %s",
		     e ? strerror(e) : "success");
	}
}

FIXTURE_TEARDOWN(local)
{
	close(self->a);
	close(self->b);
	if (self->map)
		munmap(self->map, self->maplen);
}

/* Nothing queued on fd: a receive (room for cookies) says EAGAIN. */
static bool nothing_queued(int fd)
{
	struct zc_state st;
	char b[64];

	zc_init(&st, 0, 0);
	return zc_recv(fd, b, sizeof(b), NULL, &st, 300) == -1 &&
	       st.dup + st.stray == 0 && errno == ETIME;
}

TEST_F_TIMEOUT(local, errors, 120)
{
	char *p = self->map + ZC_OFF;
	struct iovec iov = { .iov_base = p, .iov_len = 65536 };
	uint32_t ck[2] = { 7, 8 };
	struct zc_ctr c0, c1;
	int plain;

	zc_ctr_read(&c0);
	ASSERT_LE(0, c0.zc) TH_LOG("no send_zcopy counter");
	ASSERT_LE(0, c0.copied) TH_LOG("no send_zcopy_copied counter");
	ASSERT_LE(0, c0.bytes) TH_LOG("no send_zcopy_bytes counter");

	/* MSG_ZEROCOPY on a socket without SO_ZEROCOPY */
	plain = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, plain);
	EXPECT_ERRNO(zc_sendv(plain, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 1,
			      0, 0), EINVAL);
	close(plain);

	ASSERT_EQ(0, zc_enable(self->a)) TH_LOG("SO_ZEROCOPY: %s", strerror(errno));
	/* MSG_ZEROCOPY without the cookie */
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, NULL,
			      0, 0, 0), EINVAL);
	/* the cookie without MSG_ZEROCOPY */
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, 0, ck, 1, 0, 0),
		     EINVAL);
	/* a cookie cmsg too short for its __u32 */
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 1,
			      2, 0), EINVAL);
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 1,
			      3, 0), EINVAL);
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 1,
			      ZC_CLEN_NONE, 0), EINVAL);
	/* no payload */
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, NULL, 0, MSG_ZEROCOPY, ck, 1,
			      0, 0), EINVAL);
	iov.iov_len = 0;
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 1,
			      0, 0), EINVAL);
	iov.iov_len = 65536;
	/* two cookies */
	EXPECT_ERRNO(zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY, ck, 2,
			      0, 0), EINVAL);

	/* nothing went anywhere, no cookie came back, no counter moved */
	EXPECT_TRUE(nothing_queued(self->b)) TH_LOG("a refused send was delivered");
	EXPECT_TRUE(nothing_queued(self->a)) TH_LOG("a refused send gave a cookie");
	zc_ctr_read(&c1);
	EXPECT_EQ(c0.zc, c1.zc);
	EXPECT_EQ(c0.copied, c1.copied);
	EXPECT_EQ(c0.bytes, c1.bytes);

	/* and the socket still works: one good zerocopy send */
	rds_fill(p, 65536, 77);
	ASSERT_EQ(65536, zc_sendv(self->a, &self->ba, &iov, 1, MSG_ZEROCOPY,
				  ck, 1, 0, 5000)) TH_LOG("%s", strerror(errno));
	{
		static char rb[65536 + 64];
		struct zc_state st;

		zc_init(&st, 0, 0);
		EXPECT_EQ(65536, zc_recv(self->b, rb, sizeof(rb), NULL, &st,
					 RDS_WAIT_MS));
		EXPECT_TRUE(rds_check(rb, 65536, 77));
		zc_init(&st, 7, 1);
		zc_collect(self->a, &st, true, 0, rb, sizeof(rb), NULL, NULL,
			   RDS_WAIT_MS);
		EXPECT_TRUE(zc_all(&st)) TH_LOG("cookie 7 did not come back");
		EXPECT_TRUE(zc_quiet(self->a, &st, 300));
	}
}

TEST_F_TIMEOUT(local, loopback, 120)
{
	static char rb[ZC_RBUF];
	const size_t len = 65536;
	char *p = self->map + ZC_OFF;
	struct sockaddr_storage from;
	struct zc_state st;
	struct zc_ctr c0, c1;
	union {
		char b[ZC_CTL_LEN];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = rb, .iov_len = 64 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.b, .msg_controllen = sizeof(u.b),
	};
	ssize_t r;

	ASSERT_EQ(0, zc_enable(self->a)) TH_LOG("SO_ZEROCOPY: %s", strerror(errno));
	zc_ctr_read(&c0);
	ASSERT_LE(0, c0.zc);
	ASSERT_LE(0, c0.copied);
	rds_fill(p, len, 4242);
	ASSERT_EQ((ssize_t)len, zc_send(self->a, &self->ba, p, len, 0xabcd0001,
					5000)) TH_LOG("%s", strerror(errno));

	zc_init(&st, 0, 0);
	r = zc_recv(self->b, rb, sizeof(rb), &from, &st, RDS_WAIT_MS);
	ASSERT_EQ((ssize_t)len, r) TH_LOG("receive: %zd %s", r, strerror(errno));
	EXPECT_TRUE(rds_addr_eq(&from, &self->aa));
	EXPECT_TRUE(rds_check(rb, len, 4242)) TH_LOG("content");
	EXPECT_EQ(0, st.got + st.stray) TH_LOG("the receiver got a cookie");

	/* POLLIN on the sender for the cookie alone, then the cookie */
	EXPECT_TRUE(rds_wait(self->a, POLLIN, RDS_WAIT_MS) & POLLIN);
	zc_init(&st, 0xabcd0001, 1);
	zc_collect(self->a, &st, true, 0, rb, sizeof(rb), NULL, NULL,
		   RDS_WAIT_MS);
	EXPECT_TRUE(zc_all(&st)) TH_LOG("no cookie (stray %u, 0x%x)", st.stray,
				       st.stray_val);
	EXPECT_TRUE(zc_quiet(self->a, &st, 300)) TH_LOG("dup %u stray %u",
							st.dup, st.stray);
	EXPECT_EQ(0, st.ctrunc);
	/* nothing pending: EAGAIN */
	errno = 0;
	EXPECT_EQ(-1, recvmsg(self->a, &m, MSG_DONTWAIT));
	EXPECT_EQ(EAGAIN, errno);

	zc_ctr_read(&c1);
	TH_LOG("send_zcopy %+lld, send_zcopy_copied %+lld, send_zcopy_bytes %+lld, copy_from_user %+lld",
	       c1.zc - c0.zc, c1.copied - c0.copied, c1.bytes - c0.bytes,
	       c1.cfu - c0.cfu);
	EXPECT_EQ(c0.zc, c1.zc) TH_LOG("a loopback message was sent zerocopy");
	EXPECT_EQ(c0.copied + 1, c1.copied);
	EXPECT_EQ(c0.bytes, c1.bytes);
	EXPECT_LE(c0.cfu + (long long)len, c1.cfu);
}

/* ------------------------------------------------------ cases to node 1 */

FIXTURE(zc)
{
	int a;
	struct sockaddr_storage aa, echo;
	char saved[64];
	bool restore;
	char *rbuf;
};

FIXTURE_SETUP(zc)
{
	char cmd[256];
	int i, port;
	ssize_t r;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	self->a = rds_bound_socket(AF_INET, 0, &self->aa);
	ASSERT_LE(0, self->a) TH_LOG("bind: %s", strerror(errno));
	ASSERT_EQ(0, rds_big_sndbuf(self->a, ZC_BIGBUF));
	ASSERT_EQ(0, setsockopt(self->a, SOL_SOCKET, SO_RCVBUFFORCE,
				&(int){ ZC_BIGBUF }, sizeof(int)));
	port = 20000 + getpid() % 10000;
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), port, &self->echo);
	if (rds_intree()) {
		int e = zc_intree_probe(self->a, &self->echo);

		ASSERT_EQ(EOPNOTSUPP, e) TH_LOG("in-tree MSG_ZEROCOPY over IB: %s",
						 e ? strerror(e) : "accepted");
		SKIP(return, "in-tree modules on node 0: MSG_ZEROCOPY over IB is EOPNOTSUPP");
	}
	self->rbuf = malloc(ZC_RBUF);
	ASSERT_NE(NULL, self->rbuf);
	ASSERT_EQ(0, zc_enable(self->a)) TH_LOG("SO_ZEROCOPY: %s", strerror(errno));
	ASSERT_EQ(0, zc_param_get(self->saved, sizeof(self->saved)))
		TH_LOG("no %s", ZC_PARAM);
	self->restore = true;
	ASSERT_EQ(0, zc_param_set("0"));

	snprintf(cmd, sizeof(cmd),
		 "rds-peer -t 30 1 'rm -f /tmp/rds_zcopy_echo.ready; %s echo %s %d %d "
		 ">/tmp/rds_zcopy_echo.log 2>&1 &' >/dev/null 2>&1", ZC_BIN,
		 rds_peer_str(AF_INET), port, ZC_ECHO_SECS);
	ASSERT_EQ(0, run_quiet(cmd)) TH_LOG("%s", cmd);
	for (i = 0; i < 60; i++) {
		if (run_quiet("rds-peer -t 10 1 'test -f /tmp/rds_zcopy_echo.ready' "
			      ">/dev/null 2>&1") == 0)
			break;
		rds_msleep(500);
	}
	ASSERT_LT(i, 60) TH_LOG("echo server did not start");

	/* A plain round trip: the connection is up before the case. */
	r = rds_send_cmsg(self->a, &self->echo, "WARM", 4, 0, NULL, 0, 60000);
	ASSERT_EQ(4, r) TH_LOG("warm-up send: %s", strerror(errno));
	r = rds_recv_wait(self->a, self->rbuf, ZC_RBUF, 0, NULL, 60000);
	ASSERT_EQ(4, r) TH_LOG("warm-up echo: %zd %s", r, strerror(errno));
}

FIXTURE_TEARDOWN(zc)
{
	if (self->a >= 0) {
		struct timespec t0;
		struct zc_state st;
		char b[16];

		/* Stop the echo server; wait (3 s at most) for its answer. */
		zc_init(&st, 0, 0);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (rds_send_cmsg(self->a, &self->echo, "QUIT", 4, 0, NULL, 0,
				  2000) == 4)
			while (rds_ms_since(&t0) < 3000)
				if (zc_recv(self->a, b, sizeof(b), NULL, &st,
					    3000 - rds_ms_since(&t0)) == 4 &&
				    !memcmp(b, "QUIT", 4))
					break;
		close(self->a);
	}
	if (self->restore && zc_param_set(self->saved))
		TH_LOG("could not restore %s to %s", ZC_PARAM, self->saved);
	free(self->rbuf);
}

/* One message of the content case. */
struct zc_msg {
	size_t len;
	int kind;		/* 0: one buffer, 2: two iovecs, 64: 64 iovecs */
	void *map;
	size_t maplen;
	struct iovec iov[64];
	int niov;
};

static void zc_msg_build(struct zc_msg *m, uint32_t seed, char *tmp)
{
	size_t off = 0;
	int k;

	rds_fill(tmp, m->len, seed);
	if (m->kind == 0) {
		m->maplen = zc_round(m->len + ZC_OFF);
		m->map = zc_map(m->maplen);
		if (!m->map)
			return;
		m->iov[0].iov_base = (char *)m->map + ZC_OFF;
		m->iov[0].iov_len = m->len;
		m->niov = 1;
	} else if (m->kind == 2) {
		/*
		 * 5000 bytes at +123 and 3000 at +8192+77: fragment 0 spans
		 * two pages, fragment 1 the rest of the first piece and the
		 * second piece (two pieces in no fragment more than two).
		 */
		m->maplen = 4 * PAGE;
		m->map = zc_map(m->maplen);
		if (!m->map)
			return;
		m->iov[0].iov_base = (char *)m->map + ZC_OFF;
		m->iov[0].iov_len = 5000;
		m->iov[1].iov_base = (char *)m->map + 2 * PAGE + 77;
		m->iov[1].iov_len = 3000;
		m->niov = 2;
	} else {
		/* 64 pieces of 64 bytes, 128 apart: all in one fragment */
		m->maplen = 4 * PAGE;
		m->map = zc_map(m->maplen);
		if (!m->map)
			return;
		for (k = 0; k < 64; k++) {
			m->iov[k].iov_base = (char *)m->map + 5 + k * 128;
			m->iov[k].iov_len = 64;
		}
		m->niov = 64;
	}
	for (k = 0; k < m->niov; k++) {
		memcpy(m->iov[k].iov_base, tmp + off, m->iov[k].iov_len);
		off += m->iov[k].iov_len;
	}
}

struct zc_echo_ck {
	size_t len;
	uint32_t seed;
	unsigned int ok, bad;
};

static void zc_echo_check(void *ctx, const void *buf, ssize_t len)
{
	struct zc_echo_ck *e = ctx;

	if (len == (ssize_t)e->len && rds_check(buf, len, e->seed))
		e->ok++;
	else
		e->bad++;
}

TEST_F_TIMEOUT(zc, content, 400)
{
	static const struct { size_t len; int kind; } spec[] = {
		{ 1, 0 }, { 4095, 0 }, { 4096, 0 }, { 4097, 0 }, { 8193, 0 },
		{ 65536, 0 }, { RDS_MAX_PAYLOAD - 100, 0 },
		{ 8000, 2 }, { 64 * 64, 64 },
	};
	const unsigned int n = sizeof(spec) / sizeof(spec[0]);
	const uint32_t base = 0x5a5a0000;
	struct zc_msg msg[sizeof(spec) / sizeof(spec[0])];
	long long zc_bytes = 0, zc_msgs = 0, copied_msgs = 0;
	char *tmp = malloc(RDS_MAX_PAYLOAD);
	struct zc_state st;
	struct zc_ctr c0, c1;
	unsigned int i;

	ASSERT_NE(NULL, tmp);
	memset(msg, 0, sizeof(msg));
	zc_init(&st, base, n);
	zc_ctr_read(&c0);
	ASSERT_LE(0, c0.zc);
	ASSERT_LE(0, c0.copied);
	ASSERT_LE(0, c0.bytes);
	ASSERT_LE(0, c0.cfu);
	for (i = 0; i < n; i++) {
		struct zc_echo_ck e = { .len = spec[i].len, .seed = 0x1000 + i };
		uint32_t cookie = base + i;
		ssize_t r;

		msg[i].len = spec[i].len;
		msg[i].kind = spec[i].kind;
		zc_msg_build(&msg[i], e.seed, tmp);
		ASSERT_NE(NULL, msg[i].map);
		if (spec[i].kind == 64) {
			copied_msgs++;
		} else {
			zc_msgs++;
			zc_bytes += spec[i].len;
		}
		r = zc_sendv(self->a, &self->echo, msg[i].iov, msg[i].niov,
			     MSG_ZEROCOPY, &cookie, 1, 0, 30000);
		ASSERT_EQ((ssize_t)spec[i].len, r)
			TH_LOG("message %u (%zu bytes, %d iovecs): %s", i,
			       spec[i].len, msg[i].niov, strerror(errno));
		zc_collect(self->a, &st, false, 1, self->rbuf, ZC_RBUF,
			   zc_echo_check, &e, 60000);
		EXPECT_EQ(1, e.ok)
			TH_LOG("message %u (%zu bytes, %d iovecs): echo %s", i,
			       spec[i].len, msg[i].niov,
			       e.bad ? "wrong (length or content)" : "missing");
	}
	zc_collect(self->a, &st, true, 0, self->rbuf, ZC_RBUF, NULL, NULL,
		   60000);
	for (i = 0; i < n; i++)
		EXPECT_EQ(1, st.times[i]) TH_LOG("cookie of message %u (%zu bytes) came %u times",
						 i, spec[i].len, st.times[i]);
	EXPECT_TRUE(zc_quiet(self->a, &st, 500));
	EXPECT_EQ(0, st.dup);
	EXPECT_EQ(0, st.stray) TH_LOG("stray cookie 0x%x", st.stray_val);
	EXPECT_EQ(0, st.bad_num);
	EXPECT_EQ(0, st.ctrunc);
	EXPECT_EQ(0, st.empty);
	TH_LOG("%u cookies in %u completions (at most %u in one)", st.got,
	       st.batches, st.maxbatch);

	zc_ctr_read(&c1);
	TH_LOG("send_zcopy %+lld, send_zcopy_copied %+lld, send_zcopy_bytes %+lld, copy_from_user %+lld (zerocopy payload %lld)",
	       c1.zc - c0.zc, c1.copied - c0.copied, c1.bytes - c0.bytes,
	       c1.cfu - c0.cfu, zc_bytes);
	EXPECT_EQ(c0.zc + zc_msgs, c1.zc);
	EXPECT_EQ(c0.copied + copied_msgs, c1.copied);
	EXPECT_EQ(c0.bytes + zc_bytes, c1.bytes);
	EXPECT_GT(zc_bytes, c1.cfu - c0.cfu);
	/* the 64-iovec message was copied */
	EXPECT_LE(64 * 64, c1.cfu - c0.cfu);

	for (i = 0; i < n; i++)
		if (msg[i].map)
			munmap(msg[i].map, msg[i].maplen);
	free(tmp);
}

TEST_F_TIMEOUT(zc, lone_message, 120)
{
	const size_t len = 32768;
	struct sockaddr_storage sink = self->echo;
	struct sockaddr_in *sin = (struct sockaddr_in *)&sink;
	char *map = zc_map(zc_round(len + ZC_OFF));
	unsigned int i;

	ASSERT_NE(NULL, map);
	/* Dropped there for want of a socket, but acknowledged. */
	sin->sin_port = htons(ntohs(sin->sin_port) + 1);
	rds_msleep(500);	/* the warm-up's ACKs are out */
	for (i = 0; i < 3; i++) {
		struct zc_state st;

		rds_fill(map + ZC_OFF, len, 0x3000 + i);
		ASSERT_EQ((ssize_t)len, zc_send(self->a, &sink, map + ZC_OFF,
						len, 0x5000 + i, 30000))
			TH_LOG("%s", strerror(errno));
		zc_init(&st, 0x5000 + i, 1);
		zc_collect(self->a, &st, true, 0, self->rbuf, ZC_RBUF, NULL,
			   NULL, 10000);
		EXPECT_TRUE(zc_all(&st))
			TH_LOG("message %u: no cookie within 10 s with no other traffic",
			       i);
		if (!zc_all(&st))
			break;
	}
	munmap(map, zc_round(len + ZC_OFF));
}

TEST_F_TIMEOUT(zc, below_threshold, 180)
{
	struct zc_echo_ck e = { .len = 1000, .seed = 0x2000 };
	char *map = zc_map(2 * PAGE);
	struct zc_state st;
	struct zc_ctr c0, c1;

	ASSERT_NE(NULL, map);
	ASSERT_EQ(0, zc_param_set("16384"));
	zc_ctr_read(&c0);
	rds_fill(map + ZC_OFF, 1000, e.seed);
	ASSERT_EQ(1000, zc_send(self->a, &self->echo, map + ZC_OFF, 1000,
				0x77, 30000)) TH_LOG("%s", strerror(errno));
	zc_init(&st, 0x77, 1);
	zc_collect(self->a, &st, true, 1, self->rbuf, ZC_RBUF, zc_echo_check,
		   &e, 60000);
	EXPECT_EQ(1, e.ok) TH_LOG("echo %s", e.bad ? "wrong" : "missing");
	EXPECT_TRUE(zc_all(&st)) TH_LOG("no cookie");
	EXPECT_TRUE(zc_quiet(self->a, &st, 300));
	zc_ctr_read(&c1);
	TH_LOG("send_zcopy %+lld, send_zcopy_copied %+lld, send_zcopy_bytes %+lld, copy_from_user %+lld",
	       c1.zc - c0.zc, c1.copied - c0.copied, c1.bytes - c0.bytes,
	       c1.cfu - c0.cfu);
	EXPECT_EQ(c0.zc, c1.zc);
	EXPECT_EQ(c0.copied + 1, c1.copied);
	EXPECT_EQ(c0.bytes, c1.bytes);
	EXPECT_LE(c0.cfu + 1000, c1.cfu);
	munmap(map, 2 * PAGE);
}

struct zc_lens {
	size_t len;
	uint32_t seed0;
	unsigned int ok, badlen, badcontent;
};

/* Echoes of the unmap case: length checked, content only counted. */
static void zc_len_check(void *ctx, const void *buf, ssize_t len)
{
	struct zc_lens *l = ctx;
	unsigned int i;

	if (len != (ssize_t)l->len) {
		l->badlen++;
		return;
	}
	l->ok++;
	for (i = 0; i < 32; i++)
		if (rds_check(buf, 64, l->seed0 + i))
			return;
	l->badcontent++;
}

TEST_F_TIMEOUT(zc, unmap_in_flight, 400)
{
	const size_t len = 256 * 1024, slot = len + PAGE;
	const unsigned int n = 32;
	struct zc_lens l = { .len = len, .seed0 = 0x3000 };
	size_t maplen = n * slot;
	char *map = zc_map(maplen);
	struct zc_state st;
	struct zc_ctr c0, c1;
	unsigned int i, data;

	ASSERT_NE(NULL, map);
	zc_init(&st, 0x300, n);
	zc_ctr_read(&c0);
	for (i = 0; i < n; i++) {
		char *p = map + i * slot + ZC_OFF;

		rds_fill(p, len, l.seed0 + i);
		ASSERT_EQ((ssize_t)len, zc_send(self->a, &self->echo, p, len,
						0x300 + i, 30000))
			TH_LOG("message %u: %s", i, strerror(errno));
	}
	ASSERT_EQ(0, munmap(map, maplen));
	data = zc_collect(self->a, &st, true, n, self->rbuf, ZC_RBUF,
			  zc_len_check, &l, 120000);
	TH_LOG("%u cookies (%u completions), %u echoes (%u of the wrong length, %u with unexpected content)",
	       st.got, st.batches, data, l.badlen, l.badcontent);
	EXPECT_TRUE(zc_all(&st));
	for (i = 0; i < n; i++)
		EXPECT_EQ(1, st.times[i]) TH_LOG("cookie %u came %u times", i,
						 st.times[i]);
	EXPECT_EQ(n, l.ok);
	EXPECT_EQ(0, l.badlen);
	EXPECT_TRUE(zc_quiet(self->a, &st, 500));
	EXPECT_EQ(0, st.stray);
	zc_ctr_read(&c1);
	TH_LOG("send_zcopy %+lld, send_zcopy_copied %+lld, send_zcopy_bytes %+lld, copy_from_user %+lld",
	       c1.zc - c0.zc, c1.copied - c0.copied, c1.bytes - c0.bytes,
	       c1.cfu - c0.cfu);
	EXPECT_EQ(c0.zc + n, c1.zc);
	EXPECT_EQ(c0.bytes + (long long)(n * len), c1.bytes);
}

TEST_F_TIMEOUT(zc, close_in_flight, 300)
{
	const size_t len = 128 * 1024, slot = len + PAGE;
	const unsigned int n = 16;
	struct zc_echo_ck e = { .len = 3000, .seed = 0x4100 };
	struct zc_echo_ck ez = { .len = 20000, .seed = 0x4200 };
	size_t maplen = n * slot;
	char *map = zc_map(maplen), *p2;
	struct zc_state st;
	unsigned int i;
	int fd;

	ASSERT_NE(NULL, map);
	for (i = 0; i < n; i++) {
		char *p = map + i * slot + ZC_OFF;

		rds_fill(p, len, 0x4000 + i);
		ASSERT_EQ((ssize_t)len, zc_send(self->a, &self->echo, p, len,
						0x400 + i, 30000))
			TH_LOG("message %u: %s", i, strerror(errno));
	}
	/* the QUIT of the teardown goes on the new socket */
	ASSERT_EQ(0, close(self->a));
	self->a = -1;
	ASSERT_EQ(0, munmap(map, maplen));

	fd = rds_bound_socket(AF_INET, 0, NULL);
	ASSERT_LE(0, fd);
	self->a = fd;
	ASSERT_EQ(0, rds_big_sndbuf(fd, ZC_BIGBUF));
	/* a plain round trip */
	rds_fill(self->rbuf, e.len, e.seed);
	ASSERT_EQ((ssize_t)e.len, rds_send_cmsg(fd, &self->echo, self->rbuf,
						e.len, 0, NULL, 0, 30000))
		TH_LOG("%s", strerror(errno));
	zc_init(&st, 0, 0);
	zc_collect(fd, &st, false, 1, self->rbuf, ZC_RBUF, zc_echo_check, &e,
		   60000);
	EXPECT_EQ(1, e.ok) TH_LOG("plain echo after close: %s",
				  e.bad ? "wrong" : "missing");
	/* and a zerocopy one */
	ASSERT_EQ(0, zc_enable(fd));
	p2 = zc_map(8 * PAGE);
	ASSERT_NE(NULL, p2);
	rds_fill(p2 + ZC_OFF, ez.len, ez.seed);
	ASSERT_EQ((ssize_t)ez.len, zc_send(fd, &self->echo, p2 + ZC_OFF,
					   ez.len, 0x4242, 30000))
		TH_LOG("%s", strerror(errno));
	zc_init(&st, 0x4242, 1);
	zc_collect(fd, &st, true, 1, self->rbuf, ZC_RBUF, zc_echo_check, &ez,
		   60000);
	EXPECT_EQ(1, ez.ok) TH_LOG("zerocopy echo after close: %s",
				   ez.bad ? "wrong" : "missing");
	EXPECT_TRUE(zc_all(&st)) TH_LOG("no cookie on the new socket");
	EXPECT_EQ(0, st.stray) TH_LOG("stray cookie 0x%x", st.stray_val);
	munmap(p2, 8 * PAGE);
}

/*
 * In a child without CAP_IPC_LOCK and with RLIMIT_MEMLOCK 64 KiB: 256 KiB
 * zerocopy is ENOMEM; 32 KiB goes, its cookie comes back, and then 32 KiB
 * again (the charge came back).  Exit: 0 ok, 4 cannot drop the capability,
 * other values: the step that failed (stderr says why).
 */
static int memlock_child(const struct sockaddr_storage *echo)
{
	struct rlimit rl = { .rlim_cur = 65536, .rlim_max = 65536 };
	static char rb[ZC_RBUF];
	char *map;
	struct zc_echo_ck e;
	struct zc_state st;
	int fd, k;
	ssize_t r;

	alarm(150);
	if (rds_drop_ipc_lock()) {
		fprintf(stderr, "# capset: %s\n", strerror(errno));
		return 4;
	}
	if (setrlimit(RLIMIT_MEMLOCK, &rl)) {
		fprintf(stderr, "# setrlimit: %s\n", strerror(errno));
		return 4;
	}
	fd = rds_bound_socket(AF_INET, 0, NULL);
	map = zc_map(512 * 1024);
	if (fd < 0 || !map || zc_enable(fd) || rds_big_sndbuf(fd, ZC_BIGBUF)) {
		fprintf(stderr, "# socket set-up: %s\n", strerror(errno));
		return 10;
	}
	rds_fill(map + ZC_OFF, 256 * 1024, 0x5000);
	r = zc_send(fd, echo, map + ZC_OFF, 256 * 1024, 0x500, 30000);
	if (r != -1 || errno != ENOMEM) {
		fprintf(stderr, "# 256 KiB over a 64 KiB RLIMIT_MEMLOCK: %zd %s, want ENOMEM\n",
			r, r < 0 ? strerror(errno) : "");
		return 11;
	}
	for (k = 0; k < 2; k++) {
		e = (struct zc_echo_ck){ .len = 32768, .seed = 0x5100 + k };
		rds_fill(map + ZC_OFF, e.len, e.seed);
		r = zc_send(fd, echo, map + ZC_OFF, e.len, 0x501 + k, 30000);
		if (r != (ssize_t)e.len) {
			fprintf(stderr, "# 32 KiB (%s): %zd %s\n",
				k ? "after the first cookie" : "first", r,
				r < 0 ? strerror(errno) : "");
			return 12 + 2 * k;
		}
		zc_init(&st, 0x501 + k, 1);
		zc_collect(fd, &st, true, 1, rb, sizeof(rb), zc_echo_check, &e,
			   60000);
		if (!zc_all(&st) || e.ok != 1 || st.stray) {
			fprintf(stderr, "# 32 KiB #%d: cookie %s, echo %s, stray %u (0x%x)\n",
				k + 1, zc_all(&st) ? "ok" : "missing",
				e.ok ? "ok" : e.bad ? "wrong" : "missing",
				st.stray, st.stray_val);
			return 13 + 2 * k;
		}
	}
	close(fd);
	return 0;
}

TEST_F_TIMEOUT(zc, memlock, 200)
{
	int status;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(memlock_child(&self->echo));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("child: status 0x%x", status);
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "cannot drop CAP_IPC_LOCK or set RLIMIT_MEMLOCK");
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child failed at step %d (see its message above)",
		       WEXITSTATUS(status));
}

int main(int argc, char **argv)
{
	char saved[64];
	bool have;
	int ret;

	if (argc == 5 && !strcmp(argv[1], "echo"))
		return echo_serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	rds_test_prepare();
	have = !zc_param_get(saved, sizeof(saved));
	ret = test_harness_run(argc, argv);
	/* a case killed by its timeout did not run its teardown */
	if (have)
		zc_param_set(saved);
	return ret;
}
