"""Start the bridges of the two-arm world (sdf/longboy_world.sdf: the R820 carrying the UR3e,
one 13-joint model) and compose them into one robot, longboy_sim.

Arguments:
  config_file  YAML parameter file (default: <share>/sas_robot_driver_gazebo/config/longboy.yaml)
  in_process   false -> three processes, as the original: the bridge nodes r820_sim and
                        ur3e_sim, and the composer longboy_sim reaching them over ROS topics
                        (default)
               true  -> one process, longboy_robots: both robots and the composite, which
                        reads the robots' joint states directly (no DDS hop)
  use_sim_time   true -> every node's stamps are ROS /clock time (default: false)
  publish_clock  true -> Gazebo's clock on ROS /clock, published once: by r820_sim, or by
                        longboy_robots in one process (default: false)
  Both override the config file's values of the same name.

Either way the topics are /r820_sim/..., /ur3e_sim/... and /longboy_sim/... (13 joints, the
R820's first). Gazebo runs separately, e.g. `gz sim -s -r longboy_world.sdf`.

Example:
  ros2 launch sas_robot_driver_gazebo longboy_launch.py in_process:=true
"""

import os
import sys

from launch import LaunchDescription
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration

# The actions shared with the package's other launch files, installed next to this one.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from package_actions import config_file_argument, package_node, switch_argument  # noqa: E402

BRIDGE = "sas_robot_driver_ros_gazebo_node"
COMPOSER = "sas_robot_driver_ros_composer_node"


def generate_launch_description():
    config_file = LaunchConfiguration("config_file")
    in_process = LaunchConfiguration("in_process")
    use_sim_time = LaunchConfiguration("use_sim_time")
    publish_clock = LaunchConfiguration("publish_clock")

    def node(executable, name, condition, clock=None):
        # After the config file, so that they override it (launch_ros reads "true"/"false" as
        # bools). One /clock publisher (`clock`): the composer has no such parameter, and the
        # second bridge leaves it to the first.
        overrides = {"use_sim_time": use_sim_time}
        if clock is not None:
            overrides["publish_clock"] = clock
        return package_node(executable, name, [config_file, overrides], condition)

    return LaunchDescription(
        [
            config_file_argument(
                "longboy.yaml",
                "YAML parameter file with the blocks r820_sim, ur3e_sim, longboy_sim and "
                "longboy_robots.",
            ),
            switch_argument(
                "in_process",
                "true: one process composing in memory; false: three processes composing "
                "over ROS topics.",
            ),
            switch_argument("use_sim_time", "true: every node's stamps are ROS /clock time."),
            switch_argument(
                "publish_clock", "true: Gazebo's clock published on ROS /clock (once)."
            ),
            node(BRIDGE, "r820_sim", UnlessCondition(in_process), publish_clock),
            node(BRIDGE, "ur3e_sim", UnlessCondition(in_process)),
            node(COMPOSER, "longboy_sim", UnlessCondition(in_process)),
            node(BRIDGE, "longboy_robots", IfCondition(in_process), publish_clock),
        ]
    )
