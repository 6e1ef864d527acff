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
 * RDS_CMSG_RDMA_DEST, takes two WRITEs, then RDS_FREE_MR frees it.  With
 * our modules on node 0: an RDMA_MAP whose registration fails after
 * sendmsg() returned (rds_ib_mr_reg_fail_next) is reported to a socket with
 * RDS_RECVERR (RDS_RDMA_OTHER_ERROR, token = the cookie), the message never
 * reaches the peer, and the next MAP works again.  RDS_CANCEL_SENT_TO
 * racing the sender (rdma_post_delay_ms holds it between claiming a
 * message's RDMA and posting it): the op being posted is not reported
 * CANCELED, it completes SUCCESS and its data is on the peer; the one
 * queued behind it is CANCELED and never reaches the peer.
 */
#include <sys/wait.h>
#include <stdio.h>
#include <arpa/inet.h>
#include "rdma_test.h"

#define LEN 20000
#define REG_FAIL "/sys/module/rds_rdma/parameters/rds_ib_mr_reg_fail_next"
#define POST_DELAY "/sys/module/rds/parameters/rdma_post_delay_ms"
#define SEND_MS 30000	/* bounded wait through a full send buffer */
/*
 * OP_WRITE_GO_WRITE: WRITE, report, wait for the owner's OP_GO, WRITE
 * again.  The owner says go once it has seen the first WRITE's message:
 * only from then on is a use-once key guaranteed dead.  With local
 * invalidation (an in-tree peer) a second WRITE issued earlier may still
 * land before the owner's LOCAL_INV executes; remote invalidation has no
 * such window.
 */
enum { OP_WRITE = 1, OP_READ = 2, OP_WRITE_TWICE = 3, OP_WRITE_GO_WRITE = 4,
       OP_GO = 5, OP_KEY = 6, OP_CHECK = 7, OP_IGNORE = 8, OP_QUIT = 9,
       OP_KEY_ONCE = 10 };
enum { REP_DONE = 1, REP_STATUS = 2, REP_KEY = 3 };

struct req {
	uint32_t op, len;
	uint8_t pattern, pad[7];
};

struct rep {
	uint32_t kind;
	int32_t status;
	uint32_t ok;		/* READ: content matched; OP_CHECK: CHK_* */
	uint32_t pad;
	uint64_t cookie;	/* REP_KEY: the server's key */
};

/* OP_CHECK: the server's target, first half and second half */
#define CHK_FIRST_PATTERN	1	/* holds the pattern */
#define CHK_FIRST_ZERO		2	/* untouched */
#define CHK_SECOND_PATTERN	4
#define CHK_SECOND_ZERO		8

static bool pattern_ok(const char *buf, uint32_t len, uint8_t p)
{
	for (uint32_t i = 0; i < len; i++)
		if ((uint8_t)buf[i] != (uint8_t)(p + i))
			return false;
	return true;
}

static bool zero_ok(const char *buf, uint32_t len)
{
	for (uint32_t i = 0; i < len; i++)
		if (buf[i])
			return false;
	return true;
}

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

static ssize_t send_c(int fd, const void *to, const void *buf, size_t len,
		      int type, const void *d, size_t dlen)
{
	return rds_send_cmsg(fd, to, buf, len, type, d, dlen, SEND_MS);
}

/* Issue one RDMA on cookie with a REP_DONE and wait for its notification. */
static int do_rdma(int fd, const struct sockaddr_storage *to, uint64_t cookie,
		   bool write, char *local, uint32_t len)
{
	struct rep done = { .kind = REP_DONE };

	return rds_do_rdma(fd, to, &done, sizeof(done), cookie, local, len,
			   write, 42, 30000);
}

/*
 * An RDMA expected to fail on a dead key.  The failure drops the
 * connection, and the disconnect can flush the op before its NAK is read
 * (rxe 6.12 drains the responses of a QP in error): it then ends
 * RDS_RDMA_DROPPED, which proves nothing.  Try again, at most 3 times.
 */
static int do_rdma_dead(int fd, const struct sockaddr_storage *to,
			uint64_t cookie, bool write, char *local, uint32_t len)
{
	int st = -1, try;

	for (try = 0; try < 3; try++) {
		st = do_rdma(fd, to, cookie, write, local, len);
		if (st != RDS_RDMA_DROPPED)
			break;
		printf("# RDMA on a dead key dropped by a reconnect: once more\n");
	}
	return st;
}

static int serve(const char *addr, int port, int secs)
{
	static char local[LEN], target[LEN];
	uint64_t key = 0;
	struct sockaddr_storage from;
	struct rds_rx rx;
	uint64_t cookie;
	struct req q;
	int fd = sock_bound(addr, port);

	if (fd < 0)
		return 1;
	for (;;) {
		struct rep r = { .kind = REP_STATUS };
		ssize_t n = rds_recv_rx(fd, &q, sizeof(q), &rx, secs * 1000);

		if (n < 0)
			return 0;
		from = rx.from;
		cookie = rx.cookie;
		if (n != sizeof(q))
			continue;
		if (q.op == OP_QUIT)
			return 0;
		if (q.op == OP_KEY || q.op == OP_KEY_ONCE) {
			/*
			 * An ordinary key on a zeroed target, or a use-once
			 * key on a target holding the pattern, for our peer.
			 */
			if (key)
				rds_free_mr(fd, key, 0);
			key = 0;
			for (uint32_t i = 0; i < LEN; i++)
				target[i] = q.op == OP_KEY ? 0 : q.pattern + i;
			r.kind = REP_KEY;
			r.status = rds_get_mr(fd, target, LEN, &key,
					      RDS_RDMA_READWRITE |
					      (q.op == OP_KEY ? 0 :
					       RDS_RDMA_USE_ONCE)) ? -errno : 0;
			r.cookie = key;
			send_c(fd, &from, &r, sizeof(r), 0, NULL, 0);
			continue;
		}
		if (q.op == OP_CHECK) {
			r.ok = (pattern_ok(target, LEN / 2, q.pattern) ?
				CHK_FIRST_PATTERN : 0) |
			       (zero_ok(target, LEN / 2) ? CHK_FIRST_ZERO : 0) |
			       (pattern_ok(target + LEN / 2, LEN / 2,
					   q.pattern + 1) ?
				CHK_SECOND_PATTERN : 0) |
			       (zero_ok(target + LEN / 2, LEN / 2) ?
				CHK_SECOND_ZERO : 0);
			send_c(fd, &from, &r, sizeof(r), 0, NULL, 0);
			continue;
		}
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
					n = rds_recv_rx(fd, &go, sizeof(go),
							NULL, secs * 1000);
				} while (n >= 0 && (n != sizeof(go) ||
						    go.op != OP_GO));
				if (n < 0)
					return 0;
				memset(local, 0xee, q.len);
				r.status = do_rdma_dead(fd, &from, cookie, true,
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

static void knob(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(val, f);
		fclose(f);
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
		ssize_t n = rds_recv_rx(fd, r, sizeof(*r), NULL, 60000);

		if (n < 0)
			return -1;
		if (n == sizeof(*r) && r->kind == kind)
			return 0;
	}
	return -1;
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
	char cmd[256], dev[64];
	FILE *pf;
	int fd;

	if (argc == 5 && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (!laddr || !paddr) {
		printf("1..0 # SKIP no peer\n");
		return 4;
	}
	printf("1..16\n");
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

	/* 9-11: a MAP whose registration fails after sendmsg() returned */
	if (access(REG_FAIL, W_OK)) {
		for (int i = 0; i < 3; i++)
			printf("ok %d # SKIP no %s\n", ++tests, REG_FAIL);
	} else {
		int one = 1, st;
		uint64_t tok = 0;

		setsockopt(fd, SOL_RDS, RDS_RECVERR, &one, sizeof(one));
		mr.flags = RDS_RDMA_USE_ONCE | RDS_RDMA_READWRITE;
		memset(b, 0x22, LEN);
		cookie = 0;
		q = (struct req){ .op = OP_WRITE, .len = LEN, .pattern = 5 };
		knob(REG_FAIL, "1");
		tap(send_c(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
			   sizeof(mr)) == sizeof(q) &&
		    (st = rds_wait_note(fd, &tok, 30000)) ==
		    RDS_RDMA_OTHER_ERROR && tok == cookie,
		    "failed MAP registration: OTHER_ERROR, token = cookie");
		knob(REG_FAIL, "0");
		tap(rds_recv_rx(fd, &r, sizeof(r), NULL, 3000) < 0 &&
		    b[0] == 0x22 && b[LEN - 1] == 0x22,
		    "its message never reached the peer, memory untouched");
		rds_free_mr(fd, cookie, 0);
		q = (struct req){ .op = OP_WRITE, .len = LEN, .pattern = 6 };
		tap(send_c(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_MAP, &mr,
			   sizeof(mr)) == sizeof(q) &&
		    wait_rep(fd, &r, REP_DONE) == 0 && pattern_ok(b, LEN, 6) &&
		    wait_rep(fd, &r, REP_STATUS) == 0 &&
		    r.status == RDS_RDMA_SUCCESS,
		    "the next MAP works again");
	}

	/* 12-14: RDS_CANCEL_SENT_TO racing the sender */
	q = (struct req){ .op = OP_KEY };
	if (access(POST_DELAY, W_OK) ||
	    send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) != sizeof(q) ||
	    wait_rep(fd, &r, REP_KEY) || r.status || !r.cookie) {
		for (int i = 0; i < 3; i++)
			printf("ok %d # SKIP no %s or no key from the peer\n",
			       ++tests, POST_DELAY);
	} else {
		static char src[LEN];
		uint64_t key = r.cookie, tok;
		int st1 = -1, st2 = -1, st;
		pid_t kid[2];

		for (int i = 0; i < LEN / 2; i++) {
			src[i] = 4 + i;
			src[LEN / 2 + i] = 5 + i;
		}
		q = (struct req){ .op = OP_IGNORE, .len = LEN + 1 };
		knob(POST_DELAY, "600");
		/*
		 * While we are held between claiming our WRITE and posting it,
		 * a second WRITE queues behind it, then both are cancelled.
		 */
		kid[0] = fork();
		if (kid[0] == 0) {
			usleep(150000);
			rds_send_rdma(fd, &to, &q, sizeof(q), key, LEN / 2,
				      src + LEN / 2, LEN / 2,
				      RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME,
				      2, SEND_MS);
			_exit(0);
		}
		kid[1] = fork();
		if (kid[1] == 0) {
			usleep(350000);
			setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				   sizeof(to));
			_exit(0);
		}
		rds_send_rdma(fd, &to, &q, sizeof(q), key, 0, src, LEN / 2,
			      RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME, 1,
			      SEND_MS);
		for (int i = 0; i < 2; i++)
			if (kid[i] > 0)
				waitpid(kid[i], NULL, 0);
		knob(POST_DELAY, "0");
		for (int i = 0; i < 2; i++) {
			tok = 0;
			st = rds_wait_note(fd, &tok, 30000);
			if (tok == 1)
				st1 = st;
			else if (tok == 2)
				st2 = st;
		}
		q = (struct req){ .op = OP_CHECK, .pattern = 4 };
		r.ok = 0;
		if (send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) != sizeof(q) ||
		    wait_rep(fd, &r, REP_STATUS))
			r.ok = 0;
		printf("# cancel race: statuses %d %d, peer check %#x\n",
		       st1, st2, r.ok);
		tap(st1 == RDS_RDMA_SUCCESS && (r.ok & CHK_FIRST_PATTERN),
		    "cancel while the RDMA is posted: SUCCESS, data on the peer");
		tap(st2 == RDS_RDMA_CANCELED && (r.ok & CHK_SECOND_ZERO),
		    "cancel of the RDMA queued behind it: CANCELED, peer untouched");
		q = (struct req){ .op = OP_KEY };
		tap(send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) == sizeof(q) &&
		    wait_rep(fd, &r, REP_KEY) == 0 && r.status == 0 &&
		    rds_do_rdma(fd, &to, NULL, 0, r.cookie, src, LEN / 2,
				true, 3, 30000) == RDS_RDMA_SUCCESS,
		    "the socket still does RDMA afterwards");
	}
	/* 15-16: RDS_CANCEL_SENT_TO while a READ holds its SEND back */
	q = (struct req){ .op = OP_KEY_ONCE, .pattern = 8 };
	dev[0] = 0;
	snprintf(cmd, sizeof(cmd), "rds-dataif %s", laddr);
	pf = popen(cmd, "r");
	if (pf) {
		if (!fgets(dev, sizeof(dev), pf))
			dev[0] = 0;
		dev[strcspn(dev, "\n")] = 0;
		pclose(pf);
	}
	snprintf(cmd, sizeof(cmd), "/tests/rds_netem %s delay 400000", dev);
	if (!dev[0] || send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) != sizeof(q) ||
	    wait_rep(fd, &r, REP_KEY) || r.status || !r.cookie ||
	    system(cmd)) {
		for (int i = 0; i < 2; i++)
			printf("ok %d # SKIP no netem, no data link or no use-once key from the peer\n",
			       ++tests);
	} else {
		uint64_t key = r.cookie, tok = 0;
		int st = -1, st2 = -1;
		bool read_ok;
		pid_t kid;

		memset(b, 0, LEN);
		q = (struct req){ .op = OP_IGNORE, .len = LEN + 1 };
		kid = fork();
		if (kid == 0) {
			usleep(150000);
			setsockopt(fd, SOL_RDS, RDS_CANCEL_SENT_TO, &to,
				   sizeof(to));
			_exit(0);
		}
		if (rds_send_rdma(fd, &to, &q, sizeof(q), key, 0, b, LEN,
				  RDS_RDMA_NOTIFY_ME, 5, SEND_MS) == sizeof(q))
			st = rds_wait_note(fd, &tok, 30000);
		if (kid > 0)
			waitpid(kid, NULL, 0);
		snprintf(cmd, sizeof(cmd), "/tests/rds_netem %s off", dev);
		if (system(cmd))
			printf("# netem off on %s failed\n", dev);
		read_ok = pattern_ok(b, LEN, 8);
		/* A round trip: the owner has seen our message (and key). */
		q = (struct req){ .op = OP_CHECK, .pattern = 8 };
		if (send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) == sizeof(q) &&
		    wait_rep(fd, &r, REP_STATUS) == 0) {
			for (int t = 0; t < 3; t++) {
				memset(b, 0, LEN);
				st2 = rds_do_rdma(fd, &to, NULL, 0, key, b,
						  LEN, false, 6, 30000);
				/* flushed by the disconnect: see do_rdma_dead() */
				if (st2 != RDS_RDMA_DROPPED)
					break;
				printf("# second READ dropped by a reconnect: once more\n");
			}
		}
		printf("# cancel while held: status %d (token %llu), data %s; second READ %d\n",
		       st, (unsigned long long)tok, read_ok ? "read" : "missing",
		       st2);
		tap(st == RDS_RDMA_SUCCESS && tok == 5 && read_ok,
		    "cancel while a READ holds its SEND: SUCCESS, the data read");
		tap(st2 == RDS_RDMA_REMOTE_ERROR && zero_ok(b, LEN),
		    "the use-once key it read is dead: its SEND still went");
		/*
		 * The dead-key READ dropped the connection: a round trip, so
		 * that OP_QUIT below is sent before close() could cancel it
		 * (a server left running keeps the peer's modules busy).
		 */
		q = (struct req){ .op = OP_CHECK, .pattern = 8 };
		if (send_c(fd, &to, &q, sizeof(q), 0, NULL, 0) != sizeof(q) ||
		    wait_rep(fd, &r, REP_STATUS))
			printf("# no answer from the peer after the dead-key READ\n");
	}

	q = (struct req){ .op = OP_QUIT };
	send_c(fd, &to, &q, sizeof(q), 0, NULL, 0);
	return fails ? 1 : 0;
}
