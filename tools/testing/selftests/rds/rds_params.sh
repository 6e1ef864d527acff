#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rds_params.sh - the tunables of rds.ko and rds_rdma.ko with good, boundary
# and bad values:
#
#  - every net.rds.* and net.rds.ib.* sysctl: its default, good values read
#    back, both ends of its range accepted, values just outside, negative,
#    overflowing and non-numeric ones refused with EINVAL and the value left
#    as it was; the reconnect_{min,max}_delay_ms pair keeps min <= max;
#  - every module parameter at load time (insmod of the tree's modules in
#    /lib/rds/ours): good and boundary values load and read back in
#    /sys/module/*/parameters, bad ones fail the load with EINVAL and a
#    message naming the parameter;
#  - read-only parameters (0444) refuse writes; the writable ones of
#    rds_rdma.ko refuse bad values (EINVAL, unchanged) and take good ones.
#
# Node 0 only; the modules are reloaded with their defaults at the end.
cd /tests 2>/dev/null || true
mods=/lib/rds/ours
[ -f $mods/rds.ko ] && [ -f $mods/rds_rdma.ko ] ||
	{ echo "1..0 # SKIP no modules in $mods"; exit 4; }
grep -q "^rds_rdma " /proc/modules ||
	{ echo "1..0 # SKIP rds_rdma is not loaded"; exit 4; }

# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh

# wr FILE VALUE: write VALUE (one write), print the shell's error, if any.
wr() { (echo "$2" > "$1") 2>&1; }

S=/proc/sys/net/rds
P=/sys/module

# good FILE VALUE [EXPECT]: the write succeeds and reads back as EXPECT.
good() {
	local e got
	e=$(wr "$1" "$2")
	got=$(cat "$1")
	if [ -z "$e" ] && [ "$got" = "${3:-$2}" ]; then
		ok "$1 = $2 accepted, reads ${3:-$2}"
	else
		nok "$1 = $2 accepted, reads ${3:-$2}" "error '$e', reads '$got'"
	fi
}

# bad FILE VALUE [ERRTEXT]: the write fails with ERRTEXT (EINVAL) and the
# value is unchanged.
bad() {
	local before e got
	before=$(cat "$1")
	e=$(wr "$1" "$2")
	got=$(cat "$1")
	case "$e" in
	*"${3:-Invalid argument}"*)
		if [ "$got" = "$before" ]; then
			ok "$1 = '$2' refused, unchanged"
		else
			nok "$1 = '$2' refused, unchanged" "was '$before', now '$got'"
		fi ;;
	*) nok "$1 = '$2' refused, unchanged" "error '$e', reads '$got'" ;;
	esac
}

# default FILE VALUE
default() {
	local got
	got=$(cat "$1")
	if [ "$got" = "$2" ]; then ok "$1 defaults to $2"; else nok "$1 defaults to $2" "reads '$got'"; fi
}

# ---- net.rds ---------------------------------------------------------------
# One jiffy in ms (the default minimum delay, as in-tree).
jms=$(cat $S/reconnect_min_delay_ms)
t "reconnect_min_delay_ms defaults to one jiffy ($jms ms)" \
	'[ "$jms" -ge 1 ] && [ "$jms" -le 10 ]'
default $S/reconnect_max_delay_ms 1000
# Multiples of 20 ms are whole jiffies at HZ 100, 250 and 1000.
good $S/reconnect_max_delay_ms 2000
good $S/reconnect_min_delay_ms 20
good $S/reconnect_min_delay_ms 2000
bad $S/reconnect_min_delay_ms 2020
bad $S/reconnect_max_delay_ms 1980
good $S/reconnect_min_delay_ms 20
bad $S/reconnect_max_delay_ms 0
bad $S/reconnect_min_delay_ms 0
bad $S/reconnect_min_delay_ms -20
bad $S/reconnect_max_delay_ms -1
bad $S/reconnect_max_delay_ms abc
bad $S/reconnect_max_delay_ms 18446744073709551615
bad $S/reconnect_max_delay_ms 99999999999999999999999
good $S/reconnect_max_delay_ms 3600000
bad $S/reconnect_max_delay_ms 3600001
# A value below one jiffy is rounded up to one.
good $S/reconnect_min_delay_ms 1 "$jms"
good $S/reconnect_max_delay_ms 1000
bad $S/reconnect_min_delay_ms 1020

