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

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "sas_robot_driver_gazebo"


def generate_launch_description():
    default_config = os.path.join(get_package_share_directory(PACKAGE), "config", "config.yaml")
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "name",
                default_value="sas_simulator_server_gazebo_node",
                description="Node name; the parameter block with this key is applied.",
            ),
            DeclareLaunchArgument(
                "config_file",
                default_value=default_config,
                description="YAML parameter file.",
            ),
            Node(
                package=PACKAGE,
                executable="sas_simulator_server_gazebo_node",
                name=LaunchConfiguration("name"),
                parameters=[LaunchConfiguration("config_file")],
                output="screen",
                emulate_tty=True,
            ),
        ]
    )
