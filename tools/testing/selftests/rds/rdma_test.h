/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_test.h - RDS message and RDMA helpers: one copy for the selftests
 * (through rds_test.h, which includes this file), the demo (vm/rds_demo.c)
 * and plain TAP programs.
 *
 * It needs nothing but libc and <linux/rds.h>, not the kselftest harness,
 * so programs built without the harness headers can include it.
 *
 *   rds_wait(), rds_recvmsg_wait(), rds_recv_wait()   bounded receive
 *   rds_sendmsg_cm(), rds_send_cmsg()                 sendmsg with SOL_RDS
 *                                                     cmsgs, optionally
 *                                                     retried (bounded)
 *   rds_recv_rx()                                     receive with the
 *                                                     RDMA_DEST cookie and
 *                                                     RDMA_STATUS collected
 *   rds_wait_note()                                   next notification
 *   rds_send_rdma(), rds_do_rdma()                    one RDMA READ/WRITE
 *   rds_get_mr(), rds_free_mr()                       MR sockopts
 *   rds_counter(), rds_rdma_status_name()
 *
 * A destination (@to) may be a struct sockaddr_in, sockaddr_in6 or
 * sockaddr_storage: its family gives its length.  Every wait is bounded by
 * the caller's milliseconds.
 */
#ifndef RDMA_TEST_H
#define RDMA_TEST_H

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <linux/rds.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif

/* Length of the socket address at sa, by its family. */
static inline socklen_t rds_sslen(const void *sa)
{
	return ((const struct sockaddr *)sa)->sa_family == AF_INET6 ?
	       sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
}

static inline long rds_ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 +
	       (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Wait up to ms for events on fd; returns revents (0 on timeout). */
static inline int rds_wait(int fd, short events, int ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r;

	do {
		r = poll(&p, 1, ms);
	} while (r < 0 && errno == EINTR);
	return r > 0 ? p.revents : 0;
}

/*
 * Wait at most ms for a message and receive it with recvmsg(flags).
 * Returns the recvmsg() result; -1 with errno ETIME if nothing arrived in
 * time.  A POLLIN without a message (the in-tree module signals one after
 * any congestion-map update, see rds_poll()) is waited through: EAGAIN
 * after poll() means poll again, until the deadline.
 */
static inline ssize_t rds_recvmsg_wait(int fd, struct msghdr *msg, int flags,
				       int ms)
{
	struct timespec t0;
	long left = ms;
	ssize_t r;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (rds_wait(fd, POLLIN, left > 0 ? left : 0) & POLLIN) {
			r = recvmsg(fd, msg, flags | MSG_DONTWAIT);
			if (r >= 0 || errno != EAGAIN)
				return r;
		}
		left = ms - rds_ms_since(&t0);
		if (left <= 0) {
			errno = ETIME;
			return -1;
		}
		if (left > 0 && left < ms)
			poll(NULL, 0, 10);	/* do not spin on a stale POLLIN */
	}
}

/* The same with a flat buffer and an optional source address. */
static inline ssize_t rds_recv_wait(int fd, void *buf, size_t len, int flags,
				    struct sockaddr_storage *from, int ms)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = from,
		.msg_namelen = from ? sizeof(*from) : 0,
		.msg_iov = &iov,
		.msg_iovlen = 1,
	};

	return rds_recvmsg_wait(fd, &msg, flags, ms);
}

/* One SOL_RDS control message to send. */
struct rds_cm {
	int type;
	const void *data;
	size_t len;	/* data length */
	size_t clen;	/* cmsg_len payload (0: len); shorter ones are hostile */
};

/*
 * sendmsg(MSG_DONTWAIT) of buf with the n cmsgs of cm (n may be 0) to @to
 * (NULL: the connected peer).  With retry_ms > 0 a full send buffer, a
 * congested peer or a connection not up yet (EAGAIN, ENOBUFS, ENOTCONN,
 * EINTR) is waited through for at most retry_ms.  Returns the sendmsg()
 * result (-1 and errno EMSGSIZE if the cmsgs do not fit).
 */
