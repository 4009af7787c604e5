"""SmartArmStack robot driver for Gazebo, in Rust.

``RobotDriverGazebo`` receives Gazebo's joint states on its own thread and sends target
joint positions to Gazebo's joint position controllers; ``RobotDriverROS`` runs the ROS 2
control loop over it (``<robot_name>/get/joint_states``, ``…/set/target_joint_positions``).
No call holds the GIL while it waits, and no Rust thread ever needs it, so Python can do
anything meanwhile without slowing the driver down. ``run_node`` runs the whole node
``sas_robot_driver_ros_gazebo_node`` (its parameters, topics, logs and signal handling) in
this process, as the legacy script ``sas_robot_driver_ros_gazebo.py`` does.

``RobotDriverClient`` is the controller's side (the original's ``sas::RobotDriverClient``):
it reads a robot's ``get/joint_states`` and limits on a Rust thread, so Python is never woken
per message, and sends targets, watchdog triggers and the shutdown signal.
"""

from ._sas_robot_driver_gazebo import (
    Functionality,
    ModeBlacklistFlag,
    RobotDriverClient,
    RobotDriverGazebo,
    RobotDriverGazeboConfiguration,
    RobotDriverROS,
    RobotDriverROSConfiguration,
    ShutdownSignaler,
    run_node,
)

__all__ = [
    "Functionality",
    "ModeBlacklistFlag",
    "RobotDriverClient",
    "RobotDriverGazebo",
    "RobotDriverGazeboConfiguration",
    "RobotDriverROS",
    "RobotDriverROSConfiguration",
    "ShutdownSignaler",
    "run_node",
]
