// SPDX-License-Identifier: GPL-2.0
/*
 * rds_selftest_warn.ko - the harness self-test: loading it WARNs once, so a
 * run that loads it must be reported as failed by the splat detector.  Only
 * the hidden test selftest_splat.sh (run with run_vm.sh --expect-splat)
 * loads it.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init rds_selftest_warn_init(void)
{
	WARN(1, "rds_selftest_warn: deliberate warning for the splat detector\n");
	return 0;
}
module_init(rds_selftest_warn_init);

static void __exit rds_selftest_warn_exit(void)
{
}
module_exit(rds_selftest_warn_exit);

MODULE_DESCRIPTION("RDS selftest harness: deliberate WARN");
MODULE_LICENSE("GPL");
