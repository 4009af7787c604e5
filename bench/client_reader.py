#!/usr/bin/env python3
"""A controller process for the benchmark's client comparison (`node_2ms_clients`): reads every
joint state of a robot and sends it 100 Hz targets, either through rclpy (a subscription
callback per state, as rclpy clients are written) or through the module's RobotDriverClient
(`wait_for_new_state` + `snapshot()`), and records when it saw each state.

    client_reader.py rclpy|module --robot /ur3e_1 --record READS.txt [--wait S]

Each state read appends `<header stamp ns> <CLOCK_MONOTONIC ns when seen>` to READS.txt
(flushed every 0.1 s), which bench-monitor times against Gazebo's message (crates/bench,
`readers`). The targets are q0 + 10° · sin(t / (50π · 10 ms)) on every joint, with t the
monotonic clock, so two such clients started together send the same targets at the same
instant (the original's sinusoid, phase-locked to the clock instead of a step counter). Stops
on SIGINT or SIGTERM.
"""

import argparse
import math
import signal
import sys
import time

PERIOD_S = 0.01
AMPLITUDE_RAD = math.radians(10.0)
# The original's i / (50π) with i counting 10 ms steps.
SINUSOID_S = 50 * math.pi * PERIOD_S
FLUSH_S = 0.1


class Reads:
    """The reads file: lines buffered in memory, written every FLUSH_S."""

    def __init__(self, path: str):
        self.file = open(path, 'w')
        self.lines: list[str] = []
        self.next_flush = time.monotonic() + FLUSH_S

    def seen(self, stamp_ns: int):
        seen_ns = time.monotonic_ns()
        self.lines.append(f'{stamp_ns} {seen_ns}\n')
        if seen_ns * 1e-9 >= self.next_flush:
            self.flush()

    def flush(self):
        self.file.write(''.join(self.lines))
        self.file.flush()
        self.lines.clear()
        self.next_flush = time.monotonic() + FLUSH_S

    def close(self):
        self.flush()
        self.file.close()


class Targets:
    """The sinusoid around q0, due every PERIOD_S on an absolute grid."""

    def __init__(self, q0):
        self.q0 = [float(q) for q in q0]
        self.next_send = time.monotonic()

    def due(self) -> list[float] | None:
        now = time.monotonic()
        if now < self.next_send:
            return None
        self.next_send += PERIOD_S * max(1, math.ceil((now - self.next_send) / PERIOD_S))
        offset = AMPLITUDE_RAD * math.sin(now / SINUSOID_S)
        return [q + offset for q in self.q0]


def run_module(robot: str, reads: Reads, wait_s: float, stop: list) -> int:
    from sas_robot_driver_gazebo import RobotDriverClient

    with RobotDriverClient('bench_client_module', robot, args=[]) as client:
        deadline = time.monotonic() + wait_s
        while not client.is_enabled():
            if stop or time.monotonic() > deadline:
                return 1 if not stop else 0
            time.sleep(0.05)
        targets = Targets(client.get_joint_positions())
        print('reading', flush=True)
        while not stop:
            try:
                client.wait_for_new_state(timeout=1.0)
            except TimeoutError as error:
                print(error, file=sys.stderr, flush=True)
                continue
            state = client.snapshot()
            reads.seen(state['stamp_ns'])
            target = targets.due()
            if target is not None:
                client.send_target_joint_positions(target)
    return 0


def run_rclpy(robot: str, reads: Reads, wait_s: float, stop: list) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    depth_one = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                           durability=DurabilityPolicy.VOLATILE)
    rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node('bench_client_rclpy')
    publisher = node.create_publisher(Float64MultiArray, f'{robot}/set/target_joint_positions',
                                      depth_one)
    limits = [None, None]
    targets: list[Targets] = []

    def on_limits(which: int, message: Float64MultiArray):
        limits[which] = message.data

    def on_state(message: JointState):
        stamp = message.header.stamp
        reads.seen(stamp.sec * 1_000_000_000 + stamp.nanosec)
        if not targets:
            if None in limits:
                return
            targets.append(Targets(message.position))
            print('reading', flush=True)
        target = targets[0].due()
        if target is not None:
            publisher.publish(Float64MultiArray(data=target))

    node.create_subscription(JointState, f'{robot}/get/joint_states', on_state, depth_one)
    # As the seed's client: the limits are read once, then their subscriptions go (the
    # bridge publishes them every period; each would wake this process for every message).
    limit_subscriptions = [
        node.create_subscription(Float64MultiArray, f'{robot}/get/joint_positions_{name}',
                                 lambda m, which=which: on_limits(which, m), depth_one)
        for which, name in enumerate(['min', 'max'])]
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    deadline = time.monotonic() + wait_s
    try:
        while not stop:
            executor.spin_once(timeout_sec=0.1)
            if limit_subscriptions and targets:
                for subscription in limit_subscriptions:
                    node.destroy_subscription(subscription)
                limit_subscriptions = []
            if not targets and time.monotonic() > deadline:
                return 1
        return 0
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('client', choices=['rclpy', 'module'])
    parser.add_argument('--robot', default='/ur3e_1')
    parser.add_argument('--record', required=True)
    parser.add_argument('--wait', type=float, default=60.0)
    args = parser.parse_args()
    stop: list = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.append(True))
    reads = Reads(args.record)
    try:
        run = run_module if args.client == 'module' else run_rclpy
        return run(args.robot.rstrip('/'), reads, args.wait, stop)
    finally:
        reads.close()


if __name__ == '__main__':
    sys.exit(main())
