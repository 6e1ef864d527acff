#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_cpuhp.sh - CPU hotplug under receive traffic.  The receive path keeps
# whole fragment pages and one-fragment message states on per-CPU stacks
# (ib_recv.c, "Recycling"); a CPU hotplug callback empties the stack of a
# CPU once it is dead.  Node 0's second CPU goes offline and online again
# five times while echoes of 0, 4097 and 65536 bytes flow; every echo
# must come back intact, the CPU must come back, and no report (lockdep,
# KASAN, kmemleak on the debug tier) may appear.  What the callback frees
# is not visible from here (it was only held, never leaked): the test
# checks that the callback is registered and that flips are harmless.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster ib_msg

CPU=/sys/devices/system/cpu/cpu1/online
[ -w "$CPU" ] || { echo "1..0 # SKIP cpu1 cannot go offline"; exit 4; }
quick() { ./ib_msg quick "$la" "$pa" 4000 90 >/dev/null; }

echo "1..4"
# the callback is registered while rds_rdma is loaded
t "hotplug state net/rds_rdma:recycle registered" \
	'grep -q " net/rds_rdma:recycle$" /sys/devices/system/cpu/hotplug/states'
rds-peer 1 "/tests/ib_msg echo $pa 4000 300 >/dev/null 2>&1 &" && sleep 1
t "echoes before" 'quick'

# flips: cpu1 offline and online again 5 times under echoes
flips() {
	( i=0; while [ $i -lt 20 ]; do quick || exit 1; i=$((i + 1)); done ) &
	tp=$!
	k=0
	while [ $k -lt 5 ]; do
		echo 0 >"$CPU" || break
		sleep 0.3
		echo 1 >"$CPU" || break
		sleep 0.3
		k=$((k + 1))
	done
	wait $tp
	trc=$?
	echo "# $k flips, traffic rc $trc"
	[ "$(cat "$CPU")" = 1 ] || echo 1 >"$CPU"
	[ $k = 5 ] && [ $trc = 0 ]
}
t "cpu1 offline and online 5 times under echoes" 'flips'
t "echoes after" 'quick'
./ib_msg quit "$la" "$pa" 4000
exit $fail
