// SPDX-License-Identifier: GPL-2.0
/*
 * rds-info - show the state of the local RDS stack.
 *
 * Everything comes from getsockopt(SOL_RDS, RDS_INFO_*) on a PF_RDS socket:
 * the caller offers a buffer; when it is too small the kernel fails with
 * ENOSPC and says how much it needs in optlen; on success it returns the
 * size of one item and sets optlen to the bytes written.  The tables can
 * grow between the probe and the copy, so the probe is retried a few times.
 *
 *   rds-info [-c] [-k] [-n] [-r] [-s] [-t] [-T] [-I] [-v] [-6] [-j]
 *     -c counters            -k sockets             -n connections
 *     -r receive queue       -s send queue          -t retransmit queue
 *     -T TCP sockets         -I RDMA (IB) connections
 *     -v all of the above (the default)
 *     -6 the RDS6_INFO_* variants (IPv4 and IPv6 entries alike)
 *     -j JSON instead of tables
 *
 * Only the distribution's <linux/rds.h> is used: the same binary works with
 * the in-tree module.  Exit status: 0, or 1 when a query failed (the message
 * names the cause), 2 on a usage error.
 */
#define _GNU_SOURCE
#include "rds-common.h"

static int json;
static int first_table = 1;

/* Fetch one RDS_INFO table; returns the item size (>0), 0 if empty, -errno. */
static int info_get(int fd, int opt, void **buf, size_t *len)
{
	socklen_t l = 0;
	void *p = NULL;
	int tries, ret;

	for (tries = 0; tries < 8; tries++) {
		ret = getsockopt(fd, SOL_RDS, opt, p, &l);
		if (ret >= 0) {
			*buf = p;
			*len = l;
			return l ? ret : 0;
		}
		if (errno != ENOSPC) {
			ret = -errno;
			free(p);
			return ret;
		}
		free(p);
		l += l / 4 + 256;	/* room for growth */
		p = calloc(1, l);
		if (!p)
			return -ENOMEM;
	}
	free(p);
	return -EAGAIN;
}

static const char *addr4(__be32 a, char *buf)
{
	return inet_ntop(AF_INET, &a, buf, INET6_ADDRSTRLEN);
}

/* @p may be unaligned (packed info structs). */
static const char *addr6(const void *p, char *buf)
{
	struct in6_addr a;

	memcpy(&a, p, sizeof(a));
	if (IN6_IS_ADDR_V4MAPPED(&a))
		return inet_ntop(AF_INET, &a.s6_addr32[3], buf, INET6_ADDRSTRLEN);
	return inet_ntop(AF_INET6, &a, buf, INET6_ADDRSTRLEN);
}

/* An address of either layout: 4 bytes IPv4, 16 bytes IPv6 (maybe unaligned). */
static const char *addr_any(const void *p, size_t len, char *buf)
{
	__be32 a;

	if (len != sizeof(a))
		return addr6(p, buf);
	memcpy(&a, p, sizeof(a));
	return addr4(a, buf);
}

/*
 * An IPv4 item and its RDS6 twin have the same fields but for the size of
 * the addresses: the ROW macros below read an item of either type, with
 * ADDR() printing the address field f of item p whatever its size.
 */
#define ADDR(p, f, buf) addr_any(&(p)->f, sizeof((p)->f), buf)

static const char *gid(const __u8 *g, char *buf)
{
	return inet_ntop(AF_INET6, g, buf, INET6_ADDRSTRLEN);
}

static void table_begin(const char *name, const char *header)
{
	if (json) {
		printf("%s\"%s\": [", first_table ? "{" : ",\n ", name);
	} else {
		printf("%s%s:\n%s\n", first_table ? "" : "\n", name, header);
	}
	first_table = 0;
}

static void table_end(void)
{
	if (json)
		printf("]");
}

static void row_sep(int i)
{
	if (json && i)
		printf(", ");
}

