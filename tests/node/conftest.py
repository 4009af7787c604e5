"""Fixtures for the end-to-end tests of sas_robot_driver_ros_gazebo_node.

Run through scripts/test-node (which sources scripts/env and builds the node and gz-joint-sim).
Every test gets its own gz partition and ROS domain, keeps both middlewares on loopback, and
kills every process it started. Waits are on conditions (log lines, discovery counts,
messages), each with a deadline; none is a fixed sleep.
"""

import itertools
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CONFIG = ROOT / 'config' / 'config.yaml'
UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
UR3E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
UR3E_STATES = '/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state'
IGN_TOPIC_CLI = '/usr/libexec/ignition/transport11/ign-transport-topic'

# Before rclpy initialises: rcl reads the discovery range from the environment.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, binary, parse_model_text, wait_for  # noqa: E402,F401

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy, DurabilityPolicy  # noqa: E402

# The bridge's QoS on every topic: KeepLast(1), reliable, volatile.
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)

# Fast DDS accepts domain ids 0..232; runs started at the same time pick different bases
# (and a base apart from the tests/ros suite's).
_domains = itertools.count((os.getpid() * 11) % 200 + 17)


class World:
    """One test's world: a gz partition, a ROS domain, the processes started in them, and an
    rclpy node to talk to the bridge."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str):
        self.tmp = tmp_path
        self.partition = re.sub(r'[^A-Za-z0-9_]', '_', f'node_{os.getpid()}_{test_name}')
        self.domain = next(_domains) % 230 + 1
        self.processes: list[Process] = []
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.node = rclpy.create_node('node_test_client', context=self.context)
        self.executor.add_node(self.node)

    def env(self) -> dict:
        """All a child gets: its own partition and domain, loopback only, no library or
        ament paths (the node's RPATH must be enough), unbuffered ROS logs."""
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

    def sim(self, *extra) -> Process:
        """gz-joint-sim running the UR3e world, once it publishes joint states."""
        process = self.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), UR3E_WORLD, *extra])
        process.wait_output('joint states', 30)
        return process

    def bridge(self, *ros_args) -> Process:
        node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
        return self.start([node, '--ros-args', *ros_args])

    def params_file(self, text: str) -> pathlib.Path:
        path = self.tmp / f'params_{len(list(self.tmp.glob("params_*")))}.yaml'
        path.write_text(text)
        return path

    def spin(self):
        self.executor.spin_once(timeout_sec=0.02)

    def wait_for(self, condition, timeout: float, what: str):
        wait_for(condition, timeout, what, step=self.spin)

    def subscribe(self, msg_type, topic: str) -> list:
        """Every message received on `topic`, appended as it arrives."""
        received = []
        self.node.create_subscription(msg_type, topic, received.append, DEPTH_ONE)
        return received

    def publisher(self, msg_type, topic: str, subscribers_timeout: float = 30):
        """A publisher on `topic`, returned once the bridge's subscription matched it."""
        publisher = self.node.create_publisher(msg_type, topic, DEPTH_ONE)
        self.wait_for(lambda: publisher.get_subscription_count() > 0, subscribers_timeout,
                      f'a subscriber on {topic}')
        return publisher

    def gazebo_positions(self, topic: str = UR3E_STATES, timeout: float = 20) -> dict:
        """The simulator's joint positions by name, read by the real Ignition CLI (needs the
        simulator and the bridge on the `ignition.msgs.` prefix)."""
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
