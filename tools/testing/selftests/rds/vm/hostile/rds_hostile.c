// SPDX-License-Identifier: GPL-2.0
/*
 * rds_hostile.ko - a malicious RDS/IB peer, for the selftests only
 * (rds_hostile.sh).  Loaded on a node whose RDS modules are unloaded, it
 * connects to the RDS/IB listener of another node (rdma_cm, port 18634) as
 * a plain rdma_cm client and breaks the protocol in the way the "scenario"
 * parameter names, from its init:
 *
 *   insmod rds_hostile.ko scenario=NAME saddr=A.B.C.D daddr=A.B.C.D \
 *          port=P [sport=P] [count=N] [tag=N]
 *
 * saddr is this node's address, daddr the victim's, port a port on which
 * the victim has a live RDS socket (rds_hostile_rx), sport the source port
 * our messages claim, count the messages of "flood", tag the scenario
 * number put in the payloads (default: its index here).  Every wait is bounded; init returns 0 once the
 * scenario is over and everything it set up is gone, so rmmod is trivial.
 * It logs "rds_hostile: NAME result=R ..." and then "rds_hostile: NAME
 * done".  R is one of
 *
 *   rejected  the connection request was rejected (status, reason)
 *   up        the connection survived the scenario and the final good
 *             probe message was acknowledged by the victim's HCA
 *   dropped   the victim disconnected (or our QP saw an error)
 *   error     the scenario could not run (no route, no connect, ...)
 *
 * Messages that are well formed carry the payload the receiver checks:
 * magic "RDSH", scenario number, message number, length, then bytes
 * (msgno * 7 + i) & 0xff.  Messages that must never be delivered carry the
 * magic "EVIL".  The wire structures are written out here (they are fixed
 * by the in-tree protocol; see net/rds/ib.h and rds.h).
 */
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/inet.h>
#include <linux/random.h>
#include <linux/delay.h>
#include <linux/wait.h>
#include <linux/jiffies.h>
#include <net/checksum.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#define H_PORT		18634
#define H_FRAG		4096
#define H_SLOT		(2 * H_FRAG + 64)	/* one SEND: header + up to 8 KiB */
#define H_SQ		64
#define H_NRECV		128
#define H_RECV_LEN	(48 + H_FRAG)
#define H_WAIT		(5 * HZ)
#define H_MAGIC		0x52445348u	/* "RDSH" */
#define H_EVIL		0x4556494cu	/* "EVIL" */

#define F_CONG		0x01
#define F_ACK_REQ	0x02

struct h_priv {				/* struct rds_ib_connect_private */
	__be32	saddr;
	__be32	daddr;
	u8	major;
	u8	minor;
	__be16	minor_mask;
	u8	tos;
	u8	caps;
	__be16	res2;
	__be64	ack_seq;
	__be32	credit;
};
static_assert(sizeof(struct h_priv) == 32);

struct h_hdr {				/* struct rds_header */
	__be64	seq;
	__be64	ack;
	__be32	len;
	__be16	sport;
	__be16	dport;
	u8	flags;
	u8	credit;
	u8	pad[4];
	__sum16	csum;
	u8	ext[16];
};
static_assert(sizeof(struct h_hdr) == 48);

static char *scenario = "good";
static char *saddr = "192.0.2.2";
static char *daddr = "192.0.2.1";
static ushort port = 4000;
static ushort sport = 4444;
static uint count = 2000;
static int tag = -1;
module_param(tag, int, 0444);
module_param(scenario, charp, 0444);
module_param(saddr, charp, 0444);
module_param(daddr, charp, 0444);
module_param(port, ushort, 0444);
module_param(sport, ushort, 0444);
module_param(count, uint, 0444);

struct hc {
	struct rdma_cm_id *id;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	wait_queue_head_t wq;
	/* CM state, set by the handler */
	bool addr_ok, route_ok, est, rejected, failed, disc;
	int cm_status, rej_reason, fail_event;
	struct h_priv rep;
	u8 rep_len;
	/* verbs */
	struct ib_cqe scqe, rcqe;
	u8 *sbuf[H_SQ];
	u64 sdma[H_SQ];
	u8 *rbuf[H_NRECV];
	u64 rdma_[H_NRECV];
	struct ib_recv_wr rwr[H_NRECV];
	struct ib_sge rsge[H_NRECV];
	atomic_t s_posted, s_done, s_err, r_done, r_posted;
	int s_status, r_status;
	bool stopping, r_err;
	u8 *rdbuf;			/* local buffer of RDMA READ/WRITE */
	u64 rddma;
	/* protocol */
	u64 seq;
	int scen_no;
	u32 good_sent;
};

static __be32 h_src, h_dst;
static int h_scen_no;

/* ------------------------------------------------------------------ CM */

