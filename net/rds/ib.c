// SPDX-License-Identifier: GPL-2.0
/*
 * ib.c - rds_rdma.ko: the device client and the transport registration.
 *
 * Theory of operation
 * ===================
 *
 * rds_rdma.ko registers an ib_client.  For every RDMA device that appears we
 * record its capabilities once (FRWR, send-with-invalidate, atomics, masked
 * atomics, iWARP) in a struct rds_ib_device, allocate the device's PD, and
 * keep the record on a list.  Connections and MR pools take references on
 * the record; ->remove() unlists it, drops the client's reference and the
 * last put frees the PD.
 *
 * A socket may bind an address only when rdma_cm can bind a cm_id to it and
 * the device it resolves to is one we manage.  RDS over RDMA lives in the
 * initial network namespace only (rdma_cm ids are made there).  The RDMA
 * calls of a socket (GET_MR, MAP, atomics, flush) need that device again:
 * rds_ib_sock_device() caches it in the socket, valid until an address or
 * a device comes or goes (a generation bumped by the inetaddr/inet6addr
 * notifiers and by ->add()/->remove()), so the hot path makes no cm_id.
 *
 * Device instances: a device removed and added again (rdma link
 * delete/add, a driver reload) is a new instance, with a fresh registration
 * clock and cool-down table (ib_mr.c), and the HCA may number its MRs from
 * the start again, so an rkey of the old instance can come back.  Each
 * instance therefore gets an epoch, kept per node GUID for the life of the
 * module (rds_ib_guid_epoch(): the previous instance's plus one, random for
 * a GUID not seen before), which ib_mr.c puts into bits 21..30 of every
 * MR's iova: a cookie of any of the last 1023 instances of that GUID,
 * used within the length of its MR, addresses no byte of a new
 * instance's MRs, whatever rkey they get.
 *
 * Port events: the record listens for its device's events; PORT_ACTIVE
 * destroys the cm_ids that endpoints destroyed while the port was down
 * left behind (ib_cm.c, "Parked cm_ids").
 *
 * Device removal: every endpoint (ib_cm.c) that uses a device is on the
 * device record's list.  ->remove() marks the record dead so no new
 * endpoint attaches, drops the paths of the endpoints on it and waits until
 * their shutdown destroyed them all; only then are the PD and the record
 * released, before the device goes away.  Since rdma_cm's own client was
 * registered before ours, our ->remove() runs first.
 *
 * Module unload: stop the listeners (no new passive connections), then
 * rds_trans_unregister() shuts down and frees every connection of the
 * transport, cm_ids parked on a down port get a bounded wait for it to
 * come back, then the device client goes.
 */
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/rwsem.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <linux/inetdevice.h>
#include <net/ipv6.h>
#include <net/addrconf.h>

#include "ib.h"

static struct ib_client rds_ib_client;
struct workqueue_struct *rds_ib_wq;

unsigned int rds_ib_retry_count = RDS_IB_DEFAULT_RETRY_COUNT;

/* The RC retry_cnt field of the QP has 3 bits. */
RDS_PARAM_UINT(rds_ib_retry_count, rds_ib_retry_count, 0, 7, 0444,
	       " Number of hw retries before reporting an error (0..7, default 6; 7 is forever on rxe)");
unsigned int rds_ib_ack_timeout;
/* The RC QP's 5-bit local ACK timeout exponent; 0: rdma_cm's default. */
RDS_PARAM_UINT(rds_ib_ack_timeout, rds_ib_ack_timeout, 0, 31, 0644,
	       " Local ACK timeout of new connections, 4.096 us << n (0..31, default 0: rdma_cm's, about 1 s on RoCE)");
unsigned int rds_ib_rdma_kick_ms = RDS_IB_DEFAULT_RDMA_KICK_MS;
RDS_PARAM_UINT(rds_ib_rdma_kick_ms, rds_ib_rdma_kick_ms, 10, 600000, 0644,
	       " ms without an RDMA completion before the QP is kicked (default 1000)");
unsigned int rds_ib_rdma_timeout_ms = RDS_IB_DEFAULT_RDMA_TIMEOUT_MS;
RDS_PARAM_UINT(rds_ib_rdma_timeout_ms, rds_ib_rdma_timeout_ms, 0, 3600000, 0644,
	       " ms without an RDMA completion before the connection is dropped (0: never; default 60000)");