for f in max_unacked_packets max_unacked_bytes; do
	case $f in max_unacked_packets) d=8 ;; *) d=16777216 ;; esac
	default $S/$f $d
	good $S/$f 100
	good $S/$f 1
	good $S/$f 2147483647
	bad $S/$f 0
	bad $S/$f -1
	bad $S/$f 2147483648
	bad $S/$f 1x
	good $S/$f $d
done
default $S/ping_enable 1
good $S/ping_enable 0
bad $S/ping_enable 2
bad $S/ping_enable -1
good $S/ping_enable 1

# ---- net.rds.ib ------------------------------------------------------------
I=$S/ib
for f in max_send_wr max_recv_wr; do
	case $f in max_send_wr) d=256 ;; *) d=1024 ;; esac
	default $I/$f $d
	good $I/$f 512
	good $I/$f 2
	good $I/$f 1048576
	bad $I/$f 1
	bad $I/$f 0
	bad $I/$f 1048577
	bad $I/$f -1
	bad $I/$f abc
	good $I/$f $d
done
default $I/max_unsignaled_wr 16
good $I/max_unsignaled_wr 1
good $I/max_unsignaled_wr 64
bad $I/max_unsignaled_wr 0
bad $I/max_unsignaled_wr 65
good $I/max_unsignaled_wr 16
# A third of RAM, in 4 KiB fragments (MemTotal is totalram_pages in KiB).
mem=$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)
default $I/max_recv_allocation $((mem / 4 / 3))
d=$(cat $I/max_recv_allocation)
good $I/max_recv_allocation 1
good $I/max_recv_allocation 4503599627370495
bad $I/max_recv_allocation 4503599627370496
bad $I/max_recv_allocation 0
bad $I/max_recv_allocation -5
good $I/max_recv_allocation "$d"
default $I/flow_control 0
good $I/flow_control 1
bad $I/flow_control 2
bad $I/flow_control -1
good $I/flow_control 0

# ---- module parameters -----------------------------------------------------
# Read-only ones refuse writes (even from root) while loaded.
for p in rds/parameters/send_batch_count \
	 rds_rdma/parameters/rds_ib_retry_count \
	 rds_rdma/parameters/rds_ib_mr_8k_pool_size \
	 rds_rdma/parameters/rds_ib_mr_1m_pool_size \
	 rds_rdma/parameters/rds_ib_mr_key_window; do
	t "$p is 0444" '[ "$(stat -c %a $P/$p)" = 444 ]'
	bad $P/$p 5 "Permission denied"
done
default $P/rds/parameters/send_batch_count 1024
default $P/rds_rdma/parameters/rds_ib_retry_count 6
default $P/rds_rdma/parameters/rds_ib_mr_8k_pool_size 348160
default $P/rds_rdma/parameters/rds_ib_mr_1m_pool_size 4096
default $P/rds_rdma/parameters/rds_ib_mr_key_window 16777216

# The writable ones of rds_rdma.ko, live.
for p in rds_ib_inv_batch rds_ib_inv_flush_us rds_ib_inv_force_local \
	 rds_ib_atomic_force_emul rds_ib_atomic_emul_tries rds_ib_atomic_emul_ms; do
	t "rds_rdma/$p is 0644" '[ "$(stat -c %a $P/rds_rdma/parameters/$p)" = 644 ]'
done
W=$P/rds_rdma/parameters
default $W/rds_ib_inv_batch 16
good $W/rds_ib_inv_batch 1
good $W/rds_ib_inv_batch 64
bad $W/rds_ib_inv_batch 0
bad $W/rds_ib_inv_batch 65
bad $W/rds_ib_inv_batch -1
bad $W/rds_ib_inv_batch 4294967296
bad $W/rds_ib_inv_batch ten
t "a refused write is logged with the range" \
	'dmesg | tail -n 5 | grep -q "rds_ib_inv_batch=ten refused: must be an integer in 1..64"'
