#!/usr/bin/env python3
"""A parent process for COMMAND that the test can kill, and a witness of what COMMAND does
then: this process adopts orphans (PR_SET_CHILD_SUBREAPER), starts a *parent* process that
starts COMMAND, and on a signal from the test kills that parent with SIGKILL and reports how
COMMAND ended — it is then this process's child, so its exit status can be read.

    parent_of.py [--from-thread] COMMAND [ARGS...]

Prints `parent_of: parent P started COMMAND as N`. Then:
- SIGUSR1: the parent's thread that started COMMAND ends (with --from-thread; the parent
  process goes on), as a launcher's worker thread might;
- SIGUSR2: the parent is killed (SIGKILL), and within WITNESS_S seconds this prints
  `parent_of: COMMAND exited with status S, T s after its parent was killed` or
  `parent_of: COMMAND still runs WITNESS_S s after its parent was killed`.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
WITNESS_S = 5.0


def parent(pid_fd: int, from_thread: bool, command: list[str]):
    """The parent: starts COMMAND (from a thread of its own with --from-thread), writes its
    pid to `pid_fd`, and waits to be killed."""
    thread_may_end = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: thread_may_end.set())

    def start():
        child = subprocess.Popen(command)
        os.write(pid_fd, f'{child.pid}\n'.encode())

    if from_thread:
        threading.Thread(target=lambda: (start(), thread_may_end.wait())).start()
    else:
        start()
    while True:
        time.sleep(3600)


def witness(from_thread: bool, command: list[str]):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit(f'parent_of: cannot become a child subreaper (errno {ctypes.get_errno()})')
    read_end, write_end = os.pipe()
    the_parent = subprocess.Popen(
        [sys.executable, __file__, '--parent', str(write_end),
         *(['--from-thread'] if from_thread else []), *command],
        pass_fds=[write_end])
    os.close(write_end)
    with os.fdopen(read_end) as pids:
        child = int(pids.readline())
    print(f'parent_of: parent {the_parent.pid} started {command[0]} as {child}', flush=True)

    kill_parent = threading.Event()
    signal.signal(signal.SIGUSR1, lambda *_: os.kill(the_parent.pid, signal.SIGUSR1))
    signal.signal(signal.SIGUSR2, lambda *_: kill_parent.set())
    while not kill_parent.wait(0.1):
        pass
    the_parent.kill()
    the_parent.wait()
    killed = time.monotonic()
    while time.monotonic() - killed < WITNESS_S:
        try:
            pid, status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:  # not adopted yet
            pid = 0
        if pid == child:
            print(f'parent_of: {command[0]} exited with status {os.waitstatus_to_exitcode(status)}, '
                  f'{time.monotonic() - killed:.3f} s after its parent was killed', flush=True)
            return
        time.sleep(0.01)
    print(f'parent_of: {command[0]} still runs {WITNESS_S} s after its parent was killed',
          flush=True)


if __name__ == '__main__':
    arguments = sys.argv[1:]
    if arguments[:1] == ['--parent']:
        fd, arguments = int(arguments[1]), arguments[2:]
        from_thread = arguments[:1] == ['--from-thread']
        parent(fd, from_thread, arguments[1:] if from_thread else arguments)
    else:
        from_thread = arguments[:1] == ['--from-thread']
        witness(from_thread, arguments[1:] if from_thread else arguments)
