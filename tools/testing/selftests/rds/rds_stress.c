// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-process stress: NSEND sender processes (one socket each) send
 * RDS_STRESS_MSGS messages (default 100000; 20000 on the debug kernel)
 * in total to NRECV receiver processes (one socket and port each),
 * interleaving destinations, with
 * sizes from a few bytes to 64 KiB.  Every message carries its sender,
 * receiver, per-flow sequence number and length, and content derived from
 * them.  Receivers check every message (header, length, content, sequence:
 * no loss, no duplicate, no reordering per sender->receiver flow, source
 * port stable per sender) and keep a content hash per flow; the parent
 * compares every flow's count and hash with the senders'.
 *
 * Variants: loop4/loop6 (all on node 0, the loopback path) and
 * peer4/peer6 (the receivers run on node 1: "rds_stress serve ..." started
 * through rds-peer, results collected through rds-peer).
 *
 * RDS_STRESS_MAXLEN (HDR..65536, default 65536) caps the length of every
 * message, for receivers that cannot hold a 64 KiB message at once (a
 * small net.rds.ib.max_recv_allocation); the peer's senders get it on
 * their command line.
 */
#include "rds_test.h"

#define NSEND		4
#define NRECV		3
#define MAGIC		0x52445354u	/* "RDST" */
#define HDR		24
#define MAXMSG		65536
#define PEER_DIR	"/tmp/rds_stress"
#define SELF		"/tests/rds_stress"
/* a receiver gives up after this long without any message */
#define IDLE_MS		90000

struct mhdr {
	uint32_t magic;
	uint16_t sender, receiver;
	uint32_t seq;		/* per (sender, receiver) */
	uint32_t len;		/* whole message */
	uint32_t k;		/* sender's message index */
	uint32_t run;		/* run id, so stale traffic is recognised */
};

/*
 * 100,000 messages per variant; on the debug kernel (KASAN, lockdep,
 * kmemleak under TCG: about 20x slower) 20,000 unless RDS_STRESS_MSGS says.
 */
static unsigned int nmsgs(void)
{
	const char *dflt = strcmp(rds_env("RDS_KERNEL", ""), "debug") ? "100000"
								      : "20000";
	long n = atol(rds_env("RDS_STRESS_MSGS", dflt));

	return n > 0 ? (unsigned int)n : 100000;
}

static unsigned int per_sender(unsigned int total, int s)
{
	return total / NSEND + (s < (int)(total % NSEND) ? 1 : 0);
}

static int dest_of(int s, uint32_t k)
{
	return (int)((k * 7 + s + k / 5) % NRECV);
}

static uint32_t max_len(void)
{
	static uint32_t m;

	if (!m) {
		long v = atol(rds_env("RDS_STRESS_MAXLEN", "0"));

		m = v >= HDR && v <= MAXMSG ? (uint32_t)v : MAXMSG;
	}
	return m;
}

static uint32_t size_of(int s, uint32_t k)
{
	uint32_t h = rds_mix32(k * 31 + s), len;

	if (k % 997 == 3)
		len = MAXMSG;
	else if (k % 53 == 1)
		len = HDR + 4096 + h % 12000;
	else
		len = HDR + h % 1500;
	return len < max_len() ? len : max_len();
}

static uint32_t seed_of(int s, int r, uint32_t seq)
{
	return rds_mix32((s << 24) ^ (r << 20) ^ seq);
}

/* ---- receiver ------------------------------------------------------- */

struct rstat {
	uint32_t count[NSEND];
	uint64_t hash[NSEND];
	uint32_t errors;
	uint16_t sport[NSEND];
};

/*
 * Receive on fd until expected[] messages per sender arrived or the
 * deadline passed; prints one result line per sender to out.
 */
