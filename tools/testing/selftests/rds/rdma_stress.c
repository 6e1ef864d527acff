// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_stress.c - concurrent RDMA into use-once keys, both directions.
 *
 * Each node runs NPAIR owner and NPAIR issuer processes (one socket each).
 * Owner j of one node is paired with issuer j of the other node, so every
 * node issues RDMA into keys registered by the other one, NPAIR flows in
 * each direction at the same time.
 *
 * Owner: for op k, picks a slot of its buffer, an offset, an MR length, a
 * kind (WRITE, or every READ_EVERY-th a READ) and a pattern seed.  For a
 * WRITE the slot is poisoned, for a READ filled with the pattern; then it
 * sends the request with RDS_CMSG_RDMA_MAP (RDS_RDMA_USE_ONCE, READWRITE
 * only for WRITEs), up to WINDOW requests outstanding.  When the
 * completing message for k arrives (the issuer's message carrying the
 * RDMA), the owner checks at once that the data is in place: for a WRITE
 * the written range holds the pattern and every other byte of the MR and
 * of the guards around it is still poison; for a READ nothing changed.
 *
 * Issuer: for every request (the cookie comes in RDS_CMSG_RDMA_DEST) it
 * does the RDMA with RDS_CMSG_RDMA_ARGS and RDS_RDMA_NOTIFY_ME, from or into
 * one to three local iovecs, over the whole MR or (every PARTIAL_EVERY-th)
 * a part of it, and counts the notification status of every op; a READ's
 * local data is checked when its RDS_RDMA_SUCCESS arrives.
 *
 * RDMA_STRESS_OPS operations in all (default 10000, 2000 on the debug
 * kernel: half per direction, shared by the pairs) for the ipv4 variant on
 * the rxe link; the ipv6 and siw variants run a fifth of that unless
 * RDMA_STRESS_OPS_V6 / RDMA_STRESS_OPS_SIW say otherwise.  siw runs only
 * where RDS_SIW_LOCAL_ADDR/RDS_SIW_PEER_ADDR exist (the debug kernel).
 *
 * RDMA_STRESS_READ_EVERY (default 4): every n-th op is a READ, 0 for none;
 * RDMA_STRESS_READ_EVERY_SIW (default 4) the same for the siw variant;
 * RDMA_STRESS_SIW=0 skips that variant.
 *
 * RDMA_STRESS_DROPS_OK (default 0): 1 accepts ops that end RDS_RDMA_DROPPED
 * or RDS_RDMA_CANCELED, as the RDMA op watchdog reports them after an rxe
 * stall (rds.rst, "RDMA op watchdog"; ib_lossy.sh's jittered mixes).  Every
 * op must still be notified exactly once, with no other failure status, no
 * wrong data and no error; each issuer tells its owner about every such op
 * (a plain message), so the owner neither waits for a completing message
 * that will not come nor counts the next one as out of order; the owner
 * checks that the guards and the rest of the MR of such an op were not
 * touched, every op an issuer saw succeed must have been checked by its
 * owner, and the successes plus the dropped/canceled ops must make up the
 * total.  Owners and issuers then wait IDLE_DROPS_MS (above the watchdog's
 * 60 s) before giving up, and each side keeps its sockets open after
 * DIR/done until DIR/release (or LINGER_S) so that its last notices go out.
 *
 *   rdma_stress side FAMILY LADDR PADDR BASE RUN OPS DEADLINE DIR READ_EVERY [DROPS_OK]
 *       one node's half (node 1's is started through rds-peer): writes
 *       DIR/ready once bound, waits for DIR/go, writes DIR/res and DIR/done
 *       (with DROPS_OK 1 then holds its sockets until DIR/release).
 *   rdma_stress [harness options]      node 0: the test.
 */
#include "rds_test.h"

#define NPAIR		4
#define WINDOW		4		/* outstanding requests per owner */
#define ISLOTS		(2 * WINDOW)	/* issuer buffers */
#define SLOT		(160 * 1024)	/* owner slot: MR + offset + guards */
#define GUARD		64
#define MAXLEN		(128 * 1024)
#define READ_EVERY	4		/* default; RDMA_STRESS_READ_EVERY */
#define PARTIAL_EVERY	7
#define POISON		0xa5
#define MAGIC_REQ	0x52524551u	/* "RREQ" */
#define MAGIC_DONE	0x52444f4eu	/* "RDON" */
#define MAGIC_DROP	0x52445250u	/* "RDRP": op k ended without success */
#define IDLE_MS		60000
#define IDLE_DROPS_MS	90000	/* DROPS_OK: above rds_ib_rdma_timeout_ms */
#define LINGER_S	120	/* DROPS_OK: sockets held after DIR/done */
#define DEADLINE	1200
#define SELF		"/tests/rdma_stress"
#define PEER_DIR	"/tmp/rdma_stress.peer"
#define LOCAL_DIR	"/tmp/rdma_stress.local"
/* On failure: the rxe counters that are not zero, and the RDS debugfs. */
#define DIAG_CMD	"cd /sys/class/infiniband && for f in */ports/1/hw_counters/*; do v=$(cat $f); [ \"$v\" = 0 ] || echo $f $v; done; cat /sys/kernel/debug/rds/connections /sys/kernel/debug/rds/drop_reasons 2>&1 | head -c 3000"

