"""Start the robot driver bridge for one Gazebo robot.

Arguments:
  name            node name, and the key of the parameter block applied from the config file
                  (default: ur3e_1)
  config_file     YAML parameter file (default: <share>/sas_robot_driver_gazebo/config/config.yaml)
  implementation  cpp    -> the native node sas_robot_driver_ros_gazebo_node (default)
                  python -> the script sas_robot_driver_ros_gazebo.py, which runs the same
                            Rust driver and loop through the Python module
  use_sim_time    true -> the node's stamps are ROS /clock time (default: false)
  publish_clock   true -> the node publishes Gazebo's clock on ROS /clock, so no
                          ros_gz_bridge is needed for use_sim_time (default: false)
  Both override the config file's values of the same name.

Examples:
  ros2 launch sas_robot_driver_gazebo robot_driver_server_launch.py name:=ur3e_1 implementation:=python
  ros2 launch sas_robot_driver_gazebo robot_driver_server_launch.py publish_clock:=true use_sim_time:=true
"""

import os
import sys

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import EqualsSubstitution, LaunchConfiguration

# The actions shared with the package's other launch files, installed next to this one.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_actions import (  # noqa: E402
    config_file_argument,
    name_argument,
    package_node,
    switch_argument,
)


def generate_launch_description():
    name = LaunchConfiguration("name")
    implementation = LaunchConfiguration("implementation")
    # After the config file, so that they override it (launch_ros reads "true"/"false" as bools).
    parameters = [
        LaunchConfiguration("config_file"),
        {
            "use_sim_time": LaunchConfiguration("use_sim_time"),
            "publish_clock": LaunchConfiguration("publish_clock"),
        },
    ]

    def implemented_by(choice):
        return IfCondition(EqualsSubstitution(implementation, choice))

    return LaunchDescription(
        [
            name_argument("ur3e_1"),
            config_file_argument("config.yaml"),
            DeclareLaunchArgument(
                "implementation",
                default_value="cpp",
                choices=["cpp", "python"],
                description="cpp: native node; python: the script through the Python module.",
            ),
            switch_argument("use_sim_time", "true: the node's stamps are ROS /clock time."),
            switch_argument(
                "publish_clock", "true: Gazebo's clock published on ROS /clock by the node."
            ),
            package_node(
                "sas_robot_driver_ros_gazebo_node", name, parameters, implemented_by("cpp")
            ),
            package_node(
                "sas_robot_driver_ros_gazebo.py", name, parameters, implemented_by("python")
            ),
        ]
    )
