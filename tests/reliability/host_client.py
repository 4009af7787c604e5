"""The ROS client of the several-hosts test, run inside its own network namespace: waits for
<robot>/get/joint_states, sends TARGET and waits until the reported positions reach it.
Prints `reached after S s` and exits 0, or names what did not happen and exits 1.

usage: host_client.py ROBOT TARGET_CSV TIMEOUT_S   (ROS_DOMAIN_ID etc. from the environment)
"""

import sys
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray


def main() -> int:
    robot, timeout = sys.argv[1], float(sys.argv[3])
    target = [float(v) for v in sys.argv[2].split(',')]
    rclpy.init()
    node = rclpy.create_node('host_client')
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    states = []
    node.create_subscription(JointState, f'/{robot}/get/joint_states', states.append, qos)
    publisher = node.create_publisher(Float64MultiArray, f'/{robot}/set/target_joint_positions',
                                      qos)
    start = time.monotonic()

    def spin_until(condition, what):
        while not condition():
            if time.monotonic() - start > timeout:
                print(f'timed out after {timeout} s waiting for {what}', flush=True)
                sys.exit(1)
            rclpy.spin_once(node, timeout_sec=0.05)

    spin_until(lambda: states, 'joint states')
    print(f'joint states after {time.monotonic() - start:.2f} s', flush=True)
    spin_until(lambda: publisher.get_subscription_count() > 0, 'the bridge subscribing')
    publisher.publish(Float64MultiArray(data=target))
    spin_until(lambda: all(abs(p - t) < 1e-3 for p, t in zip(states[-1].position, target)),
               'the joints at the target')
    print(f'reached after {time.monotonic() - start:.2f} s', flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
