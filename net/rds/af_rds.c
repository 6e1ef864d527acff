// SPDX-License-Identifier: GPL-2.0
/*
 * af_rds.c - the PF_RDS socket family.
 *
 * Theory of operation
 * ===================
 *
 * An RDS socket is a SOCK_SEQPACKET datagram endpoint named by an IP address
 * and a 16-bit RDS port.  One socket can exchange messages with any number of
 * peers; the reliable, ordered delivery comes from the connection beneath,
 * one per (local address, peer address, TOS), shared by every socket of the
 * node.  This file holds the family registration, socket creation and
 * release, and the dispatch of the socket calls to the files that implement
 * them (bind.c, send.c, recv.c, ...).
 *
 * Lifetime: a socket holds a reference on its transport's module from bind
 * to release.  release() takes the socket out of the bind table first, so no
 * new message can be queued to it, then purges what is queued and drops the
 * last reference.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <net/sock.h>
#include <net/ipv6.h>

#include "rds.h"

static struct proto rds_proto = {
	.name	  = "RDS",
	.owner	  = THIS_MODULE,
	.obj_size = sizeof(struct rds_sock),
};

static int rds_release(struct socket *sock)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs;

	if (!sk)
		return 0;
	rs = rds_sk_to_rs(sk);

	sock_orphan(sk);
	rds_remove_bound(rs);
	if (rs->rs_transport) {
		rds_trans_put(rs->rs_transport);
		rs->rs_transport = NULL;
	}
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/*
 * getsockname/getpeername: an unbound (or unconnected) socket reports
 * AF_UNSPEC-free zeroes in the family of the sockaddr it would have, which
 * is what the in-tree module does: sockaddr_in with zero address and port.
 */
static int rds_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
	struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
	const struct in6_addr *addr;
	__be16 port;
	__u32 scope;

	lock_sock(sock->sk);
	if (peer) {
		addr = &rs->rs_conn_addr;
		port = rs->rs_conn_port;
		scope = rs->rs_bound_scope_id;
		if (ipv6_addr_any(addr) && !port) {
			release_sock(sock->sk);
			return -ENOTCONN;
		}
	} else {
		addr = &rs->rs_bound_addr;
		port = rs->rs_bound_port;
		scope = rs->rs_bound_scope_id;
	}

	if (ipv6_addr_any(addr) || ipv6_addr_v4mapped(addr)) {
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
		release_sock(sock->sk);
		return sizeof(*sin);
	}

	memset(sin6, 0, sizeof(*sin6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = port;
	sin6->sin6_addr = *addr;
	if (ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL)
		sin6->sin6_scope_id = scope;
	release_sock(sock->sk);
	return sizeof(*sin6);
}

static const struct proto_ops rds_proto_ops = {
	.family		= AF_RDS,
	.owner		= THIS_MODULE,
	.release	= rds_release,
	.bind		= rds_bind,
	.connect	= sock_no_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= rds_getname,
	.poll		= datagram_poll,
	.ioctl		= sock_no_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.sendmsg	= sock_no_sendmsg,
	.recvmsg	= sock_no_recvmsg,
	.mmap		= sock_no_mmap,
};

static void rds_sock_destruct(struct sock *sk)
{
}

static int rds_create(struct net *net, struct socket *sock, int protocol,
		      int kern)
{
	struct rds_sock *rs;
	struct sock *sk;

	if (sock->type != SOCK_SEQPACKET || protocol)
		return -ESOCKTNOSUPPORT;

	sk = sk_alloc(net, AF_RDS, GFP_KERNEL, &rds_proto, kern);
	if (!sk)
		return -ENOMEM;

	sock_init_data(sock, sk);
	sock->ops = &rds_proto_ops;
	sk->sk_protocol = protocol;
	sk->sk_destruct = rds_sock_destruct;

	rs = rds_sk_to_rs(sk);
	memset(&rs->rs_bound_addr, 0, sizeof(rs->rs_bound_addr));
	rs->rs_bound_port = 0;
	rs->rs_bound_scope_id = 0;
	memset(&rs->rs_conn_addr, 0, sizeof(rs->rs_conn_addr));
	rs->rs_conn_port = 0;
	rs->rs_transport = NULL;
	return 0;
}

static const struct net_proto_family rds_family_ops = {
	.family	= AF_RDS,
	.create	= rds_create,
	.owner	= THIS_MODULE,
};

static int __init rds_init(void)
{
	int ret;

	ret = rds_bind_lock_init();
	if (ret)
		return ret;
	ret = rds_trans_init();
	if (ret)
		goto out_bind;
	ret = proto_register(&rds_proto, 1);
	if (ret)
		goto out_trans;
	ret = sock_register(&rds_family_ops);
	if (ret)
		goto out_proto;
	return 0;

out_proto:
	proto_unregister(&rds_proto);
out_trans:
	rds_trans_exit();
out_bind:
	rds_bind_lock_destroy();
	return ret;
}
module_init(rds_init);

static void __exit rds_exit(void)
{
	sock_unregister(AF_RDS);
	proto_unregister(&rds_proto);
	rds_trans_exit();
	rds_bind_lock_destroy();
}
module_exit(rds_exit);

MODULE_AUTHOR("The RDS project");
MODULE_DESCRIPTION("Reliable Datagram Sockets (out-of-tree)");
MODULE_LICENSE("GPL");
/* No MODULE_ALIAS_NETPROTO: like Debian, socket(PF_RDS) does not autoload. */
