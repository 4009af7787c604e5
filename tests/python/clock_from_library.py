"""Helper of test_script.py: the original's classes (RobotDriverGazebo, RobotDriverROS) built in
Python with `publish_clock=True` and `use_sim_time:=true`, serving the UR3e as `ur3e_1` until
SIGTERM. Argument: the gz partition."""

import sys

import sas_robot_driver_gazebo as sas

from conftest import UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES

driver = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
    UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, partition=sys.argv[1]))
configuration = sas.RobotDriverROSConfiguration('ur3e_1', publish_clock=True)
assert configuration.publish_clock and configuration.gazebo_clock_topic == '/clock'
bridge = sas.RobotDriverROS(driver, configuration, node_name='clock_from_library',
                            args=[sys.argv[0], '--ros-args', '-p', 'use_sim_time:=true'])
statistics = bridge.control_loop()
print('loop returned', statistics, flush=True)
