// SPDX-License-Identifier: GPL-2.0
/*
 * message.c - struct rds_message: allocation, references, payload pages,
 * header helpers and extension headers.
 *
 * Theory of operation
 * ===================
 *
 * A message is one allocation: the struct followed by its payload
 * scatterlist.  The payload is copied from the user iov into pages at
 * sendmsg() time; every sg entry covers at most one page and never
 * crosses a page boundary, so a transport can map it for DMA as is.
 * MSG_ZEROCOPY payloads (zcopy.c) are the user's own pages instead, at
 * any offset and length.
 *
 * Payloads smaller than a page are carved out of a per-CPU "remainder"
 * page (each piece holds a page reference), so small messages cost no page
 * allocation and share cache-friendly pages; this is what in-tree calls the
 * page remainder.  Larger payloads get whole pages.  Congestion map updates
 * point at the map's own pages instead (RDS_MSG_PAGEVEC) and those are not
 * freed with the message.
 *
 * References: one for the creator, one per list the message is on (socket
 * send queue, path queue), one held by the send loop while it transmits it
 * and whatever the transport takes.  The last rds_message_put() frees
 * pages and message; it may run in any context.
 *
 * Header helpers: the checksum is ip_fast_csum() over the 48-byte header
 * with h_csum zero (0 on the wire means "no checksum").  Extension headers
 * are a type byte followed by data of a length fixed by the type; the list
 * ends at type 0 or at the end of the 16-byte space.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/highmem.h>
#include <linux/uio.h>
#include <net/checksum.h>

#include "rds.h"

/* Per-CPU page that small payloads are carved from. */
struct rds_page_remainder {
	struct page	*r_page;
	unsigned int	r_offset;
};

static DEFINE_PER_CPU(struct rds_page_remainder, rds_page_remainders);

/*
 * Carve @bytes (< PAGE_SIZE) out of this CPU's remainder page, refilling it
 * with a fresh page when too little is left.  Only process context uses
 * this (sendmsg), so preemption off is enough to own the per-CPU slot.
 */
static int rds_page_remainder_alloc(struct scatterlist *sg,
				    unsigned int bytes, gfp_t gfp)
{
	struct rds_page_remainder *rem;
	unsigned int need = ALIGN(bytes, 8);
	struct page *page;

	rem = get_cpu_ptr(&rds_page_remainders);
	if (rem->r_page && PAGE_SIZE - rem->r_offset >= need) {
		get_page(rem->r_page);
		sg_set_page(sg, rem->r_page, bytes, rem->r_offset);
		rem->r_offset += need;
		put_cpu_ptr(&rds_page_remainders);
		rds_stats_inc(s_page_remainder_hit);
		return 0;
	}
	put_cpu_ptr(&rds_page_remainders);

	page = alloc_page(gfp);
	if (!page)
		return -ENOMEM;
	rds_stats_inc(s_page_remainder_miss);
	/* The new page's first piece is ours; the rest becomes the remainder. */
	sg_set_page(sg, page, bytes, 0);
	rem = get_cpu_ptr(&rds_page_remainders);
	if (rem->r_page)
		put_page(rem->r_page);
	get_page(page);
	rem->r_page = page;
	rem->r_offset = need;
	put_cpu_ptr(&rds_page_remainders);
	return 0;
}

static void rds_page_remainders_exit(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rds_page_remainder *rem =
			per_cpu_ptr(&rds_page_remainders, cpu);

		if (rem->r_page)
			put_page(rem->r_page);
		rem->r_page = NULL;
		rem->r_offset = 0;
	}
}

struct rds_message *rds_message_alloc(unsigned int nents, gfp_t gfp)
{
	struct rds_message *rm;

	rm = kzalloc(struct_size(rm, m_sg, nents), gfp);
	if (!rm)
		return NULL;
	refcount_set(&rm->m_refcount, 1);
	INIT_LIST_HEAD(&rm->m_sock_item);
	INIT_LIST_HEAD(&rm->m_conn_item);
	INIT_LIST_HEAD(&rm->m_inc.i_item);
	spin_lock_init(&rm->m_rs_lock);
	if (nents)
		sg_init_table(rm->m_sg, nents);
	rm->m_nents = nents;
	rm->data.op_sg = rm->m_sg;
	rm->data.op_nents = 0;
	rm->data.op_active = 1;
	return rm;
}
EXPORT_SYMBOL_GPL(rds_message_alloc);

