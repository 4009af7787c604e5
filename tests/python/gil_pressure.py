"""Helper of test_gil_pressure.py: runs RobotDriverROS.control_loop() for the UR3e on the main
thread, as the legacy script does, while Python keeps the interpreter busy, until SIGINT.
Then prints one JSON line with the loop's statistics and what the workload did.

    gil_pressure.py idle|busy|callbacks ROBOT_NAME PARTITION

idle: no Python work (the baseline).

busy: one thread runs pure-Python busy work without pause.
callbacks: rclpy in this same process spins, on a second thread, a subscription to the
    bridge's own joint states (500/s) and a 1 kHz timer, each callback doing Python work.
"""

import json
import sys
import threading
import time

import sas_robot_driver_gazebo as sas

from conftest import UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES

workload, robot_name, partition = sys.argv[1:4]
stop = threading.Event()
done = {'iterations': 0, 'state_callbacks': 0, 'timer_callbacks': 0}


def python_work(n: int) -> int:
    return sum(i * i for i in range(n))


def idle():
    stop.wait()


def busy():
    while not stop.is_set():
        python_work(1000)
        done['iterations'] += 1


def callbacks():
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('gil_pressure_callbacks', context=context)

    def on_state(message: JointState):
        python_work(200 + len(message.position))
        done['state_callbacks'] += 1

    def on_timer():
        python_work(200)
        done['timer_callbacks'] += 1

    node.create_subscription(JointState, f'/{robot_name}/get/joint_states', on_state,
                             qos_profile_sensor_data)
    node.create_timer(0.001, on_timer)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    while not stop.is_set():
        executor.spin_once(timeout_sec=0.05)
    executor.shutdown()
    node.destroy_node()
    rclpy.shutdown(context=context)


driver = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
    UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, partition=partition))
bridge = sas.RobotDriverROS(
    driver, sas.RobotDriverROSConfiguration(robot_name, 0.002, joint_states_stamp='gazebo'),
    node_name=f'{robot_name}_bridge', args=[sys.argv[0]])
worker = threading.Thread(target={'idle': idle, 'busy': busy, 'callbacks': callbacks}[workload])
worker.start()
print('workload running', flush=True)
start = time.monotonic()
statistics = bridge.control_loop()
elapsed = time.monotonic() - start
stop.set()
worker.join(30)
print(json.dumps({'statistics': statistics, 'elapsed_sec': elapsed, 'workload': done}),
      flush=True)
