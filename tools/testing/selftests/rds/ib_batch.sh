#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_batch.sh - one doorbell and one send completion per batch of messages
# (issue 11: "one ib_post_send per message although the transport contract
# promises one doorbell per batch").  Node 0 gets a send ring of 8 slots
# (net.rds.ib.max_send_wr, our modules reloaded), and 4 rds-bench threads
# keep 32 header-sized requests each in flight to node 1 for 3 s, so
# messages queue behind the full ring and rds.ko sends them in batches.
# Over the run, per message node 0 sent (send_queued):
#   - ib_tx_posts (ib_post_send() calls of the send ring) at most 1/2;
#   - send ring completions (ib_tx_cq_event minus the ACK-only sends,
#     ib_ack_sent, which are signalled one by one) at most 1/2.
# Before the send chaining every message had its own post and its own
# signalled completion (1 and 1).  Then node 0's modules are reloaded with
# the default ring.
# shellcheck source=SCRIPTDIR/vm/rds-tap.sh
. rds-tap.sh
tap_cluster
command -v rds-bench >/dev/null || { echo "1..0 # SKIP rds-bench missing"; exit 4; }
P=18960
echo "1..4"

t "node 0: our modules reloaded with an 8-slot send ring" \
	'rds-mods unload && rds-mods load ours && echo 8 >/proc/sys/net/rds/ib/max_send_wr'
rds-peer 1 "rds-bench -S -d 60 -p $P $pa >/tmp/ib_batch-server.log 2>&1 & echo \$! >/tmp/ib_batch-server.pid" >/dev/null
sleep 1
# shellcheck disable=SC2046 # four numbers
set -- $(rds-counter send_queued ib_tx_posts ib_tx_cq_event ib_ack_sent)
q0=${1:-0} p0=${2:-0} c0=${3:-0} a0=${4:-0}
t "4 threads x 32 requests in flight for 3 s: every answer came" \
	'rds-bench -p $P -I $la -d 3 -q 32 -t 4 -m rate -w 20 $pa >/tmp/ib_batch.out 2>&1 ||
	 { sed "s/^/# /" /tmp/ib_batch.out; false; }'
grep '^rate' /tmp/ib_batch.out | sed 's/^/# /'
# shellcheck disable=SC2046 # four numbers
set -- $(rds-counter send_queued ib_tx_posts ib_tx_cq_event ib_ack_sent)
q=$((${1:-0} - q0)) p=$((${2:-0} - p0)) c=$((${3:-0} - c0)) a=$((${4:-0} - a0))
rc=$((c - a))
echo "# node 0: $q messages sent, $p send ring posts, $rc send ring completions (+$a ACK-only sends)"
t "ib_tx_posts per message at most 1/2 ($p for $q)" '[ "$q" -gt 100 ] && [ $((2 * p)) -le "$q" ]'
t "send ring completions per message at most 1/2 ($rc for $q)" '[ "$q" -gt 100 ] && [ $((2 * rc)) -le "$q" ]'
rds-peer 1 "kill \$(cat /tmp/ib_batch-server.pid) 2>/dev/null; true" >/dev/null
rds-mods unload >/dev/null 2>&1
rds-mods load ours >/dev/null 2>&1
exit $fail
