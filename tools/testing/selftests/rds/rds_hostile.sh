#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rds_hostile.sh - a hostile RDS/IB peer (issue 10, item 5).  Node 1's RDS
# modules are unloaded and the test module rds_hostile.ko (vm/hostile/)
# connects from node 1 to node 0's RDS/IB listener as a plain rdma_cm
# client, once per scenario, and breaks the protocol: bad connection
# requests (short, wrong version, garbage, foreign or multicast addresses,
# absurd credits), then over a valid connection crafted SENDs (bad header
# checksum, h_len past 1 MiB, fragments that disagree on sequence, length or
# port, fragments longer than a receive buffer, short ones, zero-length and
# header-less SENDs, ACK-only headers acking what was never sent, huge
# h_credit, congestion map updates of the wrong length, RDMA/RDMA_DEST
# extension headers with random cookies, a flood past the receive ring, a
# sequence going back), SEND_WITH_INV of a random rkey, RDMA WRITE and READ
# with random rkeys.  Node 0 runs rds_hostile_rx on a live socket.
#
# One TAP line per scenario: the module's verdict is the expected one
# (rejected / up / dropped), for a drop node 0 counted it under the
# expected reason (debugfs drop_reasons), every well-formed message of a
# scenario that stays up reached the socket, nothing malformed ever did
# (rds_hostile_rx: no "B" line), node 0 still answers an RDS ping to itself
# and the module unloads.  At the end node 1 gets its modules back and node
# 0 pings it over RDS, and node 0's modules unload and load again (nothing
# still holds them).
. rds-tap.sh
tap_cluster rds_hostile_rx
[ -f rds_hostile.ko ] || { echo "1..0 # SKIP rds_hostile.ko missing"; exit 4; }
rm -f /tmp/hostile-fail
port=4000
dbg=/sys/kernel/debug/rds
[ -r $dbg/drop_reasons ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null

# NAME EXPECTED-RESULT DROP-REASON (- for none)
scenarios='
conn_short rejected -
conn_version rejected -
conn_garbage rejected -
conn_addrs rejected -
conn_selfaddr rejected -
conn_mcast rejected -
conn_credits up -
good up -
badcsum dropped protocol_error
biglen dropped protocol_error
hugelen dropped protocol_error
fragseq dropped protocol_error
fraglen dropped protocol_error
fragport dropped protocol_error
fragshort dropped protocol_error
oversize dropped wc_error
oversize1 dropped wc_error
zerolen dropped protocol_error
shorthdr dropped protocol_error
ackbogus up -
credits up -
cong_short up -
cong_trunc dropped protocol_error
cong_port up -
exthdr up -
flood up -
seqback dropped protocol_error
sendinv dropped -
rdma_write dropped -
rdma_read dropped -
'
[ -n "$RDS_HOSTILE_ONLY" ] &&
	scenarios=$(printf '%s\n' "$scenarios" | grep -E "^($RDS_HOSTILE_ONLY) ")
echo "1..$(($(printf '%s\n' "$scenarios" | grep -c .) + 2))"

drops() { awk -v r="$1" '$1 == r { v = $2 } END { print v + 0 }' $dbg/drop_reasons 2>/dev/null; }

rds-peer 1 "rds-mods unload" >/dev/null 2>&1 ||
	{ echo "# could not unload node 1's modules"; exit 1; }
./rds_hostile_rx "$la" $port 900 >/tmp/hostile-rx.log 2>&1 &
rx=$!
i=0
while ! grep -q READY /tmp/hostile-rx.log && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done

tag=0
printf '%s\n' "$scenarios" | while read -r name want reason; do
	[ -n "$name" ] || continue
	tag=$((tag + 1))
	before=0
	[ "$reason" = - ] || before=$(drops "$reason")
	out=$(rds-peer -t 100 1 "dmesg -c >/dev/null; insmod /tests/rds_hostile.ko scenario=$name saddr=$pa daddr=$la port=$port tag=$tag count=2000 && rmmod rds_hostile && echo RMMOD-OK; dmesg | grep 'rds_hostile: ' | grep -E ' $name |connect|flush'" 2>&1)
	res=$(printf '%s\n' "$out" | sed -n "s/.*rds_hostile: $name result=\([a-z]*\).*/\1/p" | tail -n 1)
	sent=$(printf '%s\n' "$out" | sed -n "s/.*rds_hostile: $name result=.*good_sent=\([0-9]*\).*/\1/p" | tail -n 1)
	why=
	printf '%s\n' "$out" | grep -q "rds_hostile: $name done" || why="$why no-done"
	printf '%s\n' "$out" | grep -q RMMOD-OK || why="$why no-rmmod"
	[ "$res" = "$want" ] || why="$why result=$res(want $want)"
	if [ "$reason" != - ]; then
		# Node 0 records the drop when its CQ or CM handler runs, which
		# can trail the peer's view of it: wait for it, bounded (5 s).
		i=0
		after=$(drops "$reason")
		while [ "$after" -le "$before" ] && [ $i -lt 25 ]; do
			sleep 0.2
			i=$((i + 1))
			after=$(drops "$reason")
		done
		[ "$after" -gt "$before" ] ||
			why="$why no-$reason-drop($(awk 'NR > 1 && $2 > 0 { printf "%s=%s ", $1, $2 }' $dbg/drop_reasons 2>/dev/null))"
	fi
	# Deliveries settle; then every good message of an "up" scenario is in.
	sleep 1
	got=$(grep -c "^G $tag " /tmp/hostile-rx.log)
	if [ "$want" = up ] && [ -n "$sent" ] && [ "$got" -lt "$sent" ]; then
		sleep 3
		got=$(grep -c "^G $tag " /tmp/hostile-rx.log)
		[ "$got" -ge "$sent" ] || why="$why delivered=$got/$sent"
	fi
	grep -q '^B ' /tmp/hostile-rx.log && why="$why bad-delivery"
	rds-ping -c 1 -I "$la" "$la" >/dev/null 2>&1 || why="$why self-ping"
	if [ -z "$why" ]; then
		ok "$name: $want (${got:-0}/${sent:--} delivered)"
	else
		nok "$name:$why"
		printf '%s\n' "$out" | sed 's/^/# /' | tail -n 8
		grep '^B ' /tmp/hostile-rx.log | head -n 3 | sed 's/^/# rx: /'
		dmesg | grep -E 'RDS|rds' | tail -n 5 | sed 's/^/# node0: /'
	fi
	# the subshell's verdicts go out through the exit status
	[ -z "$why" ] || echo FAIL >>/tmp/hostile-fail
done
kill $rx 2>/dev/null
wait $rx 2>/dev/null
n=$(printf '%s\n' "$scenarios" | grep -c .)
[ -s /tmp/hostile-fail ] && fail=1
echo "# rx: $(grep -c '^G ' /tmp/hostile-rx.log) good, $(grep -c '^B ' /tmp/hostile-rx.log) bad"
cat $dbg/drop_reasons 2>/dev/null | sed 's/^/# /'

# Node 1 normal again: an RDS ping over the connection the scenarios used.
rds-peer 1 "rds-mods load ours" >/dev/null 2>&1
i=0
until rds-ping -c 2 -i 0.5 -I "$la" "$pa" >/dev/null 2>&1; do
	i=$((i + 1))
	[ $i -ge 10 ] && break
	sleep 2
done
t "node 0 pings node 1 with its modules back" '[ $i -lt 10 ]'
t "node 0's modules unload and load again" \
	'timeout 90 rds-mods unload && rds-mods load ours'
exit $fail