static void conn_flags(__u8 f, char *s)
{
	s[0] = f & RDS_INFO_CONNECTION_FLAG_SENDING ? 's' : '-';
	s[1] = f & RDS_INFO_CONNECTION_FLAG_CONNECTING ? 'c' : '-';
	s[2] = f & RDS_INFO_CONNECTION_FLAG_CONNECTED ? 'C' : '-';
	s[3] = 0;
}

static void show_counters(void *buf, size_t len, int isz)
{
	size_t i, n = len / isz;

	table_begin("counters", "CounterName                      Value");
	for (i = 0; i < n; i++) {
		struct rds_info_counter *c = (void *)((char *)buf + i * isz);
		char name[sizeof(c->name) + 1];

		memcpy(name, c->name, sizeof(c->name));
		name[sizeof(c->name)] = 0;
		row_sep(i);
		if (json)
			printf("{\"name\": \"%s\", \"value\": %" PRIu64 "}", name,
			       (uint64_t)c->value);
		else
			printf("%-32s %" PRIu64 "\n", name, (uint64_t)c->value);
	}
	table_end();
}

#define CONN_ROW(c) do {					\
		ADDR(c, laddr, l);				\
		ADDR(c, faddr, r);				\
		tx = (c)->next_tx_seq;				\
		rx = (c)->next_rx_seq;				\
		flags = (c)->flags;				\
		memcpy(t, (c)->transport, TRANSNAMSIZ);		\
	} while (0)

static void show_conns(void *buf, size_t len, int isz, int v6)
{
	size_t i, n = len / isz;

	table_begin(v6 ? "connections6" : "connections",
		    "LocalAddr       RemoteAddr      Tos NextTX     NextRX     Flg Transport");
	for (i = 0; i < n; i++) {
		char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN], f[4], t[TRANSNAMSIZ + 1];
		uint64_t tx, rx;
		unsigned int tos = 0;
		__u8 flags;
		void *p = (char *)buf + i * isz;

		if (v6) {
			CONN_ROW((struct rds6_info_connection *)p);
		} else {
			CONN_ROW((struct rds_info_connection *)p);
			tos = ((struct rds_info_connection *)p)->tos;	/* v4 only */
		}
		t[TRANSNAMSIZ] = 0;
		conn_flags(flags, f);
		row_sep(i);
		if (json)
			printf("{\"local\": \"%s\", \"remote\": \"%s\", \"tos\": %u, "
			       "\"next_tx_seq\": %" PRIu64 ", \"next_rx_seq\": %" PRIu64
			       ", \"flags\": \"%s\", \"transport\": \"%s\"}",
			       l, r, tos, tx, rx, f, t);
		else
			printf("%-15s %-15s %3u %-10" PRIu64 " %-10" PRIu64 " %s %s\n",
			       l, r, tos, tx, rx, f, t);
	}
	table_end();
}

#define MSG_ROW(m) do {						\
		ADDR(m, laddr, l);				\
		ADDR(m, faddr, r);				\
		lp = ntohs((m)->lport);				\
		rp = ntohs((m)->fport);				\
		tos = (m)->tos;					\
		seq = (m)->seq;					\
		bytes = (m)->len;				\
	} while (0)

static void show_msgs(const char *name, void *buf, size_t len, int isz, int v6)
{
	size_t i, n = len / isz;

	table_begin(name, "LocalAddr       LPort RemoteAddr      RPort Tos Seq        Bytes");
	for (i = 0; i < n; i++) {
		char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
		unsigned int lp, rp, tos, bytes;
		uint64_t seq;
		void *p = (char *)buf + i * isz;

		if (v6)
			MSG_ROW((struct rds6_info_message *)p);
		else
			MSG_ROW((struct rds_info_message *)p);
		row_sep(i);
		if (json)
			printf("{\"local\": \"%s\", \"lport\": %u, \"remote\": \"%s\", "
			       "\"rport\": %u, \"tos\": %u, \"seq\": %" PRIu64
			       ", \"bytes\": %u}", l, lp, r, rp, tos, seq, bytes);
		else
			printf("%-15s %5u %-15s %5u %3u %-10" PRIu64 " %u\n",
			       l, lp, r, rp, tos, seq, bytes);
	}
	table_end();
}

