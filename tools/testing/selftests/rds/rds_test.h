/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_test.h - shared helpers for the RDS socket selftests.
 *
 * Every test program in this directory is a kselftest-harness executable
 * written against the distribution's <linux/rds.h> ABI.  The expected
 * errnos are those of the in-tree (Debian 6.1) rds/rds_rdma modules, so a
 * test that passes against the in-tree modules and fails against ours
 * points at a compatibility bug in ours.
 *
 * Environment (set by run_vm.sh, see README):
 *   RDS_LOCAL_ADDR / RDS_LOCAL_ADDR6   address of node 0 on the rxe link
 *   RDS_PEER_ADDR  / RDS_PEER_ADDR6    address of node 1 on the rxe link
 *   RDS_NODES                          cluster size (peer tests need >= 2)
 *   RDS_TEST_INTREE_LOCAL=1            load Debian's in-tree modules on
 *                                      node 0 first ("rds-mods load intree"),
 *                                      to validate the expectations
 *   RDS_TEST_INTREE=1                  the modules on node 0 are already the
 *                                      in-tree ones (implied by the above)
 *
 * The message and RDMA helpers that need no harness are in rdma_test.h.
 *
 * Every wait is bounded: poll() timeouts in the helpers, the harness's
 * per-test alarm, and an alarm() in forked helpers.
 */
#ifndef RDS_TEST_H
#define RDS_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/sockios.h>
#include <linux/rds.h>

#include "kselftest_harness.h"
#include "rdma_test.h"

/*
 * Under QEMU/TCG a first connection can take many seconds to come up:
 * give every test case more than the harness's default 30 s.
 */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 120

#ifndef AF_RDS
#define AF_RDS 21
#endif
#ifndef PF_RDS
#define PF_RDS AF_RDS
#endif
#ifndef SO_TIMESTAMP_OLD
#define SO_TIMESTAMP_OLD 29
#endif
#ifndef SO_TIMESTAMP_NEW
#define SO_TIMESTAMP_NEW 63
#endif
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

#define RDS_MAX_PAYLOAD		(1U << 20)	/* in-tree RDS_MAX_MSG_SIZE */
#define RDS_PROBE_PORT		1		/* reserved, RDS_FLAG_PROBE_PORT */
/* A user address that is really a kernel address: must give EFAULT. */
#define RDS_KERNEL_PTR		((void *)0xffffffff81000000UL)

/* Default wait for an expected message, milliseconds. */
#define RDS_WAIT_MS		30000

static inline const char *rds_env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return (v && *v) ? v : dflt;
}

static inline bool rds_intree(void)
{
	return !strcmp(rds_env("RDS_TEST_INTREE", "0"), "1") ||
	       !strcmp(rds_env("RDS_TEST_INTREE_LOCAL", "0"), "1");
}

static inline bool rds_have_peer(void)
{
	return atoi(rds_env("RDS_NODES", "1")) >= 2 &&
	       getenv("RDS_PEER_ADDR") != NULL;
}

/* Node addresses as strings, by family. */
static inline const char *rds_local_str(int family)
{
	return family == AF_INET6 ? rds_env("RDS_LOCAL_ADDR6", "2001:db8::1")
				  : rds_env("RDS_LOCAL_ADDR", "192.0.2.1");
}

static inline const char *rds_peer_str(int family)
{
	return family == AF_INET6 ? rds_env("RDS_PEER_ADDR6", "2001:db8::2")
				  : rds_env("RDS_PEER_ADDR", "192.0.2.2");
}

/*
 * An address on the rxe subnet that no node owns: nothing answers there,
 * so messages to it stay queued on the sending socket.
 */
static inline const char *rds_unreach_str(int family)
{
	return family == AF_INET6 ? "2001:db8::63" : "192.0.2.99";
}

/* Fill *ss with family/addr/port; returns the address length (0 on error). */
static inline socklen_t rds_mkaddr(int family, const char *addr, uint16_t port,
				   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		if (inet_pton(AF_INET, addr, &sin->sin_addr) != 1)
			return 0;
		return sizeof(*sin);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) != 1)
			return 0;
		return sizeof(*sin6);
	}
}

static inline uint16_t rds_port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

