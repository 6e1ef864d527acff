#!/bin/sh
# Hidden harness self-test (run_vm.sh --expect-splat selftest_splat.sh):
# triggers a kernel WARN, which the runner must detect and count as a failure.
echo "1..1"
insmod /tests/rds_selftest_warn.ko && rmmod rds_selftest_warn
echo "ok 1 warned"