static LIST_HEAD(rds_ib_devices);
static DECLARE_RWSEM(rds_ib_devices_sem);
/* Bumped when an address or a device comes or goes (rds_ib_sock_device()). */
static atomic_t rds_ib_dev_gen = ATOMIC_INIT(0);

/*
 * The last epoch given to each node GUID, most recently used last; at most
 * RDS_IB_GUID_EPOCHS records (the least recently used one is forgotten).
 * Protected by rds_ib_devices_sem.
 */
struct rds_ib_guid_rec {
	struct list_head	gr_item;
	__be64			gr_guid;
	u32			gr_epoch;
};

#define RDS_IB_GUID_EPOCHS	64

static LIST_HEAD(rds_ib_guid_recs);
static unsigned int rds_ib_guid_nr;

/**
 * rds_ib_guid_epoch - the iova epoch of a new instance of a device
 * @dev: the device being added
 * @spare: a record allocated beforehand, taken (set to NULL) when used
 *
 * Caller holds rds_ib_devices_sem for writing.  A GUID seen before gets
 * its last epoch plus one (modulo 2^RDS_MR_IOVA_EPOCH_BITS), so the last
 * 1023 instances of a device never share an epoch (devices that share a
 * GUID share that count); a new GUID (or one that cannot be recorded, or
 * one forgotten after RDS_IB_GUID_EPOCHS others) gets a random epoch, as do
 * all devices after a module reload.
 *
 * Return: the epoch, unshifted.
 */
static u32 rds_ib_guid_epoch(struct ib_device *dev,
			     struct rds_ib_guid_rec **spare)
{
	const u32 mask = (1U << RDS_MR_IOVA_EPOCH_BITS) - 1;
	struct rds_ib_guid_rec *gr;

	lockdep_assert_held_write(&rds_ib_devices_sem);
	list_for_each_entry(gr, &rds_ib_guid_recs, gr_item) {
		if (gr->gr_guid == dev->node_guid) {
			gr->gr_epoch = (gr->gr_epoch + 1) & mask;
			list_move_tail(&gr->gr_item, &rds_ib_guid_recs);
			return gr->gr_epoch;
		}
	}
	if (rds_ib_guid_nr >= RDS_IB_GUID_EPOCHS) {
		gr = list_first_entry(&rds_ib_guid_recs,
				      struct rds_ib_guid_rec, gr_item);
		list_del(&gr->gr_item);
		rds_ib_guid_nr--;
	} else {
		gr = *spare;
		if (!gr)
			return get_random_u32() & mask;
		*spare = NULL;
	}
	gr->gr_guid = dev->node_guid;
	gr->gr_epoch = get_random_u32() & mask;
	list_add_tail(&gr->gr_item, &rds_ib_guid_recs);
	rds_ib_guid_nr++;
	return gr->gr_epoch;
}

/* Module unload or failed load, the client unregistered: forget the GUIDs. */
static void rds_ib_guid_forget(void)
{
	struct rds_ib_guid_rec *gr, *tmp;

	down_write(&rds_ib_devices_sem);
	list_for_each_entry_safe(gr, tmp, &rds_ib_guid_recs, gr_item) {
		list_del(&gr->gr_item);
		kfree(gr);
	}
	rds_ib_guid_nr = 0;
	up_write(&rds_ib_devices_sem);
}

static void rds_ib_device_free(struct kref *ref)
{
	struct rds_ib_device *rid = container_of(ref, struct rds_ib_device,
						 rid_ref);

	if (rid->rid_pd)
		ib_dealloc_pd(rid->rid_pd);
	kfree(rid);
}

void rds_ib_device_put(struct rds_ib_device *rid)
{
	kref_put(&rid->rid_ref, rds_ib_device_free);
}

/**
 * rds_ib_device_get - our record of a verbs device
 * @dev: the verbs device
 *
 * Return: the record with a reference held, or NULL if we do not manage it.
 */
struct rds_ib_device *rds_ib_device_get(struct ib_device *dev)
{
	struct rds_ib_device *rid, *found = NULL;

	down_read(&rds_ib_devices_sem);
	list_for_each_entry(rid, &rds_ib_devices, rid_item) {
		if (rid->rid_dev == dev && kref_get_unless_zero(&rid->rid_ref)) {
			found = rid;
			break;
		}
	}
	up_read(&rds_ib_devices_sem);
	return found;
}

/* A port came up: CM messages can go out again (rds_ib_cm_unpark()). */
static void rds_ib_port_event(struct ib_event_handler *handler,
			      struct ib_event *event)
{
	struct rds_ib_device *rid = container_of(handler, struct rds_ib_device,
						 rid_events);

