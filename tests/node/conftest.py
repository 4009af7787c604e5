"""Fixtures for the end-to-end tests of sas_robot_driver_ros_gazebo_node.

Run through scripts/test-node (which sources scripts/env and builds the node and gz-joint-sim).
Every test gets its own gz partition and ROS domain, keeps both middlewares on loopback, and
kills every process it started. Waits are on conditions (log lines, discovery counts,
messages), each with a deadline; none is a fixed sleep.
"""

import os
import pathlib
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config' / 'config.yaml'

# Before rclpy initialises: rcl reads the discovery range from the environment.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, parse_model_text, wait_for  # noqa: E402,F401
from support.ros import DEPTH_ONE, IGN_TOPIC_CLI, RosWorld  # noqa: E402,F401
from support.world import (  # noqa: E402,F401
    UR3E_JOINTS, UR3E_STATES, UR3E_WORLD, domain_ids, world_fixture)

_new_domain = domain_ids(11)


class World(RosWorld):
    """One test's world: a gz partition, a ROS domain, the processes started in them, and an
    rclpy node to talk to the bridge. Children get no library or ament paths: the node's
    RPATH must be enough."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        super().__init__(tmp_path, test_name, prefix='node', new_domain=_new_domain,
                         start_s=30, inherit_environment=False,
                         client_name='node_test_client')

    def bridge(self, *ros_args) -> Process:
        node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
        return self.start([node, '--ros-args', *ros_args])

    def ur3e_bridge_with(self, *parameters, config: str = 'config.yaml', **block) -> Process:
        """The node with block ur3e_1 of config/`config`, then `block` and `parameters`
        ("name:=value") over it, in a params file of its own (a `-p` override loses to the
        block's own value)."""
        values = yaml.safe_load((ROOT / 'config' / config).read_text())['ur3e_1']
        values = values['ros__parameters'] | block
        for parameter in parameters:
            name, value = parameter.split(':=', 1)
            values[name] = yaml.safe_load(value)
        params = self.params_file(yaml.safe_dump({'ur3e_1': {'ros__parameters': values}}))
        return self.bridge('-r', '__node:=ur3e_1', '--params-file', params)


world = world_fixture(World)
