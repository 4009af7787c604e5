"""Fixtures for the stop tests: the node, the multi-robot node, the composer and the legacy
Python script, each stopped by signals at several stages (tests/signals/test_signals.py),
and the script's node compared with the native node as ROS sees it (test_script_node.py).

Run through scripts/test-signals (which builds the binaries and installs the module). Every
test gets its own gz partition, and every process its own ROS domain unless it must share
one; both middlewares stay on loopback; every process is killed at the end. Waits are on
conditions (log lines, discovery), each with a deadline.
"""

import itertools
import os
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
CONFIG = ROOT / 'config' / 'config.yaml'
SCRIPT = ROOT / 'scripts' / 'sas_robot_driver_ros_gazebo.py'
FORWARD_SIGINT = HERE / 'forward_sigint.py'
UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
UR3E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
UR3E_PREFIX = '/model/ur3e/joint/'
UR3E_STATES = '/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state'
START_S = 60  # several process starts at once plus discovery, on 2 loaded cores

# Loopback only, for this process (rclpy) and every child.
os.environ.update({'GZ_IP': '127.0.0.1', 'IGN_IP': '127.0.0.1',
                   'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'})

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401

# Fast DDS accepts domain ids 0..232; a base apart from the other suites'.
_domains = itertools.count((os.getpid() * 19) % 200 + 31)


def new_domain() -> int:
    return next(_domains) % 230 + 1


class World:
    """One test's world: a gz partition shared by the processes it starts, each in the ROS
    domain it is given."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        self.tmp = tmp_path
        self.partition = re.sub(r'[^A-Za-z0-9_]', '_', f'sig_{os.getpid()}_{test_name}')[:80]
        self.domain = new_domain()
        self.processes: list[Process] = []

    def env(self, domain: int) -> dict:
        env = dict(os.environ)
        env.update({
            'ROS_DOMAIN_ID': str(domain),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
            'GZ_PARTITION': self.partition,
            'IGN_PARTITION': self.partition,
            'GZ_IP': '127.0.0.1',
            'IGN_IP': '127.0.0.1',
            'RCUTILS_LOGGING_BUFFERED_STREAM': '0',
            'PYTHONUNBUFFERED': '1',
            'RUST_BACKTRACE': '1',
        })
        return env

    def start(self, args, domain: int | None = None) -> Process:
        process = Process(args, self.env(self.domain if domain is None else domain))
        self.processes.append(process)
        return process

    def sim(self) -> Process:
        """gz-joint-sim running the UR3e world, once it publishes joint states."""
        process = self.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), UR3E_WORLD])
        process.wait_output('joint states', START_S)
        return process

    def params_file(self, text: str) -> pathlib.Path:
        path = self.tmp / f'params_{len(list(self.tmp.glob("params_*")))}.yaml'
        path.write_text(text)
        return path

    def close(self):
        for process in self.processes:
            process.kill()


@pytest.fixture
def world(tmp_path, request):
    w = World(tmp_path, request.node.name)
    try:
        yield w
    finally:
        w.close()


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