static void rds_message_purge(struct rds_message *rm)
{
	unsigned int i;

	if (test_bit(RDS_MSG_PAGEVEC, &rm->m_flags))
		return;
	for (i = 0; i < rm->data.op_nents; i++) {
		struct page *page = sg_page(&rm->data.op_sg[i]);

		if (page)
			put_page(page);
	}
	rm->data.op_nents = 0;
}

void rds_message_put(struct rds_message *rm)
{
	if (!refcount_dec_and_test(&rm->m_refcount))
		return;
	WARN_ON_ONCE(!list_empty(&rm->m_sock_item));
	WARN_ON_ONCE(!list_empty(&rm->m_conn_item));
	WARN_ON_ONCE(rm->m_rs);
	rds_rdma_free_ops(rm);
	rds_message_purge(rm);
	rds_zcopy_free(rm);
	kfree(rm);
}
EXPORT_SYMBOL_GPL(rds_message_put);

void rds_message_unmapped(struct rds_message *rm)
{
	clear_bit(RDS_MSG_MAPPED, &rm->m_flags);
}
EXPORT_SYMBOL_GPL(rds_message_unmapped);

/**
 * rds_message_copy_from_user - attach payload pages and fill them
 * @rm: message allocated with at least DIV_ROUND_UP(@len, PAGE_SIZE) entries
 * @from: user data
 * @len: payload bytes
 *
 * Return: 0, -ENOMEM or -EFAULT (pages allocated so far are freed with
 * the message).
 */
int rds_message_copy_from_user(struct rds_message *rm, struct iov_iter *from,
			       size_t len)
{
	struct scatterlist *sg = rm->data.op_sg;
	int ret;

	rm->m_payload_len = len;
	rm->m_inc.i_hdr.h_len = cpu_to_be32(len);
	while (len) {
		unsigned int n = min_t(size_t, len, PAGE_SIZE);
		size_t copied;

		if (n < PAGE_SIZE) {
			ret = rds_page_remainder_alloc(sg, n, GFP_KERNEL);
		} else {
			struct page *page = alloc_page(GFP_KERNEL);

			ret = page ? 0 : -ENOMEM;
			if (page)
				sg_set_page(sg, page, n, 0);
		}
		if (ret)
			return ret;
		rm->data.op_nents++;

		copied = copy_page_from_iter(sg_page(sg), sg->offset, n, from);
		rds_stats_add(s_copy_from_user, copied);
		if (copied != n)
			return -EFAULT;
		len -= n;
		sg++;
	}
	return 0;
}

/**
 * rds_message_inc_copy_to_user - ->inc_copy_to_user for messages delivered
 *	in place (loop transport)
 * @inc: &rm->m_inc
 * @to: destination
 *
 * Return: bytes copied or -EFAULT.
 */
int rds_message_inc_copy_to_user(struct rds_incoming *inc, struct iov_iter *to)
{
	struct rds_message *rm = container_of(inc, struct rds_message, m_inc);
	size_t left = min_t(size_t, iov_iter_count(to), rm->m_payload_len);
	unsigned int i;
	int copied = 0;

	for (i = 0; left && i < rm->data.op_nents; i++) {
		struct scatterlist *sg = &rm->data.op_sg[i];
		size_t n = min_t(size_t, left, sg->length);
		size_t done;

		done = copy_page_to_iter(sg_page(sg), sg->offset, n, to);
		rds_stats_add(s_copy_to_user, done);
		copied += done;
		if (done != n)
			return -EFAULT;
		left -= n;
	}
	return copied;
}

void rds_message_populate_header(struct rds_header *hdr, __be16 sport,
				 __be16 dport, u64 seq)
{
	__be32 len = hdr->h_len;

	memset(hdr, 0, sizeof(*hdr));
	hdr->h_len = len;
	hdr->h_sport = sport;
	hdr->h_dport = dport;
	hdr->h_sequence = cpu_to_be64(seq);
}
EXPORT_SYMBOL_GPL(rds_message_populate_header);

