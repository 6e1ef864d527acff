#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_restart_tx.sh - the SENDING node reloads its modules, and the first
# messages of its new incarnation reach the receiver only as
# retransmissions (rds.rst, "Restarts under traffic").
#
# Node 0 keeps cp_next_rx_seq of node 1's old incarnation for as long as
# its connection object lives, and rds_recv_incoming() drops a message
# flagged RETRANSMITTED below it as an old duplicate (and the transport
# ACKs it).  Were node 1's new connection object to number from 1 again,
# the retransmissions of its first messages, sent before any fresh
# message had brought that number down, would be lost without an error;
# rds_conn_first_seq() starts a new path's numbering at the wall clock in
# ns instead.
#
# Node 1 streams rds_restart messages (200/s) to a receiver on node 0.
# The outage: netem loss 100% on node 1's data link egress for 3 s just as
# its sender starts, with rds_ib_retry_count=1 and rds_ib_ack_timeout=14 on
# node 1 so that its QP fails within the outage and what it posted comes
# again, flagged RETRANSMITTED, after the reconnect.  Control: the outage
# with no reload before it.  Case: the outage right after node 1 reloaded
# its modules (node 0 brings the connection up first, so that the new
# incarnation's first data messages are the ones caught by the outage).
# rds_restart's checker: every message once, in order, none corrupt.
# Before the fix the case lost the new sender's first 96 messages
# (node 0's recv_drop_old_seq +96).  About 40 s on stock.
. rds-tap.sh
tap_cluster rds_restart rds_netem
d=/tmp/ib_restart_tx
run=$((($$ * 65537 + $(date +%s)) % 2000000000))
port=$((40000 + run % 10000))
rm -rf $d
mkdir -p $d
rds-peer 1 "rm -rf $d; mkdir -p $d" >/dev/null
P="rds_ib_retry_count=1 rds_ib_ack_timeout=14"
dev1=$(rds-peer 1 "rds-dataif $pa")
trap 'rds-peer 1 "/tests/rds_netem $dev1 off; rds-mods unload; rds-mods load ours" >/dev/null 2>&1' EXIT

# alive PID: running (not a zombie)
alive() {
	[ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}
# start NAME INC: receiver NAME on node 0 (a new port), sender INC on node 1
start() {
	port=$((port + 1))
	./rds_restart recv "$la" "$port" $d/$1.rec "$run" 60 >$d/$1.rlog 2>&1 &
	rp=$!
	i=0
	until grep -q '^B ' $d/$1.rec 2>/dev/null; do
		[ $i -ge 100 ] && break
		sleep 0.1
		i=$((i + 1))
	done
	rds-peer 1 "/tests/rds_restart send $pa $la $port $d/$1.st $run $2 200 >$d/$1.slog 2>&1 & echo \$! > $d/$1.pid"
}
# finish NAME: END, wait (70 s each side), check; true if nothing was lost
finish() {
	rds-peer -t 120 1 "p=\$(cat $d/$1.pid); kill -TERM \$p; i=0; while [ -r /proc/\$p/status ] && ! grep -q 'State:.*Z' /proc/\$p/status && [ \$i -lt 700 ]; do sleep 0.1; i=\$((i+1)); done; cat $d/$1.slog; /tests/rds_restart status $d/$1.st" >$d/$1.out
	sed 's/^/# /' $d/$1.out
	st=$(tail -n 1 $d/$1.out)
	i=0
	while alive $rp && [ $i -lt 700 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $rp 2>/dev/null
	wait $rp
	./rds_restart check "$run" "$st,gap=none,dups=0" -- $d/$1.rec >$d/$1.chk
	r=$?
	sed 's/^/# /' $d/$1.chk
	return $r
}
# outage SECONDS: node 1's data link egress drops everything
outage() {
	rds-peer 1 "/tests/rds_netem $dev1 loss 100" && sleep "$1" &&
		rds-peer 1 "/tests/rds_netem $dev1 off"
}
reload1() { rds-peer -t 120 1 "rds-mods unload && rds-mods load ours $P"; }
# up: node 0 brings the connection up (sends to an unbound port of node 1)
up() {
	./rds_restart send "$la" "$pa" 9 $d/up.st "$run" 99 50 >/dev/null 2>&1 &
	u=$!
	sleep 2
	kill -9 $u
	wait $u
	grep "^$la $pa tos=0 " /sys/kernel/debug/rds/connections | grep -q "state=UP"
}
old() { rds-counter recv_drop_old_seq; }
# lossy NAME INC WHAT: node 1's link drops everything for 3 s as its sender
# INC starts; then nothing may be lost, and the outage must have dropped
# the connection (else it proved nothing)
lossy() {
	lname=$1
	linc=$2
	o0=$(old)
	c0=$(rds-counter conn_reset)
	# t evals its expression with its own $1 and $2: name them.
	t "$3: node 1's link drops all for 3 s as its sender starts" \
		'rds-peer 1 "/tests/rds_netem $dev1 loss 100" && start $lname $linc && sleep 3 && rds-peer 1 "/tests/rds_netem $dev1 off"'
	sleep 3
	t "$3: nothing lost" 'finish $lname'
	dold=$(($(old) - o0))
	dc=$(($(rds-counter conn_reset) - c0))
	t "$3: the outage dropped the connection (conn_reset +$dc; node 0 recv_drop_old_seq +$dold)" \
		'[ "$dc" -ge 1 ]'
}

t "node 1 loads with $P" 'reload1'
t "warm-up: 400 messages from node 1, none lost" 'start warm 1; sleep 2; finish warm'
lossy ctl 2 "control, no reload"
t "node 1 reloads (a new incarnation, a new connection object)" 'reload1'
t "node 0 brings the connection up" 'up'
lossy bug 3 "after the reload"
echo "1..$n"
exit $fail
