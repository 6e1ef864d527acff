#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_ring.sh - the send and receive rings of the IB transport under
# conditions that used to lose or corrupt data (issue 9, items 2 and 2b):
#
#  1. ring sizes that are not powers of two (37 send, 19 receive slots)
#     with the ring sequence numbers starting just below the 2^32 wrap
#     (rds_ib_ring_seq_start), so every connection's rings wrap during the
#     traffic;
#  2. the same small rings with every 500th received message dropped and
#     an earlier one received again in its place (rds_ib_recv_replay_every),
#     what rxe did once in case 3: the receive integrity check drops the
#     connection and the retransmission after the reconnect delivers what
#     was not acknowledged, exactly once;
#  3. the same small rings with the refill worker forced to run during the
#     traffic (rds_ib_recv_fail_every: every 2nd atomic allocation of the
#     receive completion path fails) while the completion handler waits
#     after handing each slot back (rds_ib_recv_delay_us), on 2 vCPUs,
#     with the NICs' interrupts moved between the vCPUs every 20 ms: the
#     worker refills on one CPU while the handler is in the window.
#  4. 8-slot receive rings (fewer than the 16 free slots the receive
#     path used to wait for before refilling, or posted buffers before an
#     ACK of its own) with credit flow control on both nodes.
#  5. net.rds.ib.max_recv_allocation of 3 fragments on both nodes (a
#     ring then holds at most 3 posted buffers, fewer than the 16 of a
#     refill batch), with credit flow control on both nodes, set before a
#     connection is made and under one that is up: the connection comes
#     up, messages flow both ways, and the ACK-only messages that carry
#     the credits stay few (no ACK ping-pong).
#
# Each case reloads our modules on both nodes and runs rds_stress's
# peer4 and peer4_reverse variants (hashed, sequence-tagged messages of up
# to 64 KiB, 4 senders to 3 receivers, each way): every message arrives
# once, in order, with its content.  The case ends with an unload on both
# nodes, which warns (and fails the run) if a receive page is still
# accounted (max_recv_allocation), and kmemleak runs on the debug kernel.
# ib_rx_stale_header and ib_rx_stale_seq (a receive completed with a
# header the HCA never wrote, or an earlier message delivered again: see
# rds.rst, Receive integrity checks) must stay 0 on both nodes outside
# case 2.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster rds_stress
msgs=${IB_RING_MSGS:-4000}

# setup PARAMS: reload our modules on both nodes with module PARAMS and
# small rings of sizes that are not powers of two.
setup_cmd() {
	echo "rds-mods unload && rds-mods load ours &&
	for kv in $1; do echo \${kv#*=} > /sys/module/rds_rdma/parameters/\${kv%%=*} || exit 1; done &&
	echo 37 > /proc/sys/net/rds/ib/max_send_wr &&
	echo 19 > /proc/sys/net/rds/ib/max_recv_wr"
}
setup() {
	sh -c "$(setup_cmd "$1")" && rds-peer 1 "$(setup_cmd "$1")"
}
# stress [TIMEOUT [MESSAGES [MAXLEN]]]: rds_stress peer4 and peer4_reverse.
stress() {
	RDS_STRESS_MSGS=${2:-$msgs} RDS_STRESS_MAXLEN=${3:-65536} \
		timeout "${1:-800}" ./rds_stress -v peer4 -v peer4_reverse >/tmp/ib_ring.out 2>&1
	r=$?
	grep -E "^(not )?ok|flow|failed|bad|recv [0-9]" /tmp/ib_ring.out | sed 's/^/# /' | head -n 40
	return $r
}
# Move the NICs' receive interrupts between the two vCPUs every 20 ms for
# at most $1 seconds (in the background, on this node), so receive
# completions run on one CPU while a refill worker queued from the other
# runs there: the two posting contexts meet on the ring.
flip_cmd() {
	echo "( end=\$((\$(date +%s) + $1)); c=1;
	  while [ \$(date +%s) -lt \$end ] && [ ! -f /tmp/ib_ring.stop ]; do
		for i in \$(grep -E 'virtio[0-9]+-input' /proc/interrupts | cut -d: -f1); do
			echo \$c > /proc/irq/\$i/smp_affinity 2>/dev/null
		done
		c=\$((3 - c)); sleep 0.02
	  done ) >/dev/null 2>&1 &"
}
flip_start() {
	rm -f /tmp/ib_ring.stop
	sh -c "$(flip_cmd 600)" && rds-peer 1 "rm -f /tmp/ib_ring.stop; $(flip_cmd 600)"
}
flip_stop() {
	touch /tmp/ib_ring.stop && rds-peer 1 "touch /tmp/ib_ring.stop" >/dev/null
}
unload_both() {
	rds-mods unload && rds-peer 1 "rds-mods unload"
}

