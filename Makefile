# SPDX-License-Identifier: GPL-2.0
#
# Out-of-tree build of rds.ko and rds_rdma.ko, and the project's entry points:
#   make                 build both modules against $(KDIR)
#   make modules_install install them under /lib/modules/<ver>/updates
#   make check           all tests (builds, sparse, W=1, VM tiers); KERNEL= one tier
#   make demo            two-node QEMU cluster demonstration
#   make bench           rds-bench on the cluster: ours vs Debian's in-tree modules
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

clean:
	$(MAKE) -C $(KDIR) M=$(PWD) clean 2>/dev/null || true
	rm -rf build

.PHONY: all modules modules_install deps check demo bench clean
endif
