// SPDX-License-Identifier: GPL-2.0
/*
 * bind.c - the bind table: which socket owns (netns, address, port, scope).
 *
 * Theory of operation
 * ===================
 *
 * Every bound socket sits in one rhashtable keyed by struct rds_bind_key.
 * The receive path looks up the destination socket of every message here, so
 * lookups are lock-free (RCU); sockets are freed after a grace period
 * (SOCK_RCU_FREE) and a lookup takes a reference with refcount_inc_not_zero
 * semantics (sock_hold only when the socket is still in the table).
 *
 * Unlike the in-tree module the key includes the network namespace, so two
 * namespaces can bind the same address and port without seeing each other.
 *
 * Port 0 asks for any free port: the search starts at a random port and
 * walks the whole space once.  Port 1 is reserved for the kernel's probe
 * pings and cannot be bound.
 */
#include <linux/kernel.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/random.h>
#include <net/ipv6.h>
#include <net/sock.h>

#include "rds.h"

static struct rhashtable rds_bind_table;

static const struct rhashtable_params rds_bind_params = {
	.key_len	= sizeof(struct rds_bind_key),
	.key_offset	= offsetof(struct rds_sock, rs_bound),
	.head_offset	= offsetof(struct rds_sock, rs_bound_node),
	.automatic_shrinking = true,
};

static void rds_bind_key_init(struct rds_bind_key *key, struct net *net,
			      const struct in6_addr *addr, __be16 port,
			      __u32 scope_id)
{
	memset(key, 0, sizeof(*key));
	key->net = net;
	key->addr = *addr;
	key->port = port;
	key->scope_id = scope_id;
}

/**
 * rds_find_bound - find the socket bound to an address and port
 * @net: network namespace
 * @addr: address (IPv4 as v4-mapped)
 * @port: port, network order
 * @scope_id: interface for link-local addresses, 0 otherwise
 *
 * Return: the socket with a reference held (drop it with sock_put()), or
 * NULL when nothing live is bound there.
 */
struct rds_sock *rds_find_bound(struct net *net, const struct in6_addr *addr,
				__be16 port, __u32 scope_id)
{
	struct rds_bind_key key;
	struct rds_sock *rs;

	rds_bind_key_init(&key, net, addr, port, scope_id);
	rcu_read_lock();
	rs = rhashtable_lookup(&rds_bind_table, &key, rds_bind_params);
	if (rs && (sock_flag(rds_rs_to_sk(rs), SOCK_DEAD) ||
		   !refcount_inc_not_zero(&rds_rs_to_sk(rs)->sk_refcnt)))
		rs = NULL;
	rcu_read_unlock();
	return rs;
}

/*
 * Insert @rs under @addr and *@port (0: any free port).  On success the
 * table holds a socket reference and *@port is the port bound.
 */
static int rds_add_bound(struct rds_sock *rs, struct net *net,
			 const struct in6_addr *addr, __be16 *port,
			 __u32 scope_id)
{
	u32 first, tries, p;
	int ret;

	if (*port) {
		if (be16_to_cpu(*port) == RDS_PROBE_PORT)
			return -EINVAL;
		first = be16_to_cpu(*port);
		tries = 1;
	} else {
		first = 2 + get_random_u32_below(65536 - 2);
		tries = 65536 - 2;
	}

	for (p = first; tries; tries--, p = (p >= 65535) ? 2 : p + 1) {
		rds_bind_key_init(&rs->rs_bound, net, addr, cpu_to_be16(p),
				  scope_id);
		sock_hold(rds_rs_to_sk(rs));
		ret = rhashtable_lookup_insert_fast(&rds_bind_table,
						    &rs->rs_bound_node,
						    rds_bind_params);
		if (!ret) {
			*port = rs->rs_bound_port;
			return 0;
		}
		sock_put(rds_rs_to_sk(rs));
		if (ret != -EEXIST)
			break;
		ret = -EADDRINUSE;
	}
	memset(&rs->rs_bound, 0, sizeof(rs->rs_bound));
	return ret;
}

/**
 * rds_remove_bound - take a socket out of the bind table
 * @rs: the socket; unbound sockets are ignored
 *
 * Drops the table's reference.  Called from release() only, so that a
 * socket's binding never changes while it is in use.
 */
void rds_remove_bound(struct rds_sock *rs)
{
	if (ipv6_addr_any(&rs->rs_bound_addr))
		return;
	rhashtable_remove_fast(&rds_bind_table, &rs->rs_bound_node,
			       rds_bind_params);
	sock_put(rds_rs_to_sk(rs));
}

