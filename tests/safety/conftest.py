"""Fixtures for the safety tests: the watchdog (set/watchdog_trigger), set/shutdown and
/diagnostics of the node and of the Python script path.

Run through scripts/test-safety (which sources scripts/env, builds the node and gz-joint-sim
and installs the Python module). The world, processes and waits are tests/node's
(`tests/node/conftest.py`, imported, not copied): every test has its own gz partition and ROS
domain on loopback, and every process it starts is killed at the end.
"""

import importlib.util
import os
import pathlib
import sys
import time

import pytest

_NODE_CONFTEST = pathlib.Path(__file__).resolve().parents[1] / 'node' / 'conftest.py'
_spec = importlib.util.spec_from_file_location('node_conftest', _NODE_CONFTEST)
node_conftest = importlib.util.module_from_spec(_spec)
sys.modules['node_conftest'] = node_conftest
_spec.loader.exec_module(node_conftest)

from node_conftest import (  # noqa: E402,F401 - `world` is the fixture tests use
    CONFIG, Process, binary, world)

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from sas_msgs.msg import Bool, WatchdogTrigger  # noqa: E402

ROOT = node_conftest.ROOT
SCRIPT = ROOT / 'scripts' / 'sas_robot_driver_ros_gazebo.py'
START_S = 30      # process start + discovery, on 2 loaded cores


def ur3e_bridge(world, *extra):
    """The node as the README runs it: config/config.yaml, block ur3e_1."""
    return world.bridge('-r', '__node:=ur3e_1', '--params-file', CONFIG, *extra)


def python_bridge(world, *ros_args):
    """The script path (`implementation:=python`), with this test's partition and domain and
    the rest of the environment scripts/env set up (the venv's Python and libraries)."""
    env = dict(os.environ)
    env.update(world.env())
    env['PYTHONUNBUFFERED'] = '1'
    process = Process([sys.executable, SCRIPT, '--ros-args', *ros_args], env)
    world.processes.append(process)
    return process


class Controller:
    """The controller side of a SmartArmStack robot: a watchdog trigger publisher (stamped
    with the system clock, as `RobotDriverClient::send_watchdog_trigger`) and set/shutdown."""

    def __init__(self, world, robot: str):
        self.world = world
        self.triggers = world.publisher(WatchdogTrigger, f'/{robot}/set/watchdog_trigger')
        self.shutdown = world.publisher(Bool, f'/{robot}/set/shutdown')
        self.last_sent = None

    def trigger(self, period: float, delay: float, status: bool = True, age: float = 0.0):
        message = WatchdogTrigger(status=status, period_in_seconds=float(period),
                                  maximum_acceptable_delay_in_seconds=float(delay))
        stamp_ns = time.time_ns() - int(age * 1e9)
        message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 10**9)
        self.last_sent = time.time()  # the clock of the node's log stamps
        self.triggers.publish(message)

    def stream(self, period: float, delay: float, seconds: float, *, alive,
               interval: float = 0.05) -> bool:
        """Triggers every `interval` for `seconds`, spinning the test's node meanwhile.
        Whether `alive()` (the bridge still serving: running, no fault) held throughout and
        at the end; stops early once it is false."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if not alive():
                return False
            self.trigger(period, delay)
            step_end = time.monotonic() + interval
            while time.monotonic() < step_end:
                self.world.executor.spin_once(timeout_sec=max(0.0, step_end - time.monotonic()))
        return alive()

    def send_shutdown(self, data: bool = True):
        self.shutdown.publish(Bool(data=data))


def statuses(world, name: str):
    """The statuses named `name` received on /diagnostics, appended as they arrive."""
    received = []

    def collect(array):
        received.extend(s for s in array.status if s.name == name)

    world.node.create_subscription(DiagnosticArray, '/diagnostics', collect, 10)
    return received


def values(status) -> dict:
    return {kv.key: kv.value for kv in status.values}
