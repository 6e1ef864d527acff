#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_multidev.sh - several RDMA devices at once.  A second soft-RoCE
# device (rxe1) is added on each node's control link (203.0.113.x), so
# that each node has two devices, each with its own address.  Checks:
# connections over both devices carry messages at the same time; removing
# one device with its connections up, and with registrations (RDS_GET_MR,
# RDS_CMSG_RDMA_MAP, RDS_FREE_MR) running on it, leaves the other's traffic
# intact and the registrations fail cleanly;
# the address of a removed device can no longer be bound (EADDRNOTAVAIL)
# and works again once the device is back.  rxe1 is removed at the end so
# that later tests of the same boot see one device again.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster ib_msg
slow=1
[ "$RDS_KERNEL" = debug ] && slow=2

# The control link carries 203.0.113.(node + 1) (vm/init).
la2=203.0.113.1
pa2=203.0.113.2
ctlif=$(rds-dataif $la2)
peerctl=$(rds-peer 1 "rds-dataif $pa2")
[ -n "$ctlif" ] && [ -n "$peerctl" ] ||
	{ echo "1..0 # SKIP no control link"; exit 4; }

add_local() { rdsvm link-add rxe1 rxe "$ctlif"; }
add_peer() { rds-peer 1 "rdsvm link-add rxe1 rxe $peerctl"; }
del_local() { timeout 90 rdsvm link-del rxe1; }
del_peer() { rds-peer 1 "timeout 90 rdsvm link-del rxe1" >/dev/null; }
# wait up to 20 s for our module to see rxe1 (the ib_client add callback)
seen() {
	i=0
	while [ $i -lt 20 ]; do
		dmesg | grep -q "RDS/RDMA: rxe1:" && return 0
		sleep 1
		i=$((i + 1))
	done
	return 1
}
quick() { ./ib_msg quick "$1" "$2" "$3" 90 >/dev/null; }
both() { # traffic over both devices at once
	quick "$la" "$pa" 4100 & p1=$!
	quick "$la2" "$pa2" 4101 & p2=$!
	wait $p1; r1=$?
	wait $p2; r2=$?
	[ $r1 = 0 ] && [ $r2 = 0 ]
}
# rxe1 deleted while two processes register MRs on it (ib_msg reg): the
# device's removal waits for registrations in flight and deregisters every
# MR; the loops made at least one registration before it went.
del_during_reg() {
	./ib_msg reg "$la2" "$pa2" 4101 $((20 * slow)) & r1=$!
	./ib_msg reg "$la2" "$pa2" 4101 $((20 * slow)) & r2=$!
	sleep $((5 * slow))
	del_local; d=$?
	wait $r1; a=$?
	wait $r2; b=$?
	[ $d = 0 ] && [ $a = 0 ] && [ $b = 0 ]
}
bind_fails() { # ADDR: bind must fail with EADDRNOTAVAIL
	./ib_msg quick "$1" "$pa2" 4102 1 2>&1 | grep -q "Cannot assign"
}

echo "1..9"
t "second device rxe1 on both nodes" 'add_local && add_peer && seen'
rds-peer 1 "/tests/ib_msg echo $pa 4100 300 >/dev/null 2>&1 &
	    /tests/ib_msg echo $pa2 4101 300 >/dev/null 2>&1 &" >/dev/null
sleep 1
t "messages over rxe0 and rxe1 at the same time" 'both'
t "two connections, one per device" \
	'dmesg | grep -q "connected <::ffff:$la2,::ffff:$pa2,0>"'
t "rxe1 deleted with its connection up and registrations running" \
	'del_during_reg'
t "rxe0 traffic unaffected" 'quick "$la" "$pa" 4100'
t "rxe1's address no longer binds" 'bind_fails $la2'
dmesg -c >/dev/null 2>&1
t "rxe1 back" 'add_local && seen'
t "traffic over both again (reconnect on the new device)" 'both'
./ib_msg quit "$la" "$pa" 4100 >/dev/null 2>&1
./ib_msg quit "$la2" "$pa2" 4101 >/dev/null 2>&1
t "rxe1 removed on both nodes" 'del_local && del_peer'
exit $fail
