#!/bin/sh
# What `make demo` shows, run on node 0 of a two-node cluster.
step() { echo; echo "==== $*"; }
step "node 0: $(uname -r), RDS modules: $(cut -d' ' -f1 /proc/modules | grep '^rds' | tr '\n' ' ')"
step "RDMA devices and what our module found they can do"
dmesg | grep 'RDS/RDMA:' | sed 's/^\[[^]]*\] //' | sort -u
step "messaging over soft-RoCE: node 1 echoes, node 0 sends"
rds-peer 1 "rds_demo echo $RDS_PEER_ADDR 4000 25 >/tmp/echo.log 2>&1 &"
sleep 1
for size in 0 1 4096 65536 1048576; do
	rds_demo ping "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR" 4000 20 $size
done
step "a local destination (loopback transport)"
rds_demo echo "$RDS_LOCAL_ADDR" 4001 8 >/tmp/echo0.log 2>&1 &
sleep 1
rds_demo ping "$RDS_LOCAL_ADDR" "$RDS_LOCAL_ADDR" 4001 20 4096
wait
step "binding an address that no RDMA device has is refused"
rds_demo echo 203.0.113.1 4002 1
exit 0
