"""Helper of test_gil_pressure.py: a Python thread calls RobotDriverROS.shutdown() once the
loop runs; control_loop() must return. Argument: the gz partition."""

import sys
import threading
import time

import sas_robot_driver_gazebo as sas

from conftest import UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES

driver = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
    UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, partition=sys.argv[1]))
bridge = sas.RobotDriverROS(driver, sas.RobotDriverROSConfiguration('shutdown_test'),
                            args=[sys.argv[0]])


def stop_when_running():
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            driver.get_joint_positions()
            break
        except RuntimeError:  # not initialized yet
            time.sleep(0.01)
    time.sleep(0.2)
    bridge.shutdown()


threading.Thread(target=stop_when_running).start()
statistics = bridge.control_loop()
assert bridge.should_shutdown()
print('loop returned', statistics, flush=True)
sys.exit(0 if statistics['periods'] > 0 else 1)
