#!/usr/bin/env python3
"""The rclpy version of joint_interface_example.py, kept as the benchmark's seed client
(`node_2ms_seed`): the same arguments, motion and output, each message it takes woken into
Python by rclpy.

A robot-driver client like SmartArmStack's joint_interface_example.py: waits for the robot's
joint states and limits, reads the initial positions q0, then sends
q0 + deg2rad(10 * sin(i / (50 * pi))) on every joint at 100 Hz (a ±10° sinusoid, period ~9.9 s)
on <robot_topic_name>/set/target_joint_positions.

Without --status it takes what arrived once per 10 ms step, as the original's client (its
rclcpp_spin_some); with --status it takes every message as it comes and prints
joint_interface_example.py's live line once a second.

Usage: joint_interface_example_rclpy.py [--seconds N] [--status] [--cpu-pid PID] [--ros-args ...]
Its arguments, ROS parameter (robot_topic_name), stops, summary and exit status are those of
joint_interface_example.py, next to it (as in scripts/), whose motion, tracking and run it
shares.
"""

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

# The motion, its tracking, the run and the output, as the module's version (next to this
# file).
from joint_interface_example import ENABLED_POLL_S, Tracking, argument_parser, run

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

    def wait_for_enabled(self):
        rclpy.spin_once(self, timeout_sec=ENABLED_POLL_S)

    def start(self):
        self.q0 = self.states[-1][1].copy()
        # The limits are fixed and the bridge publishes them every period (as the original):
        # read once, their subscriptions would only wake this process 2000 times a second.
        for subscription in self.limit_subscriptions:
            self.destroy_subscription(subscription)

    def send_next(self):
        target = self.next_target()
        self.publisher.publish(Float64MultiArray(data=target.tolist()))
        self.add_sent(target)

    def receive(self, until: float, every_message: bool):
        if every_message:
            # Every message as it comes, for the live rate and ages.
            rclpy.spin_once(self, timeout_sec=max(0.0, until - time.monotonic()))
        else:
            # As the original's client (rclcpp_spin_some each 10 ms step): sleep to the next
            # step, then take what arrived; depth 1, so at most the latest state.
            time.sleep(max(0.0, until - time.monotonic()))
            rclpy.spin_once(self, timeout_sec=0.0)


def main() -> int:
    args = argument_parser(__doc__).parse_args(remove_ros_args(sys.argv)[1:])
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = JointInterfaceExample()
    try:
        return run(node, args)
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