enum { OP_WRITE = 1, OP_READ = 2 };

/* Every read_every-th op is a READ (0: none); the same on both nodes. */
static unsigned int read_every = READ_EVERY;

/* RDMA_STRESS_DROPS_OK: DROPPED/CANCELED ops are counted, not failed. */
static bool drops_ok;

static long idle_ms(void)
{
	return drops_ok ? IDLE_DROPS_MS : IDLE_MS;
}

struct sreq {
	uint32_t magic, run, k, op;
	uint32_t mrlen;		/* bytes registered */
	uint32_t roff;		/* RDMA starts this far into the MR */
	uint32_t len;		/* RDMA bytes */
	uint32_t seed;
};

struct sdone {
	uint32_t magic, run, k, op;
};

/* The op the owner of pair @j makes for k: deterministic on both sides. */
static void plan(uint32_t run, int j, uint32_t k, struct sreq *q,
		 uint32_t *off)
{
	uint32_t h = rds_mix32(run ^ (j << 24) ^ k), h2 = rds_mix32(h), r = h % 100;

	q->magic = MAGIC_REQ;
	q->run = run;
	q->k = k;
	q->op = read_every && k % read_every == read_every - 1 ? OP_READ :
								  OP_WRITE;
	if (r < 80)
		q->mrlen = 1 + h2 % 8200;		/* 8K pool */
	else if (r < 98)
		q->mrlen = 8200 + h2 % 24000;
	else
		q->mrlen = 32768 + h2 % (MAXLEN - 32768);	/* 1M pool */
	q->roff = 0;
	q->len = q->mrlen;
	if (k % PARTIAL_EVERY == 3 && q->mrlen > 16) {
		q->roff = h2 % (q->mrlen / 2);
		q->len = 1 + rds_mix32(h2) % (q->mrlen - q->roff);
	}
	q->seed = rds_mix32(h2 ^ 0x5eed);
	*off = GUARD + h % 4096;
}

/* ---- the side of one node: NPAIR owners and NPAIR issuers -------------- */

struct ctx {
	int family;
	const char *laddr, *paddr;
	int base;
	uint32_t run;
	unsigned int ops;	/* per pair */
	int deadline;
};

static int bind_sock(int family, const char *addr, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(family, addr, port, &ss);
	int fd, big = 1 << 20;

	if (!len)
		return -1;
	fd = rds_socket();
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&ss, len) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &big, sizeof(big));
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big));
	return fd;
}

/*
 * sendmsg with one SOL_RDS cmsg (none if @d is NULL); waits (bounded)
 * through a full buffer.
 */
static ssize_t send_cmsg(int fd, const struct sockaddr_storage *to,
			 const void *buf, size_t len, int type, const void *d,
			 size_t dlen)
{
	union {
		char b[CMSG_SPACE(sizeof(struct rds_rdma_args)) +
		       CMSG_SPACE(sizeof(struct rds_get_mr_args))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { (void *)buf, len };
	struct msghdr m = { .msg_name = (void *)to, .msg_namelen = rds_sslen(to),
			    .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t r;
	int i;

	memset(&u, 0, sizeof(u));
	if (d) {
		m.msg_control = u.b;
		m.msg_controllen = CMSG_SPACE(dlen);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = type;
		c->cmsg_len = CMSG_LEN(dlen);
		memcpy(CMSG_DATA(c), d, dlen);
	}
	for (i = 0; i < 3000; i++) {
		r = sendmsg(fd, &m, MSG_DONTWAIT);
		if (r >= 0 || (errno != EAGAIN && errno != ENOBUFS &&
			       errno != EINTR))
			return r;
		rds_wait(fd, POLLOUT, 20);
	}
	return -1;
}

/*
 * One recvmsg (nonblocking after a poll of at most ms).  Returns the byte
 * count, 0 for a notification (*note filled), -1 on nothing/error.
 */
static ssize_t recv_one(int fd, void *buf, size_t len, uint64_t *cookie,
			struct rds_rdma_notify *note, bool *is_note, int ms)
{
	union {
		char b[512];
		struct cmsghdr align;
	} u;
	struct iovec iov = { buf, len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *c;
	ssize_t r;

	*cookie = 0;
	*is_note = false;
	if (!(rds_wait(fd, POLLIN, ms) & POLLIN))
		return -1;
	r = recvmsg(fd, &m, MSG_DONTWAIT);
	if (r < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*cookie)))
			memcpy(cookie, CMSG_DATA(c), sizeof(*cookie));
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(*note))) {
			memcpy(note, CMSG_DATA(c), sizeof(*note));
			*is_note = true;
		}
	}
	return r;
}

