"""Fixtures for the tests of the colcon-built workspace (scripts/test-colcon builds it and runs
these with only its install/setup.bash sourced).

The package is found as `ros2` finds it, through ament_index_python; the processes are the
installed ones. The process guards, discovery waits and per-test isolation (gz partition, ROS
domain, loopback) are tests/node's, loaded from its conftest; children get the installed
environment on top of that isolation.
"""

import importlib.util
import os
import pathlib

import pytest
from ament_index_python.packages import get_package_prefix, get_package_share_directory

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = 'sas_robot_driver_gazebo'
WORKSPACE = pathlib.Path(os.environ.get('SAS_COLCON_WS', '/nonexistent'))

_spec = importlib.util.spec_from_file_location('node_fixtures', ROOT / 'tests' / 'node' / 'conftest.py')
node_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(node_fixtures)
UR3E_JOINTS = node_fixtures.UR3E_JOINTS

if not (WORKSPACE / 'install' / 'setup.bash').is_file():
    raise pytest.UsageError('run through scripts/test-colcon (SAS_COLCON_WS names the workspace '
                            'whose install/setup.bash is sourced)')

PREFIX = pathlib.Path(get_package_prefix(PACKAGE))
SHARE = pathlib.Path(get_package_share_directory(PACKAGE))
LIB = PREFIX / 'lib' / PACKAGE


def executable(name: str) -> pathlib.Path:
    """What `ros2 run sas_robot_driver_gazebo <name>` executes."""
    path = LIB / name
    if not os.access(path, os.X_OK):
        pytest.fail(f'{path} is not an installed executable')
    return path


class InstalledWorld(node_fixtures.World):
    """tests/node's World running the installed executables with the installed files."""

    def env(self, domain: int | None = None, **extra) -> dict:
        return {**os.environ, **super().env(domain, **extra)}

    def sim(self, world: str = 'ur3e_world.sdf'):
        """The installed gz-joint-sim running an installed world, once it publishes."""
        process = self.start([executable('gz-joint-sim'), SHARE / 'sdf' / world])
        process.wait_output('joint states', self.start_s)
        return process


world = node_fixtures.world_fixture(InstalledWorld)
