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
 * (or SO_RDS_TRANSPORT) to release.  release() marks the socket dead (so the
 * receive path stops queueing to it), purges its receive queue, leaves the
 * congestion monitor list and the bind table, cancels every message it still
 * has in flight (close does not linger, as in-tree) and drops the last
 * reference; the memory is freed after an RCU grace period because the
 * receive path finds sockets lock-free.
 *
 * Socket options at SOL_SOCKET are the generic ones; RDS reads sk_sndbuf/2
 * and sk_rcvbuf/2 as its payload limits.  SOL_RDS options and the TOS
 * ioctls are here, with the in-tree errnos; the MR options go to rdma.c,
 * the RDS_INFO_* tables to info.c.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/net.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/socket.h>
#include <net/sock.h>
#include <linux/sockios.h>
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

	rds_info_sock_del(rs);
	sock_orphan(sk);
	rds_clear_recv_queue(rs);
	rds_cong_remove_socket(rs);
	rds_remove_bound(rs);
	rds_send_drop_to(rs, NULL, 0);
	rds_zcopy_sock_release(rs);
	rds_rdma_drop_keys(rs);
	if (rs->rs_transport) {
		if (rs->rs_transport->sock_release)
			rs->rs_transport->sock_release(rs);
		rds_trans_put(rs->rs_transport);
		rs->rs_transport = NULL;
	}
	sock->sk = NULL;
	sock_put(sk);
	return 0;
}

/*
 * getsockname/getpeername, as in-tree: a peer name needs connect(); an
 * unbound socket reports a zero address of the family it is connected to
 * (AF_UNSPEC when not connected either).
 */
static int rds_getname(struct socket *sock, struct sockaddr *uaddr, int peer)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
	struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
	struct in6_addr addr;
	__be16 port;
	__u32 scope;
	int ret;

	lock_sock(sock->sk);
	scope = rs->rs_bound_scope_id;
	if (peer) {
		ret = -ENOTCONN;
		if (ipv6_addr_any(&rs->rs_conn_addr))
			goto out;
		addr = rs->rs_conn_addr;
		port = rs->rs_conn_port;
	} else if (ipv6_addr_any(&rs->rs_bound_addr)) {
		if (ipv6_addr_any(&rs->rs_conn_addr)) {
			memset(sin, 0, sizeof(*sin));
			sin->sin_family = AF_UNSPEC;
			ret = sizeof(*sin);
		} else if (!ipv6_addr_v4mapped(&rs->rs_conn_addr)) {
			memset(sin6, 0, sizeof(*sin6));
			sin6->sin6_family = AF_INET6;
			ret = sizeof(*sin6);
		} else {
			memset(sin, 0, sizeof(*sin));
			sin->sin_family = AF_INET;
			ret = sizeof(*sin);
		}
		goto out;
	} else {
		addr = rs->rs_bound_addr;
		port = rs->rs_bound_port;
	}

	if (ipv6_addr_v4mapped(&addr)) {
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_port = port;
		sin->sin_addr.s_addr = addr.s6_addr32[3];
		ret = sizeof(*sin);
	} else {
		memset(sin6, 0, sizeof(*sin6));
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = port;
		sin6->sin6_addr = addr;
		sin6->sin6_scope_id = scope;
		ret = sizeof(*sin6);
	}
out:
	release_sock(sock->sk);
	return ret;
}

/**
 * rds_wake_sk - wake whoever sleeps on, or polls, @rs
 * @rs: the socket
 *
 * For every event a sleeper of the socket waits for: a message or a
 * notification to read, send room, a congestion update it monitors.
 * Any context.
 */
void rds_wake_sk(struct rds_sock *rs)
{
	struct sock *sk = rds_rs_to_sk(rs);
	struct socket_wq *wq;

	rcu_read_lock();
	wq = rcu_dereference(sk->sk_wq);
	if (skwq_has_sleeper(wq))
		wake_up_interruptible_all(&wq->wait);
	rcu_read_unlock();
}

