# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rds.ko and rds_rdma.ko, and the project's entry points:
#   make                 build both modules against $(KDIR)
#   make modules_install install them under /lib/modules/<ver>/updates
#   make check           all tests (builds, sparse, W=1, VM tiers); KERNEL= one tier
#   make demo            two-node QEMU cluster demonstration
#   make bench           rds-bench on the cluster, interleaved rounds of ours,
#                        Debian's in-tree modules and raw verbs (perftest on
#                        rxe): one table of medians (min..max) with ratios to
#                        raw and in-tree, counts per op (wire packets, CQ
#                        events, ACKs), build/bench/bench.json and bench.svg;
#                        KERNEL=stock|6.12, RDS_BENCH_ROUNDS (3),
#                        RDS_BENCH_SECONDS (2 per test)
#   make fuzz            rds_fuzz on the cluster for FUZZ_SECONDS (default 600),
#                        KERNEL= the tier (default debug), FUZZ_SEED= a seed
#   make clean

ifneq ($(KERNELRELEASE),)
# Invoked by kbuild: the Kbuild file says what to build.
include $(src)/Kbuild
else

KVER_HOST := $(shell uname -r)
KDIR ?= $(shell if [ -d /lib/modules/$(KVER_HOST)/build ]; then \
		echo /lib/modules/$(KVER_HOST)/build; \
	else \
		ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1; \
	fi)
PWD := $(shell pwd)
SELFTESTS := tools/testing/selftests/rds
KERNEL ?=

all: modules

modules:
	@test -n "$(KDIR)" || { echo "no kernel build tree: set KDIR or install linux-headers"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD) modules

modules_install:
	$(MAKE) -C $(KDIR) M=$(PWD) INSTALL_MOD_DIR=updates modules_install

deps:
	@scripts/install-deps.sh

check: deps
	@$(SELFTESTS)/check.sh $(KERNEL)

demo: deps
	@$(SELFTESTS)/demo.sh

bench: deps
	@$(SELFTESTS)/bench.sh

# run_vm.sh gives a test only the environment of its tests.txt line, so
# make fuzz runs rds_fuzz from an export of the work tree (build/fuzz-src)
# whose rds_fuzz line carries FUZZ_SECONDS (and FUZZ_SEED), with a wall-clock
# limit of FUZZ_SECONDS + 240 s.
FUZZ_SECONDS ?= 600
FUZZ_SEED ?=
fuzz: deps
	@d=build/fuzz-src; rm -rf $$d && mkdir -p $$d && \
	git ls-files -z -co --exclude-standard | xargs -0 tar -c | tar -x -C $$d && \
	sed -i "s/^rds_fuzz .*/rds_fuzz all ours $$(($(FUZZ_SECONDS) + 240)) RDS_FUZZ_SECONDS=$(FUZZ_SECONDS)$(if $(FUZZ_SEED), RDS_FUZZ_SEED=$(FUZZ_SEED))/" \
		$$d/$(SELFTESTS)/tests.txt && \
	grep '^rds_fuzz ' $$d/$(SELFTESTS)/tests.txt && \
	$(SELFTESTS)/run_vm.sh --kernel $(or $(KERNEL),debug) --src $$d rds_fuzz

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || true
	rm -rf build

.PHONY: all modules modules_install deps check demo bench fuzz clean
endif