# The receive side's counters of both nodes, as a TAP comment.
ring_counters() {
	echo "# node 0: $(for c in ib_rx_refill_from_thread ib_rx_inc_reserve_used conn_reset recv_drop_old_seq ib_rx_ring_empty ib_rx_stale_header ib_rx_stale_seq; do printf '%s=%s ' $c "$(rds-counter $c)"; done)"
	echo "# node 1: ib_rx_stale_header=$(rds-counter -n 1 ib_rx_stale_header) ib_rx_stale_seq=$(rds-counter -n 1 ib_rx_stale_seq)"
}
no_stale() {
	for c in ib_rx_stale_header ib_rx_stale_seq; do
		[ "$(rds-counter $c)" = 0 ] && [ "$(rds-counter -n 1 $c)" = 0 ] || return 1
	done
}

echo "1..19"
t "wrap: small rings, sequences start at 2^32 - 4096" \
	'setup "rds_ib_ring_seq_start=4294963200"'
t "wrap: $msgs hashed messages each way, in order, exactly once" \
	'stress; r=$?; ring_counters; [ $r = 0 ] && no_stale'
t "wrap: unload on both nodes (no page left accounted)" 'unload_both'
t "replay: every 500th message replaced by an earlier one" \
	'setup "rds_ib_recv_replay_every=500"'
t "replay: detected, connection rebuilt, $msgs messages each way exactly once" \
	'stress; r=$?; ring_counters; [ $r = 0 ] && [ "$(rds-counter ib_rx_stale_seq)" -gt 0 ] && [ "$(rds-counter -n 1 ib_rx_stale_seq)" -gt 0 ] &&
	 [ "$(rds-counter ib_rx_stale_header)" = 0 ] && [ "$(rds-counter -n 1 ib_rx_stale_header)" = 0 ]'
t "replay: unload on both nodes (no page left accounted)" 'unload_both'
# Case 3 only with IB_RING_REFILL=1: on stock it delivered a message with
# another flow's payload in 1 of 2 full checks on 2026-12-05 (no reconnect;
# cause open, see tests.txt), so it is not in `make check` until found.
if [ "${IB_RING_REFILL:-0}" != 1 ]; then
	for c in "small rings, refill worker forced, slot window widened" \
		 "$msgs hashed messages each way, in order, exactly once" \
		 "unload on both nodes (no page left accounted)"; do
		skip "refill race: $c" "IB_RING_REFILL=1 runs it (open corruption)"
	done
else
t "refill race: small rings, refill worker forced, slot window widened" \
	'setup "rds_ib_ring_seq_start=0 rds_ib_recv_fail_every=2 rds_ib_recv_delay_us=1000"'
flip_start
t "refill race: $msgs hashed messages each way, in order, exactly once" \
	'stress; r=$?; ring_counters; [ $r = 0 ] && [ "$(rds-counter ib_rx_refill_from_thread)" -gt 0 ] && no_stale'
flip_stop
t "refill race: unload on both nodes (no page left accounted)" 'unload_both'
fi
# Case 4: receive rings of 8 slots, with credit flow control on both
# nodes.  The completion handler used to refill only once 16 slots were
# free and to advertise credits only once 16 buffers were posted, so on a
# ring of 15 or fewer the flow stopped for good once the sender had
# filled it (RNR for ever, or no credits: a sender keeps its last credit
# for a credit update and asks for an ACK only every 8 messages).
tiny_cmd="echo 8 > /proc/sys/net/rds/ib/max_recv_wr && echo 1 > /proc/sys/net/rds/ib/flow_control"
t "credits: flow control on, 8-slot receive rings" \
	'setup "" && sh -c "$tiny_cmd" && rds-peer 1 "$tiny_cmd"'