good $W/rds_ib_inv_batch 16
default $W/rds_ib_inv_flush_us 100
good $W/rds_ib_inv_flush_us 0
good $W/rds_ib_inv_flush_us 100000
bad $W/rds_ib_inv_flush_us 100001
bad $W/rds_ib_inv_flush_us -1
good $W/rds_ib_inv_flush_us 100
default $W/rds_ib_inv_force_local N
good $W/rds_ib_inv_force_local Y
good $W/rds_ib_inv_force_local 0 N
good $W/rds_ib_inv_force_local 1 Y
bad $W/rds_ib_inv_force_local maybe
good $W/rds_ib_inv_force_local N
default $W/rds_ib_atomic_force_emul N
good $W/rds_ib_atomic_force_emul y Y
bad $W/rds_ib_atomic_force_emul 2
good $W/rds_ib_atomic_force_emul 0 N
default $W/rds_ib_atomic_emul_tries 1024
good $W/rds_ib_atomic_emul_tries 2
bad $W/rds_ib_atomic_emul_tries 1
good $W/rds_ib_atomic_emul_tries 65536
bad $W/rds_ib_atomic_emul_tries 0
bad $W/rds_ib_atomic_emul_tries 65537
bad $W/rds_ib_atomic_emul_tries -1
good $W/rds_ib_atomic_emul_tries 1024
default $W/rds_ib_atomic_emul_ms 10000
good $W/rds_ib_atomic_emul_ms 0
good $W/rds_ib_atomic_emul_ms 600000
bad $W/rds_ib_atomic_emul_ms 600001
bad $W/rds_ib_atomic_emul_ms -1
good $W/rds_ib_atomic_emul_ms 10000
# The local ACK timeout of new connections.
t "rds_rdma/rds_ib_ack_timeout is 0644" '[ "$(stat -c %a $W/rds_ib_ack_timeout)" = 644 ]'
default $W/rds_ib_ack_timeout 0
good $W/rds_ib_ack_timeout 31
bad $W/rds_ib_ack_timeout 32
bad $W/rds_ib_ack_timeout -1
good $W/rds_ib_ack_timeout 0
# The RDMA op watchdog.
for p in rds_ib_rdma_kick_ms rds_ib_rdma_timeout_ms; do
	t "rds_rdma/$p is 0644" '[ "$(stat -c %a $W/$p)" = 644 ]'
done
default $W/rds_ib_rdma_kick_ms 1000
bad $W/rds_ib_rdma_kick_ms 9
bad $W/rds_ib_rdma_kick_ms 600001
good $W/rds_ib_rdma_kick_ms 1000
default $W/rds_ib_rdma_timeout_ms 60000
good $W/rds_ib_rdma_timeout_ms 0
bad $W/rds_ib_rdma_timeout_ms 3600001
good $W/rds_ib_rdma_timeout_ms 60000
# The receive ring's test knobs (ib_ring.sh drives them).
for p in rds_ib_ring_seq_start rds_ib_recv_fail_every rds_ib_recv_delay_us \
	 rds_ib_recv_replay_every; do
	t "rds_rdma/$p is 0644" '[ "$(stat -c %a $W/$p)" = 644 ]'
	default $W/$p 0
done
good $W/rds_ib_ring_seq_start 4294967295
bad $W/rds_ib_ring_seq_start 4294967296
bad $W/rds_ib_ring_seq_start -1
good $W/rds_ib_ring_seq_start 0
good $W/rds_ib_recv_fail_every 1000000
bad $W/rds_ib_recv_fail_every 1000001
good $W/rds_ib_recv_fail_every 0
good $W/rds_ib_recv_delay_us 1000
bad $W/rds_ib_recv_delay_us 1001
good $W/rds_ib_recv_delay_us 0
good $W/rds_ib_recv_replay_every 1000000
bad $W/rds_ib_recv_replay_every 1000001
good $W/rds_ib_recv_replay_every 0
# The MR pools' test knobs (rdma_keyreuse and rdma_mr drive them).
for p in rds_ib_mr_lifo_test rds_ib_mr_qp_fail_next; do
	t "rds_rdma/$p is 0644" '[ "$(stat -c %a $W/$p)" = 644 ]'
	default $W/$p 0