	if (event->event == IB_EVENT_PORT_ACTIVE)
		mod_delayed_work(rds_ib_wq, &rid->rid_unpark_work, 0);
}

static int rds_ib_add_one(struct ib_device *dev)
{
	const struct ib_device_attr *attr = &dev->attrs;
	struct rds_ib_guid_rec *spare;
	struct rds_ib_device *rid;
	int ret;

	rid = kzalloc(sizeof(*rid), GFP_KERNEL);
	if (!rid)
		return -ENOMEM;
	rid->rid_dev = dev;
	kref_init(&rid->rid_ref);
	rid->rid_frwr = !!(attr->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS);
	rid->rid_max_frpl = rid->rid_frwr ? attr->max_fast_reg_page_list_len : 0;
	rid->rid_send_inv = rid->rid_frwr;
	rid->rid_iwarp = rdma_protocol_iwarp(dev, rdma_start_port(dev));
	rid->rid_atomic_cap = rid->rid_iwarp ? IB_ATOMIC_NONE : attr->atomic_cap;
	rid->rid_masked_atomic_cap = rid->rid_iwarp ? IB_ATOMIC_NONE :
				     attr->masked_atomic_cap;
	rid->rid_max_wrs = attr->max_qp_wr;
	rid->rid_max_cqe = attr->max_cqe;
	rid->rid_max_sge = attr->max_send_sge;
	rid->rid_max_rd_atom = attr->max_qp_rd_atom;
	rid->rid_max_init_rd_atom = attr->max_qp_init_rd_atom;
	spin_lock_init(&rid->rid_lock);
	INIT_LIST_HEAD(&rid->rid_eps);
	init_waitqueue_head(&rid->rid_wait);
	INIT_LIST_HEAD(&rid->rid_parked);
	INIT_DELAYED_WORK(&rid->rid_unpark_work, rds_ib_unpark_worker);
	if (rid->rid_max_wrs < 4 || rid->rid_max_cqe < 4 ||
	    rid->rid_max_sge < 2) {
		kfree(rid);
		return -EOPNOTSUPP;
	}
	rid->rid_pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(rid->rid_pd)) {
		ret = PTR_ERR(rid->rid_pd);
		rid->rid_pd = NULL;
		kfree(rid);
		return ret;
	}

	/*
	 * MSG_ZEROCOPY fragments take up to 1 + RDS_ZCOPY_MAX_SGES SGEs,
	 * and a message may go out on any device; one without them turns
	 * zerocopy off for good (copied instead) before any endpoint can
	 * use it.  A message pinned before (a device hot-added later) is
	 * not covered: see rds.rst, Zero-copy sends.
	 */
	if (rid->rid_max_sge < 1 + RDS_ZCOPY_MAX_SGES &&
	    READ_ONCE(rds_ib_transport.t_zcopy_sges)) {
		WRITE_ONCE(rds_ib_transport.t_zcopy_sges, 0);
		pr_info("rds_rdma: %s has %u send SGEs: MSG_ZEROCOPY payloads are copied from now on\n",
			dev_name(&dev->dev), rid->rid_max_sge);
	}

	INIT_IB_EVENT_HANDLER(&rid->rid_events, dev, rds_ib_port_event);
	ib_register_event_handler(&rid->rid_events);

	spare = kmalloc(sizeof(*spare), GFP_KERNEL);
	down_write(&rds_ib_devices_sem);
	rid->rid_iova_epoch = rds_ib_guid_epoch(dev, &spare);
	list_add_tail(&rid->rid_item, &rds_ib_devices);
	up_write(&rds_ib_devices_sem);
	kfree(spare);
	atomic_inc(&rds_ib_dev_gen);
	ib_set_client_data(dev, &rds_ib_client, rid);

	pr_info("RDS/RDMA: %s: frwr %d (%u pages) send_inv %d atomic %d masked_atomic %d%s epoch %u\n",
		dev_name(&dev->dev), rid->rid_frwr, rid->rid_max_frpl,
		rid->rid_send_inv, rid->rid_atomic_cap,
		rid->rid_masked_atomic_cap, rid->rid_iwarp ? " iwarp" : "",
		rid->rid_iova_epoch);
	return 0;
}

