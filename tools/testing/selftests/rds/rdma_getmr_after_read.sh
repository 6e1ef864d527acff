#!/bin/sh
# Reproducer (pending, see tests.txt): an RDMA WRITE into a use-once key made
# by RDS_GET_MR, after RDMA READs from use-once keys made by
# RDS_CMSG_RDMA_MAP.  Seen on stock with ours on both nodes: before the
# READs the WRITE lands; after them the peer's WRITE completes, no error is
# reported to anyone and the connection stays up, but the data is not in the
# buffer of the key it was sent to (rds-bench: "RDMA WRITE answered but the
# data is not in place").
echo "1..6"
fail=0
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
P=18960
rds-peer 1 "rds-bench -S -Q -d 120 -p $P $RDS_PEER_ADDR >/tmp/ga-server.log 2>&1 &" >/dev/null
sleep 1
B="rds-bench -Q -p $P -d 0.5 -q 4 -s 1,4096 -I $RDS_LOCAL_ADDR"
check "GET_MR use-once key, RDMA WRITE: data in place" "$B -m rdma_write -k getmr $RDS_PEER_ADDR"
check "RDMA READ from MAP use-once keys" "$B -m rdma_read -k map $RDS_PEER_ADDR"
check "GET_MR use-once key after the READs, RDMA WRITE: data in place" \
	"$B -m rdma_write -k getmr $RDS_PEER_ADDR"
check "MAP use-once key after the READs, RDMA WRITE: data in place" \
	"$B -m rdma_write -k map $RDS_PEER_ADDR"
sleep 5
check "GET_MR use-once key 5 s later, RDMA WRITE: data in place" \
	"$B -m rdma_write -k getmr $RDS_PEER_ADDR"
check "GET_MR use-once key after MAP WRITEs, RDMA WRITE: data in place" \
	"$B -m rdma_write -k map $RDS_PEER_ADDR && $B -x -m rdma_write -k getmr $RDS_PEER_ADDR"
rds-peer 1 "cat /tmp/ga-server.log"
exit $fail