static int h_cm_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct hc *h = id->context;

	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		h->addr_ok = true;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		h->route_ok = true;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (ev->param.conn.private_data) {
			h->rep_len = min_t(u8, ev->param.conn.private_data_len,
					   sizeof(h->rep));
			memcpy(&h->rep, ev->param.conn.private_data, h->rep_len);
		}
		h->est = true;
		break;
	case RDMA_CM_EVENT_REJECTED: {
		const void *d;
		u8 len = 0;

		d = rdma_consumer_reject_data(id, ev, &len);
		if (d && len >= sizeof(int))
			memcpy(&h->rej_reason, d, sizeof(int));
		h->cm_status = ev->status;
		h->rejected = true;
		break;
	}
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		h->cm_status = ev->status;
		h->fail_event = ev->event;
		h->failed = true;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		h->disc = true;
		break;
	default:
		break;
	}
	wake_up_all(&h->wq);
	return 0;
}

/* ------------------------------------------------------------- verbs */

static void h_send_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct hc *h = cq->cq_context;

	if (wc->status != IB_WC_SUCCESS) {
		if (!atomic_read(&h->s_err))
			h->s_status = wc->status;
		atomic_inc(&h->s_err);
	}
	atomic_inc(&h->s_done);
	wake_up_all(&h->wq);
}

static void h_recv_done(struct ib_cq *cq, struct ib_wc *wc, int i)
{
	struct hc *h = cq->cq_context;
	const struct ib_recv_wr *bad;

	if (wc->status != IB_WC_SUCCESS && !READ_ONCE(h->stopping) &&
	    !h->r_err) {
		/* Our QP is in error (flush or a receive that failed). */
		h->r_status = wc->status;
		WRITE_ONCE(h->r_err, true);
	}
	atomic_inc(&h->r_done);
	/* Repost while the connection lives: the victim's ACKs keep coming. */
	if (wc->status == IB_WC_SUCCESS && !READ_ONCE(h->stopping) &&
	    i >= 0 && i < H_NRECV) {
		h->rwr[i].next = NULL;
		if (!ib_post_recv(h->qp, &h->rwr[i], &bad))
			atomic_inc(&h->r_posted);
	}
	wake_up_all(&h->wq);
}

/*
 * wr_id and wr_cqe share a union; with the CQ API every completion goes to
 * wr_cqe->done, so each receive slot has an ib_cqe that knows its index.
 */
struct h_rcqe {
	struct ib_cqe cqe;
	struct hc *h;
	int idx;
};

static struct h_rcqe *h_rcqes;

static void h_recv_done_slot(struct ib_cq *cq, struct ib_wc *wc)
{
	struct h_rcqe *r = container_of(wc->wr_cqe, struct h_rcqe, cqe);

	h_recv_done(cq, wc, r->idx);
}

static void h_destroy(struct hc *h)
{
	struct ib_device *dev;
	int i;

	if (!h)
		return;
	dev = h->id ? h->id->device : NULL;
	WRITE_ONCE(h->stopping, true);
	if (h->est && !h->disc)
		rdma_disconnect(h->id);
	if (h->qp) {
		struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
		long left;

		ib_modify_qp(h->qp, &attr, IB_QP_STATE);
		left = wait_event_timeout(h->wq,
			atomic_read(&h->s_done) == atomic_read(&h->s_posted) &&
			atomic_read(&h->r_done) == atomic_read(&h->r_posted),
			H_WAIT);
		if (!left) {
			/* Completions may still come: leak rather than free. */
			pr_err("rds_hostile: flush timed out (send %d/%d recv %d/%d), leaking the connection\n",
			       atomic_read(&h->s_done), atomic_read(&h->s_posted),
			       atomic_read(&h->r_done), atomic_read(&h->r_posted));
			return;
		}
		/*
		 * Let the victim finish with this QP first: its DREQ comes
		 * after its QP went to error, so once we saw DISCONNECTED it
		 * sends the QP nothing more.  rxe on 6.12 can oops when a
		 * packet for a QP arrives while the QP is being destroyed
		 * (rxe_sched_task() on freed memory, seen once in rdma_read).
		 */
		if (h->est) {
			if (!wait_event_timeout(h->wq, READ_ONCE(h->disc),
						HZ))
				pr_info("rds_hostile: no DISCONNECTED in 1 s, destroying the QP anyway\n");
			msleep(50);
		}
		rdma_destroy_qp(h->id);
		h->qp = NULL;
	}
	if (h->scq)
		ib_free_cq(h->scq);
	if (h->rcq)
		ib_free_cq(h->rcq);
	for (i = 0; i < H_SQ; i++) {
		if (h->sdma[i])
			ib_dma_unmap_single(dev, h->sdma[i], H_SLOT,
					    DMA_TO_DEVICE);
		kfree(h->sbuf[i]);
	}
	for (i = 0; i < H_NRECV; i++) {
		if (h->rdma_[i])
			ib_dma_unmap_single(dev, h->rdma_[i], H_RECV_LEN,
					    DMA_FROM_DEVICE);
		kfree(h->rbuf[i]);
	}
	if (h->rddma)
		ib_dma_unmap_single(dev, h->rddma, H_FRAG, DMA_BIDIRECTIONAL);
	kfree(h->rdbuf);
	if (h->pd)
		ib_dealloc_pd(h->pd);
	if (h->id)
		rdma_destroy_id(h->id);
	kfree(h);
}

