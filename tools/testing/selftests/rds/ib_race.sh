#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_race.sh - simultaneous connect.  Both nodes start from no connection
# (modules reloaded on both) and send their first message to each other at
# the same moment, so that each side's rdma_cm connect crosses the other's.
# The race must resolve on its own (one connection survives, no endless
# reject/retry duel): both sides' messages are answered within a bound,
# five rounds in a row, over IPv4 and then IPv6.  Works against our peer
# and the in-tree one (RDS_PEER_MODS).
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster ib_msg

reload() {
	timeout 90 rds-mods unload && rds-mods load ours &&
		rds-peer 1 "timeout 90 rds-mods unload && rds-mods load $RDS_PEER_MODS"
}
round() { # LOCAL PEER: both sides' first messages cross
	reload || return 1
	./ib_msg echo "$1" 4200 60 >/dev/null 2>&1 &
	e=$!
	rds-peer 1 "/tests/ib_msg echo $2 4200 60 >/dev/null 2>&1 &" >/dev/null
	sleep 1
	start=$(date +%s)
	rds-peer 1 "/tests/ib_msg quick $2 $1 4200 40 >/dev/null" &
	p=$!
	./ib_msg quick "$1" "$2" 4200 40 >/dev/null
	r0=$?
	wait $p
	r1=$?
	took=$(($(date +%s) - start))
	./ib_msg quit "$1" "$2" 4200 >/dev/null 2>&1
	rds-peer 1 "/tests/ib_msg quit $2 $1 4200 >/dev/null 2>&1"
	kill $e 2>/dev/null
	wait $e 2>/dev/null
	echo "# round: ours $r0, peer $r1, ${took}s"
	[ $r0 = 0 ] && [ $r1 = 0 ] && [ "$took" -le 45 ]
}
rounds() { # LOCAL PEER
	i=0
	while [ $i -lt 5 ]; do
		round "$1" "$2" || return 1
		i=$((i + 1))
	done
}

echo "1..2"
t "IPv4: five simultaneous first contacts resolve" 'rounds "$la" "$pa"'
if [ -n "$RDS_LOCAL_ADDR6" ]; then
	t "IPv6: five simultaneous first contacts resolve" \
		'rounds "$RDS_LOCAL_ADDR6" "$RDS_PEER_ADDR6"'
else
	skip "" "no IPv6"
fi
exit $fail
