#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rds_trace.sh - the rds tracepoints (tracefs events/rds) and the debugfs
# files (/sys/kernel/debug/rds/connections, drop_reasons):
#   - every event is in tracefs; enabling the system works;
#   - rds-ping traffic to the peer fires rds_send/rds_recv, and the
#     connection is listed UP in debugfs, in our netns (its inode number),
#     as every line names one;
#   - rdma_ops (the runner installs it): MR register/release/invalidate
#     here; with our modules on the peer also RDMA post/completion there,
#     and the dead-key WRITE's failure as a wc_error or qp_event drop on
#     one side;
#   - `rdma link delete` drops the connection with reason device_removal
#     (trace and counters), and after `rdma link add` traffic reconnects:
#     state changes traced, the path's reconnect count and the reconnect
#     counters go up;
#   - the peer reloading its modules is seen as peer_disconnect (its
#     rdma_disconnect) or peer_restart (its new REQ while we were UP).
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
# shellcheck disable=SC2119 # no program to check
tap_cluster

# tracefs: /sys/kernel/tracing (init mounts it), else mount it here.
tr=/sys/kernel/tracing
[ -d $tr/events ] || mount -t tracefs tracefs $tr 2>/dev/null
[ -d $tr/events ] || tr=/sys/kernel/debug/tracing
dbg=/sys/kernel/debug/rds
events="rds_conn_state rds_conn_drop rds_send rds_recv rds_rdma_post
	rds_rdma_complete rds_mr_register rds_mr_release rds_mr_invalidate"
peer_trace_on() { # enable the rds events on node 1 (our modules only)
	rds-peer 1 "t=/sys/kernel/tracing; [ -d \$t/events ] ||
		mount -t tracefs tracefs \$t; echo 0 > \$t/events/rds/enable &&
		echo > \$t/trace && echo 1 > \$t/events/rds/enable" >/dev/null
}
has() { grep -q "$1" /tmp/rds_trace.out; }    # PATTERN in our trace
snap() { cat $tr/trace > /tmp/rds_trace.out; }
# drop_reasons: column 2 (drops) or 3 (reconnects) of REASON
cnt() { awk -v r="$1" -v c="$2" '$1 == r { v = $c } END { print v + 0 }' $dbg/drop_reasons; }
reconnects_total() { awk 'NR > 1 { s += $3 } END { print s + 0 }' $dbg/drop_reasons; }
# Our netns's inode number (net:[N]); debugfs lists every netns's paths.
netns=$(readlink /proc/self/ns/net | sed -n 's/^net:\[\([0-9]*\)\]$/\1/p')
# The IPv4 TOS 0 path to the peer, as debugfs lists it.
conn_line() { grep "^$la $pa tos=0 netns=$netns " $dbg/connections; }
conn_field() { conn_line | tr ' ' '\n' | sed -n "s/^$1=//p"; }
ping_until_ok() { # SECONDS: ping until one is answered
	i=0
	while [ $i -lt "$1" ]; do
		rds-ping -c 1 -i 0.2 -I "$la" "$pa" >/dev/null 2>&1 && return 0
		sleep 1; i=$((i + 1))
	done
	return 1
}
dataif=$(rds-dataif "$la")

echo "1..24"
missing=
for e in $events; do [ -f $tr/events/rds/$e/format ] || missing="$missing $e"; done
t "tracefs lists every rds event${missing:+ (missing:$missing)}" '[ -z "$missing" ]'
t "debugfs has rds/connections and rds/drop_reasons" \
	'[ -r $dbg/connections ] && head -n 1 $dbg/drop_reasons | grep -q "^reason *drops *reconnects"'
t "enable the rds events" \
	'echo 0 > $tr/events/rds/enable && echo > $tr/trace && echo 1 > $tr/events/rds/enable &&
	 grep -q 1 $tr/events/rds/enable'

t "traffic to the peer (rds-ping)" 'ping_until_ok 60'
snap
t "rds_send and rds_recv fired for it" \
	'has "rds_send: <::ffff:$la,::ffff:$pa,0>.*dport=0" &&
	 has "rds_recv: <::ffff:$la,::ffff:$pa,0>.*sport=0"'
t "debugfs lists the connection UP in our netns ($netns)" \
	'[ -n "$netns" ] && conn_line | grep -q " trans=infiniband state=UP "'
t "every debugfs line names a netns" \
	'! grep -qv "^[^ ]* [^ ]* tos=[0-9]* netns=[1-9][0-9]* trans=" $dbg/connections'

# RDMA: the rdma_ops test does WRITE/READ with use-once and plain keys;
# the peer issues the RDMA (its server runs against either peer modules),
# we own the MRs.  The issuer's events are checked on our peer only.
peer_ours=
[ "$RDS_PEER_MODS" = ours ] && peer_trace_on && peer_ours=1
if [ -x ./rdma_ops ]; then
	echo > $tr/trace
	./rdma_ops > /tmp/rdma_ops.out 2>&1
	# Its server on the peer must not outlive it (the reload below).
	rds-peer 1 rds-reap >/dev/null 2>&1
	t "rdma_ops ran (its own TAP: $(grep -c '^ok' /tmp/rdma_ops.out) ok)" \
		'! grep -q "^not ok" /tmp/rdma_ops.out'
	snap
	t "rds_mr_register of a use-once key" 'has "rds_mr_register: rkey=.* use_once write ret=0"'
	t "rds_mr_release: a use-once key used by the peer, a key freed" \
		'has "rds_mr_release: rkey=.* used by peer" && has "rds_mr_release: rkey=.* freed"'
	t "rds_mr_invalidate of a key (remote or local)" 'has "rds_mr_invalidate: rkey=.* status=0"'
