#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make demo: boot the two-node cluster with our modules and show them working.
here=$(cd "$(dirname "$0")" && pwd)
exec "$here/run_vm.sh" --kernel "${KERNEL:-stock}" --show demo-cluster.sh
