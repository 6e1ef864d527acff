// SPDX-License-Identifier: GPL-2.0
/*
 * rdsvm - the in-guest helper of the RDS VM runner (static, no libraries).
 *
 *   rdsvm link-add NAME TYPE NETDEV   rdma link add NAME type TYPE netdev NETDEV
 *   rdsvm link-del NAME               rdma link delete NAME
 *   rdsvm peerd ADDR PORT             control server: runs one sh -c command per
 *                                     TCP connection, streams its output back
 *   rdsvm exec ADDR PORT TIMEOUT CMD  control client: runs CMD on that server,
 *                                     prints the output, exits with its status;
 *                                     retries the connect until TIMEOUT seconds
 *
 * The control protocol: the client sends the command terminated by NUL; the
 * server sends the merged stdout/stderr, then a trailer line
 * "\n@@RDSVM-EXIT <status>@@\n".  A connection that ends without a trailer
 * (the node rebooted) makes the client exit 255.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <rdma/rdma_netlink.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRAILER "\n@@RDSVM-EXIT "

static int nl_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int fd = socket(AF_NETLINK, SOCK_RAW, NETLINK_RDMA);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("netlink");
		exit(1);
	}
	return fd;
}

static void nl_put_attr(struct nlmsghdr *nh, int type, const void *data, int len)
{
	struct nlattr *a = (struct nlattr *)((char *)nh + NLMSG_ALIGN(nh->nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	nh->nlmsg_len = NLMSG_ALIGN(nh->nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send @nh and wait for its ACK; returns 0 or the negative errno. */
static int nl_talk(int fd, struct nlmsghdr *nh)
{
	char buf[8192];
	ssize_t n;

	if (send(fd, nh, nh->nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		struct nlmsghdr *r;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, n); r = NLMSG_NEXT(r, n)) {
			if (r->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(r))->error;
			if (r->nlmsg_type == NLMSG_DONE)
				return 0;
		}
	}
}

static int link_add(const char *name, const char *type, const char *ndev)
{
	char buf[1024] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int fd = nl_open(), ret;

	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_NEWLINK);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = 1;
	nl_put_attr(nh, RDMA_NLDEV_ATTR_DEV_NAME, name, strlen(name) + 1);
	nl_put_attr(nh, RDMA_NLDEV_ATTR_LINK_TYPE, type, strlen(type) + 1);
	nl_put_attr(nh, RDMA_NLDEV_ATTR_NDEV_NAME, ndev, strlen(ndev) + 1);
	ret = nl_talk(fd, nh);
	if (ret)
		fprintf(stderr, "rdsvm: link add %s type %s netdev %s: %s\n",
			name, type, ndev, strerror(-ret));
	close(fd);
	return ret ? 1 : 0;
}

/* Find the index of RDMA device @name with an nldev GET dump. */
static int dev_index(int fd, const char *name)
{
	char buf[16384] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int found = -1;
	ssize_t n;

	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nh->nlmsg_seq = 2;
	if (send(fd, nh, nh->nlmsg_len, 0) < 0)
		return -1;
	for (;;) {
		struct nlmsghdr *r;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			return found;
		for (r = (struct nlmsghdr *)buf; NLMSG_OK(r, n); r = NLMSG_NEXT(r, n)) {
			struct nlattr *a;
			int len, idx = -1, match = 0;

			if (r->nlmsg_type == NLMSG_DONE || r->nlmsg_type == NLMSG_ERROR)
				return found;
			len = r->nlmsg_len - NLMSG_HDRLEN;
			for (a = NLMSG_DATA(r); len >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
			     a->nla_len <= len;
			     len -= NLA_ALIGN(a->nla_len),
			     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
				void *d = (char *)a + NLA_HDRLEN;

				if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
					idx = *(unsigned int *)d;
				if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME &&
				    !strcmp(d, name))
					match = 1;
			}
			if (match)
				found = idx;
		}
	}
}

