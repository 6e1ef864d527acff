#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_restart.sh - processes and modules restarted under steady traffic
# (issue 10, item 3): what RDS promises about delivery when
#
#  a. the receiving process on node 1 is killed and restarted on the same
#     RDS port (a second of no bound socket in between);
#  b. the sending process on node 0 is killed in a 16 KiB burst (its
#     socket full) and a new one starts;
#  c. the receiver is killed and our modules on node 1 are unloaded and
#     loaded again (sockets pin rds.ko), then a receiver restarted;
#  d. the same with the traffic paused first, so that node 0 still holds
#     messages receiver 1 had read but node 1 had not ACKed, and the new
#     receiver bound before node 0 reconnects (it binds in a loop while
#     only rds.ko is loaded).
#
# rds_restart sends sequence-numbered, content-hashed messages (200/s,
# up to 8 KiB) with a run id and a sender incarnation, and records every
# message each receiver incarnation gets; its checker judges the files:
# no corrupt message; each receiver incarnation strictly increasing; the
# messages sent after the restart completed (the barrier: this script
# signals the sender once the new receiver is bound) all delivered exactly
# once; the lost ones one contiguous window before the barrier (a, c), or
# a tail that fits in the killed sender's socket (b: close() cancels what
# the transport does not have yet); no duplicate in a and b; in d the
# messages node 0 held unACKed all come again, each either delivered to
# the new receiver a second time or dropped before it bound (at least once
# across a node restart).  The drops of node 0's paths to node 1 (debugfs)
# and its drop reasons are printed; a and b must have none, c and d some.
# The semantics and the functions behind them: rds.rst, "Restarts under
# traffic".  About 35 s on stock under TCG.
#
# IB_RESTART_ZCOPY=1 (ib_restart_zc.sh): the senders use MSG_ZEROCOPY,
# their pages pinned whatever the size (zcopy_min_bytes 0 on node 0,
# restored at exit), so the same cases show that zerocopy messages survive
# a receiver restart, a sender killed with its socket full (close() with
# pinned pages in flight) and node 1's reloads (retransmitted from the
# user's pages); and every sender that finishes must get each of its
# cookies back exactly once.  Case d is skipped: a zerocopy message asks
# for its ACK at once, so none stays read and unACKed.
#
# rds_restart reaches the guest only when run_vm.sh copies it: it must be
# in run_vm.sh's list of helper programs (next to ib_msg, rds_stress, ...)
# or named on its command line; without it this test skips.
#
# Internal modes, run on node 1 through rds-peer:
#   ib_restart.sh rstart CASE N ADDR PORT RUN   receiver N in the background
#   ib_restart.sh bound CASE N        wait (30 s) until receiver N is bound
#   ib_restart.sh rkill CASE N        SIGKILL it, wait (10 s) until gone
#   ib_restart.sh rwait CASE N        wait (90 s) until it exits; 0 if it
#                                     got the END marker
#   ib_restart.sh count CASE N        messages it recorded
#   ib_restart.sh reload              rds-mods unload, load ours
#   ib_restart.sh reload_early CASE N ADDR PORT RUN   unload; rds.ko,
#                                     receiver N (retrying bind), rds_rdma.ko
#   ib_restart.sh check ARGS...       rds_restart check ARGS...
R=/tests/rds_restart
d=/tmp/ib_restart

# alive PID: running (not a zombie)
alive() {
	[ -r "/proc/$1/status" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}
# gone PID TENTHS: wait at most TENTHS/10 s until PID is not alive
gone() {
	g=0
	while alive "$1"; do
		[ $g -ge "$2" ] && return 1
		sleep 0.1
		g=$((g + 1))
	done
}
rpid() { sed -n 's/^B \([0-9]*\) .*/\1/p' "$d/$1-r$2.rec" 2>/dev/null; }

case "$1" in
rstart)
	mkdir -p $d
	$R recv "$4" "$5" "$d/$2-r$3.rec" "$6" 60 >"$d/$2-r$3.log" 2>&1 &
	exit 0
	;;
bound)
	i=0
	until grep -q '^B ' "$d/$2-r$3.rec" 2>/dev/null; do
		[ $i -ge 300 ] && { cat "$d/$2-r$3.log"; exit 1; }
		sleep 0.1
		i=$((i + 1))
	done
	exit 0
	;;
rkill)
	p=$(rpid "$2" "$3")
	[ -n "$p" ] || exit 1
	kill -9 "$p"
	gone "$p" 100
	exit
	;;
rwait)
	p=$(rpid "$2" "$3")
	[ -n "$p" ] || exit 1
	gone "$p" 900 || { echo "receiver $3 still running"; exit 1; }
	echo "receiver $3 ended: $(tail -n 1 "$d/$2-r$3.rec") $(cat "$d/$2-r$3.log")"
	grep -q '^E ' "$d/$2-r$3.rec"
	exit
	;;
