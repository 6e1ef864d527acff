// SPDX-License-Identifier: GPL-2.0
/*
 * ib_crash.c - the peer node crashes and boots again under RDMA traffic
 * (issue 10, item 3).
 *
 *   ib_crash serve ADDR PORT SECS [TAG]
 *                                    node 1: OP_KEY gets a fresh key
 *                                    (RDS_GET_MR, read-write, not
 *                                    use-once) on a 64 KiB buffer filled
 *                                    with rds_fill(seed); OP_MSG is echoed
 *                                    with TAG (which incarnation echoed)
 *   ib_crash [test]                  node 0
 *
 * crash.peer: node 0 keeps DEPTH RDMA WRITEs and READs against node 1's
 * key in flight, each with RDS_RDMA_NOTIFY_ME and its own token; after
 * OK_BEFORE of them succeeded node 1 is crash-rebooted (sysrq b: no
 * shutdown, no DREQ; its memory, HCA state and keys are gone), and node 0
 * keeps posting until the crash shows (an op fails; DEPTH stuck ops stop
 * the posting before that), so that some are in flight when it hits.
 * Then:
 *  - every op node 0 sent is notified exactly once, within NOTE_MS of the
 *    crash: SUCCESS for those done before it, an error status for the
 *    rest (the QP's retries run out, or the op meets the rebooted peer);
 *    none is left hanging;
 *  - node 1 came back (its boot id changed) and node 0 reconnects to it:
 *    a new key is handed over within RECONNECT_MS of the node being
 *    reachable again, READ from it with the new instance's content, and a
 *    WRITE then READ round trip of that key returns what was written;
 *  - NMSG messages echoed both ways, each once and in order.
 *
 * crash.messages: plain messages in flight at the crash (rds.rst, "The
 * peer node crashes"): node 0 streams numbered messages to node 1, WINDOW
 * unechoed at most, node 1 echoes each with its incarnation's tag; after
 * ECHO_BEFORE echoes node 1 is crash-rebooted while node 0 goes on
 * streaming until the echoes stop, then sends QUEUED more (they wait on
 * node 0 while node 1 is down); node 1 back, a new server (tag 2) binds
 * and node 0 sends NMSG_AFTER more.  Then:
 *  - each incarnation echoed every message at most once and in order
 *    (the first one 1..E with no gap: nothing is lost on a live link);
 *  - every message sent after the new server bound was echoed by it
 *    exactly once;
 *  - the messages sent before that are echoed by the first incarnation,
 *    again by the second (sent again because the first had not ACKed
 *    them), or lost (ACKed but unread, or dropped at node 1 while nothing
 *    was bound): counted and printed, none is a failure;
 *  - a port of node 1 that was congested at the crash (a socket that
 *    never reads, filled by node 0 until ENOBUFS) takes messages again
 *    once the connection is back: the rebooted node's empty congestion
 *    map reached node 0 (before 2026-12-07 an empty map was not sent on
 *    a new connection, and node 0 refused that port for good).
 */
#include <fcntl.h>
#include "rds_test.h"

#define SELF		"/tests/ib_crash"
#define PORT_PEER	18760
#define PORT_SELF	18761
#define BUFLEN		65536
#define RLEN		16384
#define DEPTH		8
#define OK_BEFORE	40
#define MAXOPS		4000
#define NMSG		1000
#define WINDOW		32
#define SEND_MS		20000
#define NOTE_MS		240000
#define POST_MS		60000
#define RECONNECT_MS	90000
#define ECHO_BEFORE	200
#define NMSG_AFTER	300
#define MAXSEQ		16384
#define QUEUED		64

enum { OP_KEY = 1, OP_KEYREP = 2, OP_MSG = 3, OP_ECHO = 4, OP_QUIT = 9 };

struct cmsg_q {
	uint32_t magic, op, seq, seed;
	uint64_t cookie;
};

#define MAGIC	0x52444358u	/* "RDCX" */
#define READY	"/tmp/ib_crash.ready"	/* node 1: serve() has bound */

/* Notifications that came where none was due (after the main loop). */
static int late_notes;

