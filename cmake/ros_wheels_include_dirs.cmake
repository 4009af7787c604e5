# Included by sas_interface_package (interface_package.cmake) for the interface packages
# (sas_msgs/, simulation_interfaces/) after rosidl_generate_interfaces, which imports the
# targets this repairs.
#
# The ROS 2 wheels on PyPI export the include directories of the machine that built them
# (CPython's and numpy's headers under /opt/python/...), which CMake refuses at generate time
# ("includes non-existent path"). Replace each such directory with this interpreter's. A
# regular ROS 2 installation exports existing directories, and nothing here changes then.
find_package(Python3 REQUIRED COMPONENTS Interpreter Development NumPy)
get_property(_sas_imported DIRECTORY PROPERTY IMPORTED_TARGETS)
foreach(_target IN LISTS _sas_imported)
  get_target_property(_dirs ${_target} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT _dirs)
    continue()
  endif()
  set(_fixed "")
  set(_changed FALSE)
  foreach(_dir IN LISTS _dirs)
    if(_dir MATCHES "^/" AND NOT EXISTS "${_dir}")
      set(_changed TRUE)
      if(_dir MATCHES "numpy")
        list(APPEND _fixed ${Python3_NumPy_INCLUDE_DIRS})
      else()
        list(APPEND _fixed ${Python3_INCLUDE_DIRS})
      endif()
    else()
      list(APPEND _fixed "${_dir}")
    endif()
  endforeach()
  if(_changed)
    list(REMOVE_DUPLICATES _fixed)
    set_target_properties(${_target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${_fixed}")
  endif()
endforeach()
