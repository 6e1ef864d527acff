#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""hub.py HUB_PATH NODE_PATH...: an Ethernet hub for QEMU dgram netdevs.

Every frame received on the unix datagram socket HUB_PATH is sent to every
node socket except the one it came from.  Used for clusters of three or more
nodes; two nodes are wired point to point.  Runs until killed.
"""
import os
import socket
import sys

hub, nodes = sys.argv[1], sys.argv[2:]
try:
    os.unlink(hub)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(hub)
while True:
    frame, src = s.recvfrom(65536)
    for n in nodes:
        if n != src:
            try:
                s.sendto(frame, n)
            except OSError:
                pass  # that node is not up (yet, or any more)
