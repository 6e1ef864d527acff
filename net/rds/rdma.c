// SPDX-License-Identifier: GPL-2.0
/*
 * rdma.c - RDMA, memory registration and atomics: the hooks.
 *
 * Theory of operation
 * ===================
 *
 * The socket layer calls these for the RDMA/atomic cmsgs of sendmsg() and
 * the MR socket options.  Until the RDMA issue lands they all answer
 * EOPNOTSUPP; the message already carries the rdma/atomic op descriptors
 * and the transport has the xmit_rdma/xmit_atomic hooks, so the later code
 * fills these in without touching the send or receive paths.
 */
#include <linux/kernel.h>

#include "rds.h"

/**
 * rds_cmsg_rdma - handle one RDMA/atomic cmsg of sendmsg()
 * @rs: socket
 * @rm: message being built
 * @cmsg: the cmsg (level SOL_RDS, CMSG_OK checked)
 *
 * Return: -EOPNOTSUPP for now.
 */
int rds_cmsg_rdma(struct rds_sock *rs, struct rds_message *rm,
		  struct cmsghdr *cmsg)
{
	return -EOPNOTSUPP;
}

/**
 * rds_rdma_setsockopt - RDS_GET_MR, RDS_GET_MR_FOR_DEST, RDS_FREE_MR
 * @rs: socket
 * @optname: option
 * @optval: user argument
 * @optlen: its length
 *
 * Return: -EOPNOTSUPP for now.
 */
int rds_rdma_setsockopt(struct rds_sock *rs, int optname, sockptr_t optval,
			unsigned int optlen)
{
	return -EOPNOTSUPP;
}

/**
 * rds_rdma_unuse - the peer finished an RDMA with one of our keys
 * @rs: socket that received the message
 * @r_key: the key from the RDMA extension header
 *
 * Frees a use-once MR; nothing to do until MRs exist.  Any context.
 */
void rds_rdma_unuse(struct rds_sock *rs, u32 r_key)
{
}

/**
 * rds_rdma_drop_keys - release a closing socket's MRs (nothing yet)
 * @rs: socket
 */
void rds_rdma_drop_keys(struct rds_sock *rs)
{
}
