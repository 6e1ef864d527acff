// SPDX-License-Identifier: GPL-2.0
/*
 * loop.c - the loopback transport: messages to an address of this host.
 *
 * Theory of operation
 * ===================
 *
 * A connection whose remote address is local (connection.c decides, for
 * every transport) uses this transport.  "Connecting" completes at once.
 * ->xmit() delivers the message itself as the incoming message: m_inc
 * points at the sender's pages, so nothing is copied until recvmsg(), and
 * the message is acknowledged immediately, which frees the sender's send
 * buffer space as soon as the receiver has it queued.  Sequence numbers,
 * duplicate checks, pings, congestion (via the destination's own map) and
 * socket accounting all run through the ordinary core paths, so local and
 * remote peers see the same semantics.
 *
 * The transport never registers in the transport list: nothing binds to
 * it, it is only ever chosen by the connection code.
 */
#include <linux/kernel.h>

#include "rds.h"

static int rds_loop_conn_alloc(struct rds_connection *conn, gfp_t gfp)
{
	return 0;
}

static void rds_loop_conn_free(void *data)
{
}

static int rds_loop_conn_path_connect(struct rds_conn_path *cp)
{
	rds_connect_path_complete(cp, RDS_CONN_CONNECTING);
	return 0;
}

static void rds_loop_conn_path_shutdown(struct rds_conn_path *cp)
{
}

static int rds_loop_xmit(struct rds_conn_path *cp, struct rds_message *rm,
			 unsigned int hdr_off, unsigned int sg,
			 unsigned int off)
{
	struct rds_connection *conn = cp->cp_conn;
	unsigned int total = sizeof(struct rds_header) + rm->m_payload_len;
	u64 seq = be64_to_cpu(rm->m_inc.i_hdr.h_sequence);

	/* We never queue congestion updates on loop; be safe anyway. */
	if (rm->m_inc.i_hdr.h_flags & RDS_FLAG_CONG_BITMAP)
		return total;

	/* The incoming message is the message: its reference pins rm. */
	rds_message_addref(rm);
	rds_inc_init(&rm->m_inc, cp, &conn->c_laddr);
	rds_recv_incoming(cp, &conn->c_laddr, &conn->c_faddr, &rm->m_inc,
			  GFP_KERNEL);
	rds_inc_put(&rm->m_inc);
	rds_send_drop_acked(cp, seq, NULL);
	return total;
}

static void rds_loop_inc_free(struct rds_incoming *inc)
{
	rds_message_put(container_of(inc, struct rds_message, m_inc));
}

struct rds_transport rds_loop_transport = {
	.t_name			= "loopback",
	.t_abi			= RDS_TRANSPORT_ABI,
	.t_zcopy_sges		= 0,	/* the receiver reads the pages later */
	.t_type			= RDS_TRANS_COUNT,	/* not user-selectable */
	.t_owner		= THIS_MODULE,
	.conn_alloc		= rds_loop_conn_alloc,
	.conn_free		= rds_loop_conn_free,
	.conn_path_connect	= rds_loop_conn_path_connect,
	.conn_path_shutdown	= rds_loop_conn_path_shutdown,
	.xmit			= rds_loop_xmit,
	.inc_copy_to_user	= rds_message_inc_copy_to_user,
	.inc_free		= rds_loop_inc_free,
};

int rds_loop_init(void)
{
	INIT_LIST_HEAD(&rds_loop_transport.t_item);
	return 0;
}

void rds_loop_exit(void)
{
	rds_conn_destroy_trans(&rds_loop_transport);
}
