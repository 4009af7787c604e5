"""The actions this package's launch files are made of: its nodes as they start them (on the
screen, parameters from a config file) and the arguments they share. Not a launch file: each
launch file next to it (share/sas_robot_driver_gazebo/launch) imports it by its own path."""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "sas_robot_driver_gazebo"


def config_file_argument(file_name, description="YAML parameter file."):
    """`config_file`, by default the installed config/`file_name`."""
    default_config = os.path.join(get_package_share_directory(PACKAGE), "config", file_name)
    return DeclareLaunchArgument(
        "config_file", default_value=default_config, description=description
    )


def name_argument(default_name):
    return DeclareLaunchArgument(
        "name",
        default_value=default_name,
        description="Node name; the parameter block with this key is applied.",
    )


def switch_argument(name, description):
    """A "true"/"false" argument, "false" by default."""
    return DeclareLaunchArgument(
        name, default_value="false", choices=["true", "false"], description=description
    )


def package_node(executable, name, parameters, condition=None):
    return Node(
        package=PACKAGE,
        executable=executable,
        name=name,
        parameters=parameters,
        output="screen",
        emulate_tty=True,
        condition=condition,
    )


def server_launch_description(executable):
    """One server node, named `name` (by default `executable`), with the parameter block of
    that name from `config_file` (by default the installed config/config.yaml)."""
    return LaunchDescription(
        [
            name_argument(executable),
            config_file_argument("config.yaml"),
            package_node(
                executable, LaunchConfiguration("name"), [LaunchConfiguration("config_file")]
            ),
        ]
    )
