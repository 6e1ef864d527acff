#!/bin/sh
# rds-info against Debian's in-tree module (loaded on node 0 for the
# occasion) and against ours.  Our RDS_INFO_* support is checked where it
# exists; until then those checks are skipped.
echo "1..8"
fail=0
n=0
check() { n=$((n + 1)); if eval "$2"; then echo "ok $n $1"; else echo "not ok $n $1"; fail=1; fi; }
skip() { n=$((n + 1)); echo "ok $n $1 # SKIP $2"; }

if rds-mods unload && rds-mods load intree; then
	rds-ping -c 2 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_PEER_ADDR >/dev/null
	check "in-tree: rds-info -v" 'rds-info -v > /tmp/i.out'
	check "in-tree: the connection to the peer is listed" 'rds-info -n | grep -q "$RDS_PEER_ADDR"'
	check "in-tree: counters include recv_ping" 'rds-info -c | grep -q "^recv_ping "'
	check "in-tree: JSON output is one object" 'rds-info -j -c -n | tr -d "\n" | grep -q "^{\"counters\": \[.*\]}$"'
else
	for t in 1 2 3 4; do skip "in-tree rds-info $t" "in-tree modules did not load"; done
fi
rds-mods unload; rds-mods load ours
rds-ping -c 2 -i 0.2 -I $RDS_LOCAL_ADDR $RDS_PEER_ADDR >/dev/null
if rds-info -c >/dev/null 2>&1; then
	check "ours: rds-info -v" 'rds-info -v > /tmp/o.out'
	check "ours: the connection to the peer is listed" 'rds-info -n | grep -q "$RDS_PEER_ADDR"'
	check "ours: IPv6 variants" 'rds-info -6 -n -k > /dev/null'
else
	for t in 1 2 3; do skip "ours rds-info $t" "RDS_INFO not implemented yet"; done
fi
rds-mods unload
rds-info -c > /tmp/e.out 2>&1; rc=$?
check "no module: exit 1, cause named" '[ $rc = 1 ] && grep -q "module loaded" /tmp/e.out'
rds-mods load ours
exit $fail