static inline ssize_t rds_sendmsg_cm(int fd, const void *to, const void *buf,
				     size_t len, const struct rds_cm *cm,
				     int n, int retry_ms)
{
	union {
		char b[2048];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr m = {
		.msg_name = (void *)to, .msg_namelen = to ? rds_sslen(to) : 0,
		.msg_iov = &iov, .msg_iovlen = 1,
	};
	struct timespec t0;
	struct cmsghdr *c;
	size_t total = 0;
	ssize_t r;
	int i;

	for (i = 0; i < n; i++)
		total += CMSG_SPACE(cm[i].len);
	if (total > sizeof(u.b)) {
		errno = EMSGSIZE;
		return -1;
	}
	memset(u.b, 0, sizeof(u.b));
	if (n) {
		m.msg_control = u.b;
		m.msg_controllen = total;
	}
	c = n ? CMSG_FIRSTHDR(&m) : NULL;
	for (i = 0; i < n; i++) {
		c->cmsg_level = SOL_RDS;
		c->cmsg_type = cm[i].type;
		c->cmsg_len = CMSG_LEN(cm[i].clen ? cm[i].clen : cm[i].len);
		memcpy(CMSG_DATA(c), cm[i].data, cm[i].len);
		c = CMSG_NXTHDR(&m, c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int e;

		r = sendmsg(fd, &m, MSG_DONTWAIT);
		if (r >= 0 || retry_ms <= 0)
			return r;
		e = errno;
		if (e != EAGAIN && e != ENOBUFS && e != ENOTCONN && e != EINTR)
			return r;
		if (rds_ms_since(&t0) >= retry_ms) {
			errno = e;
			return r;
		}
		/* POLLOUT says nothing about congestion or a connection. */
		if (e == EAGAIN)
			rds_wait(fd, POLLOUT, 20);
		else
			poll(NULL, 0, 20);
	}
}

/* The same with at most one cmsg (type 0: none). */
static inline ssize_t rds_send_cmsg(int fd, const void *to, const void *buf,
				    size_t len, int type, const void *data,
				    size_t dlen, int retry_ms)
{
	struct rds_cm cm = { .type = type, .data = data, .len = dlen };

	return rds_sendmsg_cm(fd, to, buf, len, &cm, type ? 1 : 0, retry_ms);
}

/* What rds_recv_rx() found besides the data. */
struct rds_rx {
	struct sockaddr_storage from;
	uint64_t cookie;		/* RDS_CMSG_RDMA_DEST; 0: none */
	bool is_note;			/* an RDS_CMSG_RDMA_STATUS came */
	struct rds_rdma_notify note;	/* (its status -1 if none) */
};

/*
 * Receive one message within ms (rds_recvmsg_wait()) and collect its
 * RDS_CMSG_RDMA_DEST cookie and RDS_CMSG_RDMA_STATUS notification into
 * *rx (may be NULL).  A notification is a message of 0 bytes.  Returns the
 * byte count, -1 on timeout (errno ETIME) or error.
 */
static inline ssize_t rds_recv_rx(int fd, void *buf, size_t len,
				  struct rds_rx *rx, int ms)
{
	union {
		char b[512];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.b, .msg_controllen = sizeof(u.b),
	};
	struct cmsghdr *c;
	ssize_t r;

	if (rx) {
		memset(rx, 0, sizeof(*rx));
		rx->note.status = -1;
		m.msg_name = &rx->from;
		m.msg_namelen = sizeof(rx->from);
	}
	r = rds_recvmsg_wait(fd, &m, 0, ms);
	if (r < 0 || !rx)
		return r;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_RDS)
			continue;
		if (c->cmsg_type == RDS_CMSG_RDMA_DEST &&
		    c->cmsg_len >= CMSG_LEN(sizeof(rx->cookie)))
			memcpy(&rx->cookie, CMSG_DATA(c), sizeof(rx->cookie));
		if (c->cmsg_type == RDS_CMSG_RDMA_STATUS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(rx->note))) {
			memcpy(&rx->note, CMSG_DATA(c), sizeof(rx->note));
			rx->is_note = true;
		}
	}
	return r;
}

/*
 * Wait at most ms for the next notification on fd; data messages that
 * come first are consumed and dropped.  Returns its status (and *token,
 * if token is set), -1 if none came in time.
 */
static inline int rds_wait_note(int fd, uint64_t *token, int ms)
{
	struct timespec t0;
	struct rds_rx rx;
	char data[256];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = ms - rds_ms_since(&t0);

		if (left <= 0 || rds_recv_rx(fd, data, sizeof(data), &rx,
					     left) < 0)
			return -1;
		if (!rx.is_note)
			continue;
		if (token)
			*token = rx.note.user_token;
		return rx.note.status;
	}
}

