"""SAS_STOP_WITH_PARENT: with it, the node, the multi-robot node, the composer and the legacy
Python script stop the orderly way (exit 0) when their parent process is killed with SIGKILL
(what a launch that fails after starting them leaves behind); without it they keep running,
as before. A thread of the parent ending is not the parent's death (the kernel signals that
too); a parent gone before the node armed the watch stops it at once when named by pid; a
bad value exits 2 naming the variable.

The parent is tests/signals/parent_of.py's: it adopts the node once the parent is killed, so
the node's exit status is read by its new parent and printed.
"""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import CONFIG, HERE, SCRIPT, START_S, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, \
    binary, new_domain, wait_for

PARENT_OF = HERE / 'parent_of.py'
STOP_S = 2.0
WITNESS_S = 5.0  # parent_of.py's
VARIABLE = 'SAS_STOP_WITH_PARENT'
ROS_LINE = re.compile(r'^\[(DEBUG|INFO|WARN|ERROR|FATAL)\] \[\d+\.\d+\] \[[^\]]+\]: ')
SUBJECTS = ['node', 'multi', 'composer', 'script']


def command(world, subject: str, debug: bool = False) -> list:
    """The subject's command line, waiting for Gazebo (no simulator in these tests); with
    `debug`, the node logs at debug level (only the node `ur3e_1`)."""
    node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
    if subject == 'node':
        return [node, '--ros-args', '-r', '__node:=ur3e_1', '--params-file', CONFIG,
                *(['--log-level', 'ur3e_1:=debug'] if debug else [])]
    if subject == 'multi':
        params = world.params_file(
            'multi_robot:\n  ros__parameters:\n    robots: ["ur3e_a"]\n'
            f'    ur3e_a:\n      joint_names: {UR3E_JOINTS}\n'
            f'      joint_positions_topic_prefix: "{UR3E_PREFIX}"\n'
            f'      joint_states_topic: "{UR3E_STATES}"\n')
        return [node, '--ros-args', '-r', '__node:=multi_robot', '--params-file', params]
    if subject == 'composer':
        params = world.params_file(
            'composed:\n  ros__parameters:\n    robot_driver_client_names: ["ur3e_1"]\n')
        return [binary('COMPOSER_NODE_BIN', 'sas_robot_driver_ros_composer_node'),
                '--ros-args', '-r', '__node:=composed', '--params-file', params]
    return [sys.executable, SCRIPT, '--ros-args', '-r', '__node:=ur3e_1',
            '--params-file', CONFIG]


def started_under_a_parent(world, subject: str, *, from_thread=False, debug=False, **env):
    """parent_of.py running `subject` under a parent, once the subject waits (for Gazebo, or
    for its robots: no simulator here)."""
    options = ['--from-thread'] if from_thread else []
    witness = world.start([sys.executable, PARENT_OF, *options,
                           *command(world, subject, debug)], domain=new_domain(), **env)
    witness.wait_output('parent_of: parent ', START_S)
    witness.wait_output('::Initializing robot...', START_S)
    return witness


def parent_killed(witness) -> str:
    """Kills the witness's parent process; the witness's verdict on the node."""
    witness.signal(signal.SIGUSR2)
    wait_for(lambda: witness.count('after its parent was killed'), WITNESS_S + START_S,
             'the verdict of parent_of.py')
    return next(line for line in witness.lines if 'after its parent was killed' in line)


def node_lines(witness) -> list[str]:
    return [line for line in witness.lines if not line.startswith('parent_of:')]


@pytest.mark.parametrize('subject', SUBJECTS)
def test_with_the_option_the_parents_death_stops_it_in_order_exit_0(world, subject):
    witness = started_under_a_parent(world, subject, **{VARIABLE: '1'})
    verdict = parent_killed(witness)
    match = re.search(r'exited with status (-?\d+), ([\d.]+) s after', verdict)
    assert match, f'{verdict}\n{witness.output()}'
    assert int(match[1]) == 0, witness.output()
    assert float(match[2]) < STOP_S, witness.output()
    assert witness.count('::The parent process ') == 1, witness.output()
    assert witness.count('exited; stopping.') == 1, witness.output()
    not_ros = [line for line in node_lines(witness) if not ROS_LINE.match(line)]
    assert not not_ros, witness.output()


def test_without_the_option_the_node_outlives_its_parent(world):
    witness = started_under_a_parent(world, 'node')
    verdict = parent_killed(witness)
    assert 'still runs' in verdict, witness.output()
    assert witness.count('::The parent process ') == 0, witness.output()


def test_a_thread_of_the_parent_ending_is_not_the_parents_death(world):
    witness = started_under_a_parent(world, 'node', from_thread=True, debug=True,
                                     **{VARIABLE: '1'})
    # The kernel sends the parent-death signal when the thread that started the node ends:
    # the node sees it (a debug line) and goes on.
    witness.signal(signal.SIGUSR1)
    witness.wait_output('while the parent process ', START_S)
    time.sleep(1.0)
    assert witness.count('::The parent process ') == 0, witness.output()
    assert witness.count('stopping') == 0, witness.output()
    verdict = parent_killed(witness)
    assert re.search(r'exited with status 0, ', verdict), witness.output()
    assert witness.count('::The parent process ') == 1, witness.output()


def test_a_parent_named_by_pid_and_gone_before_the_node_started_stops_it_at_once(world):
    gone = subprocess.Popen(['true'])
    gone.wait()
    node = world.start(command(world, 'node'), domain=new_domain(), **{VARIABLE: str(gone.pid)})
    assert node.wait_exit(START_S) == 0, node.output()
    assert node.count(f'::The parent process {gone.pid} exited; stopping.') == 1, node.output()


def test_a_bad_value_exits_2_naming_the_variable(world):
    node = world.start(command(world, 'node'), domain=new_domain(), **{VARIABLE: 'yes'})
    assert node.wait_exit(START_S) == 2, node.output()
    assert node.count(f'{VARIABLE} must be 1 (stop when the parent process exits) or the '
                      "parent's pid, got \"yes\"") == 1, node.output()
    other = subprocess.Popen(['sleep', '60'])
    try:
        node = world.start(command(world, 'node'), domain=new_domain(),
                           **{VARIABLE: str(other.pid)})
        assert node.wait_exit(START_S) == 2, node.output()
        assert node.count(f'process {other.pid} is not this process\'s parent '
                          f'(that is {os.getpid()})') == 1, node.output()
    finally:
        other.kill()
        other.wait()