count)
	grep -c '^R ' "$d/$2-r$3.rec"
	exit 0
	;;
reload)
	rds-mods unload && rds-mods load ours
	exit
	;;
reload_early)
	rds-mods unload || exit 1
	insmod /lib/rds/ours/rds.ko || exit 1
	"$0" rstart "$2" "$3" "$4" "$5" "$6"
	sleep 0.5	# the receiver has a socket and retries bind()
	insmod /lib/rds/ours/rds_rdma.ko || exit 1
	echo ours >/tmp/rds-mods
	exit 0
	;;
check)
	shift
	$R check "$@"
	exit
	;;
esac

# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster rds_restart
rate=${RESTART_RATE:-200}
secs=${RESTART_SECONDS:-3}
run=$((($$ * 65537 + $(date +%s)) % 2000000000))
base=$((20000 + run % 20000))
spid=
zc=${IB_RESTART_ZCOPY:-0}
zparam=/sys/module/rds/parameters/zcopy_min_bytes
zmin0=
if [ "$zc" = 1 ]; then
	[ -w $zparam ] || { echo "1..0 # SKIP no zcopy_min_bytes (not our rds.ko)"; exit 4; }
	zmin0=$(cat $zparam)
	echo 0 >$zparam
	export RDS_RESTART_ZCOPY=1
	zc0=$(rds-counter send_zcopy)
fi
rm -rf $d
mkdir -p $d
rds-peer 1 "rm -rf $d; mkdir -p $d" >/dev/null

cleanup() {
	[ -n "$spid" ] && kill -9 "$spid" 2>/dev/null
	[ -n "$zmin0" ] && echo "$zmin0" >$zparam
	# the next tests need node 1's modules
	rds-peer -t 120 1 "grep -q '^rds_rdma ' /proc/modules || { rds-mods unload; rds-mods load ours; }" \
		>/dev/null 2>&1
}
trap cleanup EXIT

p1() { rds-peer -t 60 1 "/tests/ib_restart.sh $*"; }
p1t() { t_=$1; shift; rds-peer -t "$t_" 1 "/tests/ib_restart.sh $*"; }

# send_start CASE INC: sender INC of CASE to $port, in the background
send_start() {
	./rds_restart send "$la" "$pa" "$port" "$d/$1-s$2.st" "$run" "$2" "$rate" \
		>"$d/$1-s$2.log" 2>&1 &
	spid=$!
	i=0
	until ./rds_restart status "$d/$1-s$2.st" >/dev/null 2>&1; do
		[ $i -ge 100 ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
status() { ./rds_restart status "$d/$1-s$2.st"; }
field() { echo "$1" | tr ',' '\n' | sed -n "s/^$2=//p"; }
# sfinish CASE INC: SIGTERM the sender (END marker, reply), wait (90 s)
sfinish() {
	kill -TERM "$spid" 2>/dev/null
	gone "$spid" 900 || kill -9 "$spid"
	wait "$spid"
	rc_=$?
	spid=
	sed 's/^/# /' "$d/$1-s$2.log"
	return "$rc_"
}
# skill CASE INC: SIGKILL the sender, wait (10 s)
skill() {
	kill -9 "$spid" && gone "$spid" 100
	rc_=$?
	wait "$spid"
	spid=
	sed 's/^/# /' "$d/$1-s$2.log"
	return "$rc_"
}
# rwait CASE N: wait for receiver N on node 1 to exit; true if it got END
rwait() {
	p1t 120 rwait "$1" "$2" >$d/rwait.out 2>&1
	rc_=$?
	sed 's/^/# /' $d/rwait.out
	return "$rc_"
}
# wait_state CASE INC STATE: wait (30 s) for the sender's state
wait_state() {
	i=0
	until [ "$(field "$(status "$1" "$2")" state)" = "$3" ]; do
		[ $i -ge 300 ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
}
# wait_count CASE N COUNT: wait (30 s) until receiver N recorded COUNT
wait_count() {
	i=0
	until [ "$(p1 count "$1" "$2")" = "$3" ]; do
		[ $i -ge 60 ] && return 1
		sleep 0.5
		i=$((i + 1))
	done
}
# judge CASE FLOW... -- FILE...: the checker on node 1, one TAP line per
# check; sets lost_INC and dups_INC
judge() {
	c_=$1
	shift
	p1t 120 check "$run" "$@" >$d/judge.out 2>&1
	v_=0
	while read -r w_ rest_; do
		case "$w_" in
		PASS) ok "$c_: $rest_"; v_=$((v_ + 1)) ;;
		FAIL) nok "$c_: $rest_"; v_=$((v_ + 1)) ;;
		INFO) echo "# $c_: $rest_" ;;
		LOST|DUPS)
			# shellcheck disable=SC2086 # INC N
			set -- $rest_
			eval "$(echo "$w_" | tr 'A-Z' 'a-z')_$1=$2" ;;
		*) echo "# $c_: $w_ $rest_" ;;
		esac
	done <$d/judge.out
	[ $v_ -gt 0 ] || nok "$c_: the checker ran" "$(cat $d/judge.out)"
}
# Node 0's connection drops by reason since the snapshot in FILE.
drops() { awk 'NR > 1 { print $1, $2 }' /sys/kernel/debug/rds/drop_reasons 2>/dev/null; }
drops_since() {
	drops >$d/drops.now
	awk 'NR == FNR { b[$1] = $2; next }
	     $2 != b[$1] { printf "%s%s +%d", s, $1, $2 - b[$1]; s = ", " }
	     END { if (!s) printf "none" }' "$1" $d/drops.now
}
# Drops of node 0's paths to node 1 ($pa, any TOS), from debugfs: unlike
# the global conn_reset they do not count an earlier test's connection to
# an unreachable address, which retries (and is dropped, cm_event) for as
# long as the module stays loaded.
cdrops() {
	awk -v p="$pa" '$2 == p { for (i = 3; i <= NF; i++) if ($i ~ /^drops=/) n += substr($i, 7) }
	     END { print n + 0 }' /sys/kernel/debug/rds/connections 2>/dev/null
}
resets() { # print node 0's and node 1's conn_reset
	echo "node 0 conn_reset $(rds-counter conn_reset), node 1 conn_reset $(rds-counter -n 1 conn_reset)"
}
# zc_back CASE STATUS: with zerocopy senders, every cookie came back once
zc_back() {
	[ "$zc" = 1 ] || return 0
	zst_=$2
	t "$1: every zerocopy cookie came back exactly once (missing $(field "$2" zc_missing), bad $(field "$2" zc_bad))" \
		'[ "$(field "$zst_" zc)" = 1 ] && [ "$(field "$zst_" zc_missing)" = 0 ] && [ "$(field "$zst_" zc_bad)" = 0 ]'
}
begin_case() { # CASE PORT: receiver 1 bound, sender 1 streaming
	port=$2
	p1 rstart "$1" 1 "$pa" "$port" "$run" && p1 bound "$1" 1 && send_start "$1" 1
}