static void rds_ib_remove_one(struct ib_device *dev, void *client_data)
{
	struct rds_ib_device *rid = client_data;

	if (!rid)
		return;
	down_write(&rds_ib_devices_sem);
	list_del_init(&rid->rid_item);
	up_write(&rds_ib_devices_sem);

	spin_lock(&rid->rid_lock);
	rid->rid_dead = true;
	spin_unlock(&rid->rid_lock);
	atomic_inc(&rds_ib_dev_gen);
	ib_unregister_event_handler(&rid->rid_events);
	rds_ib_device_drop_eps(rid);
	/* No endpoint is left to park an id, no event to queue the worker. */
	cancel_delayed_work_sync(&rid->rid_unpark_work);
	rds_ib_cm_unpark(rid, true);
	rds_ib_mr_device_remove(rid);
	/*
	 * No endpoint uses the PD any more and none can attach; free it now,
	 * while the device still exists.  Other references (a bind looking
	 * the device up) only read the record.
	 */
	ib_dealloc_pd(rid->rid_pd);
	rid->rid_pd = NULL;
	rds_ib_device_put(rid);
}

static struct ib_client rds_ib_client = {
	.name	= "rds_rdma",
	.add	= rds_ib_add_one,
	.remove	= rds_ib_remove_one,
};

static int rds_ib_cm_noop_handler(struct rdma_cm_id *id,
				  struct rdma_cm_event *event)
{
	return 0;
}

/**
 * rds_ib_addr_device - which of our devices owns a local address
 * @addr: the address (IPv4 as v4-mapped)
 * @scope_id: interface of a link-local IPv6 address
 *
 * Binds a throw-away cm_id to the address; rdma_cm then says which device
 * owns it.  Process context; costs an rdma_cm id, so callers cache the
 * answer (rds_ib_sock_device()).
 *
 * Return: the record with a reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EADDRNOTAVAIL) when no device of ours has the address.
 */
static struct rds_ib_device *rds_ib_addr_device(const struct in6_addr *addr,
						__u32 scope_id)
{
	struct sockaddr_storage ss = {};
	struct rds_ib_device *rid = ERR_PTR(-EADDRNOTAVAIL);
	struct rdma_cm_id *id;
	int ret;

	if (ipv6_addr_v4mapped(addr)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = addr->s6_addr32[3];
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_addr = *addr;
		sin6->sin6_scope_id = scope_id;
	}
	rds_ib_stats_inc(s_ib_dev_lookups);
	id = rdma_create_id(&init_net, rds_ib_cm_noop_handler, NULL,
			    RDMA_PS_TCP, IB_QPT_RC);
	if (IS_ERR(id))
		return ERR_CAST(id);
	ret = rdma_bind_addr(id, (struct sockaddr *)&ss);
	if (!ret && id->device)
		rid = rds_ib_device_get(id->device) ?: rid;
	else if (ret == -ENOMEM)
		rid = ERR_PTR(-ENOMEM);
	rdma_destroy_id(id);
	return rid;
}

/**
 * rds_ib_laddr_check - may a socket bind @addr on this transport?
 * @net: namespace of the socket
 * @addr: the address (IPv4 as v4-mapped)
 * @scope_id: interface of a link-local IPv6 address
 *
 * Return: 0 if one of our devices owns the address, or
 *   %-EPROTOTYPE - outside the initial network namespace;
 *   %-EADDRNOTAVAIL - no RDMA device (of ours) has the address;
 *   %-ENOMEM.
 */
static int rds_ib_laddr_check(struct net *net, const struct in6_addr *addr,
			      __u32 scope_id)
{
	struct rds_ib_device *rid;

	if (!net_eq(net, &init_net))
		return -EPROTOTYPE;

	if (!ipv6_addr_v4mapped(addr)) {
		if (!IS_ENABLED(CONFIG_IPV6) || !ipv6_mod_enabled())
			return -EADDRNOTAVAIL;
		/*
		 * rdma_bind_addr() accepts any link-local address on a
		 * valid interface; make sure it is really configured.
		 */
		if ((ipv6_addr_type(addr) & IPV6_ADDR_LINKLOCAL)) {
			struct net_device *ndev;
			bool ok;

			rcu_read_lock();
			ndev = dev_get_by_index_rcu(net, scope_id);
			ok = ndev && ipv6_chk_addr(net, addr, ndev, 1);
			rcu_read_unlock();
			if (!ok)
				return -EADDRNOTAVAIL;
		}
	}
	rid = rds_ib_addr_device(addr, scope_id);
	if (IS_ERR(rid))
		return PTR_ERR(rid);
	rds_ib_device_put(rid);
	return 0;
}