static __poll_t rds_poll(struct file *file, struct socket *sock,
			 poll_table *wait)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	unsigned long flags;
	__poll_t mask = 0;

	poll_wait(file, sk_sleep(sk), wait);
	if (READ_ONCE(rs->rs_seen_congestion))
		poll_wait(file, &rds_poll_waitq, wait);

	spin_lock_irqsave(&rs->rs_recv_lock, flags);
	if (!rs->rs_cong_monitor) {
		/* A map update may have made a destination writable again. */
		if (rds_cong_updated_since(&rs->rs_cong_track))
			mask |= EPOLLIN | EPOLLRDNORM | EPOLLWRBAND;
	} else if (rs->rs_cong_notify) {
		mask |= EPOLLIN | EPOLLRDNORM;
	}
	if (!list_empty(&rs->rs_notify_queue) || rds_zcopy_pending(rs) ||
	    (!list_empty(&rs->rs_recv_queue) &&
	     !rds_inc_held(list_first_entry(&rs->rs_recv_queue,
					    struct rds_incoming, i_item))))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock_irqrestore(&rs->rs_recv_lock, flags);

	if (rds_send_has_room(rs))
		mask |= EPOLLOUT | EPOLLWRNORM;
	if (READ_ONCE(sk->sk_err) || !skb_queue_empty_lockless(&sk->sk_error_queue))
		mask |= EPOLLERR;

	if (mask)
		WRITE_ONCE(rs->rs_seen_congestion, false);
	return mask;
}

static int rds_ioctl(struct socket *sock, unsigned int cmd, unsigned long arg)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	rds_tos_t utos, tos;
	int ret = 0;

	switch (cmd) {
	case SIOCRDSSETTOS:
		if (get_user(utos, (rds_tos_t __user *)arg))
			return -EFAULT;
		lock_sock(sk);
		/*
		 * As in-tree: only a transport with a TOS map takes a TOS;
		 * unbound and loopback-bound sockets answer ENOTTY.
		 */
		if (!rs->rs_transport ||
		    rs->rs_transport == &rds_loop_transport) {
			ret = -ENOIOCTLCMD;
		} else if (rs->rs_tos || rs->rs_conn) {
			ret = -EINVAL;
		} else {
			tos = rs->rs_transport->get_tos_map ?
			      rs->rs_transport->get_tos_map(utos) : utos;
			rs->rs_tos = tos;
		}
		release_sock(sk);
		return ret;
	case SIOCRDSGETTOS:
		lock_sock(sk);
		tos = rs->rs_tos;
		release_sock(sk);
		if (put_user(tos, (rds_tos_t __user *)arg))
			return -EFAULT;
		return 0;
	default:
		return -ENOIOCTLCMD;
	}
}

static int rds_connect(struct socket *sock, struct sockaddr *uaddr,
		       int addr_len, int flags)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	int ret = 0;

	if (addr_len < (int)offsetofend(struct sockaddr, sa_family))
		return -EINVAL;

	lock_sock(sk);
	switch (uaddr->sa_family) {
	case AF_INET: {
		struct sockaddr_in *sin = (struct sockaddr_in *)uaddr;
		__be32 a;

		if (addr_len < (int)sizeof(*sin)) {
			ret = -EINVAL;
			break;
		}
		a = sin->sin_addr.s_addr;
		if (a == htonl(INADDR_ANY)) {
			ret = -EDESTADDRREQ;
			break;
		}
		if (ipv4_is_multicast(a) || a == htonl(INADDR_BROADCAST)) {
			ret = -EINVAL;
			break;
		}
		ipv6_addr_set_v4mapped(a, &rs->rs_conn_addr);
		rs->rs_conn_port = sin->sin_port;
		break;
	}
#if IS_ENABLED(CONFIG_IPV6)
	case AF_INET6: {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)uaddr;
		int type;

		if (addr_len < (int)sizeof(*sin6)) {
			ret = -EINVAL;
			break;
		}
		type = ipv6_addr_type(&sin6->sin6_addr);
		if (!(type & IPV6_ADDR_UNICAST)) {
			__be32 a = sin6->sin6_addr.s6_addr32[3];

			if (!(type & IPV6_ADDR_MAPPED) ||
			    a == htonl(INADDR_ANY) ||
			    a == htonl(INADDR_BROADCAST) ||
			    ipv4_is_multicast(a)) {
				ret = -EPROTOTYPE;
				break;
			}
		}
		if (type & IPV6_ADDR_LINKLOCAL) {
			if (!sin6->sin6_scope_id ||
			    (!ipv6_addr_any(&rs->rs_bound_addr) &&
			     rs->rs_bound_scope_id &&
			     sin6->sin6_scope_id != rs->rs_bound_scope_id)) {
				ret = -EINVAL;
				break;
			}
			/* Only an unbound socket takes the scope from here. */
			if (ipv6_addr_any(&rs->rs_bound_addr))
				rs->rs_bound_scope_id = sin6->sin6_scope_id;
		}
		rs->rs_conn_addr = sin6->sin6_addr;
		rs->rs_conn_port = sin6->sin6_port;
		break;
	}
