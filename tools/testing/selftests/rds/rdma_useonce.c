// SPDX-License-Identifier: GPL-2.0
/*
 * rdma_useonce.c - use-once key death in each invalidation mode.
 *
 *   rdma_useonce [remote|local|intree]
 *
 * Without an argument (or $RDMA_USEONCE_MODE): remote then local against
 * our peer, intree against Debian's (RDS_PEER_MODS=intree).
 *
 * Runs rdma_ops (use-once WRITE, then a second WRITE on the dead key that
 * must fail with RDS_RDMA_REMOTE_ERROR and leave our memory untouched; a
 * use-once READ; an ordinary key taking two WRITEs) and checks, with the
 * rds_rdma counters of node 0 (the key owner), that the keys died by the
 * path the mode must take:
 *
 *   remote  both nodes run our modules with remote invalidation allowed:
 *           the peer completes with IB_WR_SEND_WITH_INV, we count
 *           ib_rdma_remote_inv and post no LOCAL_INV for the use-once keys;
 *   local   rds_ib_inv_force_local=Y on both nodes: no remote invalidation,
 *           batched LOCAL_INVs (ib_rdma_local_inv, ib_rdma_inv_batches);
 *   intree  Debian's rds_rdma on node 1 (--peer-mods intree): it never
 *           sends SEND_WITH_INV, the fallback is chosen automatically;
 *   early   as remote, but node 0 handles the completions of the REG_MRs
 *           it posts on the connection QP 200 ms late
 *           (rds_ib_mr_conn_reg_defer_ms), so the peer's SEND_WITH_INV
 *           arrives while the key is still being registered: accepted
 *           (ib_rdma_reg_conn_early_inv, no bogus invalidation, no
 *           reconnect), the key invalidated locally once registered, the
 *           completing message held until then, the dead key refused.
 *
 * Also, whatever the mode: rdma_ops registers with RDS_CMSG_RDMA_MAP four
 * times and once with RDS_GET_MR; only the socket option may sleep for its
 * REG_MR (ib_rdma_reg_waits), the sendmsg() calls must not.  remote and
 * local run with rds_ib_mr_reg_on_conn as loaded (default N: every REG_MR
 * on the registration QP); early sets it, so the MAPs' REG_MRs go on the
 * connection's QP ahead of the message (ib_rdma_reg_conn_wrs) once the
 * connection is up, and restores both knobs when it ends (also on
 * SIGTERM).
 *
 * /tests/rdma_ops must be installed: list rdma_ops in tests.txt for the
 * same peer.  The counters come from RDS_INFO_COUNTERS (info.c); the
 * checks skip when a counter is missing there (an rds.ko without
 * RDS_INFO).  TAP on stdout; exit 0 pass, 4 skip, else fail.
 */
#include <stdio.h>
#include <signal.h>
#include "rdma_test.h"

#define PARAM "/sys/module/rds_rdma/parameters/rds_ib_inv_force_local"
#define DEFER "/sys/module/rds_rdma/parameters/rds_ib_mr_conn_reg_defer_ms"
#define ONCONN "/sys/module/rds_rdma/parameters/rds_ib_mr_reg_on_conn"

static int tests, fails;

static void tap(int ok, const char *what)
{
	printf("%sok %d %s\n", ok ? "" : "not ", ++tests, what);
	fflush(stdout);
	fails += !ok;
}

static int set_force(int node, const char *val)
{
	char cmd[256];

	if (node == 0) {
		FILE *f = fopen(PARAM, "w");

		if (!f)
			return -1;
		fputs(val, f);
		return fclose(f) ? -1 : 0;
	}
	snprintf(cmd, sizeof(cmd), "rds-peer %d 'echo %s > %s'", node, val,
		 PARAM);
	return system(cmd) ? -1 : 0;
}

static int set_param(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f) ? -1 : 0;
}

/* rds_ib_mr_reg_on_conn as we found it; early mode sets it and the defer. */
static char onconn_was[8] = "N";

static void restore_params(void)
{
	set_param(DEFER, "0");
	set_param(ONCONN, onconn_was);
}

