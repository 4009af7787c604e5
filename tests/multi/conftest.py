"""Fixtures for the multi-robot tests: several robots in one sas_robot_driver_ros_gazebo_node,
the composer sas_robot_driver_ros_composer_node, and in-process composites.

Run through scripts/test-multi (which sources scripts/env and builds the node, the composer
and gz-joint-sim). Every test gets its own gz partition and ROS domain, shared by all the
processes it starts; both middlewares stay on loopback; every process is killed at the end.
Waits are on conditions (log lines, discovery counts, messages), each with a deadline.
"""

import itertools
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
LONGBOY_CONFIG = ROOT / 'config' / 'longboy.yaml'
MULTI_ROBOT_CONFIG = ROOT / 'config' / 'multi_robot.yaml'
UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
R820_WORLD = ROOT / 'sdf' / 'r820_world.sdf'
LONGBOY_WORLD = ROOT / 'sdf' / 'longboy_world.sdf'
UR3E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
R820_JOINTS = [f'joint{i}' for i in range(1, 8)]
LONGBOY_STATES = ('/world/longboy_world/model/longboy/model/longboy_position_controller'
                  '/model/longboy/joint_state')
IGN_TOPIC_CLI = '/usr/libexec/ignition/transport11/ign-transport-topic'
START_S = 40      # several process starts plus discovery, on 2 loaded cores
MOTION_S = 30     # joints move at <= 0.25 rad/s in sim time

# Before rclpy initialises: rcl reads the discovery range from the environment.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, parse_model_text, wait_for  # noqa: E402,F401

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy  # noqa: E402

# The sas topics' QoS: KeepLast(1), reliable, volatile.
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)

# Fast DDS accepts domain ids 0..232; a base apart from the other suites'.
_domains = itertools.count((os.getpid() * 17) % 200 + 29)


class World:
    """One test's world: a gz partition and a ROS domain shared by every process the test
    starts, and an rclpy node to talk to them."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        self.tmp = tmp_path
        self.partition = re.sub(r'[^A-Za-z0-9_]', '_', f'multi_{os.getpid()}_{test_name}')
        self.domain = next(_domains) % 230 + 1
        self.processes: list[Process] = []
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = rclpy.create_node('multi_test_client', context=self.context)
        self.executor.add_node(self.node)

    def env(self) -> dict:
        """All a child gets: the test's partition and domain, loopback only, no library or
        ament paths (the binaries' RPATH must be enough), unbuffered ROS logs."""
        return {
            'HOME': str(self.tmp),
            'ROS_DOMAIN_ID': str(self.domain),
            'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
            'GZ_PARTITION': self.partition,
            'IGN_PARTITION': self.partition,
            'GZ_IP': '127.0.0.1',
            'IGN_IP': '127.0.0.1',
            'RCUTILS_LOGGING_BUFFERED_STREAM': '0',
            'RUST_BACKTRACE': '1',
        }

    def start(self, args) -> Process:
        process = Process(args, self.env())
        self.processes.append(process)
        return process

    def sim(self, world: pathlib.Path, *extra) -> Process:
        """gz-joint-sim running `world`, once it publishes joint states."""
        process = self.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), world, *extra])
        process.wait_output('joint states', START_S)
        return process

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

    def params_file(self, text: str) -> pathlib.Path:
        path = self.tmp / f'params_{len(list(self.tmp.glob("params_*")))}.yaml'
        path.write_text(text)
        return path

    def spin(self):
        self.executor.spin_once(timeout_sec=0.02)

    def wait_for(self, condition, timeout: float, what: str):
        wait_for(condition, timeout, what, step=self.spin)

    def spin_for(self, seconds: float):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin()

    def subscribe(self, msg_type, topic: str) -> list:
        """Every message received on `topic`, appended as it arrives."""
        received = []
        self.node.create_subscription(msg_type, topic, received.append, DEPTH_ONE)
        return received

    def publisher(self, msg_type, topic: str):
        """A publisher on `topic`, returned once a subscription matched it."""
        publisher = self.node.create_publisher(msg_type, topic, DEPTH_ONE)
        self.wait_for(lambda: publisher.get_subscription_count() > 0, START_S,
                      f'a subscriber on {topic}')
        return publisher

    def gazebo_positions(self, topic: str, timeout: float = 20) -> dict:
        """The simulator's joint positions by name, read by the real Ignition CLI (needs the
        simulator on the `ignition.msgs.` prefix)."""
        try:
            out = subprocess.run([IGN_TOPIC_CLI, '-e', '-t', topic, '-n', '1'],
                                 env=self.env(), capture_output=True, text=True,
                                 timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f'the Ignition CLI received no Model on {topic} within {timeout} s')
        positions = parse_model_text(out.stdout)
        if not positions:
            pytest.fail(f'no Model from the Ignition CLI on {topic}:\n{out.stdout}\n{out.stderr}')
        return positions

    def close(self):
        for process in self.processes:
            process.kill()
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def world(tmp_path, request):
    w = World(tmp_path, request.node.name)
    try:
        yield w
    finally:
        w.close()
