"""Start the simulator server: <name>/start_simulation and <name>/stop_simulation
(std_srvs/srv/Trigger) over Gazebo's world control service.

Arguments:
  name         node name, and the key of the parameter block applied from the config file
               (default: sas_simulator_server_gazebo_node)
  config_file  YAML parameter file (default: <share>/sas_robot_driver_gazebo/config/config.yaml)

Example:
  ros2 launch sas_robot_driver_gazebo simulator_server_launch.py
  ros2 service call /sas_simulator_server_gazebo_node/start_simulation std_srvs/srv/Trigger
"""

import os
import sys

# The actions shared with the package's other launch files, installed next to this one.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_actions import server_launch_description  # noqa: E402


def generate_launch_description():
    return server_launch_description("sas_simulator_server_gazebo_node")