/**
 * rds_ib_sock_device - the device behind a bound socket's address
 * @rs: the socket (bound: only then may RDMA calls reach the transport)
 *
 * Looked up once and cached in the socket with a reference on the record,
 * which only pins the record (device removal frees the PD regardless).
 * The cache is valid while the record is alive and no address or device
 * came or went since (rds_ib_dev_gen, bumped by the address notifiers and
 * the device client), so an address moved to another HCA is found again.
 * Any context that may sleep on a miss: process context.
 *
 * Return: the record with a reference, ERR_PTR(-ENOMEM), or
 * ERR_PTR(-EADDRNOTAVAIL) when no device of ours has the address (any
 * more).
 */
struct rds_ib_device *rds_ib_sock_device(struct rds_sock *rs)
{
	unsigned int gen = atomic_read(&rds_ib_dev_gen);
	struct rds_ib_device *rid, *old;
	unsigned long flags;

	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	rid = rs->rs_trans_dev;
	if (rid && rs->rs_trans_dev_gen == gen && !READ_ONCE(rid->rid_dead)) {
		kref_get(&rid->rid_ref);
		spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
		return rid;
	}
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);

	rid = rds_ib_addr_device(&rs->rs_bound_addr, rs->rs_bound_scope_id);
	if (IS_ERR(rid))
		return rid;
	/* Only our sockets call ->sock_release() on us. */
	if (rs->rs_transport != &rds_ib_transport)
		return rid;
	kref_get(&rid->rid_ref);		/* the cache's */
	spin_lock_irqsave(&rs->rs_rdma_lock, flags);
	old = rs->rs_trans_dev;
	rs->rs_trans_dev = rid;
	rs->rs_trans_dev_gen = gen;
	spin_unlock_irqrestore(&rs->rs_rdma_lock, flags);
	if (old)
		rds_ib_device_put(old);
	return rid;
}

/* ->sock_release(): drop the socket's cached device (close(), no races). */
static void rds_ib_sock_release(struct rds_sock *rs)
{
	struct rds_ib_device *rid = rs->rs_trans_dev;

	rs->rs_trans_dev = NULL;
	if (rid)
		rds_ib_device_put(rid);
}

static int rds_ib_addr_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	atomic_inc(&rds_ib_dev_gen);
	return NOTIFY_DONE;
}

static struct notifier_block rds_ib_inetaddr_nb = {
	.notifier_call = rds_ib_addr_event,
};

static struct notifier_block rds_ib_inet6addr_nb = {
	.notifier_call = rds_ib_addr_event,
};

static void rds_ib_addr_notifiers(bool on)
{
	if (on) {
		register_inetaddr_notifier(&rds_ib_inetaddr_nb);
		if (IS_ENABLED(CONFIG_IPV6))
			register_inet6addr_notifier(&rds_ib_inet6addr_nb);
	} else {
		unregister_inetaddr_notifier(&rds_ib_inetaddr_nb);
		if (IS_ENABLED(CONFIG_IPV6))
			unregister_inet6addr_notifier(&rds_ib_inet6addr_nb);
	}
}

/*
 * conn_alloc: the transport half of the (single) path.  May be called in
 * atomic context (@gfp); starts no I/O.
 */
static int rds_ib_conn_alloc(struct rds_connection *conn, gfp_t gfp)
{
	struct rds_conn_path *cp = rds_conn_path0(conn);
	struct rds_ib_connection *ic;

	ic = kzalloc(sizeof(*ic), gfp);
	if (!ic)
		return -ENOMEM;
	ic->ic_conn = conn;
	ic->ic_cp = cp;
	mutex_init(&ic->ic_mutex);
	spin_lock_init(&ic->ic_ep_lock);
	atomic_set(&ic->ic_nr_eps, 0);
	init_waitqueue_head(&ic->ic_wait);
	cp->cp_transport_data = ic;
	return 0;
}

/*
 * conn_free: the path is DOWN and quiet (shutdown waited for endpoints).
 * Should an endpoint still be attached, it is torn down here as the
 * shutdown would have (process context) before @ic goes.
 */
