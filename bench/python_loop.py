#!/usr/bin/env python3
"""The benchmark's Python-side loop baseline: the bridge as a user would write it in Python.

An rclpy node whose timer, every thread_sampling_time_sec, hands the latest target received on
<robot_name>/set/target_joint_positions to the module's RobotDriverGazebo, reads its getters and
publishes <robot_name>/get/joint_states (stamped with the node clock) and the joint limits —
the RobotDriverROS loop, but each period a Python callback woken by rclpy. It contrasts the
cost of Python wake-ups with the module's own RobotDriverROS loop, which runs without the GIL.

Parameters as the node's (--ros-args -r __node:=ur3e_1 --params-file config/config.yaml):
joint_names, joint_positions_topic_prefix, joint_states_topic, robot_name,
thread_sampling_time_sec. Stops on SIGINT/SIGTERM.
"""

import signal
import sys

import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from sas_robot_driver_gazebo import RobotDriverGazebo, RobotDriverGazeboConfiguration

# The bridge's QoS on every topic: KeepLast(1), reliable, volatile.
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)


class PythonLoop(Node):
    def __init__(self):
        super().__init__('sas_robot_driver_python_loop')
        joint_names = self.declare_parameter('joint_names', ['']).value
        prefix = self.declare_parameter('joint_positions_topic_prefix', '').value
        states_topic = self.declare_parameter('joint_states_topic', '').value
        robot_name = self.declare_parameter('robot_name', '').value
        period = self.declare_parameter('thread_sampling_time_sec', 0.002).value
        if not joint_names or not all(joint_names) or not prefix or not states_topic \
                or not robot_name:
            raise ValueError('joint_names, joint_positions_topic_prefix, joint_states_topic '
                             'and robot_name must all be set (--params-file)')
        self.driver = RobotDriverGazebo(RobotDriverGazeboConfiguration(
            joint_names, prefix, states_topic))
        self.joint_names = list(joint_names)
        self.target = None
        self.states = self.create_publisher(JointState, f'{robot_name}/get/joint_states',
                                            DEPTH_ONE)
        self.lower = self.create_publisher(Float64MultiArray,
                                           f'{robot_name}/get/joint_positions_min', DEPTH_ONE)
        self.upper = self.create_publisher(Float64MultiArray,
                                           f'{robot_name}/get/joint_positions_max', DEPTH_ONE)
        self.create_subscription(Float64MultiArray, f'{robot_name}/set/target_joint_positions',
                                 self.on_target, DEPTH_ONE)
        self.period = period

    def start(self):
        """Connects, waits for Gazebo, then starts the timer."""
        self.driver.connect()
        self.get_logger().info('waiting for Gazebo ...')
        self.driver.initialize()
        lower, upper = self.driver.get_joint_limits()
        self.limits = (Float64MultiArray(data=lower.tolist()),
                       Float64MultiArray(data=upper.tolist()))
        self.get_logger().info('initialized; loop every %.4f s' % self.period)
        self.create_timer(self.period, self.on_period)

    def on_target(self, message: Float64MultiArray):
        self.target = list(message.data)

    def on_period(self):
        if self.target is not None:
            target, self.target = self.target, None
            try:
                self.driver.set_target_joint_positions(target)
            except (ValueError, RuntimeError) as refused:
                self.get_logger().error(f'target refused: {refused}')
        message = JointState()
        message.header.stamp = self.get_clock().now().to_msg()
        message.name = self.joint_names
        message.position = self.driver.get_joint_positions().tolist()
        message.velocity = self.driver.get_joint_velocities().tolist()
        message.effort = self.driver.get_joint_torques().tolist()
        self.states.publish(message)
        self.lower.publish(self.limits[0])
        self.upper.publish(self.limits[1])


def main() -> int:
    rclpy.init(args=sys.argv, signal_handler_options=SignalHandlerOptions.NO)
    node = PythonLoop()
    stop = node.create_guard_condition(lambda: None)
    stopping = []

    def request_stop(*_):
        stopping.append(True)
        stop.trigger()

    try:
        # Ctrl-C while waiting for Gazebo raises KeyboardInterrupt from initialize().
        node.start()
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, request_stop)
        while not stopping:
            rclpy.spin_once(node, timeout_sec=0.1)
        return 0
    finally:
        node.driver.disconnect()
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
