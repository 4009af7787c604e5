"""Fixtures for the end-to-end tests of the simulator server and the object server.

Run through scripts/test-servers (which sources scripts/env and builds the nodes and
gz-joint-sim). Every test gets its own gz partition and ROS domain, keeps both middlewares on
loopback, and kills every process it started. Waits are on conditions, each with a deadline.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config' / 'config.yaml'

os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401
from support.ros import DEPTH_ONE, RosWorld  # noqa: E402,F401
from support.world import UR3E_WORLD, domain_ids, world_fixture  # noqa: E402,F401

_new_domain = domain_ids(17)

WORLD_CLOCK = '/world/ur3e_world/clock'


class World(RosWorld):
    """One test's world, with the two servers' binaries and a way to read Gazebo's clock."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        super().__init__(tmp_path, test_name, prefix='srv', new_domain=_new_domain,
                         start_s=30, inherit_environment=False,
                         client_name='servers_test_client')

    def simulator_server(self, *parameters: str) -> Process:
        """The simulator server with the shipped config's block, or, when `parameters`
        (`name:=value`) are given, with those on top of its service_name (a params file's
        node block would win over `-p`)."""
        node = binary('SIMULATOR_SERVER_BIN', 'sas_simulator_server_gazebo_node')
        if not parameters:
            return self.start([node, '--ros-args', '--params-file', CONFIG])
        parameters = ('service_name:=/world/ur3e_world/control', *parameters)
        return self.start([node, '--ros-args', *(a for p in parameters for a in ('-p', p))])

    def object_server(self, *parameters: str) -> Process:
        """The object server with the shipped config's block, or with `parameters` on top of
        the config's names."""
        node = binary('OBJECT_SERVER_BIN', 'sas_object_server_gazebo_node')
        if not parameters:
            return self.start([node, '--ros-args', '--params-file', CONFIG])
        parameters = ('set_pose_service_name:=/world/ur3e_world/set_pose',
                      'get_pose_topic_name:=/world/ur3e_world/pose/info',
                      'entity_names:=[frame_x, frame_xd]', *parameters)
        return self.start([node, '--ros-args', *(a for p in parameters for a in ('-p', p))])

    def sim_time(self, timeout: float = 20) -> float:
        """Gazebo's sim time (s), from one Clock message read on the world clock topic by our
        CLI (the simulator's own stamp)."""
        cli = binary('GZ_TOPIC_BIN', 'gz-topic')
        try:
            out = subprocess.run([cli, '-e', '-t', WORLD_CLOCK, '-n', '1', '-d', str(timeout)],
                                 env=self.env(), capture_output=True, text=True,
                                 timeout=timeout + 10)
        except subprocess.TimeoutExpired:
            pytest.fail(f'no Clock on {WORLD_CLOCK} within {timeout} s')
        match = re.search(r'sim \{([^}]*)\}', out.stdout)
        if out.returncode != 0 or match is None:
            pytest.fail(f'no Clock on {WORLD_CLOCK}:\n{out.stdout}\n{out.stderr}')
        fields = dict(re.findall(r'(sec|nsec): (\d+)', match.group(1)))
        return int(fields.get('sec', 0)) + int(fields.get('nsec', 0)) * 1e-9


world = world_fixture(World)