/* Same family, address and port? */
static inline bool rds_addr_eq(const struct sockaddr_storage *a,
			       const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, 16);
	}
}

static inline const char *rds_ntop(const struct sockaddr_storage *ss,
				   char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "?";

	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr,
			  a, sizeof(a));
	else if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr,
			  a, sizeof(a));
	snprintf(buf, len, "%s/%u(fam %d)", a, rds_port_of(ss), ss->ss_family);
	return buf;
}

static inline int rds_socket(void)
{
	return socket(AF_RDS, SOCK_SEQPACKET, 0);
}

/*
 * A socket bound to addr (rds_bound_socket(): the node's own address) and
 * port (0: any).  *out gets the bound address as getsockname() reports it.
 * Returns the fd or -1.
 */
static inline int rds_bound_socket_at(int family, const char *addr,
				      uint16_t port,
				      struct sockaddr_storage *out)
{
	struct sockaddr_storage ss;
	socklen_t len = rds_mkaddr(family, addr, port, &ss);
	int fd, saved;

	if (!len)
		return -1;
	fd = rds_socket();
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		goto fail;
	if (out) {
		len = sizeof(*out);
		if (getsockname(fd, (struct sockaddr *)out, &len) < 0)
			goto fail;
	}
	return fd;
fail:
	saved = errno;
	close(fd);
	errno = saved;
	return -1;
}

static inline int rds_bound_socket(int family, uint16_t port,
				   struct sockaddr_storage *out)
{
	return rds_bound_socket_at(family, rds_local_str(family), port, out);
}

/*
 * The loopback address of a family: in-tree (and here) a socket bound to
 * 127.0.0.0/8 or ::1 gets the loopback transport, which has no RDMA, no
 * TOS and no MR flush.
 */
static inline const char *rds_loop_str(int family)
{
	return family == AF_INET6 ? "::1" : "127.0.0.1";
}

static inline ssize_t rds_sendto(int fd, const void *buf, size_t len, int flags,
				 const struct sockaddr_storage *to)
{
	return sendto(fd, buf, len, flags, (const struct sockaddr *)to,
		      to ? rds_sslen(to) : 0);
}

/* Deterministic content: byte i of message (seed) */
static inline void rds_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 0x9e3779b9u;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static inline bool rds_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;
	uint32_t x = seed * 2654435761u + 0x9e3779b9u;
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (p[i] != (uint8_t)x)
			return false;
	}
	return true;
}

/* FNV-1a 64, for content hashes */
static inline uint64_t rds_hash(uint64_t h, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define RDS_HASH_INIT 0xcbf29ce484222325ULL

static inline void rds_msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Drain everything queued on fd (nonblocking); returns messages read. */
static inline int rds_drain(int fd, int ms)
{
	static char buf[65536];
	int n = 0;

	while (rds_recv_wait(fd, buf, sizeof(buf), 0, NULL, ms) >= 0)
		n++;
	return n;
}

static inline int rds_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = write(fd, val, strlen(val));
	close(fd);
	return r == (ssize_t)strlen(val) ? 0 : -1;
}

static inline int rds_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, len - 1);
	close(fd);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return 0;
}

/* The address of a page that is not mapped (NULL if mmap() failed). */
static inline void *rds_hole_page(void)
{
	void *p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, 4096);
	return p;
}

/* A writable page followed by one that is not mapped (NULL on failure). */
static inline char *rds_edge_page(void)
{
	char *p = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (munmap(p + 4096, 4096)) {
		munmap(p, 8192);
		return NULL;
	}
	return p;
}

/* Drop CAP_IPC_LOCK (effective and permitted): RLIMIT_MEMLOCK then counts. */
static inline int rds_drop_ipc_lock(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[CAP_IPC_LOCK / 32].effective &= ~(1U << (CAP_IPC_LOCK % 32));
	d[CAP_IPC_LOCK / 32].permitted &= ~(1U << (CAP_IPC_LOCK % 32));
	return syscall(SYS_capset, &h, d);
}

/*
 * Run a shell command and capture up to @len - 1 bytes of its output in
 * @out (NUL-terminated).  Return: its exit status, -1 if it did not run or
 * did not exit.
 */
