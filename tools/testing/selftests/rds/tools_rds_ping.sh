#!/bin/sh
# rds-ping against the peer (ours or in-tree), over IPv4 and IPv6, and its
# exit codes for the error cases.
echo "1..6"
fail=0
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
check "ping the peer (IPv4)" 'rds-ping -c 5 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_PEER_ADDR'
check "ping the peer (IPv6)" 'rds-ping -c 3 -i 0.2 -I $RDS_LOCAL_ADDR6 $RDS_PEER_ADDR6'
check "ping with a TOS" 'rds-ping -c 2 -i 0.2 -Q 3 $RDS_PEER_ADDR'
check "ping this node (loopback)" 'rds-ping -c 2 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_LOCAL_ADDR'
rds-ping -c 1 -I 203.0.113.1 $RDS_PEER_ADDR > /tmp/p.out 2>&1; rc=$?
check "a source without an RDMA device: exit 2, named cause" '[ $rc = 2 ] && grep -q "RDMA device" /tmp/p.out'
rds-ping -c 1 -Q 300 $RDS_PEER_ADDR > /dev/null 2>&1; rc=$?
check "bad TOS is a usage error" '[ $rc = 2 ]'
exit $fail