static bool all_byte(const uint8_t *p, size_t len, uint8_t v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

/*
 * DROPS_OK: op k of pair j ended without its completing message.  Its RDMA
 * may have happened, wholly, in part or not at all, but never beyond the
 * range it named: a READ's slot is as it was, a WRITE's outside its range.
 */
static bool skipped_ok(const struct ctx *x, int j, uint32_t k,
		       const uint8_t *slot)
{
	struct sreq q;
	uint32_t off;

	plan(x->run, j, k, &q, &off);
	if (q.op == OP_READ)
		return all_byte(slot, off, POISON) &&
		       rds_check(slot + off, q.mrlen, q.seed) &&
		       all_byte(slot + off + q.mrlen, SLOT - off - q.mrlen,
				POISON);
	return all_byte(slot, off + q.roff, POISON) &&
	       all_byte(slot + off + q.roff + q.len,
			SLOT - off - q.roff - q.len, POISON);
}

/*
 * Owner of pair j: register, hand out, check when the completion comes.
 * Writes "O j sent completed wrong errors skipped": completed counts the
 * ops whose completing message came and was checked, skipped (DROPS_OK
 * only) those that ended without one.
 */
static void owner(const struct ctx *x, int fd, int j, FILE *out)
{
	static uint8_t buf[WINDOW * SLOT];
	struct sockaddr_storage to;
	unsigned int sent = 0, done = 0, bad = 0, errors = 0, logged = 0;
	unsigned int landed = 0, skipped = 0, upto = 0;
	struct timespec last;

	rds_mkaddr(x->family, x->paddr, x->base + 10 + j, &to);
	memset(buf, POISON, sizeof(buf));
	clock_gettime(CLOCK_MONOTONIC, &last);
	while (done < x->ops && rds_ms_since(&last) < idle_ms()) {
		struct rds_rdma_notify note;
		struct sdone d;
		uint64_t cookie;
		bool is_note;
		ssize_t n;

		while (sent < x->ops && sent - done < WINDOW) {
			uint8_t *slot = buf + (sent % WINDOW) * SLOT;
			struct rds_get_mr_args mr;
			struct sreq q;
			uint32_t off;

			plan(x->run, j, sent, &q, &off);
			memset(slot, POISON, SLOT);
			if (q.op == OP_READ)
				rds_fill(slot + off, q.mrlen, q.seed);
			mr = (struct rds_get_mr_args){
				.vec = { (uintptr_t)(slot + off), q.mrlen },
				.flags = RDS_RDMA_USE_ONCE |
					 (q.op == OP_WRITE ? RDS_RDMA_READWRITE : 0),
			};
			if (send_cmsg(fd, &to, &q, sizeof(q), RDS_CMSG_RDMA_MAP,
				      &mr, sizeof(mr)) != sizeof(q)) {
				fprintf(stderr, "# owner %d: op %u: MAP send: %s\n",
					j, sent, strerror(errno));
				errors++;
				goto out;
			}
			sent++;
		}
		n = recv_one(fd, &d, sizeof(d), &cookie, &note, &is_note, 1000);
		if (n < 0)
			continue;
		/*
		 * DROPS_OK: messages come in order, so a completing message
		 * for a later op, or the issuer's notice that op k ended
		 * without success (sent after k's own message, if any), means
		 * that the ops before (up to k) not completed yet never will.
		 */
		upto = done;
		if (drops_ok && n == sizeof(d) && d.run == x->run &&
		    d.k >= done && d.k < sent) {
			if (d.magic == MAGIC_DONE)
				upto = d.k;
			else if (d.magic == MAGIC_DROP)
				upto = d.k + 1;
		}
		for (; done < upto; done++) {
			if (!skipped_ok(x, j, done,
					buf + (done % WINDOW) * SLOT)) {
				bad++;
				if (logged++ < 5)
					fprintf(stderr, "# owner %d: op %u ended without completion, and bytes outside its range changed\n",
						j, done);
			}
			skipped++;
			clock_gettime(CLOCK_MONOTONIC, &last);
		}
		if (drops_ok && n == sizeof(d) && d.magic == MAGIC_DROP &&
		    d.run == x->run) {
			/* Below done: its message came, or a later one did. */
			if (d.k >= sent) {
				if (logged++ < 5)
					fprintf(stderr, "# owner %d: drop notice for op %u, not sent yet\n",
						j, d.k);
				errors++;
			}
			continue;
		}
		if (n != sizeof(d) || d.magic != MAGIC_DONE || d.run != x->run ||
		    d.k != done) {
			if (logged++ < 5)
				fprintf(stderr, "# owner %d: unexpected message (%zd bytes, k %u, want %u)\n",
					j, n, n >= 12 ? d.k : 0, done);
			errors++;
			continue;
		}
		{
			/* The data must be in place now that the message is. */
			uint8_t *slot = buf + (done % WINDOW) * SLOT;
			struct sreq q;
			uint32_t off;
			bool ok;

			plan(x->run, j, done, &q, &off);
			if (q.op == OP_READ) {
				ok = all_byte(slot, off, POISON) &&
				     rds_check(slot + off, q.mrlen, q.seed) &&
				     all_byte(slot + off + q.mrlen,
					      SLOT - off - q.mrlen, POISON);
			} else {
				ok = all_byte(slot, off + q.roff, POISON) &&
				     rds_check(slot + off + q.roff, q.len, q.seed) &&
				     all_byte(slot + off + q.roff + q.len,
					      SLOT - off - q.roff - q.len, POISON);
			}
			if (!ok) {
				bad++;
				if (logged++ < 5)
					fprintf(stderr, "# owner %d: op %u (%s, mr %u, at %u len %u): content wrong when the completion arrived\n",
						j, done, q.op == OP_READ ? "READ" : "WRITE",
						q.mrlen, q.roff, q.len);
			}
		}
		done++;
		landed++;
		clock_gettime(CLOCK_MONOTONIC, &last);
	}
out:
	fprintf(out, "O %d %u %u %u %u %u\n", j, sent, landed, bad, errors,
		skipped);
	fflush(out);
}

struct pending {
	struct sreq q;
	uint64_t cookie;
};

/* Post the RDMA of request @p from/into local buffer @lb. */
static int issue(const struct ctx *x, int fd, const struct sockaddr_storage *to,
		 const struct pending *p, uint8_t *lb)
{
	struct sdone d = { MAGIC_DONE, x->run, p->q.k, p->q.op };
	uint32_t loff = rds_mix32(p->q.seed) % 4096, left = p->q.len;
	struct rds_iovec v[3];
	struct rds_rdma_args a;
	int i, nv = 1 + p->q.k % 3;

	if (p->q.op == OP_WRITE)
		rds_fill(lb + loff, p->q.len, p->q.seed);
	else
		memset(lb + loff, 0, p->q.len);
	/* The local side in up to three pieces. */
	for (i = 0; i < nv; i++) {
		uint32_t piece = i == nv - 1 ? left : (left + 1) / 2;

		v[i].addr = (uintptr_t)(lb + loff + p->q.len - left);
		v[i].bytes = piece;
		left -= piece;
		if (!left) {
			nv = i + 1;
			break;
		}
	}
	a = (struct rds_rdma_args){
		.cookie = p->cookie,
		.remote_vec = { .addr = p->q.roff, .bytes = p->q.len },
		.local_vec_addr = (uintptr_t)v,
		.nr_local = nv,
		.flags = RDS_RDMA_NOTIFY_ME |
			 (p->q.op == OP_WRITE ? RDS_RDMA_READWRITE : 0),
		.user_token = ((uint64_t)x->run << 32) | p->q.k,
	};
	return send_cmsg(fd, to, &d, sizeof(d), RDS_CMSG_RDMA_ARGS, &a,
			 sizeof(a)) == sizeof(d) ? 0 : -1;
}

/*
 * A READ brought the owner's pattern (laid over the whole MR) from roff on
 * into the local buffer at its offset.
 */
static bool read_ok(const struct sreq *q, const uint8_t *lb)
{
	static uint8_t want[MAXLEN];

	rds_fill(want, q->roff + q->len, q->seed);
	return !memcmp(lb + rds_mix32(q->seed) % 4096, want + q->roff, q->len);
}

/* Issuer of pair j: do the RDMA each request asks for, count statuses. */
static void issuer(const struct ctx *x, int fd, int j, FILE *out)
{
	static uint8_t lbuf[ISLOTS][MAXLEN + 8192];
	static struct pending pend[WINDOW * 4];
	static struct sreq inflight[ISLOTS];
	static bool busy[ISLOTS];
	unsigned int st[8] = { 0 };
	unsigned int got = 0, issued = 0, notified = 0, readbad = 0, errors = 0;
	unsigned int npend = 0, logged = 0;
	struct sockaddr_storage to;
	struct timespec last;

	rds_mkaddr(x->family, x->paddr, x->base + j, &to);
	clock_gettime(CLOCK_MONOTONIC, &last);
	while (notified < x->ops && rds_ms_since(&last) < idle_ms()) {
		struct rds_rdma_notify note;
		struct sreq q;
		uint64_t cookie;
		bool is_note;
		ssize_t n;

		/* Issue what is pending, in order, while buffers are free. */
		while (npend && !busy[pend[0].q.k % ISLOTS]) {
			int s = pend[0].q.k % ISLOTS;

			if (issue(x, fd, &to, &pend[0], lbuf[s])) {
				if (logged++ < 5)
					fprintf(stderr, "# issuer %d: op %u: RDMA send: %s\n",
						j, pend[0].q.k, strerror(errno));
				errors++;
				goto out;
			}
			busy[s] = true;
			inflight[s] = pend[0].q;
			issued++;
			memmove(&pend[0], &pend[1], --npend * sizeof(pend[0]));
		}
		n = recv_one(fd, &q, sizeof(q), &cookie, &note, &is_note, 1000);
		if (n < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &last);
		if (is_note) {
			uint32_t k = (uint32_t)note.user_token;
			int s = k % ISLOTS;

			if ((note.user_token >> 32) != x->run || !busy[s] ||
			    inflight[s].k != k) {
				if (logged++ < 5)
					fprintf(stderr, "# issuer %d: notification for unknown op %llx\n",
						j, (unsigned long long)note.user_token);
				errors++;
				continue;
			}
			st[note.status >= 0 && note.status < 7 ? note.status : 7]++;
			if (note.status == RDS_RDMA_SUCCESS &&
			    inflight[s].op == OP_READ &&
			    !read_ok(&inflight[s], lbuf[s])) {
				readbad++;
				if (logged++ < 5)
					fprintf(stderr, "# issuer %d: READ %u: wrong data\n",
						j, k);
			}
			if (note.status != RDS_RDMA_SUCCESS && logged++ < 5)
				fprintf(stderr, "# issuer %d: op %u: status %d\n",
					j, k, note.status);
			if (drops_ok && (note.status == RDS_RDMA_DROPPED ||
					 note.status == RDS_RDMA_CANCELED)) {
				/* Its owner must not wait for its message. */
				struct sdone dn = { MAGIC_DROP, x->run, k,
						    inflight[s].op };

				if (send_cmsg(fd, &to, &dn, sizeof(dn), 0, NULL,
					      0) != sizeof(dn)) {
					if (logged++ < 5)
						fprintf(stderr, "# issuer %d: op %u: drop notice: %s\n",
							j, k, strerror(errno));
					errors++;
				}
			}
			busy[s] = false;
			notified++;
			continue;
		}
		if (n != sizeof(q) || q.magic != MAGIC_REQ || q.run != x->run ||
		    q.k != got || !cookie || q.len > MAXLEN ||
		    npend == sizeof(pend) / sizeof(pend[0])) {
			if (logged++ < 5)
				fprintf(stderr, "# issuer %d: bad request (%zd bytes, k %u want %u, cookie %llx)\n",
					j, n, q.k, got, (unsigned long long)cookie);
			errors++;
			continue;
		}
		pend[npend].q = q;
		pend[npend].cookie = cookie;
		npend++;
		got++;
	}
out:
	fprintf(out, "I %d %u %u %u %u %u %u %u %u %u %u %u\n", j, got, issued,
		notified, st[RDS_RDMA_SUCCESS], st[RDS_RDMA_REMOTE_ERROR],
		st[RDS_RDMA_CANCELED], st[RDS_RDMA_DROPPED],
		st[RDS_RDMA_OTHER_ERROR], st[7], readbad, errors);
	fflush(out);
}

static void touch(const char *dir, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	close(open(p, O_CREAT | O_WRONLY, 0644));
}

static bool exists(const char *dir, const char *name)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/*
 * rdma_stress side FAMILY LADDR PADDR BASE RUN OPS DEADLINE DIR READ_EVERY
 * [DROPS_OK]
 */
static int side(char **argv)
{
	struct ctx x = {
		.family = atoi(argv[2]) == 6 ? AF_INET6 : AF_INET,
		.laddr = argv[3], .paddr = argv[4], .base = atoi(argv[5]),
		.run = strtoul(argv[6], NULL, 0),
		.ops = strtoul(argv[7], NULL, 0), .deadline = atoi(argv[8]),
	};
	const char *dir = argv[9];
	int ofd[NPAIR], ifd[NPAIR], j, failed = 0, st, w;
	pid_t pids[2 * NPAIR];
	char p[256];
	FILE *res;

	alarm(x.deadline + 30);
	mkdir(dir, 0755);
	snprintf(p, sizeof(p), "%s/res", dir);
	res = fopen(p, "w");
	if (!res)
		return 1;
	for (j = 0; j < NPAIR; j++) {
		ofd[j] = bind_sock(x.family, x.laddr, x.base + j);
		ifd[j] = bind_sock(x.family, x.laddr, x.base + 10 + j);
		if (ofd[j] < 0 || ifd[j] < 0) {
			fprintf(stderr, "side: bind %s port %d/%d: %s\n", x.laddr,
				x.base + j, x.base + 10 + j, strerror(errno));
			return 1;
		}
	}
	touch(dir, "ready");
	/* The issuers are bound: wait until the other node's are too. */
	for (w = 0; !exists(dir, "go"); w++) {
		if (w > 10 * 300)
			return 1;
		rds_msleep(100);
	}
	for (j = 0; j < 2 * NPAIR; j++) {
		pids[j] = fork();
		if (pids[j] < 0)
			return 1;
		if (pids[j] == 0) {
			if (j < NPAIR)
				owner(&x, ofd[j], j, res);
			else
				issuer(&x, ifd[j - NPAIR], j - NPAIR, res);
			/* Keep the socket until the other side is through. */
			_exit(0);
		}
	}
	for (j = 0; j < 2 * NPAIR; j++)
		if (waitpid(pids[j], &st, 0) != pids[j] || st)
			failed = 1;
	fclose(res);
	touch(dir, "done");
	if (drops_ok && fork() == 0) {
		/*
		 * Our issuers' last drop notices may still wait for the
		 * connection to come back: closing the sockets would drop them
		 * and leave the other node's owners waiting.  Hold them (not
		 * the output) until the test has both results.
		 */
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
		}
		for (w = 0; w < 10 * LINGER_S && exists(dir, "done") &&
		     !exists(dir, "release"); w++)
			rds_msleep(100);
		_exit(0);
	}
	return failed;
}

