"""SmartArmStack robot driver for Gazebo, in Rust.

``RobotDriverGazebo`` receives Gazebo's joint states on its own thread and sends target
joint positions to Gazebo's joint position controllers; ``RobotDriverROS`` runs the ROS 2
control loop over it (``<robot_name>/get/joint_states``, ``…/set/target_joint_positions``).
No call holds the GIL while it waits, and no Rust thread ever needs it, so Python can do
anything meanwhile without slowing the driver down. ``run_node`` runs the whole node
``sas_robot_driver_ros_gazebo_node`` (its parameters, topics, logs and signal handling) in
this process, as the legacy script ``sas_robot_driver_ros_gazebo.py`` does.
"""

from ._sas_robot_driver_gazebo import (
    RobotDriverGazebo,
    RobotDriverGazeboConfiguration,
    RobotDriverROS,
    RobotDriverROSConfiguration,
    ShutdownSignaler,
    run_node,
)

__all__ = [
    "RobotDriverGazebo",
    "RobotDriverGazeboConfiguration",
    "RobotDriverROS",
    "RobotDriverROSConfiguration",
    "ShutdownSignaler",
    "run_node",
]
