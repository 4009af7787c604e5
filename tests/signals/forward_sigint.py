#!/usr/bin/env python3
"""What `ros2 launch` does to a node when it is stopped non-interactively: runs COMMAND in its
own process group (so a terminal's or a supervisor's SIGINT to the group reaches both), and
on SIGINT forwards one more SIGINT to it 10 ms later; on SIGTERM forwards SIGTERM at once.
Exits with the child's status (128 + N if signal N killed it), after printing it.

    forward_sigint.py COMMAND [ARGS...]
"""

import signal
import subprocess
import sys
import threading

FORWARD_DELAY_S = 0.010

child = subprocess.Popen(sys.argv[1:])


def forward_later(signum, _frame):
    def forward():
        if child.poll() is None:
            child.send_signal(signal.SIGINT)
    threading.Timer(FORWARD_DELAY_S, forward).start()


def forward_now(signum, _frame):
    if child.poll() is None:
        child.send_signal(signum)


signal.signal(signal.SIGINT, forward_later)
signal.signal(signal.SIGTERM, forward_now)
code = child.wait()
print(f'forward_sigint: child exited with {code}', flush=True)
sys.exit(code if code >= 0 else 128 - code)
