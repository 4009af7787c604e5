"""Fixtures for the stop tests: the node, the multi-robot node, the composer and the legacy
Python script, each stopped by signals at several stages (tests/signals/test_signals.py),
and the script's node compared with the native node as ROS sees it (test_script_node.py).

Run through scripts/test-signals (which builds the binaries and installs the module). Every
test gets its own gz partition, and every process its own ROS domain unless it must share
one; both middlewares stay on loopback; every process is killed at the end. Waits are on
conditions (log lines, discovery), each with a deadline.
"""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
CONFIG = ROOT / 'config' / 'config.yaml'
SCRIPT = ROOT / 'scripts' / 'sas_robot_driver_ros_gazebo.py'
FORWARD_SIGINT = HERE / 'forward_sigint.py'
START_S = 60  # several process starts at once plus discovery, on 2 loaded cores

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401
from support.world import (  # noqa: E402,F401
    LOOPBACK, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, UR3E_WORLD, World as BaseWorld,
    domain_ids, world_fixture)

# Loopback only, for this process (rclpy) as for every child.
os.environ.update(LOOPBACK)

new_domain = domain_ids(19)


class World(BaseWorld):
    """One test's world: a gz partition shared by the processes it starts, each in the ROS
    domain it is given (the test's by default)."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        super().__init__(tmp_path, test_name, prefix='sig', new_domain=new_domain,
                         start_s=START_S, inherit_environment=True)


world = world_fixture(World)


# (subject, stage, pattern, exit status, stop time in s), for the summary table.
stops: list[tuple] = []


def pytest_terminal_summary(terminalreporter):
    if not stops:
        return
    terminalreporter.section('signal cases: exit status and stop time (first signal -> exit)')
    terminalreporter.write_line(f'{"subject":<10} {"stage":<9} {"signals":<44} {"exit":>5} '
                                f'{"stop (s)":>8}')
    for subject, stage, pattern, code, seconds in sorted(stops):
        terminalreporter.write_line(f'{subject:<10} {stage:<9} {pattern:<44} {code!s:>5} '
                                    f'{seconds:8.3f}')