static void restore_and_die(int sig)
{
	restore_params();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void run_mode(const char *mode)
{
	long long rem0, loc0, bat0, rem1, loc1, bat1;
	long long wrs0, wai0, wrs1, wai1, con0, con1, ear0, ear1, bog0, bog1;
	long long unm0, unm1;
	int early = !strcmp(mode, "early");
	int remote = !strcmp(mode, "remote") || early;
	char what[160];
	int ret;

	if (early)
		tap(!set_force(0, "N") && !set_force(1, "N") &&
		    !set_param(ONCONN, "Y") && !set_param(DEFER, "200"),
		    "early: remote invalidation allowed, REG_MR completions handled 200 ms late");
	else if (!strcmp(mode, "local"))
		tap(!set_force(0, "Y") && !set_force(1, "Y"),
		    "local: rds_ib_inv_force_local=Y on both nodes");
	else if (remote)
		tap(!set_force(0, "N") && !set_force(1, "N"),
		    "remote: remote invalidation allowed on both nodes");
	else
		tap(!set_force(0, "N"), "intree: Debian's rds_rdma on the peer");

	rem0 = rds_counter("ib_rdma_remote_inv");
	loc0 = rds_counter("ib_rdma_local_inv");
	bat0 = rds_counter("ib_rdma_inv_batches");
	wrs0 = rds_counter("ib_rdma_reg_wrs");
	wai0 = rds_counter("ib_rdma_reg_waits");
	con0 = rds_counter("ib_rdma_reg_conn_wrs");
	ear0 = rds_counter("ib_rdma_reg_conn_early_inv");
	bog0 = rds_counter("ib_rdma_remote_inv_bogus");
	unm0 = rds_counter("ib_rdma_mr_unmap_keyed");
	fflush(stdout);
	ret = system("/tests/rdma_ops >/tmp/rdma_useonce.out 2>&1");
	if (system("sed 's/^/# rdma_ops: /' /tmp/rdma_useonce.out"))
		printf("# (no rdma_ops output)\n");
	snprintf(what, sizeof(what),
		 "%s: use-once WRITE, dead key REMOTE_ERROR with memory untouched, READ, ordinary key",
		 mode);
	tap(ret == 0, what);
	rem1 = rds_counter("ib_rdma_remote_inv");
	loc1 = rds_counter("ib_rdma_local_inv");
	bat1 = rds_counter("ib_rdma_inv_batches");
	wrs1 = rds_counter("ib_rdma_reg_wrs");
	wai1 = rds_counter("ib_rdma_reg_waits");
	con1 = rds_counter("ib_rdma_reg_conn_wrs");
	ear1 = rds_counter("ib_rdma_reg_conn_early_inv");
	bog1 = rds_counter("ib_rdma_remote_inv_bogus");
	unm1 = rds_counter("ib_rdma_mr_unmap_keyed");
	if (early)
		restore_params();
	printf("# %s: reg_wrs %lld -> %lld, reg_conn_wrs %lld -> %lld, reg_waits %lld -> %lld\n",
	       mode, wrs0, wrs1, con0, con1, wai0, wai1);
	snprintf(what, sizeof(what),
		 "%s: 5 REG_MRs, only RDS_GET_MR's waited (RDMA_MAP sendmsg did not)",
		 mode);
	if (wrs0 < 0 || wai0 < 0)
		printf("ok %d # SKIP %s: no ib_rdma_reg_waits counter\n",
		       ++tests, mode);
	else
		/*
		 * rdma_ops registers here: GET_MR, two RDMA_MAPs, the MAP
		 * whose registration fails (case 9, still posted and failed
		 * by the knob) and the MAP after it (case 11); the cancel
		 * cases use the peer's key.  With rds_ib_mr_reg_on_conn
		 * (early mode) the MAPs once the connection is up go on its
		 * QP: at least the last one.
		 */
		tap(wrs1 - wrs0 + (con0 < 0 ? 0 : con1 - con0) == 5 &&
		    (!early || con1 - con0 >= 1) && wai1 - wai0 == 1, what);
	if (early) {
		printf("# early: reg_conn_early_inv %lld -> %lld, remote_inv_bogus %lld -> %lld\n",
		       ear0, ear1, bog0, bog1);
		if (ear0 < 0)
			printf("ok %d # SKIP early: no ib_rdma_reg_conn_early_inv counter\n",
			       ++tests);
		else
			tap(ear1 > ear0,
			    "early: SEND_WITH_INV before the REG_MR completion accepted");
	}
	printf("# %s: remote_inv %lld -> %lld, local_inv %lld -> %lld, inv_batches %lld -> %lld\n",
	       mode, rem0, rem1, loc0, loc1, bat0, bat1);
	if (rem0 < 0 || loc0 < 0 || bat0 < 0) {
		/* This rds.ko does not export these counters. */
		printf("ok %d # SKIP %s: counters not exported (RDS_INFO_COUNTERS)\n",
		       ++tests, mode);
		printf("ok %d # SKIP %s: counters not exported (RDS_INFO_COUNTERS)\n",
		       ++tests, mode);
	} else if (early) {
		/* Invalidated locally once registered: not remotely. */
		tap(loc1 - loc0 >= ear1 - ear0 && bat1 > bat0,
		    "early: each early-invalidated key died by a LOCAL_INV");
		tap(bog1 == bog0 && unm1 == unm0,
		    "early: none counted bogus (no reconnect), no pages released under a live key");
	} else if (remote) {
		/* Two use-once keys: the WRITE's and the READ's. */
		tap(rem1 - rem0 >= 2,
		    "remote: use-once keys died by remote invalidation");
		/* Only the ordinary key (FREE_MR) may need a LOCAL_INV. */
		tap(loc1 - loc0 <= 1,
		    "remote: no LOCAL_INV for remotely invalidated keys");
	} else {
		snprintf(what, sizeof(what), "%s: no remote invalidation",
			 mode);
		tap(rem1 - rem0 == 0, what);
		snprintf(what, sizeof(what),
			 "%s: use-once keys died by batched LOCAL_INV", mode);
		tap(loc1 - loc0 >= 2 && bat1 > bat0, what);
	}
	if (!remote)
		set_force(0, "N");
	if (!strcmp(mode, "local"))
		set_force(1, "N");
}

int main(int argc, char **argv)
{
	const char *mods = getenv("RDS_PEER_MODS") ?: "ours";
	const char *mode = argc > 1 ? argv[1] : getenv("RDMA_USEONCE_MODE");

	if (!getenv("RDS_PEER_ADDR")) {
		printf("1..0 # SKIP no peer\n");
		return 4;
	}
	{
		FILE *f = fopen(ONCONN, "r");

		if (f) {
			if (!fgets(onconn_was, sizeof(onconn_was), f))
				strcpy(onconn_was, "N");
			onconn_was[strcspn(onconn_was, "\n")] = 0;
			fclose(f);
		}
	}
	atexit(restore_params);
	signal(SIGTERM, restore_and_die);
	signal(SIGINT, restore_and_die);
	if (mode) {
		printf("1..%d\n", strcmp(mode, "early") ? 5 : 6);
		run_mode(mode);
	} else if (!strcmp(mods, "intree")) {
		printf("1..5\n");
		run_mode("intree");
	} else {
		printf("1..16\n");
		run_mode("remote");
		run_mode("local");
		run_mode("early");
	}
	return fails ? 1 : 0;
}