/* Node 1. */
static int serve(const char *addr, int port, int secs, uint32_t tag)
{
	static char buf[BUFLEN] __attribute__((aligned(4096)));
	uint64_t key = 0;
	int fd, sink, v = 4096;

	alarm(secs + 30);
	fd = rds_bound_socket_at(AF_INET, addr, port, NULL);
	if (fd < 0)
		return 1;
	/* crash.messages: a port that never reads (congested by node 0) */
	if (tag == 1) {
		sink = rds_bound_socket_at(AF_INET, addr, port + 2, NULL);
		if (sink < 0)
			return 1;
		setsockopt(sink, SOL_SOCKET, SO_RCVBUF, &v, sizeof(v));
	}
	close(open(READY, O_CREAT | O_WRONLY, 0644));
	rds_big_sndbuf(fd, 4 << 20);
	for (;;) {
		struct cmsg_q q, r;
		struct rds_rx rx;
		ssize_t n = rds_recv_rx(fd, &q, sizeof(q), &rx, secs * 1000);

		if (n < 0)
			return 0;
		if (n != sizeof(q) || rx.is_note || q.magic != MAGIC)
			continue;
		r = (struct cmsg_q){ .magic = MAGIC, .seq = q.seq };
		switch (q.op) {
		case OP_QUIT:
			return 0;
		case OP_KEY:
			if (key)
				rds_free_mr(fd, key, 0);
			key = 0;
			rds_fill(buf, BUFLEN, q.seed);
			if (rds_get_mr(fd, buf, BUFLEN, &key, RDS_RDMA_READWRITE))
				key = 0;
			r.op = OP_KEYREP;
			r.cookie = key;
			break;
		case OP_MSG:
			r.op = OP_ECHO;
			r.seed = tag;
			break;
		default:
			continue;
		}
		rds_send_cmsg(fd, &rx.from, &r, sizeof(r), 0, NULL, 0, SEND_MS);
	}
}

FIXTURE(crash)
{
	int fd;
	struct sockaddr_storage peer;
	char *local;
	uint8_t *st;	/* per token: 0 none, else 1 + status */
};

FIXTURE_SETUP(crash)
{
	self->fd = -1;
	self->local = aligned_alloc(4096, 2 * RLEN);
	self->st = calloc(MAXOPS + 1, 1);
	ASSERT_NE(NULL, self->local);
	ASSERT_NE(NULL, self->st);
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), PORT_PEER, &self->peer);
}

FIXTURE_TEARDOWN(crash)
{
	struct cmsg_q q = { .magic = MAGIC, .op = OP_QUIT };

	if (self->fd >= 0) {
		rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q), 0, NULL, 0,
			      0);
		close(self->fd);
	}
	free(self->local);
	free(self->st);
}

static int start_server_tag(uint32_t tag)
{
	char cmd[256];

	int i;

	snprintf(cmd, sizeof(cmd),
		 "rds-peer 1 'rm -f %s; %s serve %s %d 300 %u >/tmp/ib_crash.log 2>&1 &'",
		 READY, SELF, rds_peer_str(AF_INET), PORT_PEER, tag);
	if (system(cmd))
		return -1;
	/* Bound (a cold node after a reboot may take a while), or failed. */
	snprintf(cmd, sizeof(cmd), "rds-peer -t 10 1 'test -f %s'", READY);
	for (i = 0; i < 60; i++) {
		if (system(cmd) == 0)
			return 0;
		rds_msleep(500);
	}
	return -1;
}

static int start_server(void)
{
	return start_server_tag(0);
}

static int boot_id(char *out, size_t len)
{
	return rds_run_cmd("rds-peer -t 30 1 cat /proc/sys/kernel/random/boot_id",
			   out, len);
}

/*
 * Ask node 1 for a key on a buffer filled with @seed, retrying for @ms
 * (the connection may have to be made first).  Returns the cookie or 0.
 */