static int h_setup_verbs(struct hc *h)
{
	struct ib_device *dev = h->id->device;
	struct ib_qp_init_attr qa = {};
	const struct ib_recv_wr *bad;
	int i, ret;

	h->pd = ib_alloc_pd(dev, 0);
	if (IS_ERR(h->pd)) {
		ret = PTR_ERR(h->pd);
		h->pd = NULL;
		return ret;
	}
	h->scq = ib_alloc_cq(dev, h, H_SQ + 8, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(h->scq)) {
		ret = PTR_ERR(h->scq);
		h->scq = NULL;
		return ret;
	}
	h->rcq = ib_alloc_cq(dev, h, H_NRECV + 8, 0, IB_POLL_SOFTIRQ);
	if (IS_ERR(h->rcq)) {
		ret = PTR_ERR(h->rcq);
		h->rcq = NULL;
		return ret;
	}
	for (i = 0; i < H_SQ; i++) {
		h->sbuf[i] = kzalloc(H_SLOT, GFP_KERNEL);
		if (!h->sbuf[i])
			return -ENOMEM;
		h->sdma[i] = ib_dma_map_single(dev, h->sbuf[i], H_SLOT,
					       DMA_TO_DEVICE);
		if (ib_dma_mapping_error(dev, h->sdma[i])) {
			h->sdma[i] = 0;
			return -ENOMEM;
		}
	}
	h->rdbuf = kzalloc(H_FRAG, GFP_KERNEL);
	if (!h->rdbuf)
		return -ENOMEM;
	h->rddma = ib_dma_map_single(dev, h->rdbuf, H_FRAG, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(dev, h->rddma)) {
		h->rddma = 0;
		return -ENOMEM;
	}
	h->scqe.done = h_send_done;
	qa.send_cq = h->scq;
	qa.recv_cq = h->rcq;
	qa.cap.max_send_wr = H_SQ;
	qa.cap.max_recv_wr = H_NRECV;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.qp_type = IB_QPT_RC;
	qa.sq_sig_type = IB_SIGNAL_ALL_WR;
	ret = rdma_create_qp(h->id, h->pd, &qa);
	if (ret)
		return ret;
	h->qp = h->id->qp;
	for (i = 0; i < H_NRECV; i++) {
		h->rbuf[i] = kzalloc(H_RECV_LEN, GFP_KERNEL);
		if (!h->rbuf[i])
			return -ENOMEM;
		h->rdma_[i] = ib_dma_map_single(dev, h->rbuf[i], H_RECV_LEN,
						DMA_FROM_DEVICE);
		if (ib_dma_mapping_error(dev, h->rdma_[i])) {
			h->rdma_[i] = 0;
			return -ENOMEM;
		}
	}
	/* With the CQ API every receive needs an ib_cqe: one per slot. */
	for (i = 0; i < H_NRECV; i++) {
		h->rsge[i].addr = h->rdma_[i];
		h->rsge[i].length = H_RECV_LEN;
		h->rsge[i].lkey = h->pd->local_dma_lkey;
		h->rwr[i].sg_list = &h->rsge[i];
		h->rwr[i].num_sge = 1;
		h_rcqes[i].cqe.done = h_recv_done_slot;
		h_rcqes[i].h = h;
		h_rcqes[i].idx = i;
		h->rwr[i].wr_cqe = &h_rcqes[i].cqe;
	}
	for (i = 0; i < H_NRECV; i++) {
		h->rwr[i].next = NULL;
		ret = ib_post_recv(h->qp, &h->rwr[i], &bad);
		if (ret)
			return ret;
		atomic_inc(&h->r_posted);
	}
	return 0;
}

/* Resolve, set up and connect with @pd as private data. */
static struct hc *h_connect(const void *pd, u8 pdlen, int *why)
{
	struct sockaddr_in src = { .sin_family = AF_INET };
	struct sockaddr_in dst = { .sin_family = AF_INET };
	struct rdma_conn_param param = {};
	struct hc *h;
	int ret;

