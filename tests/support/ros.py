"""The ROS side of the tests: an rclpy node of its own (own context, own executor) in one ROS
domain, and a `World` with one. Import it only where rclpy is available (scripts/env)."""

import datetime
import re
import subprocess
import time

import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray

from support import IGN_TOPIC_CLI, parse_model_text, wait_for
from support.world import UR3E_STATES, World

# The bridge's QoS on every topic: KeepLast(1), reliable, volatile.
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)


# The real Ignition transport service CLI (Fortress, C++), on `ignition.msgs.` types only.
IGN_SERVICE_CLI = '/usr/libexec/ignition/transport11/ign-transport-service'


def seconds(stamp) -> float:
    """A ROS `builtin_interfaces/Time` in seconds."""
    return stamp.sec + stamp.nanosec * 1e-9


def sim_reset_time(sim) -> float:
    """When gz-joint-sim applied a world reset, by its own log stamp (RFC 3339, UTC; the system
    clock, as `time.time()`), waiting up to 10 s for the line."""
    sim.wait_output('world reset: sim time back to 0', 10)
    line = next(line for line in sim.lines if 'world reset: sim time back to 0' in line)
    stamp = re.sub(r'\x1b\[[0-9;]*m', '', line).split()[0]
    return datetime.datetime.fromisoformat(stamp.replace('Z', '+00:00')).timestamp()


class Reset:
    """Where the old world ends in a list of states (tuples with the stamp second): the last
    state before the reset was requested is `states[index - 1]`, stamped `before`."""

    def __init__(self, states):
        self.index, self.before = len(states), states[-1][1]

    def new_world(self, states) -> list:
        """The states from the first one after `index` stamped before `before` (the new
        world's first) on."""
        first = next((i for i in range(self.index, len(states))
                      if states[i][1] < self.before), None)
        return [] if first is None else states[first:]


class RosClient:
    """An rclpy node named `name` in ROS domain `domain`, spun by the waits."""

    def __init__(self, domain: int, name: str):
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin(self):
        self.executor.spin_once(timeout_sec=0.02)

    def wait_for(self, condition, timeout: float, what: str):
        wait_for(condition, timeout, what, step=self.spin)

    def spin_for(self, seconds: float):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin()

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)


class RosWorld(World, RosClient):
    """A `World` with an rclpy node named `client_name` in the test's domain, to talk to what
    the test started."""

    def __init__(self, tmp_path, test_name: str, *, client_name: str, **world_options):
        World.__init__(self, tmp_path, test_name, **world_options)
        RosClient.__init__(self, self.domain, client_name)

    def subscribe(self, msg_type, topic: str) -> list:
        """Every message received on `topic`, appended as it arrives."""
        received = []
        self.node.create_subscription(msg_type, topic, received.append, DEPTH_ONE)
        return received

    def publisher(self, msg_type, topic: str, subscribers_timeout: float | None = None):
        """A publisher on `topic`, returned once a subscription matched it."""
        publisher = self.node.create_publisher(msg_type, topic, DEPTH_ONE)
        self.wait_for(lambda: publisher.get_subscription_count() > 0,
                      subscribers_timeout or self.start_s, f'a subscriber on {topic}')
        return publisher

    def gazebo_positions(self, topic: str = UR3E_STATES, timeout: float = 20) -> dict:
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

    def reset_world(self, service_cli, world_name: str, msgs_prefix: str):
        """Resets the world through its control service with `service_cli` (the Ignition CLI,
        or our gz-service) on `msgs_prefix` types, spinning meanwhile so that nothing the
        nodes publish is lost; fails unless Gazebo answered `data: true`."""
        cli = subprocess.Popen(
            [service_cli, '-s', f'/world/{world_name}/control',
             '--reqtype', f'{msgs_prefix}WorldControl', '--reptype', f'{msgs_prefix}Boolean',
             '--timeout', '5000', '--req', 'reset { all: true }'],
            env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.wait_for(lambda: cli.poll() is not None, 30, f'{service_cli} to call the service')
        out, _ = cli.communicate()
        assert 'data: true' in out, f'the world control service answered:\n{out}'

    def close(self):
        World.close(self)
        RosClient.close(self)


def check_a_refused_elbow_target_is_not_forwarded(world: RosWorld, targets, elbow, node,
                                                  refusal: str):
    """A UR3e's target with the elbow inside its limits (±π), then one outside them (4 rad),
    on the publisher `targets`: the node logs `refusal` (`node.wait_output`), and Gazebo's
    elbow command topic (`elbow()`: the values the Ignition CLI echoed) sees the valid target
    only, also at the keepalive after the refusal (the node sends its target again after a
    second)."""
    def target(elbow_position):
        return Float64MultiArray(data=[0.1, 0.1, elbow_position, 0.1, 0.1, 0.1])

    targets.publish(target(0.5))
    world.wait_for(lambda: 0.5 in elbow(), 15, 'the valid target at Gazebo')
    targets.publish(target(4.0))
    node.wait_output(refusal, 15)
    commanded = len(elbow())
    world.wait_for(lambda: len(elbow()) > commanded, 10, 'the keepalive after the refusal')
    assert set(elbow()) == {0.5}, f'Gazebo got {elbow()}: the refused target was forwarded'