done
good $W/rds_ib_mr_lifo_test 1
bad $W/rds_ib_mr_lifo_test 2
bad $W/rds_ib_mr_lifo_test -1
good $W/rds_ib_mr_lifo_test 0
good $W/rds_ib_mr_qp_fail_next 1000000
bad $W/rds_ib_mr_qp_fail_next 1000001
bad $W/rds_ib_mr_qp_fail_next -1
good $W/rds_ib_mr_qp_fail_next 0
# The key cool-down's test knob (rdma_keyreuse drives it).
t "rds_rdma/rds_ib_mr_park_every is 0644" '[ "$(stat -c %a $W/rds_ib_mr_park_every)" = 644 ]'
default $W/rds_ib_mr_park_every 0
good $W/rds_ib_mr_park_every 1000000
bad $W/rds_ib_mr_park_every 1000001
bad $W/rds_ib_mr_park_every -1
good $W/rds_ib_mr_park_every 0
# Failed RDMA_MAP registrations (rdma_ops drives it).
t "rds_rdma/rds_ib_mr_reg_fail_next is 0644" '[ "$(stat -c %a $W/rds_ib_mr_reg_fail_next)" = 644 ]'
default $W/rds_ib_mr_reg_fail_next 0
good $W/rds_ib_mr_reg_fail_next 1000000
bad $W/rds_ib_mr_reg_fail_next 1000001
good $W/rds_ib_mr_reg_fail_next 0
# Where RDMA_MAP registrations go, and the test knob that delays their
# completions on a connection QP (rdma_useonce drives both).
t "rds_rdma/rds_ib_mr_reg_on_conn is 0644" '[ "$(stat -c %a $W/rds_ib_mr_reg_on_conn)" = 644 ]'
default $W/rds_ib_mr_reg_on_conn N
good $W/rds_ib_mr_reg_on_conn 1 Y
bad $W/rds_ib_mr_reg_on_conn maybe
good $W/rds_ib_mr_reg_on_conn 0 N
t "rds_rdma/rds_ib_mr_conn_reg_defer_ms is 0644" '[ "$(stat -c %a $W/rds_ib_mr_conn_reg_defer_ms)" = 644 ]'
default $W/rds_ib_mr_conn_reg_defer_ms 0
good $W/rds_ib_mr_conn_reg_defer_ms 1000
bad $W/rds_ib_mr_conn_reg_defer_ms 1001
bad $W/rds_ib_mr_conn_reg_defer_ms -1
good $W/rds_ib_mr_conn_reg_defer_ms 0
# Failed RDS_GET_MR registrations (rdma_mr drives it).
t "rds_rdma/rds_ib_mr_reg_sync_fail_next is 0644" '[ "$(stat -c %a $W/rds_ib_mr_reg_sync_fail_next)" = 644 ]'
default $W/rds_ib_mr_reg_sync_fail_next 0
good $W/rds_ib_mr_reg_sync_fail_next 1000000
bad $W/rds_ib_mr_reg_sync_fail_next 1000001
good $W/rds_ib_mr_reg_sync_fail_next 0
# The sender's pause between claiming a message's ops and posting them.
R=$P/rds/parameters
t "rds/rdma_post_delay_ms is 0644" '[ "$(stat -c %a $R/rdma_post_delay_ms)" = 644 ]'
default $R/rdma_post_delay_ms 0
good $R/rdma_post_delay_ms 1000
bad $R/rdma_post_delay_ms 1001
bad $R/rdma_post_delay_ms -1
good $R/rdma_post_delay_ms 0
# A drop's pause between ERROR and its queued shutdown (ib_unload.sh).
t "rds/conn_drop_delay_ms is 0644" '[ "$(stat -c %a $R/conn_drop_delay_ms)" = 644 ]'
default $R/conn_drop_delay_ms 0
good $R/conn_drop_delay_ms 500
bad $R/conn_drop_delay_ms 501
bad $R/conn_drop_delay_ms -1
good $R/conn_drop_delay_ms 0

# At load time.  loads MODULE PARAMS...: insmod succeeds.  refused MODULE
# PARAM=VALUE: insmod fails with EINVAL, the module is not loaded and the
# kernel log names the parameter.
unload() { rds-mods unload >/dev/null 2>&1; }
loaded() { grep -q "^$1 " /proc/modules; }
loads() {
	local m=$1 e
	shift
	e=$(insmod $mods/$m.ko "$@" 2>&1)
	if [ -z "$e" ] && loaded $m; then
		ok "insmod $m $*"
	else
		nok "insmod $m $*" "$e"
	fi
}
refused() {
	local m=$1 pv=$2 e
	local pname=${pv%%=*}
	e=$(insmod $mods/$m.ko "$pv" 2>&1)
	if loaded $m; then
		nok "insmod $m $pv refused" "it loaded"
		[ $m = rds ] && rmmod rds || rmmod rds_rdma
	elif case "$e" in *"Invalid argument"*) false ;; *) true ;; esac; then
		nok "insmod $m $pv refused" "insmod said '$e'"
	elif ! dmesg | tail -n 5 | grep -q "$m: $pname=.* refused: must be"; then
		nok "insmod $m $pv refused" "no message naming $pname in the kernel log"
	else
		ok "insmod $m $pv refused (EINVAL, logged)"
	fi
}
# readback MODULE PARAM VALUE
readback() { default $P/$1/parameters/$2 "$3"; }