static void rds_ib_conn_free(void *data)
{
	struct rds_ib_connection *ic = data;
	unsigned long flags, eflags = 0;
	struct rds_ib_ep *ep;
	bool active = false;

	if (!ic)
		return;
	spin_lock_irqsave(&ic->ic_ep_lock, flags);
	ep = ic->ic_ep;
	if (ep) {
		eflags = ep->e_flags;
		active = ep->e_active;
	}
	spin_unlock_irqrestore(&ic->ic_ep_lock, flags);
	if (WARN(ep || atomic_read(&ic->ic_nr_eps),
		 "RDS/IB: conn_free with endpoint %p (flags %#lx, %s), %d endpoints, path state %d\n",
		 ep, eflags, active ? "active" : "passive",
		 atomic_read(&ic->ic_nr_eps),
		 ic->ic_cp ? rds_conn_path_state(ic->ic_cp) : -1) && ic->ic_cp)
		rds_ib_conn_path_shutdown(ic->ic_cp);
	mutex_destroy(&ic->ic_mutex);
	kfree(ic);
}

struct rds_transport rds_ib_transport = {
	.t_name			= "infiniband",
	.t_abi			= RDS_TRANSPORT_ABI,
	.t_zcopy_sges		= RDS_ZCOPY_MAX_SGES,
	.t_type			= RDS_TRANS_IB,
	.t_owner		= THIS_MODULE,
	.laddr_check		= rds_ib_laddr_check,
	.conn_alloc		= rds_ib_conn_alloc,
	.conn_free		= rds_ib_conn_free,
	.conn_path_connect	= rds_ib_conn_path_connect,
	.conn_path_shutdown	= rds_ib_conn_path_shutdown,
	.xmit			= rds_ib_xmit,
	.xmit_path_complete	= rds_ib_xmit_path_complete,
	.recv_path		= rds_ib_recv_path,
	.inc_copy_to_user	= rds_ib_inc_copy_to_user,
	.inc_free		= rds_ib_inc_free,
	.xmit_rdma		= rds_ib_xmit_rdma,
	.xmit_atomic		= rds_ib_xmit_atomic,
	.get_mr			= rds_ib_get_mr,
	.free_mr		= rds_ib_free_mr,
	.unuse_mr		= rds_ib_unuse_mr,
	.sync_mr		= rds_ib_sync_mr,
	.flush_mrs		= rds_ib_flush_mrs,
	.mr_reg_ordered		= rds_ib_mr_reg_ordered,
	.atomic_check		= rds_ib_atomic_check,
	.sock_release		= rds_ib_sock_release,
	.info_counters		= rds_ib_info_counters,
};

static int __init rds_ib_init(void)
{
	int ret;

	ret = rds_ib_recv_init();
	if (ret)
		return ret;
	rds_ib_wq = alloc_workqueue("rds_ib", WQ_MEM_RECLAIM, 0);
	if (!rds_ib_wq) {
		ret = -ENOMEM;
		goto out_counter;
	}
	ret = rds_ib_sysctl_init();
	if (ret)
		goto out_wq;
	rds_ib_addr_notifiers(true);
	ret = ib_register_client(&rds_ib_client);
	if (ret)
		goto out_sysctl;
	ret = rds_trans_register(&rds_ib_transport);
	if (ret)
		goto out_client;
	ret = rds_ib_listen_init();
	if (ret)
		goto out_trans;
	ret = rds_ib_info_init();
	if (ret)
		goto out_listen;
	return 0;

out_listen:
	rds_ib_listen_stop();
out_trans:
	rds_trans_unregister(&rds_ib_transport);
out_client:
	ib_unregister_client(&rds_ib_client);
out_sysctl:
	rds_ib_guid_forget();
	rds_ib_addr_notifiers(false);
	rds_ib_sysctl_exit();
out_wq:
	destroy_workqueue(rds_ib_wq);
out_counter:
	rds_ib_recv_exit();
	return ret;
}
module_init(rds_ib_init);

static void __exit rds_ib_exit(void)
{
	rds_ib_info_exit();
	rds_ib_listen_stop();
	rds_trans_unregister(&rds_ib_transport);
	/* Endpoints torn down on a down port may have parked their ids. */
	rds_ib_cm_unpark_wait();
	ib_unregister_client(&rds_ib_client);
	rds_ib_mr_conn_flush_deferred();
	rds_ib_guid_forget();
	rds_ib_addr_notifiers(false);
	destroy_workqueue(rds_ib_wq);
	rds_ib_sysctl_exit();
	rds_ib_recv_exit();
}
module_exit(rds_ib_exit);

MODULE_AUTHOR("The RDS project");
MODULE_DESCRIPTION("RDS transport over RDMA verbs (out-of-tree)");
MODULE_LICENSE("GPL");
