"""Building without what the build needs stops with one message saying what to do."""

import subprocess

import pytest

from conftest import ROOT

VENV_BIN = ROOT / '.venv' / 'bin'
# What CMakeLists.txt checks, less the one a test leaves out.
INTERFACES = ['action_msgs', 'builtin_interfaces', 'diagnostic_msgs', 'geometry_msgs',
              'rcl_interfaces', 'rosgraph_msgs', 'sas_msgs', 'sensor_msgs',
              'simulation_interfaces', 'std_msgs', 'std_srvs']


def test_colcon_build_without_a_sourced_ros_says_what_to_source(tmp_path):
    (tmp_path / 'src').mkdir()
    (tmp_path / 'src' / 'sas_robot_driver_gazebo').symlink_to(ROOT)
    (tmp_path / 'src' / 'sas_msgs').symlink_to('sas_robot_driver_gazebo/sas_msgs')
    (tmp_path / 'src' / 'simulation_interfaces').symlink_to(
        'sas_robot_driver_gazebo/simulation_interfaces')
    out = subprocess.run([VENV_BIN / 'colcon', 'build'], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300,
                         env={'PATH': '/usr/bin:/bin', 'HOME': str(tmp_path)})
    output = ' '.join((out.stdout + out.stderr).split())  # CMake wraps its messages
    assert out.returncode != 0, output
    assert 'No ROS 2 environment is sourced' in output, output
    assert 'source /opt/ros/jazzy/setup.bash' in output
    # Once per interface package colcon starts first (sas_msgs, simulation_interfaces), each
    # stopping at once: no second message from anything after them.
    assert output.count('No ROS 2 environment is sourced') == 2, output


def configure_with_interfaces(tmp_path, present):
    """Configure the package (cmake only) in an underlay whose ament index lists `present`."""
    prefix = tmp_path / 'underlay'
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'rosidl_interfaces'
    index.mkdir(parents=True)
    for name in present:
        (index / name).touch()
    env = {'PATH': f'{VENV_BIN}:/usr/bin:/bin', 'HOME': str(tmp_path), 'ROS_DISTRO': 'jazzy',
           'AMENT_PREFIX_PATH': str(prefix), '_ROS_WHEELS_BOOTSTRAP_COMPLETE': '1'}
    out = subprocess.run(['cmake', '-S', ROOT, '-B', tmp_path / 'build'], capture_output=True,
                         text=True, timeout=300, env=env)
    return out.returncode, ' '.join(out.stderr.split())  # CMake wraps its messages


def test_a_missing_interface_package_is_named_with_its_debian_package(tmp_path):
    status, errors = configure_with_interfaces(
        tmp_path, [i for i in INTERFACES if i != 'diagnostic_msgs'])
    assert status != 0
    assert 'The interface package diagnostic_msgs is not in the sourced ROS 2 environment' \
        in errors, errors
    assert 'ros-jazzy-diagnostic-msgs' in errors


@pytest.mark.parametrize('package', ['sas_msgs', 'simulation_interfaces'])
def test_a_missing_interface_package_of_ours_says_to_put_it_into_the_workspace(tmp_path, package):
    status, errors = configure_with_interfaces(
        tmp_path, [i for i in INTERFACES if i != package])
    assert status != 0
    assert f'The interface package {package} is not in the sourced ROS 2 environment' \
        in errors, errors
    assert f'ln -s sas_robot_driver_gazebo/{package} src/{package}' in errors
