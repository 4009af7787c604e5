"""Start the object server: <entity>/get/pose and <entity>/set/pose
(geometry_msgs/msg/PoseStamped) for each of the configured entities, over Gazebo's entity
poses and its set_pose service.

Arguments:
  name         node name, and the key of the parameter block applied from the config file
               (default: sas_object_server_gazebo_node)
  config_file  YAML parameter file (default: <share>/sas_robot_driver_gazebo/config/config.yaml)

Example:
  ros2 launch sas_robot_driver_gazebo object_server_launch.py
  ros2 topic echo /frame_x/get/pose
"""

import os
import sys

# The actions shared with the package's other launch files, installed next to this one.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_actions import server_launch_description  # noqa: E402


def generate_launch_description():
    return server_launch_description("sas_object_server_gazebo_node")
