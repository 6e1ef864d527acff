#!/bin/sh
# What `make demo` shows, run on node 0 of a two-node cluster.
step() { echo; echo "==== $*"; }
step "node 0: $(uname -r), RDS modules: $(cut -d' ' -f1 /proc/modules | grep '^rds' | tr '\n' ' ')"
step "RDMA devices and what our module found they can do"
dmesg | grep 'RDS/RDMA:' | sed 's/^\[[^]]*\] //' | sort -u
step "messaging over soft-RoCE: node 1 echoes, node 0 sends"
# The peers' servers live long enough for a loaded TCG host and are
# stopped by pid when done (a socket left open keeps the modules busy).
stop_peer() { rds-peer 1 "kill \$(cat /tmp/$1.pid) 2>/dev/null; true" >/dev/null; }
rds-peer 1 "rds_demo echo $RDS_PEER_ADDR 4000 300 >/tmp/echo.log 2>&1 & echo \$! >/tmp/echo.pid"
sleep 1
for size in 0 1 4096 65536 1048576; do
	rds_demo ping "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR" 4000 20 $size
done
stop_peer echo
step "a local destination (loopback transport)"
rds_demo echo "$RDS_LOCAL_ADDR" 4001 8 >/tmp/echo0.log 2>&1 &
sleep 1
rds_demo ping "$RDS_LOCAL_ADDR" "$RDS_LOCAL_ADDR" 4001 20 4096
wait
step "binding an address that no RDMA device has is refused"
rds_demo echo 203.0.113.1 4002 1
step "RDMA with a use-once key: node 1 writes into node 0's buffer, then tries the key again"
rds-peer 1 "rds_demo rdma-peer $RDS_PEER_ADDR 4010 300 >/tmp/rdma-peer.log 2>&1 & echo \$! >/tmp/rdma-peer.pid"
sleep 1
rds_demo rdma "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR" 4010
step "atomics from node 0 on a counter in node 1's memory"
rds_demo atomic "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR" 4010
stop_peer rdma-peer
step "rds-info: the RDS connections, the RDMA connections, some counters"
if rds-info -n 2>/tmp/info.err; then
	rds-info -I
	rds-info -c | grep -E '^(conn_reset|recv_ping|send_ping|ib_(atomic|rdma)_[a-z_]*) ' | head -n 12
else
	echo "(rds-info: $(cat /tmp/info.err))"
fi
step "rds-bench: a short run against node 1 (TCG: the numbers mean little)"
rds-peer 1 "rds-bench -S -Q -d 300 $RDS_PEER_ADDR >/dev/null 2>&1 & echo \$! >/tmp/bench.pid"
sleep 1
rds-bench -Q -x -d 1 -q 8 -s 64K -m rate,rtt,bw,rdma_write,atomic -I "$RDS_LOCAL_ADDR" "$RDS_PEER_ADDR"
stop_peer bench
exit 0
