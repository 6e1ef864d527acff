#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rds_faults.sh - allocation failures where failslab's task filter cannot
# reach (issue 10, item 4): connection set-up in the connect worker and
# the rdma_cm handler, the receive completion handler (softirq) and the
# refill worker, the send worker.  Debug tier: it needs the fault
# attributes /sys/kernel/debug/rds/fail_{conn,rx,tx} (rds.ko, on kernels
# with CONFIG_FAULT_INJECTION_DEBUG_FS; see debugfs.c), task filter off.
#
#  1. conn: node 1's passive set-up (rds.ko's connection object too)
#     failing 20% as node 0 connects first; then fail_conn at 10% on both
#     nodes while node 1 and node 0 drop
#     the connection every 100th received message (rds_ib_recv_replay_every:
#     the receive integrity check drops it, as in ib_ring.sh), so the
#     connection is set up again and again with steps failing at random;
#     rds_stress's hashed, sequence-tagged messages each way arrive once,
#     in order;
#  2. rx: fail_rx at 5% on both nodes under the same traffic, the
#     connection dropped every 150th message: fragment pages and message
#     state fail in softirq, the refill worker and the reserve take over,
#     and a new connection comes up with a partly filled receive ring (16
#     buffers at least; before 2026-12-07 one failed page of the first
#     refill failed the set-up, so no connection came up while pages were
#     short);
#  3. tx: node 0's congestion update cannot be built for 2 s (fail_tx at
#     100%): the send worker retries it every 2 jiffies instead of spinning
#     on it: cong_send_error must grow by less than 20,000 in the 2 s
#     (590 on the debug kernel, HZ=1000; before the fix each pass restarted
#     the send loop at once: 104,346); once memory is back the update
#     reaches node 1.  Then atomics with fail_tx at 50%;
#  4. recovery: faults off, the same traffic clean, both nodes unload
#     (which warns if a receive page is still accounted) and reload.
#
# Each case prints how many faults were injected per node (the attribute's
# "times" counts down) and requires at least one.  kmemleak, KASAN and
# lockdep run on the debug kernel; the runner fails on any report.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster rds_stress rds_cong rdma_atomic
msgs=${RDS_FAULTS_MSGS:-600}
F=/sys/kernel/debug/rds
BIG=1000000

# The kernel's own attributes tell CONFIG_FAULT_INJECTION_DEBUG_FS (rds.ko
# may not be loaded yet).
[ -d /sys/kernel/debug/failslab ] || { echo "1..0 # SKIP no fault injection attributes (CONFIG_FAULT_INJECTION_DEBUG_FS)"; exit 4; }

# on NODE CMD: run CMD on node NODE (0: here)
on() {
	if [ "$1" = 0 ]; then sh -c "$2"; else rds-peer "$1" "$2"; fi
}
# fault NAME PERCENT: set attribute NAME on both nodes, quiet, any context,
# with BIG faults to give (PERCENT 0: off).
fault_cmd() {
	echo "d=$F/$1; echo 0 > \$d/verbose && echo N > \$d/task-filter &&
	echo 1 > \$d/interval && echo 0 > \$d/space && echo $BIG > \$d/times &&
	echo $2 > \$d/probability"
}
fault() { on 0 "$(fault_cmd "$1" "$2")" && on 1 "$(fault_cmd "$1" "$2")"; }
# injected NODE NAME: faults given so far since fault() armed NAME
injected() { echo $((BIG - $(on "$1" "cat $F/$2/times"))); }
param() {
	on 0 "echo $2 > /sys/module/rds_rdma/parameters/$1" &&
		on 1 "echo $2 > /sys/module/rds_rdma/parameters/$1"
}
reload_both() {
	on 0 "rds-mods unload && rds-mods load ours" >/dev/null &&
		on 1 "rds-mods unload && rds-mods load ours" >/dev/null
}
stress() {
	RDS_STRESS_MSGS=$msgs ./rds_stress -v peer4 -v peer4_reverse >/tmp/rds_faults.out 2>&1
	r=$?
	grep -E "^(not )?ok|flow|failed|bad|recv [0-9]" /tmp/rds_faults.out | sed 's/^/# /' | head -n 30
	return $r
}
report() {
	echo "# $1 injected: node 0 $(injected 0 "$1"), node 1 $(injected 1 "$1")"
	echo "# node 0: $(for c in conn_reset ib_rx_refill_from_thread ib_rx_inc_reserve_used ib_rx_stale_seq cong_send_error; do printf '%s=%s ' $c "$(rds-counter $c)"; done)"
	[ "$(injected 0 "$1")" -gt 0 ] || [ "$(injected 1 "$1")" -gt 0 ]
}
drops() { awk 'NR == 1 || $2 != 0' $F/drop_reasons | sed 's/^/# node 0 drops: /'; }

