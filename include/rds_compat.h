/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rds_compat.h - the one place where kernel version differences live.
 *
 * We build against Debian 12's 6.1 and 6.12 kernels.  Every #if on
 * LINUX_VERSION_CODE belongs here, behind a helper with one spelling.
 */
#ifndef _RDS_COMPAT_H
#define _RDS_COMPAT_H

#include <linux/version.h>
#include <linux/random.h>
#include <linux/sysctl.h>

/* 6.11 made the ctl_table argument of proc handlers const. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define rds_ctl_table const struct ctl_table
#else
#define rds_ctl_table struct ctl_table
#endif

/*
 * Sysctl tables: 6.11 dropped the empty sentinel entry (register_net_sysctl
 * takes ARRAY_SIZE); older kernels need it.
 */
#ifndef RDS_SYSCTL_TABLE_END
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
#define RDS_SYSCTL_TABLE_END
#else
#define RDS_SYSCTL_TABLE_END {}
#endif
#endif

/*
 * Tracepoints: 6.10 made __assign_str() take its source from the
 * __string() declaration; before, it was the second argument.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 10, 0)
#define rds_trace_assign_str(dst, src)	__assign_str(dst)
#else
#define rds_trace_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* _RDS_COMPAT_H */
