"""Fixtures for the tests of the Python module `sas_robot_driver_gazebo` and of the script
`scripts/sas_robot_driver_ros_gazebo.py`.

Run through scripts/test-python (which installs the module into .venv and builds
gz-joint-sim and the node). Every test gets its own gz partition and ROS domain, keeps both
middlewares on loopback, and kills every process it started. Waits are on conditions (log
lines, messages, counts), each with a deadline; none is a fixed sleep.
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
UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
UR3E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
UR3E_PREFIX = '/model/ur3e/joint/'
UR3E_STATES = '/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state'
START_S = 30  # a process start plus discovery, on 2 loaded cores

# Loopback only, for this process (the in-process drivers) and every child.
os.environ.update({'GZ_IP': '127.0.0.1', 'IGN_IP': '127.0.0.1',
                   'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'})

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401

# Fast DDS accepts domain ids 0..232; a base apart from the other suites'.
_domains = itertools.count((os.getpid() * 13) % 200 + 23)


def unique_name(prefix: str, test_name: str) -> str:
    return re.sub(r'[^A-Za-z0-9_]', '_', f'{prefix}_{os.getpid()}_{test_name}')


def raise_priority(pid: int) -> bool:
    """Puts a child (alone in its session, so in its own autogroup) ahead of the machine's
    other load: autogroup nice -10, and nice -10 for the threads it starts. Timing tests use
    it so that other work on the machine (compilers of other jobs) is not measured as the
    bridge's lateness; contention inside the process (the GIL) is unaffected. Needs
    CAP_SYS_NICE; returns whether it was applied."""
    try:
        pathlib.Path(f'/proc/{pid}/autogroup').write_text('-10')
        os.setpriority(os.PRIO_PROCESS, pid, -10)
        return True
    except OSError:
        return False


class World:
    """One test's world: a gz partition, a ROS domain and the processes started in them."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        self.tmp = tmp_path
        self.partition = unique_name('py', test_name)
        self.domain = next(_domains) % 230 + 1
        self.processes: list[Process] = []
        self.boosted = False

    def env(self, **extra) -> dict:
        """What a child gets: its own partition and domain, loopback only."""
        env = dict(os.environ)
        env.update({
            'ROS_DOMAIN_ID': str(self.domain),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
            'GZ_PARTITION': self.partition,
            'IGN_PARTITION': self.partition,
            'GZ_IP': '127.0.0.1',
            'IGN_IP': '127.0.0.1',
            'RCUTILS_LOGGING_BUFFERED_STREAM': '0',
            'PYTHONUNBUFFERED': '1',
            'RUST_BACKTRACE': '1',
        })
        env.update(extra)
        return env

    def start(self, args, priority: bool = False, **env) -> Process:
        """With `priority`, the process runs ahead of other load on the machine (see
        `raise_priority`)."""
        process = Process(args, self.env(**env))
        self.processes.append(process)
        if priority:
            self.boosted = raise_priority(process.proc.pid)
        return process

    def python(self, script, *args, priority: bool = False, **env) -> Process:
        return self.start([sys.executable, script, *args], priority=priority, **env)

    def sim(self, *extra, priority: bool = False) -> Process:
        """gz-joint-sim running the UR3e world, once it publishes joint states."""
        process = self.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), UR3E_WORLD, *extra],
                             priority=priority)
        process.wait_output('joint states', START_S)
        return process

    def configuration(self, **options):
        """The UR3e's driver configuration, in this world's partition."""
        import sas_robot_driver_gazebo as sas
        options.setdefault('partition', self.partition)
        return sas.RobotDriverGazeboConfiguration(UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES,
                                                  **options)

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


_figures: list[tuple[str, dict]] = []


def record_figure(title: str, figures: dict):
    """Measured figures, printed at the end of the run (they are the report's numbers)."""
    _figures.append((title, figures))


def pytest_terminal_summary(terminalreporter):
    if _figures:
        terminalreporter.section('figures')
        for title, figures in _figures:
            terminalreporter.write_line(f'{title}:')
            for name, value in figures.items():
                terminalreporter.write_line(f'    {name}: {value}')