/* ---- the test (node 0) ------------------------------------------------- */

/* Run @cmd on node 1 until it succeeds, 1 s apart, at most @secs. */
static int peer_until(const char *cmd, char *out, size_t len, int secs)
{
	char full[512];
	int i, rc = -1;

	snprintf(full, sizeof(full), "rds-peer -t 20 1 '%s' 2>&1", cmd);
	for (i = 0; i < secs; i++) {
		rc = rds_run_cmd(full, out, len);
		if (rc == 0)
			break;
		rds_msleep(1000);
	}
	return rc;
}

static unsigned int env_ops(const char *name, unsigned int dflt)
{
	long n = atol(rds_env(name, "0"));

	return n > 0 ? (unsigned int)n : dflt;
}

FIXTURE(st)
{
	int dummy;
};

FIXTURE_VARIANT(st)
{
	int family;
	bool siw;
	const char *ops_env;
	unsigned int divisor;	/* of RDMA_STRESS_OPS when ops_env is unset */
};

FIXTURE_VARIANT_ADD(st, ipv4)
{
	.family = AF_INET,
	.ops_env = "RDMA_STRESS_OPS",
	.divisor = 1,
};

FIXTURE_VARIANT_ADD(st, ipv6)
{
	.family = AF_INET6,
	.ops_env = "RDMA_STRESS_OPS_V6",
	.divisor = 5,
};

