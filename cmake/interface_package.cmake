# The interface packages' (sas_msgs/, simulation_interfaces/) common part: the check for a
# sourced ROS 2, and sas_interface_package(<interface files> [DEPENDENCIES <packages>]), all
# of such a package after project(): its interfaces generated, the wheels' include
# directories repaired, ament_package().
include("${CMAKE_CURRENT_LIST_DIR}/require_ros_environment.cmake")
set(_sas_cmake_dir "${CMAKE_CURRENT_LIST_DIR}")

# A macro, not a function: find_package and ament_package must run in the package's scope.
macro(sas_interface_package)
  cmake_parse_arguments(_sas_interfaces "" "" "DEPENDENCIES" ${ARGN})
  find_package(ament_cmake REQUIRED)
  find_package(rosidl_default_generators REQUIRED)
  foreach(_sas_dependency IN LISTS _sas_interfaces_DEPENDENCIES)
    find_package(${_sas_dependency} REQUIRED)
  endforeach()
  rosidl_generate_interfaces(${PROJECT_NAME} ${_sas_interfaces_UNPARSED_ARGUMENTS}
    DEPENDENCIES ${_sas_interfaces_DEPENDENCIES})
  include("${_sas_cmake_dir}/ros_wheels_include_dirs.cmake")
  ament_export_dependencies(rosidl_default_runtime)
  ament_package()
endmacro()
