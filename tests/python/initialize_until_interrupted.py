"""Helper of test_driver.py: waits in initialize() (no simulator) until Ctrl-C, then prints
KeyboardInterrupt and exits 0. Argument: the gz partition."""

import sys

import sas_robot_driver_gazebo as sas

from conftest import UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES

driver = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
    UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, partition=sys.argv[1]))
driver.connect()
try:
    driver.initialize()
except KeyboardInterrupt:
    print('KeyboardInterrupt', flush=True)
    sys.exit(0)
sys.exit(1)
