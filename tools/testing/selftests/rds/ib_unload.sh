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
CLAIM=/tmp/ib_unload.claim
peer_echo() {
	rds-peer 1 "/tests/ib_msg echo $pa 4000 300 >/dev/null 2>&1 &" && sleep 1
}
quick() { ./ib_msg quick "$la" "$pa" 4000 90; }

# poller MASK: looks (shell builtins only: the window lasts
# conn_drop_delay_ms, and a fork per look under TCG would miss it) until a
# path to node 1 is in ERROR, then unloads our modules unless the other
# poller already does; 20 s at most.  Two of them, one pinned to each CPU:
# the drop holds its CPU with interrupts off for the whole window, and a
# single poller that shares it with the CM handler never sees ERROR (seen
# on the debug tier).
poller() {
	taskset "$1" sh -c '
	pa=$1 dbg=$2 claim=$3 looks=0 seen=0
	end=$(($(date +%s) + 20))
	while [ $seen = 0 ] && [ ! -d "$claim" ]; do
		while IFS= read -r l; do
			case $l in
			*" $pa "*"trans=infiniband state=ERROR"*)
				seen=1
				break ;;
			esac
		done <"$dbg"
		looks=$((looks + 1))
		if [ $((looks % 500)) = 0 ] &&
		   [ "$(date +%s)" -gt $end ]; then
			exit 1
		fi
	done
	# debugfs closed first: an open file would pin rds.ko
	[ $seen = 1 ] && mkdir "$claim" 2>/dev/null || exit 0
	timeout 90 rds-mods unload
	echo $? >"$claim/rc"' sh "$pa" "$DBG" "$CLAIM"
}

# round: node 1 unloads (disconnect), node 0 unloads while in ERROR; both
# load again whatever happened
round() {
	peer_echo && quick || return 1
	# Its socket would keep node 1's modules in; the connection stays.
	./ib_msg quit "$la" "$pa" 4000
	echo 400 >"$KNOB" || return 1
	rm -rf "$CLAIM"
	poller 1 &
	p0=$!
	poller 2 &
	p1=$!
	rds-peer 1 "rds-mods unload" >/dev/null 2>&1 &
	ppid=$!
	wait $p0 $p1
	wait $ppid
	if [ -f "$CLAIM/rc" ]; then
		urc=$(cat "$CLAIM/rc")
		werr=0
	else
		echo "# no path to $pa went to ERROR; connections:"
		sed 's/^/#   /' "$DBG"
		werr=1
		timeout 90 rds-mods unload
		urc=$?
	fi
	rds-mods load ours && rds-peer 1 "rds-mods load $RDS_PEER_MODS" &&
		[ $werr = 0 ] && [ "$urc" = 0 ]
}

echo "1..4"
t "round 1: unload during the peer's disconnect" 'round'
t "round 2" 'round'
t "round 3" 'round'
t "messages flow after the reloads" 'peer_echo && quick'
./ib_msg quit "$la" "$pa" 4000
exit $fail
