"""Every binary stops the same orderly way however it is signalled: the node, the multi-robot
node, the composer and the legacy Python script, each stopped by

- two SIGINTs 0 ms and 50 ms apart, SIGINT then SIGTERM 10 ms later, SIGINT, SIGINT and
  SIGTERM 3 ms apart, a burst of SIGINT + SIGTERM + SIGHUP, and a process-group SIGINT of a
  parent that forwards one more SIGINT 10 ms later (what `ros2 launch` does when stopped
  non-interactively),

at four stages: starting (reading parameters, creating the driver and topics), waiting for
Gazebo (in `initialize`), in the control loop, and right after a first SIGTERM (the signals
land in the teardown). Each case must exit 0 within 2 s of its
first signal, with no DDS/rcutils error or failed assertion in its output and no process of
its group left over, and every line it printed in the ROS console format (also those logged
after the node is gone). The cases of one subject and stage run at once, each in its own ROS
domain (the composers share their robot's), sharing one simulator.
"""

import concurrent.futures
import os
import re
import signal
import sys
import time

import pytest

from conftest import CONFIG, FORWARD_SIGINT, SCRIPT, START_S, UR3E_JOINTS, UR3E_PREFIX, \
    UR3E_STATES, binary, new_domain, stops

STOP_S = 2.0
# `[INFO] [1733115533.604311123] [ur3e_1]: …`, rcutils' default console format.
ROS_LINE = re.compile(r'^\[(DEBUG|INFO|WARN|ERROR|FATAL)\] \[\d+\.\d+\] \[[^\]]+\]: ')
# The one line that is not the subject's: the launch-like parent's report.
PARENT_LINE = 'forward_sigint: '
FORBIDDEN = ['Failed to delete', 'rcutils_set_error_state', 'Assertion', 'assertion',
             'panicked', 'Segmentation fault', 'Traceback', 'stop hung']

# name -> [(delay before it in s, signal)], or GROUP: SIGINT to the parent's process group.
GROUP = 'group SIGINT, parent forwards SIGINT +10 ms'
PATTERNS = {
    'two SIGINT 0 ms apart': [(0.0, signal.SIGINT), (0.0, signal.SIGINT)],
    'two SIGINT 50 ms apart': [(0.0, signal.SIGINT), (0.05, signal.SIGINT)],
    'SIGINT, SIGTERM 10 ms later': [(0.0, signal.SIGINT), (0.01, signal.SIGTERM)],
    'SIGINT, SIGINT, SIGTERM 3 ms apart': [(0.0, signal.SIGINT), (0.003, signal.SIGINT),
                                           (0.003, signal.SIGTERM)],
    'burst SIGINT+SIGTERM+SIGHUP': [(0.0, signal.SIGINT), (0.0, signal.SIGTERM),
                                    (0.0, signal.SIGHUP)],
    GROUP: None,
}
STAGES = ['starting', 'waiting', 'loop', 'stopping']
SUBJECTS = ['node', 'multi', 'composer', 'script']


def multi_params(world):
    """A node of several loops on the one simulated UR3e: robot ur3e_a and a composite of it."""
    return world.params_file(
        'multi_robot:\n  ros__parameters:\n    robots: ["ur3e_a"]\n'
        '    composites: ["ur3e_c"]\n'
        f'    ur3e_a:\n      joint_names: {UR3E_JOINTS}\n'
        f'      joint_positions_topic_prefix: "{UR3E_PREFIX}"\n'
        f'      joint_states_topic: "{UR3E_STATES}"\n'
        '    ur3e_c:\n      robots: ["ur3e_a"]\n')


def composer_params(world, names):
    return world.params_file(''.join(
        f'{name}:\n  ros__parameters:\n    robot_driver_client_names: ["ur3e_1"]\n'
        for name in names))


