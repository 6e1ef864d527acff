/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds-common.h - what the RDS command-line tools share: the headers they
 * need, the RDS constants a distribution's headers may lack, the address
 * set-up of rds-ping and rds-bench, and the message helpers of rds-bench,
 * which the selftests (tools/testing/selftests/rds/rdma_test.h) use too:
 *
 *   rds_wait(), rds_recvmsg_wait(), rds_recv_wait()   bounded receive
 *   rds_sendmsg_cm(), rds_send_cmsg()                 sendmsg with SOL_RDS
 *                                                     cmsgs, optionally
 *                                                     retried (bounded)
 *   rds_sendmsg_cmf()                                 the same with
 *                                                     sendmsg flags
 *                                                     (MSG_ZEROCOPY)
 *   rds_recv_rx()                                     receive with the
 *                                                     RDMA_DEST cookie,
 *                                                     RDMA_STATUS and
 *                                                     zerocopy cookies
 *                                                     collected
 *
 * A destination (@to) may be a struct sockaddr_in, sockaddr_in6 or
 * sockaddr_storage: its family gives its length.
 *
 * Header only (static inline), so that every tool stays one static binary
 * built from its own .c file.  Only the distribution's <linux/rds.h> is
 * used, so the tools also work with the in-tree module.
 */
#ifndef RDS_COMMON_H
#define RDS_COMMON_H

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/rds.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef SOL_RDS
#define SOL_RDS 276
#endif

/**
 * rds_parse_addr - a numeric IPv4 or IPv6 address ("fe80::1%eth0" for
 * link-local) into *ss, port 0
 * @prog: the tool's name, for the message
 * @s: the address
 * @ss: the result
 * @len: its length
 *
 * Return: 0, or -1 after a message on stderr.
 */
static inline int rds_parse_addr(const char *prog, const char *s,
				 struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	char buf[INET6_ADDRSTRLEN + IF_NAMESIZE + 2], *pct;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	pct = strchr(buf, '%');
	if (pct)
		*pct++ = 0;
	if (inet_pton(AF_INET6, buf, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		if (pct) {
			sin6->sin6_scope_id = if_nametoindex(pct);
			if (!sin6->sin6_scope_id)
				sin6->sin6_scope_id = strtoul(pct, NULL, 0);
		}
		*len = sizeof(*sin6);
		return 0;
	}
	fprintf(stderr, "%s: %s is not a numeric IPv4 or IPv6 address\n",
		prog, s);
	return -1;
}

static inline void rds_set_port(struct sockaddr_storage *ss, int p)
{
	if (ss->ss_family == AF_INET6)
		((struct sockaddr_in6 *)ss)->sin6_port = htons(p);
	else
		((struct sockaddr_in *)ss)->sin_port = htons(p);
}

/* The numeric address of *ss (no port) into buf. */
static inline void rds_addr_name(const struct sockaddr_storage *ss,
				 char *buf, size_t len)
{
	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			  buf, len);
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			  buf, len);
}

/**
 * rds_route_source - the address the kernel would send from to reach @dst
 * @dst: destination
 * @len: its length
 * @src: the source address found
 * @slen: its length
 *
 * Return: 0, or -1 (no route).
 */
static inline int rds_route_source(const struct sockaddr_storage *dst,
				   socklen_t len, struct sockaddr_storage *src,
				   socklen_t *slen)
{
	struct sockaddr_storage tmp = *dst;
	int s = socket(dst->ss_family, SOCK_DGRAM, 0);

	if (s < 0)
		return -1;
	rds_set_port(&tmp, 9);	/* any port */
	*slen = sizeof(*src);
	if (connect(s, (struct sockaddr *)&tmp, len) ||
	    getsockname(s, (struct sockaddr *)src, slen)) {
		close(s);
		return -1;
	}
	close(s);
	return 0;
}

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
 * EINTR) is waited through for at most retry_ms; with retry_ms < 0 the
 * sendmsg() blocks instead (as long as the socket's SO_SNDTIMEO).  Returns
 * the sendmsg() result (-1 and errno EMSGSIZE if the cmsgs do not fit).
 */
/*
 * sendmsg(@m, @flags) retried as rds_sendmsg_cm() says: with retry_ms > 0
 * EAGAIN, ENOBUFS, ENOTCONN and EINTR for at most retry_ms, with
 * retry_ms < 0 blocking, with 0 once (MSG_DONTWAIT).
 */
static inline ssize_t rds_sendmsg_retry(int fd, const struct msghdr *m,
					int flags, int retry_ms)
{
	struct timespec t0;
	ssize_t r;

	if (retry_ms < 0)
		return sendmsg(fd, m, flags);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int e;

		r = sendmsg(fd, m, flags | MSG_DONTWAIT);
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

static inline ssize_t rds_sendmsg_cmf(int fd, const void *to, const void *buf,
				      size_t len, const struct rds_cm *cm,
				      int n, int retry_ms, int flags)
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
	struct cmsghdr *c;
	size_t total = 0;
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
	return rds_sendmsg_retry(fd, &m, flags, retry_ms);
}

static inline ssize_t rds_sendmsg_cm(int fd, const void *to, const void *buf,
				     size_t len, const struct rds_cm *cm,
				     int n, int retry_ms)
{
	return rds_sendmsg_cmf(fd, to, buf, len, cm, n, retry_ms, 0);
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
	ssize_t len;			/* what the receive returned */
	struct sockaddr_storage from;
	uint64_t cookie;		/* RDS_CMSG_RDMA_DEST; 0: none */
	bool is_note;			/* an RDS_CMSG_RDMA_STATUS came */
	struct rds_rdma_notify note;	/* (its status -1 if none) */
	uint32_t nzc;			/* RDS_CMSG_ZCOPY_COMPLETION cookies */
	uint32_t zc[RDS_MAX_ZCOOKIES];
};

/*
 * Receive one message within ms (rds_recvmsg_wait()) and collect its
 * RDS_CMSG_RDMA_DEST cookie, RDS_CMSG_RDMA_STATUS notification and
 * RDS_CMSG_ZCOPY_COMPLETION cookies into *rx (may be NULL).  A
 * notification, and a batch of zerocopy cookies alone, is a message of 0
 * bytes.  Returns the
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
	if (!rx)
		return r;
	rx->len = r;
	if (r < 0)
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
		if (c->cmsg_type == RDS_CMSG_ZCOPY_COMPLETION &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct rds_zcopy_cookies))) {
			struct rds_zcopy_cookies zc;

			memcpy(&zc, CMSG_DATA(c), sizeof(zc));
			rx->nzc = zc.num < RDS_MAX_ZCOOKIES ? zc.num :
				  RDS_MAX_ZCOOKIES;
			memcpy(rx->zc, zc.cookies, sizeof(rx->zc));
		}
	}
	return r;
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

#endif /* RDS_COMMON_H */