t "credits: $msgs hashed messages each way, in order, exactly once" \
	'stress 300; r=$?; ring_counters
	 for nd in 0 1; do echo "# node $nd: ib_tx_throttle=$(rds-counter -n $nd ib_tx_throttle) ib_tx_credit_updates=$(rds-counter -n $nd ib_tx_credit_updates) ib_ack_sent=$(rds-counter -n $nd ib_ack_sent)"; done
	 [ $r = 0 ] && no_stale && [ "$(rds-counter ib_tx_throttle)" -gt 0 ] &&
	 [ "$(rds-counter -n 1 ib_tx_throttle)" -gt 0 ]'
t "credits: unload on both nodes (no page left accounted)" 'unload_both'
# Case 5: max_recv_allocation of 3 fragments on both nodes, flow control
# on both nodes, messages of one fragment (a message's fragments all need
# a page at once: 3 pages never hold 64 KiB).  First a new connection,
# with the default 1024-slot ring (a refill batch, and a batch of credits
# worth an ACK, is 16): it used to come up only with 16 buffers posted, so
# never here.  Then ("alloc_cap_up") the limit is set under a connection
# that came up with its full 64-slot rings, which then drain to 3 posted
# buffers: posted credits used to go out on their own only 16 at a time,
# so once the sender was down to the credit it keeps for a credit update
# the flow stopped for good.  Credits now also go out when the peer may be
# out of them, but an ACK must not answer a credit update: each node's
# ACK-only messages must stay within a few per message (a ping-pong makes
# thousands per second).  3, not 2: with 2 buffers one side is always
# left unable to send data after an exchange (rds.rst, flow_control).
cap_msgs=${IB_RING_CAP_MSGS:-400}
fc64_cmd="echo 64 > /proc/sys/net/rds/ib/max_recv_wr && echo 1 > /proc/sys/net/rds/ib/flow_control"
fc1024_cmd="echo 1024 > /proc/sys/net/rds/ib/max_recv_wr && echo 1 > /proc/sys/net/rds/ib/flow_control"
# (The unload after each case gives the next load the default sysctls.)
cap_cmd="echo 3 > /proc/sys/net/rds/ib/max_recv_allocation"
both() { sh -c "$1" && rds-peer 1 "$1"; }
ping_peer() { timeout 60 rds-ping -c 3 -i 0.5 -I "$la" "$pa" >/dev/null 2>&1; }
# ACK-only messages node $1 sent: at most 4 per message each way.
cap_acks_ok() {
	a=$(rds-counter -n "$1" ib_ack_sent)
	[ -n "$a" ] && [ "$a" -le $((4 * cap_msgs + 64)) ]
}
# cap_stress UP: the stress run of case 5 if UP is 1, counters, checks.
cap_stress() {
	if [ "$1" = 1 ]; then stress 120 "$cap_msgs" 4096; r=$?; else r=1; echo "# no connection: not run"; fi
	for nd in 0 1; do
		echo "# node $nd: $(for c in ib_tx_throttle ib_tx_credit_updates ib_ack_sent ib_ack_send_delayed ib_rx_alloc_limit ib_rx_refill_from_thread; do printf "%s=%s " $c "$(rds-counter -n $nd $c)"; done)"
	done
	[ $r = 0 ] && no_stale && cap_acks_ok 0 && cap_acks_ok 1 &&
	[ "$(rds-counter ib_tx_throttle)" -gt 0 ] &&
	[ "$(rds-counter -n 1 ib_tx_throttle)" -gt 0 ]
}
t "alloc_cap: flow control on, max_recv_allocation 3 fragments" \
	'setup "" && both "$fc1024_cmd" && both "$cap_cmd"'
cap_up=0
t "alloc_cap: a new connection comes up (rds-ping)" 'ping_peer && cap_up=1'
t "alloc_cap: $cap_msgs hashed messages each way, in order, few ACKs" \
	'cap_stress $cap_up'
t "alloc_cap: unload on both nodes (no page left accounted)" 'unload_both'
cap_up=0
t "alloc_cap_up: flow control on, 64-slot rings, connected, then the limit" \
	'setup "" && both "$fc64_cmd" && ping_peer && cap_up=1 && both "$cap_cmd"'
t "alloc_cap_up: $cap_msgs hashed messages each way, in order, few ACKs" \
	'cap_stress $cap_up'
t "alloc_cap_up: unload on both nodes (no page left accounted)" 'unload_both'
rds-mods load ours >/dev/null 2>&1
rds-peer 1 "rds-mods load ours" >/dev/null 2>&1
exit $fail
