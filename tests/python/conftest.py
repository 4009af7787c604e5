"""Fixtures for the tests of the Python module `sas_robot_driver_gazebo` and of the script
`scripts/sas_robot_driver_ros_gazebo.py`.

Run through scripts/test-python (which installs the module into .venv and builds
gz-joint-sim and the node). Every test gets its own gz partition and ROS domain, keeps both
middlewares on loopback, and kills every process it started. Waits are on conditions (log
lines, messages, counts), each with a deadline; none is a fixed sleep.
"""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
CONFIG = ROOT / 'config' / 'config.yaml'
SCRIPT = ROOT / 'scripts' / 'sas_robot_driver_ros_gazebo.py'
START_S = 30  # a process start plus discovery, on 2 loaded cores

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401
from support.world import (  # noqa: E402,F401
    LOOPBACK, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, UR3E_WORLD, World as BaseWorld,
    domain_ids, world_fixture)

# Loopback only, for this process (the in-process drivers) as for every child.
os.environ.update(LOOPBACK)

_new_domain = domain_ids(13)


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


class World(BaseWorld):
    """One test's world: a gz partition, a ROS domain and the processes started in them;
    children get this environment (the venv's Python and libraries) under the test's."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        super().__init__(tmp_path, test_name, prefix='py', new_domain=_new_domain,
                         start_s=START_S, inherit_environment=True)
        self.boosted = False

    def start(self, args, priority: bool = False, **env) -> Process:
        """With `priority`, the process runs ahead of other load on the machine (see
        `raise_priority`)."""
        process = super().start(args, **env)
        if priority:
            self.boosted = raise_priority(process.proc.pid)
        return process

    def python(self, script, *args, priority: bool = False, **env) -> Process:
        return self.start([sys.executable, script, *args], priority=priority, **env)

    def configuration(self, **options):
        """The UR3e's driver configuration, in this world's partition."""
        import sas_robot_driver_gazebo as sas
        options.setdefault('partition', self.partition)
        return sas.RobotDriverGazeboConfiguration(UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES,
                                                  **options)


world = world_fixture(World)


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