static void receiver(int fd, int r, uint32_t run, const uint32_t *expected,
		     int deadline_s, FILE *out)
{
	static char buf[MAXMSG + 16];
	struct rstat st;
	uint32_t want = 0, got = 0;
	struct timespec t0, last;
	int s, errlog = 0;

	memset(&st, 0, sizeof(st));
	for (s = 0; s < NSEND; s++) {
		st.hash[s] = RDS_HASH_INIT;
		want += expected[s];
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_MONOTONIC, &last);
	while (got < want && rds_ms_since(&t0) < deadline_s * 1000L &&
	       rds_ms_since(&last) < IDLE_MS) {
		struct sockaddr_storage from;
		struct mhdr h;
		ssize_t n;

		n = rds_recv_wait(fd, buf, sizeof(buf), 0, &from, 1000);
		if (n < 0) {
			if (errno == ETIME || errno == EAGAIN || errno == EINTR)
				continue;
			st.errors++;
			break;
		}
		if (n < HDR) {
			st.errors++;
			continue;
		}
		memcpy(&h, buf, sizeof(h));
		if (h.magic != MAGIC || h.run != run || h.sender >= NSEND ||
		    h.receiver != r || h.len != (uint32_t)n) {
			if (errlog++ < 5)
				fprintf(stderr, "# recv %d: bad header (magic %x run %u/%u s %u r %u len %u/%zd)\n",
					r, h.magic, h.run, run, h.sender, h.receiver, h.len, n);
			st.errors++;
			continue;
		}
		s = h.sender;
		if (h.seq != st.count[s]) {
			if (errlog++ < 5)
				fprintf(stderr, "# recv %d: from %d seq %u, expected %u\n",
					r, s, h.seq, st.count[s]);
			st.errors++;
		}
		if (!st.sport[s])
			st.sport[s] = rds_port_of(&from);
		else if (st.sport[s] != rds_port_of(&from))
			st.errors++;
		if (!rds_check(buf + HDR, n - HDR, seed_of(s, r, h.seq))) {
			if (errlog++ < 5)
				fprintf(stderr, "# recv %d: from %d seq %u: content mismatch\n",
					r, s, h.seq);
			st.errors++;
		}
		st.count[s]++;
		st.hash[s] = rds_hash(st.hash[s], buf, n);
		got++;
		clock_gettime(CLOCK_MONOTONIC, &last);
	}
	/* anything beyond the expected is an error (duplicates) */
	if (got == want && rds_recv_wait(fd, buf, sizeof(buf), 0, NULL, 200) >= 0)
		st.errors++;
	for (s = 0; s < NSEND; s++)
		fprintf(out, "R %d %d %u %016llx %u\n", r, s, st.count[s],
			(unsigned long long)st.hash[s], st.errors);
	fflush(out);
}

static void expected_for(int r, unsigned int total, uint32_t *expected)
{
	int s;
	uint32_t k;

	for (s = 0; s < NSEND; s++) {
		expected[s] = 0;
		for (k = 0; k < per_sender(total, s); k++)
			if (dest_of(s, k) == r)
				expected[s]++;
	}
}

/* ---- sender --------------------------------------------------------- */

/*
 * Closing an RDS socket drops whatever it has not had acknowledged yet, so
 * a sender keeps its socket until the receivers are done: until holdfd
 * reaches EOF, or (holdfd < 0, on the peer) until PEER_DIR/release exists.
 */
static void hold(int holdfd)
{
	char c;

	if (holdfd >= 0) {
		while (read(holdfd, &c, 1) > 0 || errno == EINTR)
			;
		return;
	}
	while (access(PEER_DIR "/release", F_OK) != 0)
		rds_msleep(200);
}

