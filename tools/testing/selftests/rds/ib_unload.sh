#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_unload.sh - our modules unloaded on node 0 while node 0 is dropping
# the connection because node 1 disconnected.
#
# A drop moves the path to ERROR and then queues its shutdown; a destroy
# (module unload) that finds ERROR relies on that shutdown being queued and
# flushes it before the transport frees its half.  Were the two steps not
# one, the destroy could flush nothing and free the connection under the
# shutdown that is queued a moment later (seen once on 6.12 at unload: an
# endpoint still attached at conn_free).  rds.ko's conn_drop_delay_ms
# (a test knob) holds every non-destroy drop between the two steps for
# 400 ms: node 1 unloads its modules (its disconnect reaches node 0's CM
# handler, which drops the path and waits there), and node 0 unloads its
# own as soon as debugfs shows the path in ERROR.  No warning, no
# use-after-free (KASAN on the debug tier), and messages flow after both
# nodes reloaded.  Three rounds.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster ib_msg

DBG=/sys/kernel/debug/rds/connections
KNOB=/sys/module/rds/parameters/conn_drop_delay_ms
peer_echo() {
	rds-peer 1 "/tests/ib_msg echo $pa 4000 300 >/dev/null 2>&1 &" && sleep 1
}
quick() { ./ib_msg quick "$la" "$pa" 4000 90; }

# wait_error: until a path to node 1 is in ERROR (20 s at most).  Shell
# builtins only: the window lasts conn_drop_delay_ms, and a fork per look
# under TCG would miss it.
wait_error() {
	looks=0
	end=$(($(date +%s) + 20))
	while :; do
		while IFS= read -r l; do
			case $l in
			*" $pa "*"trans=infiniband state=ERROR"*) return 0 ;;
			esac
		done <"$DBG"
		looks=$((looks + 1))
		if [ $((looks % 500)) = 0 ] && [ "$(date +%s)" -gt $end ]; then
			echo "# no path to $pa went to ERROR; connections:"
			sed 's/^/#   /' "$DBG"
			return 1
		fi
	done
}

# round: node 1 unloads (disconnect), node 0 unloads while in ERROR; both
# load again whatever happened
round() {
	peer_echo && quick || return 1
	# Its socket would keep node 1's modules in; the connection stays.
	./ib_msg quit "$la" "$pa" 4000
	echo 400 >"$KNOB" || return 1
	rds-peer 1 "rds-mods unload" >/dev/null 2>&1 &
	ppid=$!
	wait_error
	werr=$?
	timeout 90 rds-mods unload
	urc=$?
	wait $ppid
	rds-mods load ours && rds-peer 1 "rds-mods load $RDS_PEER_MODS" &&
		[ $werr = 0 ] && [ $urc = 0 ]
}

echo "1..4"
t "round 1: unload during the peer's disconnect" 'round'
t "round 2" 'round'
t "round 3" 'round'
t "messages flow after the reloads" 'peer_echo && quick'
./ib_msg quit "$la" "$pa" 4000
exit $fail
