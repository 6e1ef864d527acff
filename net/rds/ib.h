/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ib.h - internal interfaces of rds_rdma.ko.
 */
#ifndef _RDS_IB_H
#define _RDS_IB_H

#include <linux/kref.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>

#include "rds.h"

/**
 * struct rds_ib_device - what we know about one RDMA device
 * @rid_dev: the verbs device
 * @rid_item: entry in rds_ib_devices
 * @rid_ref: references; the ib_client holds one until remove
 * @rid_pd: protection domain for everything RDS does on this device
 * @rid_frwr: FRWR registration possible (IB_DEVICE_MEM_MGT_EXTENSIONS)
 * @rid_max_frpl: max_fast_reg_page_list_len (pages per FRWR MR)
 * @rid_send_inv: the device can take remote invalidation (same flag as FRWR)
 * @rid_atomic_cap: atomic_cap
 * @rid_masked_atomic_cap: masked_atomic_cap
 * @rid_iwarp: iWARP device (no atomics at all)
 */
struct rds_ib_device {
	struct ib_device	*rid_dev;
	struct list_head	rid_item;
	struct kref		rid_ref;
	struct ib_pd		*rid_pd;
	bool			rid_frwr;
	u32			rid_max_frpl;
	bool			rid_send_inv;
	enum ib_atomic_cap	rid_atomic_cap;
	enum ib_atomic_cap	rid_masked_atomic_cap;
	bool			rid_iwarp;
};

struct rds_ib_device *rds_ib_device_get(struct ib_device *dev);
void rds_ib_device_put(struct rds_ib_device *rid);

#endif /* _RDS_IB_H */