t "checker self-test: it rejects corruption, reordering, a duplicate, loss after the barrier, two loss windows" \
	'./rds_restart selftest >$d/selftest.out 2>&1 || { sed "s/^/# /" $d/selftest.out; false; }'

# ---- a: the receiver restarts -------------------------------------------
echo "# a: receiver on node 1 killed and restarted on the same port, $rate msg/s"
t "a: receiver 1 bound on node 1, sender streaming" 'begin_case a $((base + 1))'
sleep "$secs"
r0=$(cdrops)
drops >$d/drops.a
# shellcheck disable=SC2046 # two numbers
set -- $(rds-counter -n 1 recv_drop_no_sock recv_drop_dead_sock)
ns0=${1:-0} dd0=${2:-0}
t "a: receiver 1 killed (SIGKILL)" 'p1 rkill a 1'
sleep 1
t "a: receiver 2 bound to the same port" 'p1 rstart a 2 $pa $port $run && p1 bound a 2'
kill -USR1 "$spid"
sleep "$secs"
t "a: sender finished: its END marker answered by receiver 2" 'sfinish a 1 && rwait a 2'
st=$(status a 1)
echo "# a: sender: $st"
zc_back a "$st"
judge a "$st,gap=window,dups=0" -- $d/a-r1.rec $d/a-r2.rec
# shellcheck disable=SC2046 # two numbers
set -- $(rds-counter -n 1 recv_drop_no_sock recv_drop_dead_sock)
ns=$((${1:-0} - ns0)) dd=$((${2:-0} - dd0))
t "a: node 1 dropped $ns messages for no bound socket (+$dd for a closing one), all among the ${lost_1:-?} lost; the sender saw no error (state $(field "$st" state), longest send wait $(field "$st" stall_ms) ms)" \
	'[ "$ns" -gt 0 ] && [ $((ns + dd)) -le "${lost_1:-0}" ] && [ "$(field "$st" state)" = ended ]'
rr=$(($(cdrops) - r0))
t "a: the connection was not reset ($rr; drops: $(drops_since $d/drops.a)): nothing retransmitted" '[ "$rr" = 0 ]'
echo "# a: $(resets)"