FIXTURE_VARIANT_ADD(st, siw)
{
	.family = AF_INET,
	.siw = true,
	.ops_env = "RDMA_STRESS_OPS_SIW",
	.divisor = 5,
};

FIXTURE_SETUP(st)
{
	if (!rds_have_peer())
		SKIP(return, "no peer node");
	if (variant->siw && (!getenv("RDS_SIW_LOCAL_ADDR") ||
			     !getenv("RDS_SIW_PEER_ADDR")))
		SKIP(return, "no siw link (debug kernel only)");
	if (variant->siw && !strcmp(rds_env("RDMA_STRESS_SIW", "1"), "0"))
		SKIP(return, "RDMA_STRESS_SIW=0");
}

FIXTURE_TEARDOWN(st)
{
}

TEST_F_TIMEOUT(st, rdma, DEADLINE + 120)
{
	static char lres[8192], pres[8192], tmp[512], out[8192];
	/* The debug kernel (KASAN, lockdep, kmemleak; TCG): a fifth. */
	unsigned int dflt = strcmp(rds_env("RDS_KERNEL", ""), "debug") ? 10000
								       : 2000;
	unsigned int total = env_ops(variant->ops_env,
				     env_ops("RDMA_STRESS_OPS", dflt) /
				     variant->divisor);
	unsigned int per = (total + 2 * NPAIR - 1) / (2 * NPAIR);
	uint32_t run = (uint32_t)getpid() ^ (uint32_t)time(NULL);
	const char *laddr, *paddr;
	unsigned int o_done[2][NPAIR], i_note[2][NPAIR];
	unsigned int o_res[2][NPAIR][6], i_ok[2][NPAIR];
	unsigned int sum_ok = 0, sum_ops = 0, sum_drop = 0;
	int fam = variant->family == AF_INET6 ? 6 : 4;
	int base = 20000 + (int)(run % 20000);
	/* siw is where READs matter most (one SGE each, no fence help). */
	unsigned int every = variant->siw ?
		strtoul(rds_env("RDMA_STRESS_READ_EVERY_SIW", "4"), NULL, 0) :
		read_every;
	struct timespec t0;
	char *line, *save;
	int status, node, j, rc, failed = 0;
	pid_t pid;

	if (variant->siw) {
		laddr = getenv("RDS_SIW_LOCAL_ADDR");
		paddr = getenv("RDS_SIW_PEER_ADDR");
	} else {
		laddr = rds_local_str(variant->family);
		paddr = rds_peer_str(variant->family);
	}
	memset(o_done, 0xff, sizeof(o_done));
	memset(i_note, 0xff, sizeof(i_note));
	memset(o_res, 0, sizeof(o_res));
	memset(i_ok, 0, sizeof(i_ok));
	clock_gettime(CLOCK_MONOTONIC, &t0);

	TH_LOG("%u ops (%u per pair and direction, every %u-th a READ), %s <-> %s, ports %d..%d",
	       per * 2 * NPAIR, per, every, laddr, paddr, base,
	       base + 10 + NPAIR - 1);

	ASSERT_EQ(0, system("rm -rf " LOCAL_DIR));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char b[16], r[16], o[16], d[16], f[4], re[16];
		char *av[] = { SELF, "side", f, (char *)laddr, (char *)paddr,
			       b, r, o, d, LOCAL_DIR, re,
			       drops_ok ? "1" : "0", NULL };

		snprintf(re, sizeof(re), "%u", every);
		snprintf(f, sizeof(f), "%d", fam);
		snprintf(b, sizeof(b), "%d", base);
		snprintf(r, sizeof(r), "%u", run);
		snprintf(o, sizeof(o), "%u", per);
		snprintf(d, sizeof(d), "%d", DEADLINE);
		execv("/proc/self/exe", av);
		_exit(127);
	}
	for (j = 0; j < 300 && !exists(LOCAL_DIR, "ready"); j++)
		rds_msleep(100);
	ASSERT_TRUE(exists(LOCAL_DIR, "ready")) TH_LOG("local side not ready");

	snprintf(tmp, sizeof(tmp),
		 "rds-peer -t 30 1 'rm -rf %s; %s side %d %s %s %d %u %u %d %s %u %d >%s.log 2>&1 &' 2>&1",
		 PEER_DIR, SELF, fam, paddr, laddr, base, run, per, DEADLINE,
		 PEER_DIR, every, drops_ok, PEER_DIR);
	rc = rds_run_cmd(tmp, out, sizeof(out));
	ASSERT_EQ(0, rc) TH_LOG("%s: %s", tmp, out);
	rc = peer_until("test -f " PEER_DIR "/ready", out, sizeof(out), 60);
	if (rc) {
		rds_run_cmd("rds-peer -t 10 1 'cat " PEER_DIR ".log' 2>&1", out,
			sizeof(out));
		kill(pid, SIGKILL);
		ASSERT_EQ(0, rc) TH_LOG("peer side not ready: %s", out);
	}
	/* Both nodes' sockets are bound: go. */
	ASSERT_EQ(0, rds_run_cmd("rds-peer -t 20 1 'touch " PEER_DIR "/go' 2>&1",
			     out, sizeof(out)));
	touch(LOCAL_DIR, "go");

	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, status) TH_LOG("local side failed");
	TH_LOG("local side done after %ld ms", rds_ms_since(&t0));
	rc = peer_until("test -f " PEER_DIR "/done && cat " PEER_DIR "/res",
			pres, sizeof(pres), DEADLINE);
	if (rc)
		TH_LOG("peer side never finished: %s", pres);
	rds_run_cmd("rds-peer -t 20 1 'cat " PEER_DIR ".log' 2>&1", out, sizeof(out));
	if (out[0])
		TH_LOG("peer log: %s", out);
	snprintf(tmp, sizeof(tmp), "cat %s/res", LOCAL_DIR);
	rds_run_cmd(tmp, lres, sizeof(lres));
	TH_LOG("all done after %ld ms", rds_ms_since(&t0));
	if (drops_ok) {
		/* Both results are in: the sides may close their sockets. */
		touch(LOCAL_DIR, "release");
		rds_run_cmd("rds-peer -t 20 1 'touch " PEER_DIR "/release' 2>&1",
			out, sizeof(out));
	}

	/*
	 * Node n's owner j pairs with node (1-n)'s issuer j: node 0's issuers
	 * wrote into node 1's keys and the other way round.
	 */
	for (node = 0; node < 2; node++) {
		for (line = strtok_r(node ? pres : lres, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			unsigned int a[12] = { 0 };

			if (sscanf(line, "O %u %u %u %u %u %u", &a[0], &a[1],
				   &a[2], &a[3], &a[4], &a[5]) >= 5 &&
			    a[0] < NPAIR) {
				o_done[node][a[0]] = a[2];
				/* DROPS_OK: checked below, against the issuer. */
				memcpy(o_res[node][a[0]], a, sizeof(o_res[0][0]));
				if (!drops_ok &&
				    (a[1] != per || a[2] != per || a[3] || a[4])) {
					TH_LOG("node %d owner %u: sent %u, completed %u of %u, %u with wrong content, %u errors",
					       node, a[0], a[1], a[2], per, a[3], a[4]);
					failed = 1;
				}
			} else if (sscanf(line, "I %u %u %u %u %u %u %u %u %u %u %u %u",
					  &a[0], &a[1], &a[2], &a[3], &a[4], &a[5],
					  &a[6], &a[7], &a[8], &a[9], &a[10],
					  &a[11]) == 12 && a[0] < NPAIR) {
				bool bad;

				i_note[node][a[0]] = a[3];
				i_ok[node][a[0]] = a[4];
				sum_ops += a[3];
				sum_ok += a[4];
				if (drops_ok) {
					/*
					 * Every op notified once; short of
					 * success only by DROPPED/CANCELED.
					 */
					sum_drop += a[6] + a[7];
					bad = a[1] != per || a[2] != per ||
					      a[3] != per ||
					      a[4] + a[6] + a[7] != per ||
					      a[5] || a[8] || a[9] || a[10] ||
					      a[11];
				} else {
					bad = a[1] != per || a[2] != per ||
					      a[3] != per || a[4] != per ||
					      a[10] || a[11];
				}
				if (bad) {
					TH_LOG("node %d issuer %u: %u requests, %u issued, %u notified: %u success, %u remote error, %u canceled, %u dropped, %u other, %u bad status; %u READs with wrong data, %u errors",
					       node, a[0], a[1], a[2], a[3], a[4],
					       a[5], a[6], a[7], a[8], a[9], a[10],
					       a[11]);
					failed = 1;
				}
			}
		}
	}
	for (node = 0; node < 2; node++)
		for (j = 0; j < NPAIR; j++)
			if (o_done[node][j] == 0xffffffffu ||
			    i_note[node][j] == 0xffffffffu) {
				TH_LOG("node %d pair %d: no result", node, j);
				failed = 1;
			} else if (drops_ok) {
				/*
				 * Node n's owner j against node (1-n)'s issuer
				 * j: every op it saw succeed landed and was
				 * checked here; every other one was accounted
				 * for (its message, or the drop notice, came).
				 */
				unsigned int *a = o_res[node][j];
				unsigned int ok = i_ok[1 - node][j];

				if (a[1] != per || a[3] || a[4] || a[2] > per ||
				    a[2] < ok || a[2] + a[5] != per) {
					TH_LOG("node %d owner %d: sent %u, completed %u of %u (%u ended without, node %d's issuer saw %u succeed), %u with wrong content, %u errors",
					       node, j, a[1], a[2], per, a[5],
					       1 - node, ok, a[3], a[4]);
					failed = 1;
				}
			}
	TH_LOG("%u operations notified, %u RDS_RDMA_SUCCESS", sum_ops, sum_ok);
	if (drops_ok)
		TH_LOG("RDMA ops dropped or canceled: %u (RDMA_STRESS_DROPS_OK)",
		       sum_drop);
	/* The RDMA op watchdog's work (rds.rst, RDMA op watchdog). */
#define WD_CMD "rds-info -c 2>/dev/null | grep -E 'ib_rdma_(kicks|timeouts)' | tr -s ' \\n' ' '"
	rds_run_cmd(WD_CMD, tmp, sizeof(tmp));
	rds_run_cmd("rds-peer -t 20 1 \"" WD_CMD "\" 2>&1", out, sizeof(out));
	TH_LOG("watchdog: node 0: %s; node 1: %s", tmp, out);
	if (failed) {
		/* What the stacks think of it, for the log. */
		rds_run_cmd("rds-info -v 2>&1 | head -c 6000", out, sizeof(out));
		TH_LOG("node 0 rds-info:\n%s", out);
		rds_run_cmd("rds-peer -t 20 1 'rds-info -v 2>&1 | head -c 6000' 2>&1",
			out, sizeof(out));
		TH_LOG("node 1 rds-info:\n%s", out);
		/* The device's own view: retries, NAKs, duplicates. */
		rds_run_cmd(DIAG_CMD, out, sizeof(out));
		TH_LOG("node 0 rdma:\n%s", out);
		rds_run_cmd("rds-peer -t 20 1 '" DIAG_CMD "' 2>&1", out,
			sizeof(out));
		TH_LOG("node 1 rdma:\n%s", out);
	}
	EXPECT_EQ(0, failed);
	if (drops_ok) {
		EXPECT_EQ(per * 2 * NPAIR, sum_ok + sum_drop);
	} else {
		EXPECT_EQ(per * 2 * NPAIR, sum_ok);
	}
}

int main(int argc, char **argv)
{
	if (argc >= 11 && !strcmp(argv[1], "side")) {
		read_every = strtoul(argv[10], NULL, 0);
		drops_ok = argc >= 12 && atoi(argv[11]);
		return side(argv);
	}
	read_every = strtoul(rds_env("RDMA_STRESS_READ_EVERY", "4"), NULL, 0);
	drops_ok = atoi(rds_env("RDMA_STRESS_DROPS_OK", "0")) != 0;
	rds_test_prepare();
	return test_harness_run(argc, argv);
}