/*
 * Parse and check a user sockaddr.  IPv4 comes back as a v4-mapped
 * address; the errnos are the in-tree module's.
 */
static int rds_bind_parse(const struct sockaddr *uaddr, int addr_len,
			  struct in6_addr *addr, __be16 *port, __u32 *scope_id)
{
	*scope_id = 0;
	if (addr_len < (int)offsetofend(struct sockaddr, sa_family))
		return -EINVAL;

	if (uaddr->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)uaddr;
		__be32 a = sin->sin_addr.s_addr;

		if (addr_len < (int)sizeof(*sin) || a == htonl(INADDR_ANY) ||
		    a == htonl(INADDR_BROADCAST) || ipv4_is_multicast(a))
			return -EINVAL;
		ipv6_addr_set_v4mapped(a, addr);
		*port = sin->sin_port;
		return 0;
	}

	if (IS_ENABLED(CONFIG_IPV6) && uaddr->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)uaddr;
		int type;

		if (addr_len < (int)sizeof(*sin6))
			return -EINVAL;
		type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(type & IPV6_ADDR_UNICAST)) {
			__be32 a = sin6->sin6_addr.s6_addr32[3];

			if (!(type & IPV6_ADDR_MAPPED) || a == htonl(INADDR_ANY) ||
			    a == htonl(INADDR_BROADCAST) || ipv4_is_multicast(a))
				return -EINVAL;
		}
		if (type & IPV6_ADDR_LINKLOCAL) {
			if (!sin6->sin6_scope_id)
				return -EINVAL;
			*scope_id = sin6->sin6_scope_id;
		}
		*addr = sin6->sin6_addr;
		*port = sin6->sin6_port;
		return 0;
	}

	return -EINVAL;
}

/**
 * rds_bind - bind(2) for PF_RDS
 * @sock: the socket
 * @uaddr: sockaddr_in or sockaddr_in6
 * @addr_len: its length
 *
 * Return: 0, or
 *   %-EINVAL - bad address or length, already bound, or port 1;
 *   %-EADDRNOTAVAIL - no transport can serve the address;
 *   %-ENOPROTOOPT - the transport set with SO_RDS_TRANSPORT cannot;
 *   %-EADDRINUSE - the port (or every port) is taken;
 *   %-ENOMEM.
 */
int rds_bind(struct socket *sock, struct sockaddr *uaddr, int addr_len)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	struct rds_transport *trans;
	struct in6_addr addr;
	__u32 scope_id;
	__be16 port;
	int ret;

	ret = rds_bind_parse(uaddr, addr_len, &addr, &port, &scope_id);
	if (ret)
		return ret;

	lock_sock(sk);
	if (!ipv6_addr_any(&rs->rs_bound_addr)) {
		ret = -EINVAL;
		goto out;
	}
	/* A connected socket's link-local scopes must agree. */
	if (!ipv6_addr_any(&rs->rs_conn_addr) && scope_id &&
	    rs->rs_bound_scope_id && scope_id != rs->rs_bound_scope_id) {
		ret = -EINVAL;
		goto out;
	}

	trans = rs->rs_transport;
	if (trans) {
		/* A pinned transport must take the address itself. */
		ret = -ENOPROTOOPT;
		if (trans->laddr_check)
			ret = trans->laddr_check(sock_net(sk), &addr, scope_id);
		/* Out of memory is not "this transport cannot". */
		if (ret && ret != -ENOMEM)
			ret = -ENOPROTOOPT;
		if (ret)
			goto out;
	} else {
		trans = rds_trans_get_preferred(sock_net(sk), &addr, scope_id);
		if (IS_ERR(trans)) {
			ret = PTR_ERR(trans);
			goto out;
		}
	}

	sock_set_flag(sk, SOCK_RCU_FREE);
	ret = rds_add_bound(rs, sock_net(sk), &addr, &port, scope_id);
	if (ret) {
		if (trans != rs->rs_transport)
			rds_trans_put(trans);
		goto out;
	}
	rs->rs_transport = trans;
out:
	release_sock(sk);
	return ret;
}

int rds_bind_lock_init(void)
{
	return rhashtable_init(&rds_bind_table, &rds_bind_params);
}

void rds_bind_lock_destroy(void)
{
	rhashtable_destroy(&rds_bind_table);
}
