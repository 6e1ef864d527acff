// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_ops.c - two-node RDMA through cookies, and the death of use-once keys.
 *
 *   rdma_ops serve ADDR PORT SECONDS   peer side (node 1): for every request
 *                                      carrying a cookie, do the RDMA it
 *                                      asks for and report the notification
 *   rdma_ops [test]                    node 0: start the server with
 *                                      rds-peer, run the cases below
 *
 * Cases (TAP): WRITE into a use-once key made by RDS_CMSG_RDMA_MAP: the data
 * is in our buffer when the completing message arrives, the issuer is told
 * RDS_RDMA_SUCCESS; a second WRITE with the same (dead) key fails with
 * RDS_RDMA_REMOTE_ERROR and our memory is not touched.  READ from a use-once
 * key.  A key from RDS_GET_MR without USE_ONCE, handed over with
 * RDS_CMSG_RDMA_DEST, takes two WRITEs, then RDS_FREE_MR frees it.
 */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

#define LEN 20000
/*
 * OP_WRITE_GO_WRITE: WRITE, report, wait for the owner's OP_GO, WRITE
 * again.  The owner says go once it has seen the first WRITE's message:
 * only from then on is a use-once key guaranteed dead.  With local
 * invalidation (an in-tree peer) a second WRITE issued earlier may still
 * land before the owner's LOCAL_INV executes; remote invalidation has no
 * such window.
 */
enum { OP_WRITE = 1, OP_READ = 2, OP_WRITE_TWICE = 3, OP_WRITE_GO_WRITE = 4,
       OP_GO = 5, OP_QUIT = 9 };
enum { REP_DONE = 1, REP_STATUS = 2 };

struct req {
	uint32_t op, len;
	uint8_t pattern, pad[7];
};

struct rep {
	uint32_t kind;
	int32_t status;
	uint32_t ok;		/* READ: content matched */
	uint32_t pad;
};

static int sock_bound(const char *addr, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
				   .sin_port = htons(port) };
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1 ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		return -1;
	return fd;
}

/* recvmsg with a timeout; returns bytes, -1 on error/timeout. */
static ssize_t recv_to(int fd, void *buf, size_t len, struct sockaddr_in *from,
		       uint64_t *cookie, struct rds_rdma_notify *note, int ms)
{
	union {
		char b[256];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_name = from,
			    .msg_namelen = from ? sizeof(*from) : 0,
			    .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct cmsghdr *c;
	ssize_t r;

	if (cookie)
		*cookie = 0;
	if (note)
		note->status = -1;
	/*
	 * poll() reports POLLIN for a congestion map update alone (in-tree
	 * semantics: the peer sends its map when the connection comes up),
	 * so EAGAIN from the receive means "poll again" until @ms runs out.
	 */
	for (;;) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if (ms <= 0 || poll(&p, 1, ms) != 1)
			return -1;
		r = recvmsg(fd, &m, MSG_DONTWAIT);
		if (r >= 0)
			break;
		if (errno != EAGAIN)
			return -1;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ms -= (t1.tv_sec - t0.tv_sec) * 1000 +
		      (t1.tv_nsec - t0.tv_nsec) / 1000000 + 1;
		m.msg_controllen = sizeof(u.b);
	}
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST && cookie)
			memcpy(cookie, CMSG_DATA(c), sizeof(*cookie));
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS && note)
			memcpy(note, CMSG_DATA(c), sizeof(*note));
	}
	return r;
}

static ssize_t send_c(int fd, struct sockaddr_in *to, const void *buf,
		      size_t len, int type, const void *d, size_t dlen)
{
	union {
		char b[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_name = to, .msg_namelen = sizeof(*to),
			    .msg_iov = &iov, .msg_iovlen = 1 };

	if (type) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE(dlen);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(dlen);
		memcpy(CMSG_DATA(c), d, dlen);
	}
	return sendmsg(fd, &m, 0);
}