static int link_del(const char *name)
{
	char buf[1024] = { 0 };
	struct nlmsghdr *nh = (struct nlmsghdr *)buf;
	int fd = nl_open(), idx, ret;

	idx = dev_index(fd, name);
	if (idx < 0) {
		fprintf(stderr, "rdsvm: no RDMA device %s\n", name);
		return 1;
	}
	nh->nlmsg_len = NLMSG_HDRLEN;
	nh->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_DELLINK);
	nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nh->nlmsg_seq = 3;
	nl_put_attr(nh, RDMA_NLDEV_ATTR_DEV_INDEX, &idx, sizeof(unsigned int));
	ret = nl_talk(fd, nh);
	if (ret)
		fprintf(stderr, "rdsvm: link delete %s: %s\n", name, strerror(-ret));
	close(fd);
	return ret ? 1 : 0;
}

static int parse_addr(const char *a, const char *port, struct sockaddr_in *sin)
{
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons(atoi(port));
	return inet_pton(AF_INET, a, &sin->sin_addr) == 1 ? 0 : -1;
}

static void serve_one(int c)
{
	char cmd[65536];
	size_t got = 0;
	int status;
	pid_t pid;

	while (got < sizeof(cmd) - 1) {
		ssize_t n = read(c, cmd + got, sizeof(cmd) - 1 - got);

		if (n <= 0)
			_exit(1);
		got += n;
		if (memchr(cmd, 0, got))
			break;
	}
	cmd[got] = 0;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(c, 1);
		dup2(c, 2);
		close(c);
		setsid();
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		status = 255 << 8;
	dprintf(c, TRAILER "%d@@\n", WIFEXITED(status) ? WEXITSTATUS(status) :
		128 + WTERMSIG(status));
	close(c);
	_exit(0);
}

static int peerd(const char *addr, const char *port)
{
	struct sockaddr_in sin;
	int s, one = 1;

	if (parse_addr(addr, port, &sin))
		return 2;
	signal(SIGCHLD, SIG_IGN);
	s = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(s, (struct sockaddr *)&sin, sizeof(sin)) || listen(s, 16)) {
		perror("rdsvm peerd");
		return 1;
	}
	for (;;) {
		int c = accept(s, NULL, NULL);

		if (c < 0)
			continue;
		if (fork() == 0) {
			close(s);
			signal(SIGCHLD, SIG_DFL);
			serve_one(c);
		}
		close(c);
	}
}

static int exec_remote(const char *addr, const char *port, int timeout,
		       const char *cmd)
{
	time_t end = time(NULL) + timeout;
	static char buf[1 << 20];
	struct sockaddr_in sin;
	size_t len = 0;
	char *t;
	int s;

	if (parse_addr(addr, port, &sin))
		return 2;
	alarm(timeout + 5);
	for (;;) {
		s = socket(AF_INET, SOCK_STREAM, 0);
		if (!connect(s, (struct sockaddr *)&sin, sizeof(sin)))
			break;
		close(s);
		if (time(NULL) >= end) {
			fprintf(stderr, "rdsvm: cannot reach %s:%s\n", addr, port);
			return 255;
		}
		usleep(200000);
	}
	if (write(s, cmd, strlen(cmd) + 1) < 0)
		return 255;
	for (;;) {
		ssize_t n;

		if (len == sizeof(buf) - 1) {
			/* Flush all but what could be a split trailer. */
			size_t keep = 64;

			fwrite(buf, 1, len - keep, stdout);
			memmove(buf, buf + len - keep, keep);
			len = keep;
		}
		n = read(s, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = 0;
	t = strstr(buf, TRAILER);
	if (!t) {
		fwrite(buf, 1, len, stdout);
		return 255;
	}
	fwrite(buf, 1, t - buf, stdout);
	fflush(stdout);
	return atoi(t + strlen(TRAILER));
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "link-add"))
		return link_add(argv[2], argv[3], argv[4]);
	if (argc == 3 && !strcmp(argv[1], "link-del"))
		return link_del(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "peerd"))
		return peerd(argv[2], argv[3]);
	if (argc == 6 && !strcmp(argv[1], "exec"))
		return exec_remote(argv[2], argv[3], atoi(argv[4]), argv[5]);
	fprintf(stderr, "usage: rdsvm link-add NAME TYPE NETDEV | link-del NAME |\n"
		"       peerd ADDR PORT | exec ADDR PORT TIMEOUT CMD\n");
	return 2;
}