static int sender(int family, const char *laddr, int s, uint32_t run,
		  unsigned int total, const struct sockaddr_storage *dst, FILE *out,
		  int holdfd)
{
	static char buf[MAXMSG];
	uint32_t seq[NRECV] = { 0 };
	uint64_t hash[NRECV];
	struct sockaddr_storage to;
	uint32_t k;
	int fd, r, big = 4 * MAXMSG;

	fd = rds_socket();
	rds_mkaddr(family, laddr, 0, &to);
	if (fd < 0 || bind(fd, (struct sockaddr *)&to, rds_sslen(&to)) < 0) {
		fprintf(stderr, "# sender %d: bind: %s\n", s, strerror(errno));
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	for (r = 0; r < NRECV; r++)
		hash[r] = RDS_HASH_INIT;
	for (k = 0; k < per_sender(total, s); k++) {
		struct mhdr h;
		ssize_t n;

		r = dest_of(s, k);
		h.magic = MAGIC;
		h.sender = s;
		h.receiver = r;
		h.seq = seq[r];
		h.len = size_of(s, k);
		h.k = k;
		h.run = run;
		memcpy(buf, &h, sizeof(h));
		rds_fill(buf + HDR, h.len - HDR, seed_of(s, r, h.seq));
		to = dst[r];
		do {
			n = rds_sendto(fd, buf, h.len, 0, &to);
		} while (n < 0 && errno == EINTR);
		if (n != (ssize_t)h.len) {
			fprintf(stderr, "# sender %d: message %u: %zd %s\n", s, k, n,
				strerror(errno));
			return 1;
		}
		hash[r] = rds_hash(hash[r], buf, h.len);
		seq[r]++;
	}
	for (r = 0; r < NRECV; r++)
		fprintf(out, "S %d %d %u %016llx\n", r, s, seq[r],
			(unsigned long long)hash[r]);
	fclose(out);
	hold(holdfd);
	close(fd);
	return 0;
}

/* ---- serve mode (node 1) --------------------------------------------- */

/* rds_stress serve FAMILY ADDR BASEPORT RUN TOTAL DEADLINE */
static int serve(int argc, char **argv)
{
	int family = atoi(argv[2]) == 6 ? AF_INET6 : AF_INET;
	const char *addr = argv[3];
	int base = atoi(argv[4]);
	uint32_t run = strtoul(argv[5], NULL, 0);
	unsigned int total = strtoul(argv[6], NULL, 0);
	int deadline = atoi(argv[7]);
	FILE *res;
	int fds[NRECV], r;
	pid_t pids[NRECV];

	(void)argc;
	alarm(deadline + 30);
	mkdir(PEER_DIR, 0755);
	unlink(PEER_DIR "/ready");
	unlink(PEER_DIR "/done");
	for (r = 0; r < NRECV; r++) {
		struct sockaddr_storage ss;
		socklen_t len = rds_mkaddr(family, addr, base + r, &ss);

		fds[r] = rds_socket();
		if (!len || fds[r] < 0 ||
		    bind(fds[r], (struct sockaddr *)&ss, len) < 0)
			fds[r] = -1;
		if (fds[r] < 0) {
			fprintf(stderr, "serve: bind %d: %s\n", base + r, strerror(errno));
			return 1;
		}
	}
	res = fopen(PEER_DIR "/res", "w");
	if (!res)
		return 1;
	close(open(PEER_DIR "/ready", O_CREAT | O_WRONLY, 0644));
	for (r = 0; r < NRECV; r++) {
		pids[r] = fork();
		if (pids[r] == 0) {
			uint32_t expected[NSEND];

			expected_for(r, total, expected);
			receiver(fds[r], r, run, expected, deadline, res);
			_exit(0);
		}
	}
	for (r = 0; r < NRECV; r++)
		waitpid(pids[r], NULL, 0);
	fclose(res);
	close(open(PEER_DIR "/done", O_CREAT | O_WRONLY, 0644));
	return 0;
}

/* rds_stress send FAMILY LOCALADDR DSTADDR BASEPORT RUN TOTAL DEADLINE */
static int send_mode(char **argv)
{
	int family = atoi(argv[2]) == 6 ? AF_INET6 : AF_INET;
	const char *laddr = argv[3], *daddr = argv[4];
	int base = atoi(argv[5]);
	uint32_t run = strtoul(argv[6], NULL, 0);
	unsigned int total = strtoul(argv[7], NULL, 0);
	int deadline = atoi(argv[8]);
	struct sockaddr_storage dst[NRECV];
	pid_t pids[NSEND];
	FILE *res;
	int r, s, failed = 0, st;

	alarm(deadline + 30);
	mkdir(PEER_DIR, 0755);
	unlink(PEER_DIR "/sdone");
	unlink(PEER_DIR "/release");
	for (r = 0; r < NRECV; r++)
		rds_mkaddr(family, daddr, base + r, &dst[r]);
	res = fopen(PEER_DIR "/sres", "w");
	if (!res)
		return 1;
	for (s = 0; s < NSEND; s++) {
		pids[s] = fork();
		if (pids[s] == 0)
			_exit(sender(family, laddr, s, run, total, dst, res, -1));
	}
	for (s = 0; s < NSEND; s++)
		if (waitpid(pids[s], &st, 0) != pids[s] || st)
			failed = 1;
	fclose(res);
	close(open(PEER_DIR "/sdone", O_CREAT | O_WRONLY, 0644));
	return failed;
}

/* ---- the test ----------------------------------------------------------- */

FIXTURE(st)
{
	int dummy;
};

FIXTURE_VARIANT(st)
{
	int family;
	bool peer;	/* the other side runs on node 1 */
	bool reverse;	/* node 1 sends, node 0 receives */
};

FIXTURE_VARIANT_ADD(st, loop4)
{
	.family = AF_INET,
};

FIXTURE_VARIANT_ADD(st, loop6)
{
	.family = AF_INET6,
};

FIXTURE_VARIANT_ADD(st, peer4)
{
	.family = AF_INET,
	.peer = true,
};

FIXTURE_VARIANT_ADD(st, peer6)
{
	.family = AF_INET6,
	.peer = true,
};

FIXTURE_VARIANT_ADD(st, peer4_reverse)
{
	.family = AF_INET,
	.peer = true,
	.reverse = true,
};

FIXTURE_VARIANT_ADD(st, peer6_reverse)
{
	.family = AF_INET6,
	.peer = true,
	.reverse = true,
};

FIXTURE_SETUP(st)
{
	if (variant->peer && !rds_have_peer())
		SKIP(return, "no peer node");
}

FIXTURE_TEARDOWN(st)
{
}

/* Read fd to EOF into buf (NUL-terminated). */
static void read_all(int fd, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t m;

	while (n + 1 < len) {
		m = read(fd, buf + n, len - 1 - n);
		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			break;
		n += m;
	}
	buf[n] = 0;
}

#define DEADLINE 1500

/* Run CMD on node 1 until it succeeds (2 s apart, bounded); output in out. */
static int poll_peer(struct __test_metadata *_metadata, const char *cmd,
		     char *out, size_t len)
{
	char full[512];
	int i, rc = -1;

	snprintf(full, sizeof(full), "rds-peer -t 20 1 '%s' 2>&1", cmd);
	for (i = 0; i < DEADLINE; i += 2) {
		rc = rds_run_cmd(full, out, len);
		if (rc == 0)
			break;
		rds_msleep(2000);
	}
	if (rc)
		TH_LOG("%s: %d", full, rc);
	return rc;
}	/* seconds; the harness timeout below is the bound */

TEST_F_TIMEOUT(st, stress, DEADLINE + 60)
{
	static char results[1 << 16], pres[1 << 15], tmp[512];
	struct sockaddr_storage dst[NRECV];
	unsigned int total = nmsgs();
	uint32_t run = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	uint32_t scount[NRECV][NSEND], rcount[NRECV][NSEND];
	unsigned long long shash[NRECV][NSEND], rhash[NRECV][NSEND];
	unsigned int rerr = 0;
	int pipefd[2], readyfd[2], holdfd[2], base, r, s, status, failed = 0;
	bool local_rx;
	pid_t rp[NRECV], sp[NSEND];
	struct timespec t0;
	char *line, *save;

	memset(scount, 0xff, sizeof(scount));
	memset(rcount, 0xff, sizeof(rcount));
	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, pipe(readyfd));
	ASSERT_EQ(0, pipe(holdfd));
	base = 30000 + (int)(run % 20000);
	local_rx = !variant->peer || variant->reverse;
	for (r = 0; r < NRECV; r++)
		rds_mkaddr(variant->family, local_rx ? rds_local_str(variant->family)
						     : rds_peer_str(variant->family),
			   base + r, &dst[r]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	TH_LOG("%u messages, %d senders on %s, %d receivers on %s, ports %d..%d",
	       total, NSEND, variant->reverse ? "the peer" : "this node", NRECV,
	       local_rx ? "this node" : "the peer", base, base + NRECV - 1);

	if (local_rx) {
		for (r = 0; r < NRECV; r++) {
			rp[r] = fork();
			ASSERT_LE(0, rp[r]);
			if (rp[r] == 0) {
				uint32_t expected[NSEND];
				FILE *out = fdopen(pipefd[1], "w");
				int fd = rds_bound_socket(variant->family, base + r, NULL);

				close(holdfd[1]);
				alarm(DEADLINE + 30);
				if (fd < 0) {
					fprintf(stderr, "# bind %d: %s\n", base + r, strerror(errno));
					_exit(1);
				}
				if (write(readyfd[1], "r", 1) != 1)
					_exit(1);
				expected_for(r, total, expected);
				receiver(fd, r, run, expected, DEADLINE, out);
				_exit(0);
			}
		}
		for (r = 0; r < NRECV; r++) {
			char c;

			ASSERT_TRUE(rds_wait(readyfd[0], POLLIN, 30000) & POLLIN);
			ASSERT_EQ(1, read(readyfd[0], &c, 1));
		}
	} else {
		int i, rc = -1;

		snprintf(tmp, sizeof(tmp),
			 "rds-peer -t 30 1 '%s serve %d %s %d %u %u %d >%s.log 2>&1 &' 2>&1",
			 SELF, variant->family == AF_INET6 ? 6 : 4,
			 rds_peer_str(variant->family), base, run, total, DEADLINE,
			 PEER_DIR);
		rc = rds_run_cmd(tmp, results, sizeof(results));
		ASSERT_EQ(0, rc) TH_LOG("%s: %s", tmp, results);
		for (i = 0; i < 60; i++) {
			rc = rds_run_cmd("rds-peer -t 10 1 'test -f " PEER_DIR "/ready' 2>&1",
				     results, sizeof(results));
			if (rc == 0)
				break;
			rds_msleep(500);
		}
		if (rc != 0) {
			rds_run_cmd("rds-peer -t 10 1 'cat " PEER_DIR ".log' 2>&1", results,
				sizeof(results));
			ASSERT_EQ(0, rc) TH_LOG("peer not ready: %s", results);
		}
	}

	if (!variant->reverse) {
		for (s = 0; s < NSEND; s++) {
			sp[s] = fork();
			ASSERT_LE(0, sp[s]);
			if (sp[s] == 0) {
				FILE *out = fdopen(pipefd[1], "w");

				close(holdfd[1]);
				alarm(DEADLINE + 30);
				_exit(sender(variant->family, rds_local_str(variant->family),
					     s, run, total, dst, out, holdfd[0]));
			}
		}
	} else {
		snprintf(tmp, sizeof(tmp),
			 "rds-peer -t 30 1 'RDS_STRESS_MAXLEN=%u %s send %d %s %s %d %u %u %d >%s.slog 2>&1 &' 2>&1",
			 max_len(), SELF, variant->family == AF_INET6 ? 6 : 4,
			 rds_peer_str(variant->family), rds_local_str(variant->family),
			 base, run, total, DEADLINE, PEER_DIR);
		ASSERT_EQ(0, rds_run_cmd(tmp, results, sizeof(results)))
			TH_LOG("%s: %s", tmp, results);
	}
	close(pipefd[1]);
	close(holdfd[0]);
	/* first the receivers finish (the senders hold their sockets) */
	if (local_rx) {
		for (r = 0; r < NRECV; r++) {
			ASSERT_EQ(rp[r], waitpid(rp[r], &status, 0));
			EXPECT_EQ(0, status) TH_LOG("receiver %d failed", r);
		}
		TH_LOG("receivers done after %ld ms", rds_ms_since(&t0));
	} else {
		if (poll_peer(_metadata, "test -f " PEER_DIR "/done && cat " PEER_DIR
			      "/res", pres, sizeof(pres)) != 0) {
			close(holdfd[1]);
			ASSERT_TRUE(false) TH_LOG("peer receivers never finished");
		}
		TH_LOG("receivers done after %ld ms", rds_ms_since(&t0));
	}
	/* then the senders may close */
	close(holdfd[1]);
	if (!variant->reverse) {
		for (s = 0; s < NSEND; s++) {
			ASSERT_EQ(sp[s], waitpid(sp[s], &status, 0));
			EXPECT_EQ(0, status) TH_LOG("sender %d failed", s);
		}
	} else {
		ASSERT_EQ(0, poll_peer(_metadata, "touch " PEER_DIR "/release && sleep 1 "
				       "&& test -f " PEER_DIR "/sdone && cat " PEER_DIR
				       "/sres && cat " PEER_DIR ".slog >&2", pres,
				       sizeof(pres))) TH_LOG("peer senders never finished");
	}
	/* local results (senders' and/or receivers' lines) come through the pipe */
	read_all(pipefd[0], results, sizeof(results));
	strncat(results, pres, sizeof(results) - strlen(results) - 1);
	close(pipefd[0]);
	TH_LOG("all done after %ld ms", rds_ms_since(&t0));

	for (line = strtok_r(results, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int cnt, e;
		unsigned long long h;

		if (sscanf(line, "S %d %d %u %llx", &r, &s, &cnt, &h) == 4 &&
		    r >= 0 && r < NRECV && s >= 0 && s < NSEND) {
			scount[r][s] = cnt;
			shash[r][s] = h;
		} else if (sscanf(line, "R %d %d %u %llx %u", &r, &s, &cnt, &h, &e) == 5 &&
			   r >= 0 && r < NRECV && s >= 0 && s < NSEND) {
			rcount[r][s] = cnt;
			rhash[r][s] = h;
			rerr += e;
		}
	}
	for (r = 0; r < NRECV; r++) {
		for (s = 0; s < NSEND; s++) {
			if (scount[r][s] == 0xffffffffu || rcount[r][s] == 0xffffffffu) {
				TH_LOG("flow %d->%d: no result", s, r);
				failed = 1;
				continue;
			}
			if (scount[r][s] != rcount[r][s] || shash[r][s] != rhash[r][s]) {
				TH_LOG("flow %d->%d: sent %u (%016llx), received %u (%016llx)",
				       s, r, scount[r][s], shash[r][s], rcount[r][s],
				       rhash[r][s]);
				failed = 1;
			}
		}
	}
	EXPECT_EQ(0, rerr) TH_LOG("receivers saw %u bad messages", rerr / NSEND);
	EXPECT_EQ(0, failed);
}

int main(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[1], "serve"))
		return serve(argc, argv);
	if (argc >= 9 && !strcmp(argv[1], "send"))
		return send_mode(argv);
	rds_test_prepare();
	return test_harness_run(argc, argv);
}
