#!/usr/bin/env python3
"""The rclpy version of joint_interface_example.py, kept as the benchmark's seed client
(`node_2ms_seed`): the same arguments, motion and output, each message it takes woken into
Python by rclpy.

A robot-driver client like SmartArmStack's joint_interface_example.py: waits for the robot's
joint states and limits, reads the initial positions q0, then sends
q0 + deg2rad(10 * sin(i / (50 * pi))) on every joint at 100 Hz (a ±10° sinusoid, period ~9.9 s)
on <robot_topic_name>/set/target_joint_positions.

Without --status it takes what arrived once per 10 ms step, as the original's client (its
rclcpp_spin_some); with --status it takes every message as it comes and prints a live line
once a second:
  joint_states rate, stamp age (receive time - header.stamp, the bridge-to-client delay),
  tracking lag (the shift that best aligns the reported positions with the targets sent),
  tracking error, and the CPU use of the process given by --cpu-pid (from /proc).

ROS parameter (as the original): robot_topic_name, default /ur3e_1.
Usage: joint_interface_example_rclpy.py [--seconds N] [--status] [--cpu-pid PID] [--ros-args ...]
Stops on Ctrl-C, SIGTERM or after --seconds; prints a summary; exit 1 if the robot never
appeared. Runs next to joint_interface_example.py (as in scripts/), whose motion, tracking and
output it shares.
"""

import math
import signal
import sys
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

# The motion, its tracking and the output, as the module's version (next to this file).
from joint_interface_example import (PERIOD_S, CpuMeter, Tracking, argument_parser, status_line,
                                     summary)

DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)


class JointInterfaceExample(Node, Tracking):
    def __init__(self):
        Node.__init__(self, 'joint_interface_example')
        Tracking.__init__(self)
        prefix = self.declare_parameter('robot_topic_name', '/ur3e_1').value.rstrip('/')
        self.prefix = prefix
        self.received = 0
        self.limits = [None, None]
        self.create_subscription(JointState, f'{prefix}/get/joint_states', self._on_state,
                                 DEPTH_ONE)
        self.limit_subscriptions = [
            self.create_subscription(Float64MultiArray, f'{prefix}/get/joint_positions_{name}',
                                     lambda m, which=which: self._on_limit(which, m), DEPTH_ONE)
            for which, name in enumerate(['min', 'max'])]
        self.publisher = self.create_publisher(
            Float64MultiArray, f'{prefix}/set/target_joint_positions', DEPTH_ONE)

    def _on_state(self, msg: JointState):
        now = time.monotonic()
        self.received += 1
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self.add_state(now, np.array(msg.position), time.time() - stamp)

    def _on_limit(self, which: int, msg: Float64MultiArray):
        self.limits[which] = list(msg.data)

    def enabled(self) -> bool:
        """The original client's is_enabled(PositionControl): positions and both limits."""
        return bool(self.states) and all(limit is not None for limit in self.limits)

    def send_next(self):
        target = self.next_target()
        self.publisher.publish(Float64MultiArray(data=target.tolist()))
        self.add_sent(target)


def main() -> int:
    args = argument_parser(__doc__).parse_args(remove_ros_args(sys.argv)[1:])

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.append(True))
    node = JointInterfaceExample()
    try:
        deadline = time.monotonic() + args.wait
        print(f'waiting for {node.prefix}/get/joint_states and the joint limits ...',
              flush=True)
        while not node.enabled() and not stop:
            if time.monotonic() > deadline:
                print(f'no joint states and limits on {node.prefix} within {args.wait} s',
                      file=sys.stderr)
                return 1
            rclpy.spin_once(node, timeout_sec=0.1)
        if stop:
            return 0
        node.q0 = node.states[-1][1].copy()
        # The limits are fixed and the bridge publishes them every period (as the original):
        # read once, their subscriptions would only wake this process 2000 times a second.
        for subscription in node.limit_subscriptions:
            node.destroy_subscription(subscription)
        print(f'q0 = {np.round(node.q0, 4).tolist()}; sending ±10° sinusoids at 100 Hz on '
              f'{node.prefix}/set/target_joint_positions', flush=True)

        cpu = CpuMeter(args.cpu_pid) if args.cpu_pid else None
        tty = sys.stdout.isatty()
        start = next_send = next_status = time.monotonic()
        received_at_status = node.received
        while not stop:
            now = time.monotonic()
            if args.seconds and now - start >= args.seconds:
                break
            if now >= next_send:
                node.send_next()
                # Absolute deadlines: a late step does not shift the ones after it.
                next_send += PERIOD_S * max(1, math.ceil((now - next_send) / PERIOD_S))
            if args.status and now >= next_status + 1.0:
                rate = (node.received - received_at_status) / (now - next_status)
                received_at_status, next_status = node.received, now
                line = status_line(node, rate, cpu.percent() if cpu else None)
                print(f'\r{line}   ' if tty else line, end='' if tty else '\n', flush=True)
            if args.status:
                # Every message as it comes, for the live rate and ages.
                rclpy.spin_once(node, timeout_sec=max(0.0, next_send - time.monotonic()))
            else:
                # As the original's client (rclcpp_spin_some each 10 ms step): sleep to the
                # next step, then take what arrived; depth 1, so at most the latest state.
                time.sleep(max(0.0, next_send - time.monotonic()))
                rclpy.spin_once(node, timeout_sec=0.0)
        elapsed = time.monotonic() - start
        if args.status and tty:
            print()
        print(summary(node, elapsed, node.received), flush=True)
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
