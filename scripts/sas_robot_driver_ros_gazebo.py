#!/usr/bin/env python3
"""sas_robot_driver_ros_gazebo.py: the robot driver bridge started from Python (the launch
file's `implementation:=python`). It runs the node `sas_robot_driver_ros_gazebo_node` itself,
through the module `sas_robot_driver_gazebo` (`run_node`), with the GIL released for the
whole run:

    sas_robot_driver_ros_gazebo.py --ros-args -r __node:=ur3e_1 --params-file config/config.yaml

So ROS sees the same node either way: one node (named by the launch file, `__node:=<name>`;
`sas_robot_driver_ros_gazebo_py` otherwise) with the node's parameters, declared by the same
code (`joint_names`, ..., `thread_sampling_time_sec`, `joint_states_stamp`, ...; read-only),
the same topics, and its log lines on the node's logger (`/rosout`, `--ros-args --log-level`).
SIGINT, SIGTERM and SIGHUP, any number of them at any stage, stop it in order. Exit status:
0 after a signal, 2 for bad `--ros-args` or a missing or invalid parameter, 1 for any other
error, each with a message saying what failed.
"""

import sys

import sas_robot_driver_gazebo as sas

# The original script's node name; the launch file's `name` remaps it.
NODE_NAME = 'sas_robot_driver_ros_gazebo_py'

if __name__ == '__main__':
    # The script exits right after the node: a signal arriving after the stop (launch forwards
    # one more) is ignored instead of raising KeyboardInterrupt on the way out.
    sys.exit(sas.run_node(sys.argv, node_name=NODE_NAME, ignore_signals_after_stop=True))