	*why = 0;
	h = kzalloc(sizeof(*h), GFP_KERNEL);
	if (!h) {
		*why = -ENOMEM;
		return NULL;
	}
	init_waitqueue_head(&h->wq);
	h->seq = 1;
	h->scen_no = h_scen_no;
	h->id = rdma_create_id(&init_net, h_cm_handler, h, RDMA_PS_TCP,
			       IB_QPT_RC);
	if (IS_ERR(h->id)) {
		*why = PTR_ERR(h->id);
		h->id = NULL;
		goto fail;
	}
	src.sin_addr.s_addr = h_src;
	dst.sin_addr.s_addr = h_dst;
	dst.sin_port = htons(H_PORT);
	ret = rdma_resolve_addr(h->id, (struct sockaddr *)&src,
				(struct sockaddr *)&dst, 2000);
	if (ret ||
	    !wait_event_timeout(h->wq, h->addr_ok || h->failed, H_WAIT) ||
	    h->failed) {
		*why = ret ?: -EHOSTUNREACH;
		goto fail;
	}
	ret = rdma_resolve_route(h->id, 2000);
	if (ret ||
	    !wait_event_timeout(h->wq, h->route_ok || h->failed, H_WAIT) ||
	    h->failed) {
		*why = ret ?: -ENETUNREACH;
		goto fail;
	}
	ret = h_setup_verbs(h);
	if (ret) {
		*why = ret;
		goto fail;
	}
	param.private_data = pd;
	param.private_data_len = pdlen;
	param.responder_resources = 1;
	param.initiator_depth = 1;
	param.retry_count = 6;
	param.rnr_retry_count = 7;
	ret = rdma_connect(h->id, &param);
	if (ret) {
		*why = ret;
		goto fail;
	}
	if (!wait_event_timeout(h->wq, h->est || h->rejected || h->failed ||
				h->disc, 2 * H_WAIT)) {
		*why = -ETIMEDOUT;
		goto fail;
	}
	if (h->rejected) {
		*why = 1;	/* rejected: the caller reports it */
		return h;
	}
	if (!h->est) {
		*why = -ECONNREFUSED;
		goto fail;
	}
	return h;
fail:
	h_destroy(h);
	return NULL;
}

static void h_priv_valid(struct h_priv *p, u32 credit)
{
	memset(p, 0, sizeof(*p));
	p->saddr = h_src;
	p->daddr = h_dst;
	p->major = 3;
	p->minor = 1;
	p->minor_mask = cpu_to_be16(0x0003);
	p->credit = cpu_to_be32(credit);
}

/* A valid connect, retried while the victim's path is busy (up to ~10 s). */
static struct hc *h_connect_valid(u32 credit)
{
	struct h_priv p;
	struct hc *h;
	int why, i;

	for (i = 0; i < 10; i++) {
		h_priv_valid(&p, credit);
		h = h_connect(&p, sizeof(p), &why);
		if (h && h->est) {
			pr_info("rds_hostile: connected, victim chose %u.%u caps %#x credit %u\n",
				h->rep.major, h->rep.minor, h->rep.caps,
				be32_to_cpu(h->rep.credit));
			return h;
		}
		pr_info("rds_hostile: connect attempt %d failed (%d, status %d reason %d)\n",
			i + 1, why, h ? h->cm_status : 0, h ? h->rej_reason : 0);
		h_destroy(h);
		msleep(1000);
	}
	return NULL;
}

/* ------------------------------------------------------------ sending */

static bool h_dead(struct hc *h)
{
	return READ_ONCE(h->disc) || atomic_read(&h->s_err) ||
	       READ_ONCE(h->r_err);
}

/*
 * Post one work request of @len bytes from @data (SEND, SEND_WITH_INV,
 * RDMA_WRITE or RDMA_READ).  Waits (bounded) for a free slot.
 * Return: 0, -ENOTCONN once the connection died, -ETIMEDOUT.
 */
static int h_post(struct hc *h, const void *data, u32 len,
		  enum ib_wr_opcode op, u32 rkey, u64 raddr)
{
	struct ib_device *dev = h->id->device;
	const struct ib_send_wr *bad;
	struct ib_rdma_wr wr = {};
	struct ib_sge sge;
	int slot, ret;

	if (!wait_event_timeout(h->wq, h_dead(h) ||
				atomic_read(&h->s_posted) -
				atomic_read(&h->s_done) < H_SQ, H_WAIT))
		return -ETIMEDOUT;
	if (h_dead(h))
		return -ENOTCONN;
	slot = atomic_read(&h->s_posted) % H_SQ;
	if (len > H_SLOT)
		len = H_SLOT;
	if (op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_READ) {
		sge.addr = h->rddma;
		len = min_t(u32, len, H_FRAG);
	} else {
		if (len)
			memcpy(h->sbuf[slot], data, len);
		ib_dma_sync_single_for_device(dev, h->sdma[slot], len ?: 1,
					      DMA_TO_DEVICE);
		sge.addr = h->sdma[slot];
	}
	sge.length = len;
	sge.lkey = h->pd->local_dma_lkey;
	wr.wr.wr_cqe = &h->scqe;
	wr.wr.opcode = op;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.sg_list = len ? &sge : NULL;
	wr.wr.num_sge = len ? 1 : 0;
	if (op == IB_WR_SEND_WITH_INV)
		wr.wr.ex.invalidate_rkey = rkey;
	wr.rkey = rkey;
	wr.remote_addr = raddr;
	atomic_inc(&h->s_posted);
	ret = ib_post_send(h->qp, &wr.wr, &bad);
	if (ret) {
		atomic_dec(&h->s_posted);
		return ret;
	}
	return 0;
}