def start_subjects(world, subject: str, stage: str) -> list:
    """One process per pattern (the GROUP one under forward_sigint.py), and what each prints
    when it reached the stage: (process, marker, count)."""
    with_gazebo = stage in ('loop', 'stopping')
    if with_gazebo:
        world.sim()
    node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
    robots = 2 if subject == 'multi' else 1
    names = [f'composed_{k}' for k in range(len(PATTERNS))]
    if subject == 'composer':
        # The robot the composers compose, in the composers' domain.
        helper = world.start([node, '--ros-args', '-r', '__node:=ur3e_1',
                              '--params-file', CONFIG])
        if with_gazebo:
            helper.wait_output('::Robot initialized.', START_S)
        params = composer_params(world, names)
    elif subject == 'multi':
        params = multi_params(world)
    started = []
    for k, pattern in enumerate(PATTERNS):
        if subject == 'node':
            command = [node, '--ros-args', '-r', '__node:=ur3e_1', '--params-file', CONFIG]
        elif subject == 'multi':
            command = [node, '--ros-args', '-r', '__node:=multi_robot', '--params-file', params]
        elif subject == 'composer':
            command = [binary('COMPOSER_NODE_BIN', 'sas_robot_driver_ros_composer_node'),
                       '--ros-args', '-r', f'__node:={names[k]}', '--params-file', params]
        else:
            command = [sys.executable, SCRIPT, '--ros-args', '-r', '__node:=ur3e_1',
                       '--params-file', CONFIG]
        if PATTERNS[pattern] is None:
            command = [sys.executable, FORWARD_SIGINT, *command]
        domain = world.domain if subject == 'composer' else new_domain()
        started.append(world.start(command, domain=domain))
    marker = {'starting': '::Loading parameters from parameter server.',
              'waiting': '::Initializing robot...'}.get(stage, '::Robot initialized.')
    for process in started:
        process.wait_output(marker, START_S, count=1 if stage == 'starting' else robots)
    return started


def first_line_or_exit(process, text: str, timeout: float):
    deadline = time.monotonic() + timeout
    while process.count(text) == 0 and process.proc.poll() is None:
        if time.monotonic() > deadline:
            return
        time.sleep(0.002)


def stop(process, stage: str, pattern) -> dict:
    """Signals `process` as `pattern` says (after a first SIGTERM in stage 'stopping') and
    waits for its exit: exit status, seconds from the first signal, group left over."""
    start = time.monotonic()
    if stage == 'stopping':
        process.signal(signal.SIGTERM)
        first_line_or_exit(process, 'SIGTERM received; stopping.', STOP_S)
    if pattern is None:
        try:
            os.killpg(process.proc.pid, signal.SIGINT)
        except ProcessLookupError:
            pass
    else:
        for delay, signum in pattern:
            time.sleep(delay)
            process.signal(signum)
    try:
        code = process.proc.wait(10)
    except Exception:  # noqa: BLE001 - still running: reported as such
        code = None
    seconds = time.monotonic() - start
    process._finish() if code is not None else None
    return {'code': code, 'seconds': seconds, 'left_over': process.group_alive()}


@pytest.mark.parametrize('stage', STAGES)
@pytest.mark.parametrize('subject', SUBJECTS)
def test_every_signal_pattern_stops_in_order_exit_0_within_2_s(world, subject, stage):
    processes = start_subjects(world, subject, stage)
    with concurrent.futures.ThreadPoolExecutor(len(processes)) as pool:
        results = list(pool.map(lambda case: stop(case[0], stage, PATTERNS[case[1]]),
                                zip(processes, PATTERNS)))
    problems = []
    for process, pattern, result in zip(processes, PATTERNS, results):
        stops.append((subject, stage, pattern, result['code'], result['seconds']))
        output = process.output()
        bad = [text for text in FORBIDDEN if text in output]
        not_ros = [line for line in process.lines
                   if not ROS_LINE.match(line) and not line.startswith(PARENT_LINE)]
        if (result['code'] != 0 or result['seconds'] > STOP_S or bad or result['left_over']
                or not_ros):
            problems.append(f'--- {pattern}: exit {result["code"]} after '
                            f'{result["seconds"]:.3f} s, forbidden text {bad}, left over: '
                            f'{result["left_over"]}, not in the ROS format: {not_ros}\n'
                            f'{output}')
    assert not problems, '\n'.join(problems)