# ---- b: the sender restarts ---------------------------------------------
echo "# b: sender on node 0 killed in a 16 KiB burst, a new one started"
lost_1='' dups_1=''
t "b: receiver bound on node 1, sender 1 streaming" 'begin_case b $((base + 2))'
sleep "$secs"
r0=$(cdrops)
drops >$d/drops.b
kill -HUP "$spid"
sleep 1
t "b: sender 1 killed (SIGKILL) with its socket full" 'skill b 1'
st1=$(status b 1)
echo "# b: sender 1: $st1"
t "b: sender 2 streaming from a new socket" 'send_start b 2'
sleep "$secs"
t "b: sender 2 finished: its END marker answered" 'sfinish b 2 && rwait b 1'
st2=$(status b 2)
echo "# b: sender 2: $st2"
zc_back b "$st2"
judge b "$st1,gap=tail,dups=0" "$st2,barrier=0,gap=none,dups=0" -- $d/b-r1.rec
echo "# b: of sender 1's $(field "$st1" sent) accepted messages ${lost_1:-?} never arrived (cancelled by close() before the transport had them)"
rr=$(($(cdrops) - r0))
t "b: the connection was not reset ($rr; drops: $(drops_since $d/drops.b))" '[ "$rr" = 0 ]'
echo "# b: $(resets)"

# ---- c: node 1 reloads its modules under traffic ------------------------
echo "# c: receiver killed, our modules on node 1 unloaded and loaded, receiver restarted, $rate msg/s"
lost_1='' dups_1=''
t "c: receiver 1 bound on node 1, sender streaming" 'begin_case c $((base + 3))'
sleep "$secs"
r0=$(cdrops)
drops >$d/drops.c
t "c: receiver 1 killed, node 1 unloads and loads our modules" 'p1 rkill c 1 && p1t 120 reload'
t "c: receiver 2 bound on the reloaded node" 'p1 rstart c 2 $pa $port $run && p1 bound c 2'
kill -USR1 "$spid"
sleep "$secs"
t "c: sender finished: its END marker answered by receiver 2" 'sfinish c 1 && rwait c 2'
st=$(status c 1)
echo "# c: sender: $st"
zc_back c "$st"
judge c "$st,gap=window,dups=any" -- $d/c-r1.rec $d/c-r2.rec
rr=$(($(cdrops) - r0))
t "c: the connection was reset ($rr; drops: $(drops_since $d/drops.c)) and came back" '[ "$rr" -ge 1 ]'
# shellcheck disable=SC2046 # three numbers
set -- $(rds-counter -n 1 recv_drop_no_sock recv_drop_old_seq recv_queued)
echo "# c: node 1 since the reload: recv_drop_no_sock $1, recv_drop_old_seq $2, recv_queued $3; $(resets)"

# ---- d: node 1 reloads with messages read but not ACKed ------------------
if [ "$zc" = 1 ]; then
	# Every zerocopy message asks for its ACK at once, so none stays
	# read and unACKed: there is nothing for d to retransmit.
	skip "d: messages read but not ACKed" "zerocopy messages are ACKed at once"
else
	echo "# d: traffic paused with messages unACKed, receiver killed, node 1 reloaded, new receiver bound before node 0 reconnects"
	lost_1='' dups_1=''
	t "d: receiver 1 bound on node 1, sender streaming" 'begin_case d $((base + 4))'
	sleep 2
	kill -USR2 "$spid"
	t "d: sender paused" 'wait_state d 1 paused'
	st=$(status d 1)
	P=$(field "$st" paused) U=$(field "$st" unacked)
	t "d: receiver 1 read all $P messages, $U of them not ACKed by node 1" \
		'wait_count d 1 "$P" && [ "$U" -gt 0 ]'
	r0=$(cdrops)
	drops >$d/drops.d
	t "d: receiver 1 killed; node 1 reloads, receiver 2 bound before rds_rdma serves the address" \
		'p1 rkill d 1 && p1t 120 reload_early d 2 $pa $port $run && p1 bound d 2'
	kill -USR1 "$spid"
	sleep 2
	t "d: sender finished: its END marker answered by receiver 2" 'sfinish d 1 && rwait d 2'
	st=$(status d 1)
	echo "# d: sender: $st"
	zc_back d "$st"
	judge d "$st,gap=none,dups=any" -- $d/d-r1.rec $d/d-r2.rec
	ns=$(rds-counter -n 1 recv_drop_no_sock)
	t "d: at least once: the $U unACKed messages came again after the reload, ${dups_1:-?} to receiver 2 (duplicates) and $ns dropped before it bound" \
		'[ "$U" -gt 0 ] && [ $((${dups_1:-0} + ns)) -eq "$U" ]'
	rr=$(($(cdrops) - r0))
	t "d: the connection was reset ($rr; drops: $(drops_since $d/drops.d)) and came back" '[ "$rr" -ge 1 ]'
	echo "# d: $(resets)"
fi

if [ "$zc" = 1 ]; then
	zn=$(($(rds-counter send_zcopy) - zc0))
	t "zerocopy: node 0 sent $zn messages from pinned pages" '[ "$zn" -gt 0 ]'
fi

echo "1..$n"
exit $fail
