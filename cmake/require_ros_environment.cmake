# Included first by each package of this repository (CMakeLists.txt, and through
# interface_package.cmake sas_msgs/ and simulation_interfaces/, which colcon builds first):
# without a sourced ROS 2, say so, not what ament_cmake misses.
if(NOT DEFINED ENV{ROS_DISTRO} OR "$ENV{AMENT_PREFIX_PATH}" STREQUAL "")
  message(FATAL_ERROR
    "No ROS 2 environment is sourced. Source one, then build again: "
    "`source /opt/ros/jazzy/setup.bash` (ROS 2 Jazzy installed), or, with the PyPI wheels "
    "of this repository's checkout, `. <checkout>/scripts/env` (after scripts/setup).")
endif()
