#!/bin/sh
# Harness self-test: the control channel reaches every peer, and a peer can
# be crash-rebooted mid-test and comes back with its role and modules.
echo "1..3"
fail=0
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
p=1
all=1
while [ $p -lt "$RDS_NODES" ]; do
	[ "$(rds-peer $p 'echo $RDSVM_NODE')" = "$p" ] || all=0
	p=$((p + 1))
done
check "control channel reaches all $((RDS_NODES - 1)) peer(s)" '[ $all = 1 ]'
before=$(rds-peer 1 'cat /proc/sys/kernel/random/boot_id')
rds-reboot 1
sleep 2
after=$(rds-peer -t 180 1 'cat /proc/sys/kernel/random/boot_id')
check "peer 1 rebooted and came back" '[ -n "$after" ] && [ "$after" != "$before" ]'
check "peer 1 has its modules again" 'rds-peer 1 "grep -q ^rds_rdma /proc/modules"'
exit $fail