static const u8 rds_exthdr_sizes[__RDS_EXTHDR_MAX] = {
	[RDS_EXTHDR_VERSION]	= sizeof(struct rds_ext_header_version),
	[RDS_EXTHDR_RDMA]	= sizeof(struct rds_ext_header_rdma),
	[RDS_EXTHDR_RDMA_DEST]	= sizeof(struct rds_ext_header_rdma_dest),
	[RDS_EXTHDR_NPATHS]	= sizeof(__be16),
	[RDS_EXTHDR_GEN_NUM]	= sizeof(__be32),
};

unsigned int rds_exthdr_size(unsigned int type)
{
	return type < __RDS_EXTHDR_MAX ? rds_exthdr_sizes[type] : 0;
}
EXPORT_SYMBOL_GPL(rds_exthdr_size);

int rds_message_add_extension(struct rds_header *hdr, unsigned int type,
			      const void *data)
{
	unsigned int len = rds_exthdr_size(type);
	unsigned int pos = 0;

	if (!len)
		return -EINVAL;
	/* Skip what is there already. */
	while (pos < RDS_HEADER_EXT_SPACE && hdr->h_exthdr[pos] != RDS_EXTHDR_NONE) {
		unsigned int l = rds_exthdr_size(hdr->h_exthdr[pos]);

		if (!l)
			return -ENOSPC;	/* unknown content: do not touch */
		pos += 1 + l;
	}
	if (pos + 1 + len > RDS_HEADER_EXT_SPACE)
		return -ENOSPC;
	hdr->h_exthdr[pos] = type;
	memcpy(&hdr->h_exthdr[pos + 1], data, len);
	pos += 1 + len;
	if (pos < RDS_HEADER_EXT_SPACE)
		hdr->h_exthdr[pos] = RDS_EXTHDR_NONE;
	return 0;
}
EXPORT_SYMBOL_GPL(rds_message_add_extension);

int rds_message_next_extension(const struct rds_header *hdr,
			       unsigned int *pos, void *buf,
			       unsigned int *buflen)
{
	unsigned int type, len;

	if (*pos >= RDS_HEADER_EXT_SPACE)
		goto none;
	type = hdr->h_exthdr[*pos];
	len = rds_exthdr_size(type);
	if (type == RDS_EXTHDR_NONE || !len ||
	    *pos + 1 + len > RDS_HEADER_EXT_SPACE || len > *buflen)
		goto none;
	memcpy(buf, &hdr->h_exthdr[*pos + 1], len);
	*buflen = len;
	*pos += 1 + len;
	return type;
none:
	*pos = RDS_HEADER_EXT_SPACE;
	*buflen = 0;
	return RDS_EXTHDR_NONE;
}
EXPORT_SYMBOL_GPL(rds_message_next_extension);

int rds_message_add_rdma_dest_extension(struct rds_header *hdr, u32 r_key,
					u32 offset)
{
	struct rds_ext_header_rdma_dest ext = {
		.h_rdma_rkey	= cpu_to_be32(r_key),
		.h_rdma_offset	= cpu_to_be32(offset),
	};

	return rds_message_add_extension(hdr, RDS_EXTHDR_RDMA_DEST, &ext);
}
EXPORT_SYMBOL_GPL(rds_message_add_rdma_dest_extension);

void rds_header_csum_set(struct rds_header *hdr)
{
	hdr->h_csum = 0;
	hdr->h_csum = ip_fast_csum((const void *)hdr, sizeof(*hdr) / 4);
}
EXPORT_SYMBOL_GPL(rds_header_csum_set);

bool rds_header_csum_ok(const struct rds_header *hdr)
{
	if (!hdr->h_csum)
		return true;
	return ip_fast_csum((const void *)hdr, sizeof(*hdr) / 4) == 0;
}
EXPORT_SYMBOL_GPL(rds_header_csum_ok);

void rds_message_exit(void)
{
	rds_page_remainders_exit();
}
