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

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import EqualsSubstitution, LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "sas_robot_driver_gazebo"


def generate_launch_description():
    default_config = os.path.join(get_package_share_directory(PACKAGE), "config", "config.yaml")
    name = LaunchConfiguration("name")
    config_file = LaunchConfiguration("config_file")
    implementation = LaunchConfiguration("implementation")
    # After the config file, so that they override it (launch_ros reads "true"/"false" as bools).
    parameters = [
        config_file,
        {
            "use_sim_time": LaunchConfiguration("use_sim_time"),
            "publish_clock": LaunchConfiguration("publish_clock"),
        },
    ]

    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "name",
                default_value="ur3e_1",
                description="Node name; the parameter block with this key is applied.",
            ),
            DeclareLaunchArgument(
                "config_file",
                default_value=default_config,
                description="YAML parameter file.",
            ),
            DeclareLaunchArgument(
                "implementation",
                default_value="cpp",
                choices=["cpp", "python"],
                description="cpp: native node; python: the script through the Python module.",
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="false",
                choices=["true", "false"],
                description="true: the node's stamps are ROS /clock time.",
            ),
            DeclareLaunchArgument(
                "publish_clock",
                default_value="false",
                choices=["true", "false"],
                description="true: Gazebo's clock published on ROS /clock by the node.",
            ),
            Node(
                package=PACKAGE,
                executable="sas_robot_driver_ros_gazebo_node",
                name=name,
                parameters=parameters,
                output="screen",
                emulate_tty=True,
                condition=IfCondition(EqualsSubstitution(implementation, "cpp")),
            ),
            Node(
                package=PACKAGE,
                executable="sas_robot_driver_ros_gazebo.py",
                name=name,
                parameters=parameters,
                output="screen",
                emulate_tty=True,
                condition=IfCondition(EqualsSubstitution(implementation, "python")),
            ),
        ]
    )
