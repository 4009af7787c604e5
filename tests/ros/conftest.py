"""Fixtures for the rclrs <-> rclpy tests: isolated ROS domains, the rclrs peer, rclpy nodes.

Run through scripts/test-ros (which sources scripts/env and builds the peer). Every test gets
its own ROS_DOMAIN_ID and keeps discovery on localhost; every process a test starts is killed
when it ends. Waits are on conditions (discovery counts, output lines), each with a deadline.
"""

import itertools
import os
import pathlib
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Before rclpy initialises: rcl reads the discovery range from the environment.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'

import rclpy  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402

# The helpers every end-to-end suite shares (tests/support).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from support import Process, wait_for  # noqa: E402,F401

# Fast DDS accepts domain ids 0..232. Runs started at the same time pick different bases.
_domains = itertools.count((os.getpid() * 7) % 200)


def peer_binary() -> pathlib.Path:
    path = pathlib.Path(os.environ.get(
        'ROS_INTEROP_BIN', ROOT / 'target' / 'release' / 'ros-interop'))
    if not path.is_file():
        pytest.fail(f'{path} is missing: build it with scripts/test-ros '
                    '(or cargo build --release -p ros-interop after sourcing scripts/env)')
    return path


class Ros:
    """One test's ROS world: a domain, rclpy nodes in it, rclrs peers started in it."""

    def __init__(self, tmp_path: pathlib.Path):
        self.domain = next(_domains) % 230 + 1
        self.tmp = tmp_path
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=self.domain)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.nodes = []
        self.processes: list[Process] = []

    def peer_env(self) -> dict:
        """All a peer gets: no library or ament paths (its RPATH must be enough)."""
        return {'ROS_DOMAIN_ID': str(self.domain), 'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
                'HOME': str(self.tmp), 'RUST_BACKTRACE': '1'}

    def peer(self, *args) -> Process:
        p = Process([peer_binary(), *args], self.peer_env())
        self.processes.append(p)
        return p

    def node(self, name: str):
        node = rclpy.create_node(name, context=self.context)
        self.executor.add_node(node)
        self.nodes.append(node)
        return node

    def spin(self):
        self.executor.spin_once(timeout_sec=0.02)

    def wait_for(self, condition, timeout: float, what: str):
        wait_for(condition, timeout, what, step=self.spin)

    def close(self):
        for p in self.processes:
            p.kill()
        # Executor first: destroying a node the executor still waits on can crash rclpy.
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def ros(tmp_path):
    world = Ros(tmp_path)
    try:
        yield world
    finally:
        world.close()
