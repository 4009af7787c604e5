#!/usr/bin/env python3
"""Runs a Python program beside a thread that hogs the GIL: `gil_hog.py [--busy] PROGRAM.py [ARGS...]`.

By default the thread holds the interpreter lock while it sleeps in C (usleep through
ctypes.PyDLL, which keeps the GIL during the call) — what the original's control_loop() did,
and what starved its Gazebo callback — without using CPU. With --busy it is a pure-Python busy
loop instead: the same hold on the GIL plus a full core of CPU. Either way the interpreter hands
the lock to another Python thread only when asked to, every sys.getswitchinterval() (5 ms).

The thread is named `gil-hog` (the OS thread name), so the benchmark can leave its CPU time out
of the bridge's, and runs at normal priority even when the program was started at a real-time
one (a busy real-time thread would take a core from everything else).
"""

import ctypes
import os
import runpy
import sys
import threading

PR_SET_NAME = 15
SLEEP_US = 1000


def become_hog():
    """Names this thread and gives it normal priority (pid 0: the calling thread)."""
    ctypes.CDLL(None).prctl(PR_SET_NAME, b'gil-hog', 0, 0, 0)
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))


def hold():
    become_hog()
    libc = ctypes.PyDLL(None)
    while True:
        libc.usleep(SLEEP_US)


def busy():
    become_hog()
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