/* Issue one RDMA on cookie and wait for its notification. */
static int do_rdma(int fd, struct sockaddr_in *to, uint64_t cookie, bool write,
		   char *local, uint32_t len)
{
	struct rds_iovec v = { .addr = (uintptr_t)local, .bytes = len };
	struct rds_rdma_args a = {
		.cookie = cookie,
		.remote_vec = { .addr = 0, .bytes = len },
		.local_vec_addr = (uintptr_t)&v,
		.nr_local = 1,
		.flags = (write ? RDS_RDMA_READWRITE : 0) | RDS_RDMA_NOTIFY_ME,
		.user_token = 42,
	};
	struct rds_rdma_notify note;
	struct rep done = { .kind = REP_DONE };
	char junk[64];
	int i;

	if (send_c(fd, to, &done, sizeof(done), RDS_CMSG_RDMA_ARGS, &a,
		   sizeof(a)) < 0)
		return -1000 - errno;
	for (i = 0; i < 100; i++) {
		ssize_t r = recv_to(fd, junk, sizeof(junk), NULL, NULL, &note,
				    30000);

		if (r < 0)
			return -2000;
		if (r == 0 && note.status >= 0)
			return note.user_token == 42 ? note.status : -3000;
	}
	return -4000;
}

static int serve(const char *addr, int port, int secs)
{
	static char local[LEN];
	struct sockaddr_in from;
	uint64_t cookie;
	struct req q;
	int fd = sock_bound(addr, port);

	if (fd < 0)
		return 1;
	for (;;) {
		struct rep r = { .kind = REP_STATUS };
		ssize_t n = recv_to(fd, &q, sizeof(q), &from, &cookie, NULL,
				    secs * 1000);

		if (n < 0)
			return 0;
		if (n != sizeof(q))
			continue;
		if (q.op == OP_QUIT)
			return 0;
		if (q.len > LEN || !cookie)
			continue;
		if (q.op == OP_READ) {
			memset(local, 0, q.len);
			r.status = do_rdma(fd, &from, cookie, false, local,
					   q.len);
			r.ok = 1;
			for (uint32_t i = 0; i < q.len; i++)
				if ((uint8_t)local[i] != (uint8_t)(q.pattern + i))
					r.ok = 0;
		} else {
			for (uint32_t i = 0; i < q.len; i++)
				local[i] = q.pattern + i;
			r.status = do_rdma(fd, &from, cookie, true, local,
					   q.len);
			if (q.op == OP_WRITE_GO_WRITE) {
				struct req go;

				send_c(fd, &from, &r, sizeof(r), 0, NULL, 0);
				do {
					n = recv_to(fd, &go, sizeof(go), NULL,
						    NULL, NULL, secs * 1000);
				} while (n >= 0 && (n != sizeof(go) ||
						    go.op != OP_GO));
				if (n < 0)
					return 0;
				memset(local, 0xee, q.len);
				r.status = do_rdma(fd, &from, cookie, true,
						   local, q.len);
			} else if (q.op == OP_WRITE_TWICE) {
				send_c(fd, &from, &r, sizeof(r), 0, NULL, 0);
				memset(local, 0xee, q.len);
				r.status = do_rdma(fd, &from, cookie, true,
						   local, q.len);
			}
		}
		send_c(fd, &from, &r, sizeof(r), 0, NULL, 0);
	}
}

static int tests, fails;

static void tap(bool ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++tests, what);
	fails += !ok;
}

/* Wait for the server's REP_DONE or REP_STATUS. */
static int wait_rep(int fd, struct rep *r, uint32_t kind)
{
	int i;

	for (i = 0; i < 10; i++) {
		ssize_t n = recv_to(fd, r, sizeof(*r), NULL, NULL, NULL, 60000);

		if (n < 0)
			return -1;
		if (n == sizeof(*r) && r->kind == kind)
			return 0;
	}
	return -1;
}