echo "1..9"
t "fresh modules on both nodes" 'reload_both'

# Node 1 accepts node 0's first connection with its set-up steps failing
# (rds.ko's connection, the endpoint, CQs, QP, rings; the rdma_cm
# handler): node 0 tries again until one attempt gets through.
on 1 "$(fault_cmd fail_conn 20)"
t "conn: node 1 accepts the first connection, its set-up failing 20%" \
	'RDS_STRESS_MSGS=100 ./rds_stress -v peer4 >/tmp/rds_faults.out 2>&1; r=$?;
	 grep -E "^(not )?ok|flow|failed|bad" /tmp/rds_faults.out | sed "s/^/# /" | head -n 10;
	 drops; echo "# fail_conn injected on node 1: $(injected 1 fail_conn)"; [ $r = 0 ]'

# Both directions' connection objects exist now: from here on only the
# transport's set-up (both nodes, either side of rdma_cm) can fail.
stale() { echo $(($(rds-counter ib_rx_stale_seq) + $(rds-counter -n 1 ib_rx_stale_seq))); }
fault fail_conn 10
param rds_ib_recv_replay_every 100
s0=$(stale)
t "conn: $msgs messages each way across reconnects, set-up failing 10%" \
	'stress; r=$?; drops; report fail_conn && [ $r = 0 ] && [ "$(stale)" -gt "$s0" ]'
param rds_ib_recv_replay_every 0
fault fail_conn 0

fault fail_rx 5
param rds_ib_recv_replay_every 150
s0=$(stale)
t "rx: $msgs messages each way across reconnects, receive allocations failing 5%" \
	'stress; r=$?; report fail_rx && [ $r = 0 ] && [ "$(stale)" -gt "$s0" ]'
param rds_ib_recv_replay_every 0
fault fail_rx 0

# 3: a congestion update pending on node 0's connection to node 1 (a local
# receiver fills up: rds_cong's first case) while it cannot be built.
cong_spin() {
	e0=$(rds-counter cong_send_error)
	u0=$(rds-counter -n 1 cong_update_received)
	on 0 "$(fault_cmd fail_tx 100)"
	./rds_cong -r cg.ipv4.enobufs_for_congested_port >/tmp/rds_faults.cong 2>&1 &
	cg=$!
	sleep 2
	e1=$(rds-counter cong_send_error)
	on 0 "echo 0 > $F/fail_tx/probability"
	wait $cg
	r=$?
	i=0
	while [ "$(rds-counter -n 1 cong_update_received)" = "$u0" ] && [ $i -lt 50 ]; do
		sleep 0.2; i=$((i + 1))
	done
	u1=$(rds-counter -n 1 cong_update_received)
	echo "# cong_send_error +$((e1 - e0)) in 2 s, node 1 cong_update_received +$((u1 - u0)), rds_cong rc=$r"
	[ $r = 0 ] && [ $((e1 - e0)) -gt 0 ] && [ $((e1 - e0)) -lt 20000 ] && [ "$u1" -gt "$u0" ]
}
t "tx: a congestion update that cannot be built is retried, not spun on" 'cong_spin'
fault fail_tx 50
t "tx: atomics with send-side allocations failing 50%" \
	'./rdma_atomic -t fadd_cswp >/tmp/rds_faults.at 2>&1; r=$?;
	 grep -E "^(not )?ok|FAIL|#.*(Expected|fail)" /tmp/rds_faults.at | sed "s/^/# /" | head -n 20;
	 report fail_tx && [ $r = 0 ]'
fault fail_tx 0

t "recovery: $msgs messages each way, no faults" 'stress'
t "recovery: unload on both nodes (no page left accounted)" \
	'on 0 "rds-mods unload" && on 1 "rds-mods unload"'
t "recovery: reload on both nodes" \
	'on 0 "rds-mods load ours" && on 1 "rds-mods load ours"'
exit $fail
