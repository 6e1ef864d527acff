// SPDX-License-Identifier: GPL-2.0
/*
 * rds_netem.c - configure a netem root qdisc through rtnetlink.
 *
 * The guests have busybox only, whose tc knows nothing of netem.  This is
 * the few lines of rtnetlink the lossy-link test (ib_lossy.sh) needs; it
 * is a helper, not a test (it prints no TAP and tests.txt does not list
 * it).
 *
 *   rds_netem DEV [loss P] [corrupt P] [duplicate P] [reorder P [gap N]]
 *                 [delay US] [jitter US] [limit N]
 *   rds_netem DEV off
 *
 * P is a percentage (0..100, decimals allowed), scaled to a u32
 * probability (P/100 * UINT32_MAX).  delay and jitter are microseconds
 * (sent as TCA_NETEM_LATENCY64/JITTER64 in ns).  reorder sends that share
 * of packets at once, ahead of the delayed others: it needs a delay, and
 * the gap defaults to 1 (every packet is a candidate).  limit is the
 * qdisc's queue in packets (default 1000).
 *
 * The qdisc replaces the root qdisc of DEV (RTM_NEWQDISC, NLM_F_CREATE |
 * NLM_F_REPLACE); "off" deletes it (RTM_DELQDISC; deleting when there is
 * none, ENOENT/EINVAL, counts as success).  Exit status: 0 done, 1 the
 * kernel refused (errno printed), 2 usage, 4 netem is not available (no
 * sch_netem: ENOENT/EOPNOTSUPP for the kind), so a test can skip.
 */
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/pkt_sched.h>

#define BUFSZ	1024

struct req {
	struct nlmsghdr n;
	struct tcmsg t;
	char buf[BUFSZ];
};

static void usage(void)
{
	fprintf(stderr,
		"usage: rds_netem DEV [loss P] [corrupt P] [duplicate P] [reorder P [gap N]]\n"
		"                     [delay US] [jitter US] [limit N]\n"
		"       rds_netem DEV off\n");
	exit(2);
}

/* Append an attribute at the end of message n (room checked by caller). */
static struct rtattr *add_attr(struct nlmsghdr *n, unsigned short type,
			       const void *data, size_t len)
{
	struct rtattr *rta = (struct rtattr *)((char *)n + NLMSG_ALIGN(n->nlmsg_len));

	if (NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len) > sizeof(struct req)) {
		fprintf(stderr, "rds_netem: message too long\n");
		exit(2);
	}
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	n->nlmsg_len = NLMSG_ALIGN(n->nlmsg_len) + RTA_SPACE(len);
	return rta;
}

static uint32_t prob(const char *s)
{
	char *end;
	double p = strtod(s, &end);

	if (*end || p < 0 || p > 100) {
		fprintf(stderr, "rds_netem: bad percentage %s\n", s);
		exit(2);
	}
	return (uint32_t)(p / 100.0 * (double)UINT32_MAX);
}

static unsigned long long number(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 0);

	if (!*s || *end) {
		fprintf(stderr, "rds_netem: bad number %s\n", s);
		exit(2);
	}
	return v;
}

/* Send the request, read the ACK; returns 0 or a positive errno. */
static int talk(struct nlmsghdr *n)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	char ans[8192];
	int fd, err = EPROTO;
	ssize_t len;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return errno;
	if (sendto(fd, n, n->nlmsg_len, 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		err = errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *h;

		len = recv(fd, ans, sizeof(ans), 0);
		if (len < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			goto out;
		}
		for (h = (struct nlmsghdr *)ans; NLMSG_OK(h, len);
		     h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_seq != n->nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					goto out;
				err = -e->error;
				goto out;
			}
		}
	}
out:
	close(fd);
	return err;
}

int main(int argc, char **argv)
{
	struct req r;
	struct tc_netem_qopt q = { .limit = 1000 };
	struct tc_netem_reorder reorder = { 0 };
	struct tc_netem_corrupt corrupt = { 0 };
	long long delay_ns = 0, jitter_ns = 0;
	int ifindex, i, off = 0, err, have_gap = 0;
	struct rtattr *opts;

	if (argc < 2)
		usage();
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "rds_netem: no device %s\n", argv[1]);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		const char *k = argv[i];

		if (!strcmp(k, "off")) {
			off = 1;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		if (!strcmp(k, "loss"))
			q.loss = prob(argv[++i]);
		else if (!strcmp(k, "corrupt"))
			corrupt.probability = prob(argv[++i]);
		else if (!strcmp(k, "duplicate"))
			q.duplicate = prob(argv[++i]);
		else if (!strcmp(k, "reorder"))
			reorder.probability = prob(argv[++i]);
		else if (!strcmp(k, "gap"))
			q.gap = number(argv[++i]), have_gap = 1;
		else if (!strcmp(k, "delay"))
			delay_ns = (long long)number(argv[++i]) * 1000;
		else if (!strcmp(k, "jitter"))
			jitter_ns = (long long)number(argv[++i]) * 1000;
		else if (!strcmp(k, "limit"))
			q.limit = number(argv[++i]);
		else
			usage();
	}
	if (off && argc != 3)
		usage();
	if (reorder.probability && !have_gap)
		q.gap = 1;
	if (reorder.probability && !delay_ns)
		fprintf(stderr, "rds_netem: reorder without delay has no effect\n");

	memset(&r, 0, sizeof(r));
	r.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct tcmsg));
	r.n.nlmsg_type = off ? RTM_DELQDISC : RTM_NEWQDISC;
	r.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK |
			  (off ? 0 : NLM_F_CREATE | NLM_F_REPLACE);
	r.n.nlmsg_seq = (uint32_t)getpid();
	r.t.tcm_family = AF_UNSPEC;
	r.t.tcm_ifindex = ifindex;
	r.t.tcm_parent = TC_H_ROOT;
	r.t.tcm_handle = 0;
	if (!off) {
		add_attr(&r.n, TCA_KIND, "netem", sizeof("netem"));
		/*
		 * TCA_OPTIONS: the fixed struct, then netem's own attributes
		 * (netem parses what follows the aligned struct).
		 */
		opts = add_attr(&r.n, TCA_OPTIONS, &q, sizeof(q));
		if (reorder.probability)
			add_attr(&r.n, TCA_NETEM_REORDER, &reorder, sizeof(reorder));
		if (corrupt.probability)
			add_attr(&r.n, TCA_NETEM_CORRUPT, &corrupt, sizeof(corrupt));
		if (delay_ns)
			add_attr(&r.n, TCA_NETEM_LATENCY64, &delay_ns, sizeof(delay_ns));
		if (jitter_ns)
			add_attr(&r.n, TCA_NETEM_JITTER64, &jitter_ns, sizeof(jitter_ns));
		opts->rta_len = (char *)&r.n + r.n.nlmsg_len - (char *)opts;
	}
	err = talk(&r.n);
	if (off && (err == ENOENT || err == EINVAL))
		err = 0;	/* nothing to delete: the default qdisc is in place */
	if (err) {
		fprintf(stderr, "rds_netem: %s %s: %s\n", argv[1],
			off ? "off" : "netem", strerror(err));
		return !off && (err == ENOENT || err == EOPNOTSUPP) ? 4 : 1;
	}
	return 0;
}