static inline int rds_run_cmd(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n = 0;
	int st;

	if (!p)
		return -1;
	while (n + 1 < len) {
		size_t m = fread(out + n, 1, len - 1 - n, p);

		if (!m)
			break;
		n += m;
	}
	out[n] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Give the socket a send buffer with a payload limit of at least bytes. */
static inline int rds_big_sndbuf(int fd, int bytes)
{
	return setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes));
}

/*
 * Prepare the node before any test runs: optionally load the in-tree
 * modules (validation runs), then check that PF_RDS sockets exist at all.
 * Exits with KSFT_SKIP (4) when they do not.
 */
static inline void rds_test_prepare(void)
{
	int fd;

	if (!strcmp(rds_env("RDS_TEST_INTREE_LOCAL", "0"), "1") &&
	    access("/tmp/.rds-intree-loaded", F_OK) != 0) {
		int r = system("rds-mods unload >/dev/null 2>&1; rds-mods load intree >/dev/null 2>&1");

		if (r != 0) {
			printf("TAP version 13\n1..0 # SKIP rds-mods load intree failed (%d)\n", r);
			exit(KSFT_SKIP);
		}
		close(open("/tmp/.rds-intree-loaded", O_CREAT | O_WRONLY, 0644));
	}
	fd = rds_socket();
	if (fd < 0) {
		printf("TAP version 13\n1..0 # SKIP no PF_RDS sockets: %s\n",
		       strerror(errno));
		exit(KSFT_SKIP);
	}
	close(fd);
	/* A peer that dies must not kill us with SIGPIPE; nothing here writes
	 * to pipes that may close, but be safe. */
	signal(SIGPIPE, SIG_IGN);
}

#define RDS_TEST_MAIN						\
	int main(int argc, char **argv)				\
	{							\
		rds_test_prepare();				\
		return test_harness_run(argc, argv);		\
	}

/*
 * ASSERT (EXPECT) a syscall failed with errno e (prints the call on
 * failure); _RDS_ERRNO's kind is ASSERT or EXPECT.
 */
#define _RDS_ERRNO(kind, call, e) do {					\
		errno = 0;						\
		long __r = (long)(call);				\
		int __e = errno;					\
		if (__r != -1 || __e != (e))				\
			TH_LOG("%s: got %ld errno %d (%s), want errno %d (%s)", \
			       #call, __r, __e, strerror(__e), (e), strerror(e)); \
		kind##_EQ(-1, __r);					\
		kind##_EQ((e), __e);					\
	} while (0)
#define ASSERT_ERRNO(call, e)	_RDS_ERRNO(ASSERT, call, e)
#define EXPECT_ERRNO(call, e)	_RDS_ERRNO(EXPECT, call, e)

/* The ipv4 and ipv6 variants of fixture f (variant->family). */
#define RDS_FAMILY_VARIANTS(f)						\
	FIXTURE_VARIANT(f) { int family; };				\
	FIXTURE_VARIANT_ADD(f, ipv4) { .family = AF_INET, };		\
	FIXTURE_VARIANT_ADD(f, ipv6) { .family = AF_INET6, }

/*
 * Fixture set-up shared by the socket tests: *a and *b bound to this
 * node's address of family (any port, the bound addresses in *aa, *ba),
 * *u an unbound socket.
 */
static inline void rds_setup_abu(struct __test_metadata *_metadata,
				 int family, int *a, struct sockaddr_storage *aa,
				 int *b, struct sockaddr_storage *ba, int *u)
{
	*a = rds_bound_socket(family, 0, aa);
	ASSERT_LE(0, *a) TH_LOG("bind: %s", strerror(errno));
	*b = rds_bound_socket(family, 0, ba);
	ASSERT_LE(0, *b) TH_LOG("bind: %s", strerror(errno));
	*u = rds_socket();
	ASSERT_LE(0, *u);
}

/* ASSERT a syscall succeeded (result >= 0). */
#define ASSERT_OK(call) do {						\
		errno = 0;						\
		long __r = (long)(call);				\
		if (__r < 0)						\
			TH_LOG("%s: failed: %s", #call, strerror(errno)); \
		ASSERT_LE(0, __r);					\
	} while (0)

#endif /* RDS_TEST_H */
