// SPDX-License-Identifier: GPL-2.0
/*
 * transport.c - the registry of transports.
 *
 * Theory of operation
 * ===================
 *
 * Transports (rds_rdma.ko, the loopback transport) register a struct
 * rds_transport.  A socket picks one at bind() time, the first whose
 * ->laddr_check() accepts the local address, or the one named with
 * SO_RDS_TRANSPORT, and holds a reference on the transport's module until
 * it is released, so a transport module cannot go away under a socket.
 * Unregistering destroys the transport's remaining connections (which no
 * socket can reference any more) before the module's code goes away.
 * The list is short and read only at bind time: a rwsem is enough.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rwsem.h>
#include <linux/in.h>
#include <net/ipv6.h>

#include "rds.h"

static LIST_HEAD(rds_transports);
static DECLARE_RWSEM(rds_trans_sem);

/**
 * rds_trans_register - make a transport available to sockets
 * @trans: the transport; t_type must be unique
 *
 * Return: 0, %-EINVAL when it was built for another RDS_TRANSPORT_ABI, or
 * %-EEXIST when a transport of that type is registered.
 */
int rds_trans_register(struct rds_transport *trans)
{
	struct rds_transport *t;
	int ret = 0;

	if (trans->t_abi != RDS_TRANSPORT_ABI) {
		pr_err("RDS: %.16s transport built for transport ABI %u, rds.ko has %u: rebuild both modules together\n",
		       trans->t_name, trans->t_abi, RDS_TRANSPORT_ABI);
		return -EINVAL;
	}
	down_write(&rds_trans_sem);
	list_for_each_entry(t, &rds_transports, t_item) {
		if (t->t_type == trans->t_type) {
			ret = -EEXIST;
			goto out;
		}
	}
	list_add_tail(&trans->t_item, &rds_transports);
	pr_info("RDS: %s transport registered\n", trans->t_name);
out:
	up_write(&rds_trans_sem);
	return ret;
}
EXPORT_SYMBOL_GPL(rds_trans_register);

void rds_trans_unregister(struct rds_transport *trans)
{
	down_write(&rds_trans_sem);
	list_del_init(&trans->t_item);
	up_write(&rds_trans_sem);
	/*
	 * No socket uses the transport any more (each pins its module), and
	 * no new connection can pick it; tear down what is left.
	 */
	rds_conn_destroy_trans(trans);
	pr_info("RDS: %s transport unregistered\n", trans->t_name);
}
EXPORT_SYMBOL_GPL(rds_trans_unregister);

void rds_trans_put(struct rds_transport *trans)
{
	if (trans)
		module_put(trans->t_owner);
}

/**
 * rds_trans_get - find a transport by its RDS_TRANS_* type
 * @t_type: the type
 *
 * Return: the transport with its module pinned, or NULL.
 */
struct rds_transport *rds_trans_get(int t_type)
{
	struct rds_transport *t, *found = NULL;

	down_read(&rds_trans_sem);
	list_for_each_entry(t, &rds_transports, t_item) {
		if (t->t_type == t_type && try_module_get(t->t_owner)) {
			found = t;
			break;
		}
	}
	up_read(&rds_trans_sem);
	return found;
}

/**
 * rds_trans_get_preferred - the transport that serves a local address
 * @net: namespace of the socket
 * @addr: the address being bound
 * @scope_id: its scope, for link-local IPv6
 *
 * A loopback address (127.0.0.0/8, also v4-mapped, and ::1) is served by
 * the loopback transport, in any namespace and without asking the others,
 * as in-tree; no RDMA device ever owns one.
 *
 * Return: the transport with its module pinned, ERR_PTR(-ENOMEM) if a
 * transport could not tell for lack of memory and none other took the
 * address, or ERR_PTR(-EADDRNOTAVAIL).
 */
struct rds_transport *rds_trans_get_preferred(struct net *net,
					      const struct in6_addr *addr,
					      __u32 scope_id)
{
	struct rds_transport *t, *found = ERR_PTR(-EADDRNOTAVAIL);
	int ret;

	if (rds_addr_is_loopback(addr)) {
		__module_get(rds_loop_transport.t_owner);
		return &rds_loop_transport;
	}

	down_read(&rds_trans_sem);
	list_for_each_entry(t, &rds_transports, t_item) {
		if (!t->laddr_check || !try_module_get(t->t_owner))
			continue;
		ret = t->laddr_check(net, addr, scope_id);
		if (!ret) {
			found = t;
			break;
		}
		if (ret == -ENOMEM)
			found = ERR_PTR(-ENOMEM);
		module_put(t->t_owner);
	}
	up_read(&rds_trans_sem);
	return found;
}

/**
 * rds_trans_info_counters - every transport's RDS_INFO_COUNTERS rows
 * @it: the pass
 *
 * In registration order, after rds.ko's own counters.  Process context.
 */
void rds_trans_info_counters(struct rds_info_iter *it)
{
	struct rds_transport *t;

	down_read(&rds_trans_sem);
	list_for_each_entry(t, &rds_transports, t_item)
		if (t->info_counters)
			t->info_counters(it);
	up_read(&rds_trans_sem);
}

int rds_trans_init(void)
{
	return 0;
}

void rds_trans_exit(void)
{
	WARN_ON(!list_empty(&rds_transports));
}