/*
 * Send msg (mlen bytes, may be 0) to @to with an RDS_CMSG_RDMA_ARGS: an
 * RDMA of len bytes between local and remote_addr of the key cookie, a
 * WRITE if flags has RDS_RDMA_READWRITE, else a READ; flags and token go
 * into the args as they are.  retry_ms as for rds_sendmsg_cm().
 */
static inline ssize_t rds_send_rdma(int fd, const void *to, const void *msg,
				    size_t mlen, uint64_t cookie,
				    uint64_t remote_addr, void *local,
				    uint64_t len, uint64_t flags,
				    uint64_t token, int retry_ms)
{
	struct rds_iovec v = { .addr = (uintptr_t)local, .bytes = len };
	struct rds_rdma_args a = {
		.cookie = cookie,
		.remote_vec = { .addr = remote_addr, .bytes = len },
		.local_vec_addr = (uintptr_t)&v,
		.nr_local = 1,
		.flags = flags,
		.user_token = token,
	};

	return rds_send_cmsg(fd, to, msg, mlen, RDS_CMSG_RDMA_ARGS, &a,
			     sizeof(a), retry_ms);
}

/*
 * One RDMA WRITE (write) or READ of len bytes between local and the start
 * of the key cookie, sent with msg, waited for (at most ms) through its
 * notification.  Returns the RDS_RDMA_* status; -1 (errno set) if the
 * sendmsg() failed, -2 if no notification came, -3 if the one that came
 * carries another token.
 */
static inline int rds_do_rdma(int fd, const void *to, const void *msg,
			      size_t mlen, uint64_t cookie, void *local,
			      uint64_t len, bool write, uint64_t token, int ms)
{
	uint64_t flags = RDS_RDMA_NOTIFY_ME | (write ? RDS_RDMA_READWRITE : 0);
	uint64_t got;
	int st;

	if (rds_send_rdma(fd, to, msg, mlen, cookie, 0, local, len, flags,
			  token, ms) < 0)
		return -1;
	st = rds_wait_note(fd, &got, ms);
	if (st < 0)
		return -2;
	return got == token ? st : -3;
}

/* RDS_GET_MR of len bytes at addr; *cookie (if set) gets the key. */
static inline int rds_get_mr(int fd, void *addr, uint64_t len,
			     uint64_t *cookie, uint64_t flags)
{
	struct rds_get_mr_args a = {
		.vec = { .addr = (uintptr_t)addr, .bytes = len },
		.cookie_addr = (uintptr_t)cookie,
		.flags = flags,
	};

	return setsockopt(fd, SOL_RDS, RDS_GET_MR, &a, sizeof(a));
}

static inline int rds_free_mr(int fd, uint64_t cookie, uint64_t flags)
{
	struct rds_free_mr_args a = { .cookie = cookie, .flags = flags };

	return setsockopt(fd, SOL_RDS, RDS_FREE_MR, &a, sizeof(a));
}

/* Value of this node's RDS_INFO_COUNTERS counter name, or -1. */
static inline long long rds_counter(const char *name)
{
	struct rds_info_counter *c;
	socklen_t len = 0;
	long long v = -1;
	unsigned int i, n;
	void *buf = NULL;
	int fd = socket(AF_RDS, SOCK_SEQPACKET, 0);

	if (fd < 0)
		return -1;
	/* The first call says how much room the counters need. */
	getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, NULL, &len);
	if (!len)
		goto out;
	len += 64 * sizeof(*c);
	buf = calloc(1, len);
	if (!buf || getsockopt(fd, SOL_RDS, RDS_INFO_COUNTERS, buf, &len) < 0)
		goto out;
	c = buf;
	n = len / sizeof(*c);
	for (i = 0; i < n; i++)
		if (!strncmp((char *)c[i].name, name, sizeof(c[i].name)))
			v = c[i].value;
out:
	free(buf);
	close(fd);
	return v;
}

static inline const char *rds_rdma_status_name(int st)
{
	switch (st) {
	case RDS_RDMA_SUCCESS:		return "SUCCESS";
	case RDS_RDMA_REMOTE_ERROR:	return "REMOTE_ERROR";
	case RDS_RDMA_CANCELED:		return "CANCELED";
	case RDS_RDMA_DROPPED:		return "DROPPED";
	case RDS_RDMA_OTHER_ERROR:	return "OTHER_ERROR";
	default:			return "?";
	}
}

#endif /* RDMA_TEST_H */