#define SOCK_ROW(s) do {					\
		ADDR(s, bound_addr, b);				\
		ADDR(s, connected_addr, c);			\
		bp = ntohs((s)->bound_port);			\
		cp = ntohs((s)->connected_port);		\
		snd = (s)->sndbuf;				\
		rcv = (s)->rcvbuf;				\
		inum = (s)->inum;				\
	} while (0)

static void show_sockets(void *buf, size_t len, int isz, int v6)
{
	size_t i, n = len / isz;

	table_begin(v6 ? "sockets6" : "sockets",
		    "BoundAddr       BPort ConnAddr        CPort SndBuf     RcvBuf     Inode");
	for (i = 0; i < n; i++) {
		char b[INET6_ADDRSTRLEN], c[INET6_ADDRSTRLEN];
		unsigned int bp, cp, snd, rcv;
		uint64_t inum;
		void *p = (char *)buf + i * isz;

		if (v6)
			SOCK_ROW((struct rds6_info_socket *)p);
		else
			SOCK_ROW((struct rds_info_socket *)p);
		row_sep(i);
		if (json)
			printf("{\"bound\": \"%s\", \"bport\": %u, \"connected\": \"%s\", "
			       "\"cport\": %u, \"sndbuf\": %u, \"rcvbuf\": %u, "
			       "\"inode\": %" PRIu64 "}", b, bp, c, cp, snd, rcv, inum);
		else
			printf("%-15s %5u %-15s %5u %-10u %-10u %" PRIu64 "\n",
			       b, bp, c, cp, snd, rcv, inum);
	}
	table_end();
}

#define TCP_ROW(t) do {						\
		ADDR(t, local_addr, l);				\
		ADDR(t, peer_addr, r);				\
		lp = ntohs((t)->local_port);			\
		rp = ntohs((t)->peer_port);			\
		hr = (t)->hdr_rem;				\
		dr = (t)->data_rem;				\
		nxt = (t)->last_sent_nxt;			\
		eu = (t)->last_expected_una;			\
		su = (t)->last_seen_una;			\
	} while (0)

static void show_tcp(void *buf, size_t len, int isz, int v6)
{
	size_t i, n = len / isz;

	table_begin(v6 ? "tcp_sockets6" : "tcp_sockets",
		    "LocalAddr       LPort RemoteAddr      RPort HdrRemain  DataRemain SentNxt    ExpectUna  SeenUna");
	for (i = 0; i < n; i++) {
		char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
		uint64_t hr, dr;
		unsigned int lp, rp, nxt, eu, su;
		void *p = (char *)buf + i * isz;

		if (v6)
			TCP_ROW((struct rds6_info_tcp_socket *)p);
		else
			TCP_ROW((struct rds_info_tcp_socket *)p);
		row_sep(i);
		if (json)
			printf("{\"local\": \"%s\", \"lport\": %u, \"remote\": \"%s\", "
			       "\"rport\": %u, \"hdr_rem\": %" PRIu64 ", \"data_rem\": %"
			       PRIu64 ", \"sent_nxt\": %u, \"expected_una\": %u, "
			       "\"seen_una\": %u}", l, lp, r, rp, hr, dr, nxt, eu, su);
		else
			printf("%-15s %5u %-15s %5u %-10" PRIu64 " %-10" PRIu64
			       " %-10u %-10u %u\n", l, lp, r, rp, hr, dr, nxt, eu, su);
	}
	table_end();
}

