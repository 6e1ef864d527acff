#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ib_restart_zc.sh - ib_restart.sh with MSG_ZEROCOPY senders (issue 11,
# zero-copy: peer reset and sender killed with zerocopy messages queued).
# See ib_restart.sh, IB_RESTART_ZCOPY.
IB_RESTART_ZCOPY=1 exec /tests/ib_restart.sh "$@"