static uint64_t get_key(FIXTURE_DATA(crash) *self, uint32_t seed, int ms)
{
	struct timespec t0;
	uint32_t seq = seed << 8;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&t0) < ms) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_KEY,
				    .seq = ++seq, .seed = seed };
		struct timespec t1;
		struct rds_rx rx;

		if (rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q), 0,
				  NULL, 0, 2000) < 0) {
			rds_msleep(500);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		while (rds_ms_since(&t1) < 3000) {
			struct cmsg_q r;
			ssize_t n = rds_recv_rx(self->fd, &r, sizeof(r), &rx,
						1000);

			if (n >= 0 && rx.is_note)
				late_notes++;
			if (n == sizeof(r) && !rx.is_note && r.magic == MAGIC &&
			    r.op == OP_KEYREP && r.seq == seq)
				return r.cookie;
		}
	}
	return 0;
}

/* Record a notification; returns false for an unknown or repeated token. */
static bool note(FIXTURE_DATA(crash) *self, const struct rds_rx *rx,
		 int posted)
{
	uint64_t t = rx->note.user_token;

	if (t < 1 || t > (uint64_t)posted || self->st[t])
		return false;
	self->st[t] = 1 + (uint8_t)rx->note.status;
	return true;
}

/* Count the notifications still queued (1 s without anything: done). */
static void drain_notes(FIXTURE_DATA(crash) *self)
{
	struct rds_rx rx;
	char tmp[64];

	while (rds_recv_rx(self->fd, tmp, sizeof(tmp), &rx, 1000) >= 0)
		late_notes += rx.is_note;
}

/* NMSG messages to node 1, echoed back in order; returns how many came. */
static uint32_t echo_msgs(struct __test_metadata *_metadata,
			  FIXTURE_DATA(crash) *self)
{
	uint32_t sent = 0, got = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < NMSG && rds_ms_since(&t0) < 120000) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_MSG };
		struct rds_rx rx;

		if (sent < NMSG && sent - got < WINDOW) {
			q.seq = ++sent;
			if (rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q),
					  0, NULL, 0, SEND_MS) < 0)
				break;
			continue;
		}
		if (rds_recv_rx(self->fd, &q, sizeof(q), &rx, 1000) < 0)
			continue;
		if (rx.is_note)
			late_notes++;
		if (rx.len != sizeof(q) || rx.is_note || q.op != OP_ECHO)
			continue;
		if (q.seq != got + 1) {
			TH_LOG("echo %u after %u", q.seq, got);
			break;
		}
		got++;
	}
	return got;
}