static void h_hdr_fill(struct h_hdr *hd, u64 seq, u32 len, u16 sp, u16 dp,
		       u8 flags, u8 credit)
{
	memset(hd, 0, sizeof(*hd));
	hd->seq = cpu_to_be64(seq);
	hd->len = cpu_to_be32(len);
	hd->sport = cpu_to_be16(sp);
	hd->dport = cpu_to_be16(dp);
	hd->flags = flags;
	hd->credit = credit;
}

static void h_csum(struct h_hdr *hd)
{
	hd->csum = 0;
	hd->csum = ip_fast_csum((const void *)hd, sizeof(*hd) / 4);
}

/* Payload of message @msgno (@len bytes) starting at byte @off. */
static void h_payload(u8 *p, u32 off, u32 n, u32 magic, int scen, u32 msgno,
		      u32 len)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u32 at = off + i;

		if (at < 16) {
			__be32 w[4] = { cpu_to_be32(magic), cpu_to_be32(scen),
					cpu_to_be32(msgno), cpu_to_be32(len) };

			p[i] = ((u8 *)w)[at];
		} else {
			p[i] = (msgno * 7 + at) & 0xff;
		}
	}
}

static u8 h_frame[H_SLOT];	/* built under h_mutex (one scenario at a time) */

/*
 * Send message @msgno of @len bytes (>= 16) as fragments, with @magic.
 * @tweak(frag, hdr) may change each fragment's header before its checksum.
 */
static int h_send_msg(struct hc *h, u32 magic, u32 msgno, u32 len, u8 flags,
		      const u8 *ext, size_t extlen,
		      void (*tweak)(int frag, struct h_hdr *hd, u32 *chunk))
{
	u32 nfrags = len ? DIV_ROUND_UP(len, H_FRAG) : 1, f;
	u64 seq = h->seq++;
	int ret;

	for (f = 0; f < nfrags; f++) {
		struct h_hdr *hd = (struct h_hdr *)h_frame;
		u32 chunk = min_t(u32, H_FRAG, len - f * H_FRAG);

		h_hdr_fill(hd, seq, len, sport, port, flags, 0);
		if (ext)
			memcpy(hd->ext, ext, min_t(size_t, extlen, 16));
		if (tweak)
			tweak(f, hd, &chunk);
		h_csum(hd);
		if (chunk > H_SLOT - 48)
			chunk = H_SLOT - 48;
		h_payload(h_frame + 48, f * H_FRAG, chunk, magic, h->scen_no,
			  msgno, len);
		ret = h_post(h, h_frame, 48 + chunk, IB_WR_SEND, 0, 0);
		if (ret)
			return ret;
	}
	if (magic == H_MAGIC)
		h->good_sent++;
	return 0;
}

static int h_send_good(struct hc *h, u32 msgno, u32 len)
{
	return h_send_msg(h, H_MAGIC, msgno, len, 0, NULL, 0, NULL);
}

/* An ACK-only header (ports 0, no data). */
static int h_send_ack(struct hc *h, u64 ack, u8 credit)
{
	struct h_hdr hd;

	h_hdr_fill(&hd, 0, 0, 0, 0, 0, credit);
	hd.ack = cpu_to_be64(ack);
	h_csum(&hd);
	return h_post(h, &hd, sizeof(hd), IB_WR_SEND, 0, 0);
}

/*
 * The verdict: a good probe message asking for an ACK, then up to 3 s for
 * the victim to disconnect.  "up" only when the probe's SEND completed and
 * nothing went wrong.
 */
static const char *h_verdict(struct hc *h, u32 msgno)
{
	if (!h_dead(h))
		h_send_msg(h, H_MAGIC, msgno, 64, F_ACK_REQ, NULL, 0, NULL);
	wait_event_timeout(h->wq, h_dead(h), 3 * HZ);
	wait_event_timeout(h->wq, h_dead(h) ||
			   atomic_read(&h->s_done) == atomic_read(&h->s_posted),
			   H_WAIT);
	if (h_dead(h))
		return "dropped";
	if (atomic_read(&h->s_done) != atomic_read(&h->s_posted))
		return "stuck";
	return "up";
}

static void h_report(struct hc *h, const char *result)
{
	pr_info("rds_hostile: %s result=%s good_sent=%u sends=%d/%d send_err=%d status=%d(%s) recvs=%d recv_status=%d(%s) disc=%d\n",
		scenario, result, h->good_sent, atomic_read(&h->s_done),
		atomic_read(&h->s_posted), atomic_read(&h->s_err), h->s_status,
		ib_wc_status_msg(h->s_status), atomic_read(&h->r_done),
		h->r_status, ib_wc_status_msg(h->r_status), h->disc);
}

/* ---------------------------------------------------------- scenarios */

