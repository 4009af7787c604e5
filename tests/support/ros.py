"""An rclpy node of its own (own context, own executor) in one ROS domain: the piece the test
clients on the ROS side share. Import it only where rclpy is available (scripts/env)."""

import rclpy
from rclpy.executors import SingleThreadedExecutor

from support import wait_for


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

    def close(self):
        self.executor.remove_node(self.node)
        self.node.destroy_node()
        self.executor.shutdown()
        rclpy.shutdown(context=self.context)
