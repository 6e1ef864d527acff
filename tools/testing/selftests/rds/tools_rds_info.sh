#!/bin/sh
# rds-info against Debian's in-tree module (loaded on node 0 for the
# occasion) and against ours: the same tables, the same counter names (ours
# has more rds_rdma counters after the in-tree ones), the connection to the
# peer in the RDS and RDMA tables, the RDS6 variants, JSON.
echo "1..12"
fail=0
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }
names() { awk 'NR > 2 { print $1 }'; }

if rds-mods unload && rds-mods load intree; then
	rds-ping -c 2 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_PEER_ADDR >/dev/null
	check "in-tree: rds-info -v" 'rds-info -v > /tmp/i.out'
	check "in-tree: the connection to the peer is listed" 'rds-info -n | grep -q "$RDS_PEER_ADDR"'
	check "in-tree: counters include recv_ping" 'rds-info -c | grep -q "^recv_ping "'
	check "in-tree: JSON output is one object" 'rds-info -j -c -n | tr -d "\n" | grep -q "^{\"counters\": \[.*\]}$"'
	rds-info -c | names > /tmp/i.names
else
	for t in 1 2 3 4; do skip "in-tree rds-info $t" "in-tree modules did not load"; done
	: > /tmp/i.names
fi
rds-mods unload; rds-mods load ours
rds-ping -c 2 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_PEER_ADDR >/dev/null
check "ours: rds-info -v" 'rds-info -v > /tmp/o.out'
check "ours: the connection to the peer is listed, connected" 'rds-info -n | grep "$RDS_PEER_ADDR" | grep -q -- "-C infiniband"'
check "ours: the RDMA connection to the peer is listed" 'rds-info -I | grep -q "$RDS_PEER_ADDR"'
check "ours: IPv6 variants" 'rds-info -6 -n -k -I > /tmp/o6.out && grep -q "$RDS_PEER_ADDR" /tmp/o6.out'
check "ours: JSON output is one object" 'rds-info -j -c -n -I | tr -d "\n" | grep -q "^{\"counters\": \[.*\]}$"'
# Without the core counters only ours has (send_zcopy*, after the in-tree
# core ones).
rds-info -c | names | grep -v '^send_zcopy' > /tmp/o.names
if [ -s /tmp/i.names ]; then
	check "ours: the in-tree counter names, in the in-tree order" \
		'[ "$(head -n $(wc -l < /tmp/i.names) /tmp/o.names)" = "$(cat /tmp/i.names)" ]'
else
	skip "ours: the in-tree counter names" "no in-tree list"
fi
check "ours: rds_rdma counters after the core ones" 'grep -q "^ib_rx_total_incs$" /tmp/o.names && grep -q "^ib_rdma_remote_inv$" /tmp/o.names'
rds-mods unload
rds-info -c > /tmp/e.out 2>&1; rc=$?
check "no module: exit 1, cause named" '[ $rc = 1 ] && grep -q "module loaded" /tmp/e.out'
rds-mods load ours
exit $fail
