#!/bin/sh
# The walking skeleton, end to end: both modules loaded on both nodes, an
# RDMA device on the data link, the peer reachable, and a clean unload and
# reload.  (Socket-level tests are C programs using the kselftest harness.)
echo "1..4"
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
fail=0
check "modules loaded" 'grep -q "^rds_rdma " /proc/modules && grep -q "^rds " /proc/modules'
check "rdma device on the data link" '[ -d /sys/class/infiniband/rxe0 ]'
check "peer has its modules" 'rds-peer 1 "grep -q ^rds_rdma /proc/modules"'
check "unload and reload" 'rds-mods unload && rds-mods load ours'
exit $fail