/* Connection requests with bad private data: expect a reject. */
static int h_conn_bad(const void *pd, u8 len)
{
	struct hc *h;
	int why;

	h = h_connect(pd, len, &why);
	if (!h) {
		pr_info("rds_hostile: %s result=error why=%d\n", scenario, why);
		return 0;
	}
	if (h->rejected) {
		pr_info("rds_hostile: %s result=rejected status=%d reason=%d\n",
			scenario, h->cm_status, h->rej_reason);
	} else {
		/* Accepted: see whether it stays up with a probe. */
		h_report(h, h_verdict(h, 1));
	}
	h_destroy(h);
	return 0;
}

static int s_conn_short(void)
{
	u8 pd[8] = { 3, 1 };

	return h_conn_bad(pd, sizeof(pd));
}

static int s_conn_version(void)
{
	struct h_priv p;

	h_priv_valid(&p, 0);
	p.major = 9;
	p.minor = 9;
	p.minor_mask = 0;
	return h_conn_bad(&p, sizeof(p));
}

static int s_conn_garbage(void)
{
	u8 pd[56];

	get_random_bytes(pd, sizeof(pd));
	pd[8] = 0xa5;		/* never a valid major */
	return h_conn_bad(pd, sizeof(pd));
}

static int s_conn_addrs(void)
{
	struct h_priv p;

	h_priv_valid(&p, 0);
	p.saddr = htonl(0xc0000263);	/* 192.0.2.99, not us */
	return h_conn_bad(&p, sizeof(p));
}

static int s_conn_selfaddr(void)
{
	struct h_priv p;

	h_priv_valid(&p, 0);
	p.saddr = h_dst;		/* claims to be the victim */
	return h_conn_bad(&p, sizeof(p));
}

static int s_conn_mcast(void)
{
	struct h_priv p;

	h_priv_valid(&p, 0);
	p.daddr = htonl(0xe0000001);
	return h_conn_bad(&p, sizeof(p));
}

/* Valid addresses and version, absurd credits and ACK: accepted, copes. */
static int s_conn_credits(void)
{
	struct h_priv p;

	h_priv_valid(&p, 0xffffffff);
	p.ack_seq = cpu_to_be64(~0ULL);
	p.caps = 0xff;
	return h_conn_bad(&p, sizeof(p));
}

/* Run @body over a valid connection and report the verdict. */
static int h_with_conn(u32 credit, int (*body)(struct hc *h))
{
	struct hc *h = h_connect_valid(credit);
	int ret;

	if (!h) {
		pr_info("rds_hostile: %s result=error why=connect\n", scenario);
		return 0;
	}
	ret = body(h);
	if (ret && ret != -ENOTCONN)
		pr_info("rds_hostile: %s: body returned %d\n", scenario, ret);
	h_report(h, h_verdict(h, 9999));
	h_destroy(h);
	return 0;
}

static int b_good(struct hc *h)
{
	static const u32 lens[] = { 16, 100, 4096, 4097, 8192, 12345 };
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		ret = h_send_good(h, i + 1, lens[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int b_badcsum(struct hc *h)
{
	struct h_hdr *hd = (struct h_hdr *)h_frame;
	int ret;

	ret = h_send_good(h, 1, 100);
	if (ret)
		return ret;
	h_hdr_fill(hd, h->seq++, 100, sport, port, 0, 0);
	h_csum(hd);
	hd->csum ^= cpu_to_be16(0x1234);
	if (!hd->csum)
		hd->csum = 1;
	h_payload(h_frame + 48, 0, 100, H_EVIL, h->scen_no, 2, 100);
	return h_post(h, h_frame, 148, IB_WR_SEND, 0, 0);
}

static void t_biglen(int f, struct h_hdr *hd, u32 *chunk)
{
	hd->len = cpu_to_be32((1U << 20) + 1);
}

static int b_biglen(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 100, 0, NULL, 0, t_biglen);
}

static void t_hugelen(int f, struct h_hdr *hd, u32 *chunk)
{
	hd->len = cpu_to_be32(0xffffffff);
}

static int b_hugelen(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 100, 0, NULL, 0, t_hugelen);
}

static void t_fragseq(int f, struct h_hdr *hd, u32 *chunk)
{
	if (f == 1)
		hd->seq = cpu_to_be64(be64_to_cpu(hd->seq) + 1);
}

static int b_fragseq(struct hc *h)
{
	int ret = h_send_good(h, 1, 64);

	return ret ?: h_send_msg(h, H_EVIL, 2, 8192, 0, NULL, 0, t_fragseq);
}

static void t_fraglen(int f, struct h_hdr *hd, u32 *chunk)
{
	if (f == 1)
		hd->len = cpu_to_be32(3 * H_FRAG);
}

static int b_fraglen(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 8192, 0, NULL, 0, t_fraglen);
}