#define IB_ROW(c) do {						\
		ADDR(c, src_addr, l);				\
		ADDR(c, dst_addr, r);				\
		gid((c)->src_gid, lg);				\
		gid((c)->dst_gid, rg);				\
		tos = (c)->tos;					\
		sl = (c)->sl;					\
		swr = (c)->max_send_wr;				\
		rwr = (c)->max_recv_wr;				\
		sge = (c)->max_send_sge;			\
		mrmax = (c)->rdma_mr_max;			\
		mrsize = (c)->rdma_mr_size;			\
	} while (0)

static void show_ib(void *buf, size_t len, int isz, int v6)
{
	size_t i, n = len / isz;

	table_begin(v6 ? "ib_connections6" : "ib_connections",
		    "LocalAddr       RemoteAddr      Tos SL LocalGID                RemoteGID               SendWR RecvWR SendSGE MRMax  MRSize");
	for (i = 0; i < n; i++) {
		char l[INET6_ADDRSTRLEN], r[INET6_ADDRSTRLEN];
		char lg[INET6_ADDRSTRLEN], rg[INET6_ADDRSTRLEN];
		unsigned int tos, sl, swr, rwr, sge, mrmax, mrsize;
		void *p = (char *)buf + i * isz;

		if (v6)
			IB_ROW((struct rds6_info_rdma_connection *)p);
		else
			IB_ROW((struct rds_info_rdma_connection *)p);
		row_sep(i);
		if (json)
			printf("{\"local\": \"%s\", \"remote\": \"%s\", \"tos\": %u, "
			       "\"sl\": %u, \"local_gid\": \"%s\", \"remote_gid\": \"%s\", "
			       "\"max_send_wr\": %u, \"max_recv_wr\": %u, "
			       "\"max_send_sge\": %u, \"rdma_mr_max\": %u, "
			       "\"rdma_mr_size\": %u}", l, r, tos, sl, lg, rg, swr, rwr,
			       sge, mrmax, mrsize);
		else
			printf("%-15s %-15s %3u %2u %-23s %-23s %-6u %-6u %-7u %-6u %u\n",
			       l, r, tos, sl, lg, rg, swr, rwr, sge, mrmax, mrsize);
	}
	table_end();
}

enum { T_COUNTERS, T_SOCKETS, T_CONNS, T_RECV, T_SEND, T_RETRANS, T_TCP, T_IB, T_MAX };

static const struct {
	const char *name;
	int opt4, opt6;
	size_t size4, size6;
} tables[T_MAX] = {
#define TBL(n, o4, o6, s4, s6) { n, o4, o6, sizeof(struct s4), sizeof(struct s6) }
	[T_COUNTERS] = TBL("counters", RDS_INFO_COUNTERS, RDS_INFO_COUNTERS,
			   rds_info_counter, rds_info_counter),
	[T_SOCKETS] = TBL("sockets", RDS_INFO_SOCKETS, RDS6_INFO_SOCKETS,
			  rds_info_socket, rds6_info_socket),
	[T_CONNS] = TBL("connections", RDS_INFO_CONNECTIONS, RDS6_INFO_CONNECTIONS,
			rds_info_connection, rds6_info_connection),
	[T_RECV] = TBL("receive queue", RDS_INFO_RECV_MESSAGES, RDS6_INFO_RECV_MESSAGES,
		       rds_info_message, rds6_info_message),
	[T_SEND] = TBL("send queue", RDS_INFO_SEND_MESSAGES, RDS6_INFO_SEND_MESSAGES,
		       rds_info_message, rds6_info_message),
	[T_RETRANS] = TBL("retransmit queue", RDS_INFO_RETRANS_MESSAGES,
			  RDS6_INFO_RETRANS_MESSAGES, rds_info_message, rds6_info_message),
	[T_TCP] = TBL("TCP sockets", RDS_INFO_TCP_SOCKETS, RDS6_INFO_TCP_SOCKETS,
		      rds_info_tcp_socket, rds6_info_tcp_socket),
	[T_IB] = TBL("RDMA connections", RDS_INFO_IB_CONNECTIONS, RDS6_INFO_IB_CONNECTIONS,
		     rds_info_rdma_connection, rds6_info_rdma_connection),
#undef TBL
};