#endif
	default:
		ret = -EAFNOSUPPORT;
		break;
	}
	release_sock(sk);
	return ret;
}

static int rds_set_bool_option(bool *optvar, sockptr_t optval,
			       unsigned int optlen)
{
	int value;

	if (optlen < sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&value, optval, sizeof(int)))
		return -EFAULT;
	*optvar = !!value;
	return 0;
}

static int rds_cancel_sent_to(struct rds_sock *rs, sockptr_t optval,
			      unsigned int optlen)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;

	if (ipv6_addr_any(&rs->rs_bound_addr))
		return -ENOTCONN;
	if (optlen < sizeof(sin))
		return -EINVAL;
	if (optlen < sizeof(sin6)) {
		if (copy_from_sockptr(&sin, optval, sizeof(sin)))
			return -EFAULT;
		ipv6_addr_set_v4mapped(sin.sin_addr.s_addr, &sin6.sin6_addr);
		sin6.sin6_port = sin.sin_port;
	} else {
		if (copy_from_sockptr(&sin6, optval, sizeof(sin6)))
			return -EFAULT;
	}
	rds_send_drop_to(rs, &sin6.sin6_addr, sin6.sin6_port);
	return 0;
}

static int rds_set_cong_monitor(struct rds_sock *rs, sockptr_t optval,
				unsigned int optlen)
{
	unsigned long flags;
	bool on;
	int ret;

	ret = rds_set_bool_option(&on, optval, optlen);
	if (ret)
		return ret;
	rs->rs_cong_monitor = on;
	if (on) {
		rds_cong_add_socket(rs);
	} else {
		rds_cong_remove_socket(rs);
		spin_lock_irqsave(&rs->rs_recv_lock, flags);
		rs->rs_cong_mask = 0;
		rs->rs_cong_notify = 0;
		spin_unlock_irqrestore(&rs->rs_recv_lock, flags);
	}
	return 0;
}

static int rds_set_transport(struct net *net, struct rds_sock *rs,
			     sockptr_t optval, unsigned int optlen)
{
	int t_type;

	if (rs->rs_transport)
		return -EOPNOTSUPP;
	if (optlen != sizeof(int))
		return -EINVAL;
	if (copy_from_sockptr(&t_type, optval, sizeof(t_type)))
		return -EFAULT;
	if (t_type < 0 || t_type >= RDS_TRANS_COUNT)
		return -EINVAL;
	/* RDS over RDMA lives in the initial namespace only. */
	if (t_type != RDS_TRANS_TCP && !net_eq(net, &init_net))
		return -EPROTOTYPE;
	rs->rs_transport = rds_trans_get(t_type);
	if (!rs->rs_transport)
		return -ENOPROTOOPT;
	rs->rs_trans_pinned = true;
	return 0;
}

