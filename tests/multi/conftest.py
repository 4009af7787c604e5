"""Fixtures for the multi-robot tests: several robots in one sas_robot_driver_ros_gazebo_node,
the composer sas_robot_driver_ros_composer_node, and in-process composites.

Run through scripts/test-multi (which sources scripts/env and builds the node, the composer
and gz-joint-sim). Every test gets its own gz partition and ROS domain, shared by all the
processes it starts; both middlewares stay on loopback; every process is killed at the end.
Waits are on conditions (log lines, discovery counts, messages), each with a deadline.
"""

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LONGBOY_CONFIG = ROOT / 'config' / 'longboy.yaml'
MULTI_ROBOT_CONFIG = ROOT / 'config' / 'multi_robot.yaml'
R820_WORLD = ROOT / 'sdf' / 'r820_world.sdf'
LONGBOY_WORLD = ROOT / 'sdf' / 'longboy_world.sdf'
R820_JOINTS = [f'joint{i}' for i in range(1, 8)]
LONGBOY_STATES = ('/world/longboy_world/model/longboy/model/longboy_position_controller'
                  '/model/longboy/joint_state')
START_S = 40      # several process starts plus discovery, on 2 loaded cores
MOTION_S = 30     # joints move at <= 0.25 rad/s in sim time

# Before rclpy initialises: rcl reads the discovery range from the environment.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, wait_for  # noqa: E402,F401
from support.ros import RosWorld  # noqa: E402
from support.world import UR3E_JOINTS, UR3E_WORLD, domain_ids, world_fixture  # noqa: E402,F401

_new_domain = domain_ids(17)


class World(RosWorld):
    """One test's world: a gz partition and a ROS domain shared by every process the test
    starts, and an rclpy node to talk to them. Children get no library or ament paths: the
    binaries' RPATH must be enough."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        super().__init__(tmp_path, test_name, prefix='multi', new_domain=_new_domain,
                         start_s=START_S, inherit_environment=False,
                         client_name='multi_test_client')

    def sim(self, world_file: pathlib.Path, *extra) -> Process:
        """gz-joint-sim running `world_file`, once it publishes joint states."""
        return super().sim(*extra, world_file=world_file)

    def node_process(self, name: str, params_file, *extra) -> Process:
        """sas_robot_driver_ros_gazebo_node named `name` (one robot, or several)."""
        node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
        return self.start([node, '--ros-args', '-r', f'__node:={name}',
                           '--params-file', params_file, *extra])

    def composer(self, name: str, params_file, *extra) -> Process:
        """sas_robot_driver_ros_composer_node named `name`."""
        node = binary('COMPOSER_NODE_BIN', 'sas_robot_driver_ros_composer_node')
        return self.start([node, '--ros-args', '-r', f'__node:={name}',
                           '--params-file', params_file, *extra])


world = world_fixture(World)