unload
t "modules unloaded" '! loaded rds_rdma && ! loaded rds'
for v in 0 1048577 -1 4294967296 abc ""; do
	refused rds "send_batch_count=$v"
done
loads rds send_batch_count=1
readback rds send_batch_count 1
rmmod rds
loads rds send_batch_count=1048576
readback rds send_batch_count 1048576
rmmod rds
loads rds
readback rds send_batch_count 1024

for pv in rds_ib_retry_count=8 rds_ib_retry_count=-1 rds_ib_retry_count=x \
	  rds_ib_mr_8k_pool_size=0 rds_ib_mr_8k_pool_size=2147483648 \
	  rds_ib_mr_1m_pool_size=0 rds_ib_mr_1m_pool_size=-1 \
	  rds_ib_inv_batch=0 rds_ib_inv_batch=65 \
	  rds_ib_inv_flush_us=100001 rds_ib_inv_flush_us=1e3 \
	  rds_ib_inv_force_local=maybe rds_ib_atomic_force_emul=maybe \
	  rds_ib_atomic_emul_tries=1 rds_ib_atomic_emul_tries=65537 \
	  rds_ib_atomic_emul_ms=600001 \
	  rds_ib_mr_key_window=255 rds_ib_mr_key_window=4294967296 \
	  rds_ib_mr_park_every=1000001; do
	refused rds_rdma "$pv"
done
loads rds_rdma rds_ib_retry_count=0 rds_ib_mr_8k_pool_size=1 \
	rds_ib_mr_1m_pool_size=1 rds_ib_inv_batch=1 rds_ib_inv_flush_us=0 \
	rds_ib_inv_force_local rds_ib_atomic_force_emul \
	rds_ib_mr_key_window=256 rds_ib_mr_park_every=1 \
	rds_ib_atomic_emul_tries=2
readback rds_rdma rds_ib_retry_count 0
readback rds_rdma rds_ib_mr_8k_pool_size 1
readback rds_rdma rds_ib_mr_1m_pool_size 1
readback rds_rdma rds_ib_inv_batch 1
readback rds_rdma rds_ib_inv_flush_us 0
readback rds_rdma rds_ib_inv_force_local Y
readback rds_rdma rds_ib_atomic_force_emul Y
readback rds_rdma rds_ib_mr_key_window 256
readback rds_rdma rds_ib_mr_park_every 1
readback rds_rdma rds_ib_atomic_emul_tries 2
rmmod rds_rdma
loads rds_rdma rds_ib_retry_count=7 rds_ib_mr_8k_pool_size=2147483647 \
	rds_ib_mr_1m_pool_size=2147483647 rds_ib_inv_batch=64 \
	rds_ib_inv_flush_us=100000 rds_ib_inv_force_local=n \
	rds_ib_atomic_force_emul=0 rds_ib_mr_key_window=4294967295 \
	rds_ib_atomic_emul_tries=65536
readback rds_rdma rds_ib_retry_count 7
readback rds_rdma rds_ib_mr_8k_pool_size 2147483647
readback rds_rdma rds_ib_mr_1m_pool_size 2147483647
readback rds_rdma rds_ib_inv_batch 64
readback rds_rdma rds_ib_inv_flush_us 100000
readback rds_rdma rds_ib_inv_force_local N
readback rds_rdma rds_ib_atomic_force_emul N
readback rds_rdma rds_ib_mr_key_window 4294967295
readback rds_rdma rds_ib_atomic_emul_tries 65536

# Back to the defaults for whatever runs next.
unload
t "modules load again with their defaults" 'rds-mods load ours'
readback rds_rdma rds_ib_inv_batch 16
echo "1..$n"
exit $fail