static int rds_enable_recvtstamp(struct sock *sk, sockptr_t optval,
				 unsigned int optlen, int optname)
{
	int val;

	if (optlen != sizeof(int))
		return -EFAULT;
	if (copy_from_sockptr(&val, optval, sizeof(int)))
		return -EFAULT;
	if (optname == SO_TIMESTAMP_NEW)
		sock_set_flag(sk, SOCK_TSTAMP_NEW);
	else if (val)
		sock_reset_flag(sk, SOCK_TSTAMP_NEW);
	if (val)
		sock_set_flag(sk, SOCK_RCVTSTAMP);
	else
		sock_reset_flag(sk, SOCK_RCVTSTAMP);
	return 0;
}

static int rds_recv_track_latency(struct rds_sock *rs, sockptr_t optval,
				  unsigned int optlen)
{
	struct rds_rx_trace_so trace;
	unsigned int i;

	/* The in-tree module answers EFAULT to every bad value. */
	if (optlen != sizeof(trace))
		return -EFAULT;
	if (copy_from_sockptr(&trace, optval, sizeof(trace)))
		return -EFAULT;
	if (trace.rx_traces > RDS_MSG_RX_DGRAM_TRACE_MAX)
		return -EFAULT;
	for (i = 0; i < trace.rx_traces; i++)
		if (trace.rx_trace_pos[i] >= RDS_MSG_RX_DGRAM_TRACE_MAX) {
			rs->rs_rx_traces = 0;
			return -EFAULT;
		}
	for (i = 0; i < trace.rx_traces; i++)
		rs->rs_rx_trace[i] = trace.rx_trace_pos[i];
	rs->rs_rx_traces = trace.rx_traces;
	return 0;
}

static int rds_setsockopt(struct socket *sock, int level, int optname,
			  sockptr_t optval, unsigned int optlen)
{
	struct sock *sk = sock->sk;
	struct rds_sock *rs = rds_sk_to_rs(sk);
	int ret;

	if (level != SOL_RDS)
		return -ENOPROTOOPT;

	switch (optname) {
	case RDS_CANCEL_SENT_TO:
		ret = rds_cancel_sent_to(rs, optval, optlen);
		break;
	case RDS_GET_MR:
	case RDS_GET_MR_FOR_DEST:
	case RDS_FREE_MR:
		ret = rds_rdma_setsockopt(rs, optname, optval, optlen);
		break;
	case RDS_RECVERR:
		lock_sock(sk);
		ret = rds_set_bool_option(&rs->rs_recverr, optval, optlen);
		release_sock(sk);
		break;
	case RDS_CONG_MONITOR:
		lock_sock(sk);
		ret = rds_set_cong_monitor(rs, optval, optlen);
		release_sock(sk);
		break;
	case SO_RDS_TRANSPORT:
		lock_sock(sk);
		ret = rds_set_transport(sock_net(sk), rs, optval, optlen);
		release_sock(sk);
		break;
	case SO_TIMESTAMP_OLD:
	case SO_TIMESTAMP_NEW:
		lock_sock(sk);
		ret = rds_enable_recvtstamp(sk, optval, optlen, optname);
		release_sock(sk);
		break;
	case SO_RDS_MSG_RXPATH_LATENCY:
		lock_sock(sk);
		ret = rds_recv_track_latency(rs, optval, optlen);
		release_sock(sk);
		break;
	default:
		ret = -ENOPROTOOPT;
	}
	return ret;
}

static int rds_getsockopt(struct socket *sock, int level, int optname,
			  char __user *optval, int __user *optlen)
{
	struct rds_sock *rs = rds_sk_to_rs(sock->sk);
	int len, val;

	if (level != SOL_RDS)
		return -ENOPROTOOPT;
	if (get_user(len, optlen))
		return -EFAULT;

	switch (optname) {
	case RDS_RECVERR:
		val = rs->rs_recverr;
		break;
	case SO_RDS_TRANSPORT:
		val = rs->rs_transport ? (int)rs->rs_transport->t_type :
					 (int)RDS_TRANS_NONE;
		break;
	case RDS_INFO_FIRST ... RDS_INFO_LAST:
		return rds_info_getsockopt(sock, optname, optval, optlen);
	default:
		return -ENOPROTOOPT;
	}
	if (len < (int)sizeof(int))
		return -EINVAL;
	if (put_user(val, (int __user *)optval) ||
	    put_user((int)sizeof(int), optlen))
		return -EFAULT;
	return 0;
}

