#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_recover.sh - recovery of the IB transport with connections up:
# `rdma link delete` of the device, unload/reload of our modules, and a
# reload of the peer's modules (ours or Debian's in-tree ones); after each,
# messages must flow again (reconnect).  Uses ib_msg for the traffic.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster ib_msg

peer_echo() {
	rds-peer 1 "/tests/ib_msg echo $pa 4000 300 >/dev/null 2>&1 &" && sleep 1
}
peer_quit() { ./ib_msg quit "$la" "$pa" 4000; }
quick() { ./ib_msg quick "$la" "$pa" 4000 90; }
# The netdev under rxe0 (the data link carries 192.0.2.x).
dataif=$(rds-dataif "$la")

fc() { # VALUE: net.rds.ib.flow_control on both nodes
	echo "$1" > /proc/sys/net/rds/ib/flow_control &&
		rds-peer 1 "echo $1 > /proc/sys/net/rds/ib/flow_control"
}
fc_suite() { # a fresh connection (TOS 5) with credits on both sides
	rds-peer 1 "IB_MSG_TOS=5 /tests/ib_msg echo $pa 4002 300 >/dev/null 2>&1 &" &&
		sleep 1 && IB_MSG_TOS=5 ./ib_msg client "$la" "$pa" 4002 >/dev/null
}

echo "1..12"
t "connection up" 'peer_echo && quick'
t "rdma link delete with connections up" 'timeout 90 rdsvm link-del rxe0'
t "rdma link add again" '[ -n "$dataif" ] && rdsvm link-add rxe0 rxe "$dataif"'
t "messages flow after the device came back" 'quick'
t "unload our modules with connections up" 'timeout 90 rds-mods unload'
t "load them again" 'rds-mods load ours'
t "messages flow after our reload" 'quick'
t "peer reloads its modules ($RDS_PEER_MODS)" \
	'peer_quit; rds-peer 1 "rds-mods unload && rds-mods load $RDS_PEER_MODS" && peer_echo'
t "messages flow after the peer reloaded" 'quick'
# Credit flow control (net.rds.ib.flow_control=1 on both nodes).  Against
# our peer both sides enforce credits; against in-tree only the in-tree
# side does (its REP never carries credits) and we keep advertising ours.
t "flow_control=1 on both nodes" 'fc 1'
t "full suite on a new connection with flow control" 'fc_suite'
if [ "$RDS_PEER_MODS" = ours ]; then
	t "that connection negotiated flow control" \
		'dmesg | grep -q "connected <::ffff:$la,::ffff:$pa,5> .*flow control"'
else
	t "that connection is up (in-tree enforces our credits)" \
		'dmesg | grep -q "connected <::ffff:$la,::ffff:$pa,5>"'
fi
fc 0
./ib_msg quit "$la" "$pa" 4002
peer_quit
exit $fail
