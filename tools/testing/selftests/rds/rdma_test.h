/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rdma_test.h - RDS message and RDMA helpers: one copy for the selftests
 * (through rds_test.h, which includes this file), the demo (vm/rds_demo.c)
 * and plain TAP programs.
 *
 * It needs nothing but libc and <linux/rds.h>, not the kselftest harness,
 * so programs built without the harness headers can include it.  The
 * message helpers the tools use as well (bounded receive, sendmsg with
 * SOL_RDS cmsgs, the cookie and notification of a received message) are
 * in tools/rds/rds-common.h; this file adds:
 *
 *   rds_wait_note()                    next notification
 *   rds_send_rdma(), rds_do_rdma()     one RDMA READ/WRITE
 *   rds_get_mr(), rds_free_mr()        MR sockopts
 *   rds_counter()                      an RDS_INFO_COUNTERS value
 *   rds_counter_wait_above()           bounded wait for a counter to grow
 *   rds_knob()                         write a module parameter
 *
 * A destination (@to) may be a struct sockaddr_in, sockaddr_in6 or
 * sockaddr_storage: its family gives its length.  Every wait is bounded by
 * the caller's milliseconds.
 */
#ifndef RDMA_TEST_H
#define RDMA_TEST_H

#include "../../../rds/rds-common.h"

/*
 * Bits of a cookie's offset half (the MR's iova) that our rds_rdma sets to
 * the device instance's epoch (rds.rst, "Keys never come back"); the
 * module's RDS_MR_IOVA_EPOCH_MASK (net/rds/rds.h).
 */
#define RDS_COOKIE_EPOCH_MASK	0x7fe00000ULL

/* The offset half of @cookie without the epoch bits. */
static inline uint64_t rds_cookie_off(uint64_t cookie)
{
	return (cookie >> 32) & ~RDS_COOKIE_EPOCH_MASK;
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

/*
 * Reload our modules on this node, rds_rdma.ko with module parameters
 * params ("" for the defaults).  Return: the shell's status (0: loaded).
 */
static inline int rds_reload_ours(const char *params)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "rds-mods unload >/dev/null 2>&1; insmod /lib/rds/ours/rds.ko && "
		 "insmod /lib/rds/ours/rds_rdma.ko %s && echo ours >/tmp/rds-mods",
		 params);
	return system(cmd);
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

/*
 * Wait at most ms for counter name to exceed old.  Returns its last value
 * (-1 if there is no such counter).
 */
static inline long long rds_counter_wait_above(const char *name,
					       long long old, int ms)
{
	long long v = rds_counter(name);

	for (; v >= 0 && v <= old && ms > 0; ms -= 50) {
		usleep(50000);
		v = rds_counter(name);
	}
	return v;
}

/* Write val to the module parameter (or any sysfs file) path: 0 or -1. */
static inline int rds_knob(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int ret = 0;

	if (!f)
		return -1;
	if (fputs(val, f) < 0)
		ret = -1;
	if (fclose(f))
		ret = -1;
	return ret;
}

/* A 32-bit integer hash (test patterns and choices from an index). */
static inline uint32_t rds_mix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352d;
	x ^= x >> 15;
	x *= 0x846ca68b;
	x ^= x >> 16;
	return x;
}

/* The next value of the splitmix64 sequence whose state is *x. */
static inline uint64_t rds_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

#endif /* RDMA_TEST_H */
