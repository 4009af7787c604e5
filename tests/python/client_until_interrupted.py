"""Helper of test_client.py: a controller on RobotDriverClient that runs until a signal, then
lets the interpreter exit with the client still alive (atexit closes it).

    client_until_interrupted.py STAGE PREFIX DOMAIN

STAGE: `waiting` (nobody serves PREFIX: wait_for_new_state times out again and again),
`reading` (a bridge serves it: wait for each state, read it, send it back as the target),
`sleeping` (the main thread in time.sleep while the client's thread runs), or `exiting` (no
signal: a daemon thread blocks in wait_for_new_state() without a timeout, and the main thread
returns at once). SIGINT, SIGTERM and SIGHUP all raise KeyboardInterrupt; the first ends the
loop ('interrupted'), the interpreter exits with the client still alive.
"""

import signal
import sys
import threading
import time

import sas_robot_driver_gazebo as sas

stage, prefix, domain = sys.argv[1], sys.argv[2], int(sys.argv[3])
for signum in (signal.SIGTERM, signal.SIGHUP):
    signal.signal(signum, signal.default_int_handler)

client = sas.RobotDriverClient('interrupted_client', prefix, args=[], domain_id=domain)


def wait_forever():
    try:
        client.wait_for_new_state()
    except RuntimeError as error:
        print(f'daemon thread: {error}', flush=True)


if stage == 'exiting':
    threading.Thread(target=wait_forever, daemon=True).start()
    time.sleep(0.2)  # into the wait
    print(f'{stage} ready', flush=True)
    sys.exit(0)

if stage == 'reading':
    deadline = time.monotonic() + 60
    while not client.is_enabled():
        if time.monotonic() > deadline:
            sys.exit(f'{prefix} never enabled')
        time.sleep(0.05)
print(f'{stage} ready', flush=True)
try:
    while True:
        if stage == 'sleeping':
            time.sleep(0.05)
            continue
        try:
            client.wait_for_new_state(timeout=0.2)
        except TimeoutError:
            continue
        client.send_target_joint_positions(client.get_joint_positions())
except KeyboardInterrupt:
    print('interrupted', flush=True)