static const struct proto_ops rds_proto_ops = {
	.family		= AF_RDS,
	.owner		= THIS_MODULE,
	.release	= rds_release,
	.bind		= rds_bind,
	.connect	= rds_connect,
	.socketpair	= sock_no_socketpair,
	.accept		= sock_no_accept,
	.getname	= rds_getname,
	.poll		= rds_poll,
	.ioctl		= rds_ioctl,
	.listen		= sock_no_listen,
	.shutdown	= sock_no_shutdown,
	.setsockopt	= rds_setsockopt,
	.getsockopt	= rds_getsockopt,
	.sendmsg	= rds_sendmsg,
	.recvmsg	= rds_recvmsg,
	.mmap		= sock_no_mmap,
};

static void rds_sock_destruct(struct sock *sk)
{
	struct rds_sock *rs = rds_sk_to_rs(sk);

	WARN_ON_ONCE(!list_empty(&rs->rs_send_queue));
	WARN_ON_ONCE(!list_empty(&rs->rs_recv_queue));
	WARN_ON_ONCE(!list_empty(&rs->rs_cong_item));
	rds_zcopy_sock_release(rs);	/* a socket never released */
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

	/* sk_alloc() zeroes the whole rds_sock; set what is not zero. */
	rs = rds_sk_to_rs(sk);
	spin_lock_init(&rs->rs_lock);
	spin_lock_init(&rs->rs_recv_lock);
	INIT_LIST_HEAD(&rs->rs_send_queue);
	INIT_LIST_HEAD(&rs->rs_recv_queue);
	INIT_LIST_HEAD(&rs->rs_cong_item);
	INIT_LIST_HEAD(&rs->rs_notify_queue);
	rds_zcopy_sock_init(rs);
	rds_rdma_sock_init(rs);
	rds_cong_updated_since(&rs->rs_cong_track);
	rds_info_sock_add(rs);
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

	ret = rds_stats_init();
	if (ret)
		return ret;
	ret = rds_threads_init();
	if (ret)
		goto out_stats;
	ret = rds_cong_init();
	if (ret)
		goto out_threads;
	ret = rds_conn_init();
	if (ret)
		goto out_cong;
	ret = rds_loop_init();
	if (ret)
		goto out_conn;
	ret = rds_bind_lock_init();
	if (ret)
		goto out_loop;
	ret = rds_trans_init();
	if (ret)
		goto out_bind;
	ret = rds_sysctl_init();
	if (ret)
		goto out_trans;
	ret = rds_info_init();
	if (ret)
		goto out_sysctl;
	ret = proto_register(&rds_proto, 1);
	if (ret)
		goto out_info;
	ret = sock_register(&rds_family_ops);
	if (ret)
		goto out_proto;
	return 0;

out_proto:
	proto_unregister(&rds_proto);
out_info:
	rds_info_exit();
out_sysctl:
	rds_sysctl_exit();
out_trans:
	rds_trans_exit();
out_bind:
	rds_bind_lock_destroy();
out_loop:
	rds_loop_exit();
out_conn:
	rds_conn_exit();
out_cong:
	rds_cong_exit();
out_threads:
	rds_threads_exit();
out_stats:
	rds_stats_exit();
	return ret;
}
module_init(rds_init);

static void __exit rds_exit(void)
{
	sock_unregister(AF_RDS);
	proto_unregister(&rds_proto);
	rds_info_exit();
	rds_sysctl_exit();
	rds_trans_exit();
	rds_loop_exit();
	rds_conn_exit();
	rds_bind_lock_destroy();
	rds_op_pins_exit();
	rds_threads_exit();
	rds_cong_exit();
	rds_message_exit();
	rds_stats_exit();
}
module_exit(rds_exit);

MODULE_AUTHOR("The RDS project");
MODULE_DESCRIPTION("Reliable Datagram Sockets (out-of-tree)");
MODULE_LICENSE("GPL");
/* No MODULE_ALIAS_NETPROTO: like Debian, socket(PF_RDS) does not autoload. */