static bool pattern_ok(const char *buf, uint32_t len, uint8_t p)
{
	for (uint32_t i = 0; i < len; i++)
		if ((uint8_t)buf[i] != (uint8_t)(p + i))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	const char *laddr = getenv("RDS_LOCAL_ADDR");
	const char *paddr = getenv("RDS_PEER_ADDR");
	static char buf[LEN + 4096];
	char *b = buf + 100;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(18720) };
	struct rds_get_mr_args mr;
	struct rep r;
	struct req q;
	uint64_t cookie;
	char cmd[256];
	int fd;

	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!laddr || !paddr) {
		printf("1..0 # SKIP no peer\n");
		return 4;
	}
	printf("1..8\n");
	snprintf(cmd, sizeof(cmd),
		 "rds-peer 1 '/tests/rdma_ops serve %s 18720 120 >/dev/null 2>&1 &'",
		 paddr);
	if (system(cmd))
		return 1;
	sleep(2);
	fd = sock_bound(laddr, 18721);
	inet_pton(AF_INET, paddr, &to.sin_addr);
	if (fd < 0)
		return 1;

	/* 1-3: WRITE into a use-once key, then again into the dead key */
	memset(b, 0x11, LEN);
	cookie = 0;
	mr = (struct rds_get_mr_args){
		.vec = { (uintptr_t)b, LEN }, .cookie_addr = (uintptr_t)&cookie,
		.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE,
	};
	q = (struct req){ .op = OP_WRITE_GO_WRITE, .len = LEN, .pattern = 7 };
	tap(send_c(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
		   sizeof(mr)) == sizeof(q), "map use-once and send the cookie");
	tap(wait_rep(fd, &r, REP_DONE) == 0 && pattern_ok(b, LEN, 7),
	    "data in place when the completing message arrives");
	tap(wait_rep(fd, &r, REP_STATUS) == 0 && r.status == RDS_RDMA_SUCCESS,
	    "issuer notified RDS_RDMA_SUCCESS");
	q = (struct req){ .op = OP_GO };
	send_c(fd, &to, &q, sizeof(q), 0, NULL, 0);
	tap(wait_rep(fd, &r, REP_STATUS) == 0 &&
	    r.status == RDS_RDMA_REMOTE_ERROR && pattern_ok(b, LEN, 7),
	    "second WRITE on the dead key: REMOTE_ERROR, memory untouched");

	/* 5: READ from a use-once key */
	for (int i = 0; i < LEN; i++)
		b[i] = 3 + i;
	q = (struct req){ .op = OP_READ, .len = LEN, .pattern = 3 };
	tap(send_c(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
		   sizeof(mr)) == sizeof(q) &&
	    wait_rep(fd, &r, REP_STATUS) == 0 &&
	    r.status == RDS_RDMA_SUCCESS && r.ok, "READ from a use-once key");

	/* 6-8: an ordinary key takes two WRITEs, then is freed */
	mr.flags = RDS_RDMA_READWRITE;
	tap(setsockopt(fd, SOL_RDS, RDS_GET_MR, &mr, sizeof(mr)) == 0,
	    "GET_MR before any use");
	q = (struct req){ .op = OP_WRITE_TWICE, .len = LEN, .pattern = 9 };
	tap(send_c(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_DEST, &cookie,
		   sizeof(cookie)) == sizeof(q) &&
	    wait_rep(fd, &r, REP_STATUS) == 0 &&
	    r.status == RDS_RDMA_SUCCESS &&
	    wait_rep(fd, &r, REP_STATUS) == 0 &&
	    r.status == RDS_RDMA_SUCCESS, "ordinary key: two WRITEs succeed");
	{
		struct rds_free_mr_args f = { .cookie = cookie };

		tap(setsockopt(fd, SOL_RDS, RDS_FREE_MR, &f, sizeof(f)) == 0,
		    "FREE_MR");
	}
	q = (struct req){ .op = OP_QUIT };
	send_c(fd, &to, &q, sizeof(q), 0, NULL, 0);
	return fails ? 1 : 0;
}