TEST_F_TIMEOUT(crash, peer, 1200)
{
	char id0[64] = "", id1[64] = "";
	int posted = 0, notes = 0, ok = 0, bad = 0, i, hist[8] = { 0 };
	struct timespec tc, t0;
	long last_ms = 0;
	bool crashed = false, posting = true;
	int failed = 0;
	uint64_t key;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	ASSERT_EQ(0, boot_id(id0, sizeof(id0)));
	ASSERT_EQ(0, start_server());
	self->fd = rds_bound_socket(AF_INET, PORT_SELF, NULL);
	ASSERT_LE(0, self->fd);
	/*
	 * rds-reboot runs in the background and may outlive us (its call to
	 * the crashed node times out): it must not inherit the socket, or
	 * the socket, and with it rds_rdma, stays busy after we exit.
	 */
	ASSERT_EQ(0, fcntl(self->fd, F_SETFD, FD_CLOEXEC));
	rds_big_sndbuf(self->fd, 4 << 20);
	key = get_key(self, 11, 30000);
	ASSERT_NE(0, key) TH_LOG("no key from node 1");

	/*
	 * DEPTH ops in flight; node 1 is crashed once OK_BEFORE succeeded,
	 * and the ops go on until one fails, so that some are in flight when
	 * the crash hits.
	 */
	clock_gettime(CLOCK_MONOTONIC, &tc);
	while (posting || notes < posted) {
		struct rds_rx rx;
		char tmp[64];

		if (!crashed && ok >= OK_BEFORE) {
			ASSERT_EQ(0, system("rds-reboot 1 &"));
			crashed = true;
			clock_gettime(CLOCK_MONOTONIC, &tc);
			TH_LOG("node 1 crash triggered after %d ops (%d notified)",
			       posted, notes);
		}
		if (posting && crashed &&
		    (failed || rds_ms_since(&tc) > POST_MS)) {
			posting = false;
			TH_LOG("posting stopped %ld ms after the trigger: %d ops, %d notified, %d failed",
			       rds_ms_since(&tc), posted, notes, failed);
		}
		if (posting && posted - notes < DEPTH && posted < MAXOPS) {
			bool write = posted % 4 != 3;
			uint64_t fl = RDS_RDMA_NOTIFY_ME |
				      (write ? RDS_RDMA_READWRITE : 0);

			rds_fill(self->local, RLEN, posted);
			if (rds_send_rdma(self->fd, &self->peer, NULL, 0, key,
					  (posted % 4) * RLEN, self->local,
					  RLEN, fl, posted + 1, SEND_MS) < 0) {
				TH_LOG("op %d: sendmsg: %s", posted + 1,
				       strerror(errno));
				bad++;
				break;
			}
			posted++;
			continue;
		}
		if (posting && posted >= MAXOPS) {
			TH_LOG("%d ops, %d succeeded, crash not seen", posted,
			       ok);
			bad++;
			break;
		}
		if (crashed && rds_ms_since(&tc) > NOTE_MS)
			break;
		if (rds_recv_rx(self->fd, tmp, sizeof(tmp), &rx, 200) < 0 ||
		    !rx.is_note)
			continue;
		if (!note(self, &rx, posted)) {
			TH_LOG("unexpected notification: token %llu status %d",
			       (unsigned long long)rx.note.user_token,
			       rx.note.status);
			bad++;
			continue;
		}
		notes++;
		if (rx.note.status == RDS_RDMA_SUCCESS)
			ok++;
		else
			failed++;
		if (crashed)
			last_ms = rds_ms_since(&tc);
	}
	for (i = 1; i <= posted; i++)
		if (self->st[i])
			hist[(self->st[i] - 1) & 7]++;
	TH_LOG("%d ops, %d notified (last %ld ms after the crash): success %d, remote_error %d, canceled %d, dropped %d, other_error %d",
	       posted, notes, last_ms, hist[RDS_RDMA_SUCCESS],
	       hist[RDS_RDMA_REMOTE_ERROR], hist[RDS_RDMA_CANCELED],
	       hist[RDS_RDMA_DROPPED], hist[RDS_RDMA_OTHER_ERROR]);
	EXPECT_EQ(0, bad);
	EXPECT_TRUE(crashed);
	EXPECT_EQ(posted, notes) TH_LOG("ops never notified");
	EXPECT_LE(OK_BEFORE, hist[RDS_RDMA_SUCCESS]);
	/* some ops met the crash */
	EXPECT_LE(1, posted - hist[RDS_RDMA_SUCCESS]);

	/* Node 1 is back: a new boot, and node 0 reconnects. */
	ASSERT_EQ(0, system("rds-peer -t 300 1 true"))
		TH_LOG("node 1 did not come back");
	ASSERT_EQ(0, boot_id(id1, sizeof(id1)));
	EXPECT_STRNE(id0, id1) TH_LOG("node 1 did not reboot");
	ASSERT_EQ(0, start_server());
	clock_gettime(CLOCK_MONOTONIC, &t0);
	key = get_key(self, 22, RECONNECT_MS);
	TH_LOG("new key from node 1 after %ld ms", rds_ms_since(&t0));
	ASSERT_NE(0, key) TH_LOG("no key from the rebooted node");
	EXPECT_EQ(RDS_RDMA_SUCCESS,
		  rds_do_rdma(self->fd, &self->peer, NULL, 0, key, self->local,
			      RLEN, false, 9001, SEND_MS));
	EXPECT_TRUE(rds_check(self->local, RLEN, 22));
	rds_fill(self->local, RLEN, 33);
	EXPECT_EQ(RDS_RDMA_SUCCESS,
		  rds_do_rdma(self->fd, &self->peer, NULL, 0, key, self->local,
			      RLEN, true, 9002, SEND_MS));
	memset(self->local + RLEN, 0, RLEN);
	EXPECT_EQ(RDS_RDMA_SUCCESS,
		  rds_do_rdma(self->fd, &self->peer, NULL, 0, key,
			      self->local + RLEN, RLEN, false, 9003, SEND_MS));
	EXPECT_TRUE(rds_check(self->local + RLEN, RLEN, 33));

	/* Messages both ways, each once and in order. */
	EXPECT_EQ(NMSG, echo_msgs(_metadata, self));
	/* No op of the first phase was notified twice, late. */
	drain_notes(self);
	EXPECT_EQ(0, late_notes)
		TH_LOG("notifications after every op was notified");
}