static void t_fragport(int f, struct h_hdr *hd, u32 *chunk)
{
	if (f == 1)
		hd->dport = cpu_to_be16(port + 1);
}

static int b_fragport(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 8192, 0, NULL, 0, t_fragport);
}

/* Second fragment carries fewer bytes than the length says. */
static void t_fragshort(int f, struct h_hdr *hd, u32 *chunk)
{
	if (f == 1)
		*chunk = 100;
}

static int b_fragshort(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 8192, 0, NULL, 0, t_fragshort);
}

/* A first fragment that is short, then a new message: frag mix-up. */
static void t_fraglong(int f, struct h_hdr *hd, u32 *chunk)
{
	*chunk = 2 * H_FRAG;	/* 8 KiB after the header: longer than a slot */
}

static int b_oversize(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 4096, 0, NULL, 0, t_fraglong);
}

/* One fragment claiming a 4 KiB message with 4 KiB + 1 after the header. */
static void t_plus1(int f, struct h_hdr *hd, u32 *chunk)
{
	*chunk = H_FRAG + 1;
}

static int b_oversize1(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 4096, 0, NULL, 0, t_plus1);
}

static int b_zerolen(struct hc *h)
{
	int ret = h_send_good(h, 1, 64);

	return ret ?: h_post(h, NULL, 0, IB_WR_SEND, 0, 0);
}

static int b_shorthdr(struct hc *h)
{
	u8 b[20] = {};

	return h_post(h, b, sizeof(b), IB_WR_SEND, 0, 0);
}

static int b_ackbogus(struct hc *h)
{
	int ret, i;

	ret = h_send_good(h, 1, 64);
	for (i = 0; !ret && i < 8; i++)
		ret = h_send_ack(h, (1ULL << (8 * i)) + 12345, 0);
	ret = ret ?: h_send_ack(h, ~0ULL, 0);
	return ret ?: h_send_good(h, 2, 64);
}

static int b_credits(struct hc *h)
{
	int ret = 0, i;

	for (i = 0; !ret && i < 300; i++)
		ret = h_send_ack(h, 0, 255);
	return ret ?: h_send_good(h, 1, 64);
}

/* Congestion map update of the wrong length (ports 0, CONG_BITMAP). */
static void t_cong(int f, struct h_hdr *hd, u32 *chunk)
{
	hd->sport = 0;
	hd->dport = 0;
	hd->flags = F_CONG;
	hd->seq = 0;
}

static int b_cong_short(struct hc *h)
{
	int ret = h_send_msg(h, H_EVIL, 1, 100, 0, NULL, 0, t_cong);

	ret = ret ?: h_send_msg(h, H_EVIL, 2, 4096, 0, NULL, 0, t_cong);
	ret = ret ?: h_send_msg(h, H_EVIL, 3, 12288, 0, NULL, 0, t_cong);
	return ret ?: h_send_good(h, 1, 64);
}

/* A right-sized map whose second fragment is short: protocol error. */
static void t_cong_trunc(int f, struct h_hdr *hd, u32 *chunk)
{
	t_cong(f, hd, chunk);
	if (f == 1)
		*chunk = 10;
}

static int b_cong_trunc(struct hc *h)
{
	return h_send_msg(h, H_EVIL, 1, 8192, 0, NULL, 0, t_cong_trunc);
}

/* Congestion flag plus a destination port: must not reach the socket. */
static void t_cong_port(int f, struct h_hdr *hd, u32 *chunk)
{
	hd->flags = F_CONG;
	hd->seq = 0;
}

static int b_cong_port(struct hc *h)
{
	int ret = h_send_msg(h, H_EVIL, 1, 100, 0, NULL, 0, t_cong_port);

	return ret ?: h_send_good(h, 1, 64);
}

/* RDMA / RDMA_DEST extension headers with random cookies, to the socket. */
static int b_exthdr(struct hc *h)
{
	u8 ext[16];
	int ret = 0, i;

	for (i = 0; !ret && i < 20; i++) {
		u32 k = get_random_u32(), o = get_random_u32();

		memset(ext, 0, sizeof(ext));
		switch (i % 4) {
		case 0:	/* RDMA {rkey} */
			ext[0] = 2;
			memcpy(ext + 1, &k, 4);
			break;
		case 1:	/* RDMA_DEST {rkey, offset} */
			ext[0] = 3;
			memcpy(ext + 1, &k, 4);
			memcpy(ext + 5, &o, 4);
			break;
		case 2:	/* RDMA, then RDMA_DEST with the use-once bit */
			ext[0] = 2;
			memcpy(ext + 1, &k, 4);
			ext[5] = 3;
			memcpy(ext + 6, &k, 4);
			memcpy(ext + 10, &o, 4);
			ext[10] |= 0x80;
			break;
		default:	/* unknown type, then garbage */
			get_random_bytes(ext, sizeof(ext));
			ext[0] = 15;
			break;
		}
		ret = h_send_msg(h, H_MAGIC, i + 1, 64 + i, 0, ext,
				 sizeof(ext), NULL);
	}
	return ret;
}

