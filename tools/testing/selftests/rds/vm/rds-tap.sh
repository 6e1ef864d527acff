# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh disable=SC2034 # n fail la pa: the tests'
#
# rds-tap.sh - TAP output for the shell tests, sourced: ". rds-tap.sh" (the
# runner installs it in the guest's /usr/bin).  Sets n=0 (the number of the
# last test) and fail=0 (1 once a test failed: the test's exit status) and
# provides:
#
#   t NAME EXPR         "ok N NAME" if EXPR (eval'd) is true, else "not ok"
#   ok NAME             "ok N NAME"
#   nok NAME [WHY]      "not ok N NAME", then "# WHY"
#   skip NAME WHY       "ok N NAME # SKIP WHY" (NAME "": "ok N # SKIP WHY")
#   tap_cluster [PROG...]
#                       a cluster test's start: la and pa from RDS_LOCAL_ADDR
#                       and RDS_PEER_ADDR, cd /tests, each PROG executable
#                       there; else "1..0 # SKIP ..." and exit 4
n=0
fail=0
ok() { n=$((n + 1)); echo "ok $n $1"; }
nok() {
	n=$((n + 1))
	echo "not ok $n $1"
	[ -z "$2" ] || echo "# $2"
	fail=1
}
t() { if eval "$2"; then ok "$1"; else nok "$1"; fi; }
skip() { n=$((n + 1)); echo "ok $n${1:+ $1} # SKIP $2"; }
tap_cluster() {
	la=$RDS_LOCAL_ADDR
	pa=$RDS_PEER_ADDR
	[ -n "$la" ] && [ -n "$pa" ] || { echo "1..0 # SKIP no cluster"; exit 4; }
	cd /tests || exit 1
	for tap_p in "$@"; do
		[ -x "./$tap_p" ] || { echo "1..0 # SKIP $tap_p missing"; exit 4; }
	done
}