/*
 * Take one echo from @fd within @ms and record it: by[seq] gets its
 * incarnation's bit, last[tag] its order.  Returns the echo's tag (1 or
 * 2), 0 for anything else or nothing, -1 for an echo out of order or
 * repeated.
 */
static int take_echo(struct __test_metadata *_metadata, int fd,
		     uint8_t *by, uint32_t *last, uint32_t sent, int ms)
{
	struct cmsg_q q;
	struct rds_rx rx;
	ssize_t n = rds_recv_rx(fd, &q, sizeof(q), &rx, ms);

	if (n != sizeof(q) || rx.is_note || q.magic != MAGIC ||
	    q.op != OP_ECHO)
		return 0;
	if (q.seed < 1 || q.seed > 2 || q.seq < 1 || q.seq > sent) {
		TH_LOG("echo of %u (sent %u) tagged %u", q.seq, sent, q.seed);
		return -1;
	}
	if (q.seq <= last[q.seed] || (by[q.seq] & q.seed)) {
		TH_LOG("incarnation %u echoed %u after %u", q.seed, q.seq,
		       last[q.seed]);
		return -1;
	}
	last[q.seed] = q.seq;
	by[q.seq] |= q.seed;
	return (int)q.seed;
}

TEST_F_TIMEOUT(crash, messages, 1200)
{
	uint32_t sent = 0, bound, last[3] = { 0 }, echoed1 = 0, i;
	bool open_again = false;
	uint32_t both = 0, second = 0, lost = 0, after = 0;
	char id0[64] = "", id1[64] = "", data[1000];
	struct sockaddr_storage sink;
	struct timespec tc, t0;
	uint8_t *by;
	int bad = 0, r;

	if (!rds_have_peer())
		SKIP(return, "no peer node");
	by = calloc(MAXSEQ + 1, 1);
	ASSERT_NE(NULL, by);
	ASSERT_EQ(0, boot_id(id0, sizeof(id0)));
	ASSERT_EQ(0, start_server_tag(1));
	self->fd = rds_bound_socket(AF_INET, PORT_SELF, NULL);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFD, FD_CLOEXEC));

	/* Node 1's sink port, congested. */
	rds_mkaddr(AF_INET, rds_peer_str(AF_INET), PORT_PEER + 2, &sink);
	memset(data, 'd', sizeof(data));
	for (i = 0; i < 400; i++) {
		ssize_t n = rds_sendto(self->fd, data, sizeof(data),
				       MSG_DONTWAIT, &sink);

		if (n < 0 && errno == ENOBUFS)
			break;
		rds_msleep(n < 0 ? 200 : 20);
	}
	ASSERT_GT(400, i) TH_LOG("node 1's sink port never congested");
	TH_LOG("node 1's sink port congested after %u sends", i);

	/* A live link: echoes 1..ECHO_BEFORE, WINDOW in flight. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (echoed1 < ECHO_BEFORE && rds_ms_since(&t0) < 120000 && !bad) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_MSG };

		if (sent - echoed1 < WINDOW) {
			q.seq = sent + 1;
			if (rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q),
					  0, NULL, 0, SEND_MS) < 0)
				break;
			sent++;
			continue;
		}
		r = take_echo(_metadata, self->fd, by, last, sent, 1000);
		bad += r < 0 || r == 2;
		echoed1 += r == 1;
	}
	ASSERT_EQ(0, bad);
	ASSERT_EQ(ECHO_BEFORE, echoed1);
	ASSERT_EQ(echoed1, last[1]) TH_LOG("a gap on a live link");

	/*
	 * The crash: the stream goes on, WINDOW unechoed at most, until no
	 * echo came for 3 s (node 1 is gone, with messages in flight); then
	 * QUEUED more, which wait on node 0 while node 1 is down.
	 */
	/* Still refused at the crash: what the end checks is its undoing. */
	ASSERT_GT(0, rds_sendto(self->fd, data, sizeof(data), MSG_DONTWAIT,
				&sink));
	ASSERT_EQ(ENOBUFS, errno);
	ASSERT_EQ(0, system("rds-reboot 1 &"));
	clock_gettime(CLOCK_MONOTONIC, &tc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (rds_ms_since(&tc) < 60000 && rds_ms_since(&t0) < 3000 && !bad) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_MSG,
				    .seq = sent + 1 };

		if (sent - last[1] < WINDOW && sent < MAXSEQ / 2 &&
		    rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q), 0,
				  NULL, 0, 0) >= 0) {
			sent++;
			continue;
		}
		r = take_echo(_metadata, self->fd, by, last, sent, 100);
		bad += r < 0 || r == 2;
		if (r == 1) {
			echoed1++;
			clock_gettime(CLOCK_MONOTONIC, &t0);
		}
	}
	i = sent - last[1];
	for (r = 0; r < QUEUED; r++) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_MSG,
				    .seq = sent + 1 };

		if (rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q), 0,
				  NULL, 0, 0) >= 0)
			sent++;
	}
	TH_LOG("crash seen %ld ms after the trigger: %u echoes, %u unechoed; %u sent in all",
	       rds_ms_since(&tc) - 3000, echoed1, i, sent);
	ASSERT_EQ(0, system("rds-peer -t 300 1 true"))
		TH_LOG("node 1 did not come back");
	ASSERT_EQ(0, boot_id(id1, sizeof(id1)));
	EXPECT_STRNE(id0, id1) TH_LOG("node 1 did not reboot");
	/* Echoes of the first incarnation still queued here. */
	while ((r = take_echo(_metadata, self->fd, by, last, sent, 200)) != 0) {
		bad += r < 0 || r == 2;
		echoed1 += r == 1;
	}

	/* The second incarnation: what is sent from now on arrives once. */
	ASSERT_EQ(0, start_server_tag(2));
	bound = sent;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (after < NMSG_AFTER && rds_ms_since(&t0) < RECONNECT_MS + 120000 &&
	       !bad) {
		struct cmsg_q q = { .magic = MAGIC, .op = OP_MSG };
		uint32_t base = last[2] > bound ? last[2] : bound;

		if (sent < bound + NMSG_AFTER && sent - base < WINDOW) {
			q.seq = sent + 1;
			if (rds_send_cmsg(self->fd, &self->peer, &q, sizeof(q),
					  0, NULL, 0, SEND_MS) < 0) {
				rds_msleep(200);
				continue;
			}
			sent++;
			continue;
		}
		r = take_echo(_metadata, self->fd, by, last, sent, 1000);
		bad += r < 0;
		if (r == 2 && last[2] > bound)
			after++;
	}
	/* Until 1 s of quiet: a repeated or disordered echo is an error. */
	while ((r = take_echo(_metadata, self->fd, by, last, sent, 1000)) != 0)
		bad += r < 0;
	for (i = 1; i <= bound; i++) {
		both += by[i] == 3;
		second += by[i] == 2;
		lost += !by[i];
	}
	TH_LOG("sent %u before the new server bound: echoed by the first incarnation %u (%u of them again by the second), by the second only %u, lost %u; %u of %u sent after it echoed",
	       bound, echoed1, both, second, lost, after, NMSG_AFTER);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(NMSG_AFTER, after);
	for (i = bound + 1; i <= sent; i++)
		if (by[i] != 2) {
			TH_LOG("message %u, sent after the bind: echoed %s",
			       i, by[i] ? "by the old incarnation" : "never");
			EXPECT_EQ(2, by[i]);
			break;
		}
	/* The sink port is not congested any more (5 s of grace). */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		open_again = rds_sendto(self->fd, data, sizeof(data),
					MSG_DONTWAIT, &sink) >= 0;
		r = errno;
		if (!open_again)
			rds_msleep(100);
	} while (!open_again && rds_ms_since(&t0) < 5000);
	EXPECT_TRUE(open_again)
		TH_LOG("node 1's sink port still refused: %s", strerror(r));
	free(by);
}

int main(int argc, char **argv)
{
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "serve"))
		return serve(argv[2], atoi(argv[3]), atoi(argv[4]),
			     argc == 6 ? (uint32_t)atoi(argv[5]) : 0);
	rds_test_prepare();
	return test_harness_run(argc, argv);
}