static int b_flood(struct hc *h)
{
	u32 i;
	int ret = 0;

	for (i = 0; !ret && i < count; i++)
		ret = h_send_good(h, i + 1, 32 + (i % 200));
	return ret;
}

/* A message that skips back in sequence: protocol error. */
static int b_seqback(struct hc *h)
{
	int ret;

	h->seq = 100;
	ret = h_send_good(h, 1, 64);
	h->seq = 50;
	return ret ?: h_send_msg(h, H_EVIL, 2, 64, 0, NULL, 0, NULL);
}

static int b_sendinv(struct hc *h)
{
	struct h_hdr *hd = (struct h_hdr *)h_frame;
	int ret = h_send_good(h, 1, 64);

	if (ret)
		return ret;
	h_hdr_fill(hd, h->seq++, 64, sport, port, 0, 0);
	h_csum(hd);
	h_payload(h_frame + 48, 0, 64, H_EVIL, h->scen_no, 2, 64);
	return h_post(h, h_frame, 48 + 64, IB_WR_SEND_WITH_INV,
		      get_random_u32(), 0);
}

static int b_rdma_write(struct hc *h)
{
	memset(h->rdbuf, 0xee, H_FRAG);
	return h_post(h, NULL, 512, IB_WR_RDMA_WRITE, get_random_u32(),
		      get_random_u64() & ~0xfffULL);
}

static int b_rdma_read(struct hc *h)
{
	return h_post(h, NULL, 512, IB_WR_RDMA_READ, get_random_u32(),
		      get_random_u64() & ~0xfffULL);
}

#define W(name, credit, body) \
	static int s_##name(void) { return h_with_conn(credit, body); }
W(good, 0, b_good)
W(badcsum, 0, b_badcsum)
W(biglen, 0, b_biglen)
W(hugelen, 0, b_hugelen)
W(fragseq, 0, b_fragseq)
W(fraglen, 0, b_fraglen)
W(fragport, 0, b_fragport)
W(fragshort, 0, b_fragshort)
W(oversize, 0, b_oversize)
W(oversize1, 0, b_oversize1)
W(zerolen, 0, b_zerolen)
W(shorthdr, 0, b_shorthdr)
W(ackbogus, 0, b_ackbogus)
W(credits, 16, b_credits)
W(cong_short, 0, b_cong_short)
W(cong_trunc, 0, b_cong_trunc)
W(cong_port, 0, b_cong_port)
W(exthdr, 0, b_exthdr)
W(flood, 0, b_flood)
W(seqback, 0, b_seqback)
W(sendinv, 0, b_sendinv)
W(rdma_write, 0, b_rdma_write)
W(rdma_read, 0, b_rdma_read)

static const struct {
	const char *name;
	int (*fn)(void);
} h_scens[] = {
#define S(n) { #n, s_##n }
	S(conn_short), S(conn_version), S(conn_garbage), S(conn_addrs),
	S(conn_selfaddr), S(conn_mcast), S(conn_credits),
	S(good), S(badcsum), S(biglen), S(hugelen), S(fragseq), S(fraglen),
	S(fragport), S(fragshort), S(oversize), S(oversize1), S(zerolen),
	S(shorthdr), S(ackbogus), S(credits), S(cong_short), S(cong_trunc),
	S(cong_port), S(exthdr), S(flood), S(seqback), S(sendinv),
	S(rdma_write), S(rdma_read),
#undef S
};

static int __init rds_hostile_init(void)
{
	int i, ret = -EINVAL;

	if (!in4_pton(saddr, -1, (u8 *)&h_src, -1, NULL) ||
	    !in4_pton(daddr, -1, (u8 *)&h_dst, -1, NULL)) {
		pr_err("rds_hostile: bad saddr/daddr\n");
		return -EINVAL;
	}
	h_rcqes = kcalloc(H_NRECV, sizeof(*h_rcqes), GFP_KERNEL);
	if (!h_rcqes)
		return -ENOMEM;
	for (i = 0; i < ARRAY_SIZE(h_scens); i++) {
		if (strcmp(scenario, h_scens[i].name))
			continue;
		h_scen_no = tag >= 0 ? tag : i;
		pr_info("rds_hostile: %s start (%pI4 -> %pI4:%u, port %u)\n",
			scenario, &h_src, &h_dst, H_PORT, port);
		ret = h_scens[i].fn();
		pr_info("rds_hostile: %s done\n", scenario);
		break;
	}
	if (ret == -EINVAL)
		pr_err("rds_hostile: no scenario %s\n", scenario);
	return ret;
}
module_init(rds_hostile_init);

static void __exit rds_hostile_exit(void)
{
	kfree(h_rcqes);
}
module_exit(rds_hostile_exit);

MODULE_DESCRIPTION("RDS selftests: a hostile RDS/IB peer");
MODULE_LICENSE("GPL");