static void usage(void)
{
	fprintf(stderr, "usage: rds-info [-c] [-k] [-n] [-r] [-s] [-t] [-T] [-I] [-v] [-6] [-j]\n"
		"  -c counters  -k sockets  -n connections  -r receive queue\n"
		"  -s send queue  -t retransmit queue  -T TCP sockets\n"
		"  -I RDMA connections  -v everything (default)\n"
		"  -6 RDS6 variants (all entries, IPv6 and IPv4)  -j JSON output\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int want[T_MAX] = { 0 }, explicit[T_MAX] = { 0 };
	int any = 0, v6 = 0, fd, c, t, bad = 0;

	while ((c = getopt(argc, argv, "cknrstTIv6jh")) != -1) {
		switch (c) {
		case 'c': want[T_COUNTERS] = explicit[T_COUNTERS] = any = 1; break;
		case 'k': want[T_SOCKETS] = explicit[T_SOCKETS] = any = 1; break;
		case 'n': want[T_CONNS] = explicit[T_CONNS] = any = 1; break;
		case 'r': want[T_RECV] = explicit[T_RECV] = any = 1; break;
		case 's': want[T_SEND] = explicit[T_SEND] = any = 1; break;
		case 't': want[T_RETRANS] = explicit[T_RETRANS] = any = 1; break;
		case 'T': want[T_TCP] = explicit[T_TCP] = any = 1; break;
		case 'I': want[T_IB] = explicit[T_IB] = any = 1; break;
		case 'v': for (t = 0; t < T_MAX; t++) want[t] = 1; any = 1; break;
		case '6': v6 = 1; break;
		case 'j': json = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (!any)
		for (t = 0; t < T_MAX; t++)
			want[t] = 1;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		fprintf(stderr, "rds-info: socket(PF_RDS): %s%s\n", strerror(errno),
			errno == EAFNOSUPPORT ? " (is the rds module loaded?)" : "");
		return 1;
	}
	for (t = 0; t < T_MAX; t++) {
		void *buf = NULL;
		size_t len = 0;
		int isz;

		if (!want[t])
			continue;
		isz = info_get(fd, v6 ? tables[t].opt6 : tables[t].opt4, &buf, &len);
		if (isz < 0) {
			/* Absent transports (TCP, RDMA) have no table: not an error. */
			if (isz == -ENOPROTOOPT && (t == T_TCP || t == T_IB) &&
			    !explicit[t])
				continue;
			fprintf(stderr, "rds-info: %s: %s%s\n", tables[t].name,
				strerror(-isz), isz == -ENOPROTOOPT ?
				" (not provided by the loaded transports)" : "");
			bad = 1;
			continue;
		}
		if (isz && (size_t)isz < (v6 ? tables[t].size6 : tables[t].size4)) {
			fprintf(stderr, "rds-info: %s: items of %d bytes, expected %zu\n",
				tables[t].name, isz, v6 ? tables[t].size6 : tables[t].size4);
			free(buf);
			bad = 1;
			continue;
		}
		switch (t) {
		case T_COUNTERS: show_counters(buf, len, isz ? isz : 1); break;
		case T_SOCKETS: show_sockets(buf, len, isz ? isz : 1, v6); break;
		case T_CONNS: show_conns(buf, len, isz ? isz : 1, v6); break;
		case T_RECV: show_msgs("receive_queue", buf, len, isz ? isz : 1, v6); break;
		case T_SEND: show_msgs("send_queue", buf, len, isz ? isz : 1, v6); break;
		case T_RETRANS: show_msgs("retransmit_queue", buf, len, isz ? isz : 1, v6); break;
		case T_TCP: show_tcp(buf, len, isz ? isz : 1, v6); break;
		case T_IB: show_ib(buf, len, isz ? isz : 1, v6); break;
		}
		free(buf);
	}
	if (json)
		printf("%s\n", first_table ? "{}" : "}");
	close(fd);
	return bad;
}