else
	for c in "rdma_ops ran" "rds_mr_register" "rds_mr_release" "rds_mr_invalidate"; do
		skip "$c" "needs ./rdma_ops"
	done
fi
if [ -x ./rdma_ops ] && [ -n "$peer_ours" ]; then
	rds-peer 1 "cat /sys/kernel/tracing/trace" > /tmp/rds_trace.peer 2>/dev/null
	t "peer: rds_rdma_post of a WRITE and a READ" \
		'grep -q "rds_rdma_post: .* rdma_write .* ret=0" /tmp/rds_trace.peer &&
		 grep -q "rds_rdma_post: .* rdma_read .* ret=0" /tmp/rds_trace.peer'
	t "peer: rds_rdma_complete with success and with an error" \
		'grep -q "rds_rdma_complete: .* status=0" /tmp/rds_trace.peer &&
		 grep -q "rds_rdma_complete: .* status=[1-9]" /tmp/rds_trace.peer'
	# The side whose endpoint fails first records it: the issuer's
	# REMOTE_ACCESS completion, or our QP's error (flushed receives or
	# an access-error event); the other side then sees the disconnect.
	t "the dead-key WRITE dropped the connection: wc_error or qp_event traced" \
		'cat /tmp/rds_trace.out /tmp/rds_trace.peer |
		 grep -q "rds_conn_drop: .* reason=\(wc_error\|qp_event\) detail=[1-9]"'
else
	for c in "peer: rds_rdma_post" "peer: rds_rdma_complete" "wc_error/qp_event drop"; do
		skip "$c" "needs ./rdma_ops and our modules on the peer (events of the issuer)"
	done
fi

# Forced disconnect: the device goes away under the connection.
ping_until_ok 60 >/dev/null
echo > $tr/trace
d0=$(cnt device_removal 2)
rc0=$(conn_field reconnects)
rt0=$(reconnects_total)
t "rdma link delete with the connection up" 'timeout 90 rdsvm link-del rxe0'
sleep 1	# the shutdown worker's last step (DOWN) follows the device's removal
snap
t "rds_conn_drop reason=device_removal traced, ERROR/DOWN transitions too" \
	'has "rds_conn_drop: <::ffff:$la,::ffff:$pa,0> reason=device_removal" &&
	 has "rds_conn_state: <::ffff:$la,::ffff:$pa,0> UP -> ERROR" &&
	 has "rds_conn_state: <::ffff:$la,::ffff:$pa,0> DISCONNECTING -> DOWN"'
t "drop_reasons: device_removal drops $d0 -> $(cnt device_removal 2)" \
	'[ "$(cnt device_removal 2)" -gt "$d0" ]'
t "rdma link add again" '[ -n "$dataif" ] && rdsvm link-add rxe0 rxe "$dataif"'
t "traffic reconnects" 'ping_until_ok 90'
snap
t "the path is UP again, its reconnects $rc0 -> $(conn_field reconnects)" \
	'conn_line | grep -q " state=UP " && [ "$(conn_field reconnects)" -gt "${rc0:-0}" ]'
t "rds_conn_state CONNECTING -> UP traced; reconnect counters $rt0 -> $(reconnects_total)" \
	'has "rds_conn_state: <::ffff:$la,::ffff:$pa,0> CONNECTING -> UP" &&
	 [ "$(reconnects_total)" -gt "$rt0" ]'

# The peer reloads its modules: it disconnects (or comes back with a REQ).
p0=$(( $(cnt peer_disconnect 2) + $(cnt peer_restart 2) ))
t "peer reloads its modules ($RDS_PEER_MODS)" \
	'rds-peer 1 "rds-mods unload && rds-mods load $RDS_PEER_MODS" >/dev/null &&
	 ping_until_ok 90'
p1=$(( $(cnt peer_disconnect 2) + $(cnt peer_restart 2) ))
t "drop_reasons: peer_disconnect + peer_restart $p0 -> $p1; debugfs: $(conn_field last_drop)" \
	'[ "$p1" -gt "$p0" ]'

t "disable the rds events" 'echo 0 > $tr/events/rds/enable && grep -q 0 $tr/events/rds/enable'
echo > $tr/trace
echo "# debugfs rds/connections:"; sed 's/^/#   /' $dbg/connections
echo "# debugfs rds/drop_reasons:"; sed 's/^/#   /' $dbg/drop_reasons
if [ $fail != 0 ]; then
	echo "# trace (rds_conn_*):"; grep "rds_conn_" /tmp/rds_trace.out | tail -n 40 | sed 's/^/#   /'
fi
exit $fail
