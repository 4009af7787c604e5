#!/usr/bin/env python3
"""Runs a Python program beside a thread that hogs the GIL: `gil_hog.py [--busy] PROGRAM.py [ARGS...]`.

By default the thread holds the interpreter lock while it sleeps in C (usleep through
ctypes.PyDLL, which keeps the GIL during the call) — what the original's control_loop() did,
and what starved its Gazebo callback — without using CPU. With --busy it is a pure-Python busy
loop instead: the same hold on the GIL plus a full core of CPU. Either way the interpreter hands
the lock to another Python thread only when asked to, every sys.getswitchinterval() (5 ms).

The thread is named `gil-hog` (the OS thread name), so the benchmark can leave its CPU time out
of the bridge's.
"""

import ctypes
import runpy
import sys
import threading

PR_SET_NAME = 15
SLEEP_US = 1000


def hold():
    libc = ctypes.PyDLL(None)
    libc.prctl(PR_SET_NAME, b'gil-hog', 0, 0, 0)
    while True:
        libc.usleep(SLEEP_US)


def busy():
    ctypes.CDLL(None).prctl(PR_SET_NAME, b'gil-hog', 0, 0, 0)
    spins = 0
    while True:
        spins += 1


def main():
    args = sys.argv[1:]
    hog = hold
    if args[:1] == ['--busy']:
        hog, args = busy, args[1:]
    if not args:
        sys.exit('usage: gil_hog.py [--busy] PROGRAM.py [ARGS...]')
    threading.Thread(target=hog, name='gil-hog', daemon=True).start()
    sys.argv = args
    runpy.run_path(args[0], run_name='__main__')


if __name__ == '__main__':
    main()
