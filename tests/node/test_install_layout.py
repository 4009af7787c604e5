"""The README's ament install layout: run its `# install-layout` block into a temporary prefix
and resolve the package the way `ros2 run` / `ros2 launch` do (ament_index_python)."""

import os
import pathlib
import subprocess
import xml.etree.ElementTree as ET

from ament_index_python.packages import get_package_prefix, get_package_share_directory

from conftest import ROOT, binary

PACKAGE = 'sas_robot_driver_gazebo'
EXECUTABLE = 'sas_robot_driver_ros_gazebo_node'


def install_block() -> str:
    """The shell block of the README that starts with `# install-layout`."""
    text = (ROOT / 'README.md').read_text()
    start = text.index('# install-layout\n')
    return text[start:text.index('```', start)]


def test_the_readme_install_layout_is_found_like_ros2_finds_packages(tmp_path, monkeypatch):
    prefix = tmp_path / 'install' / PACKAGE
    # The block installs target/release/…; install the binary under test instead.
    block = install_block().replace(f'target/release/{EXECUTABLE}',
                                    str(binary('BRIDGE_NODE_BIN', EXECUTABLE)))
    subprocess.run(['bash', '-euo', 'pipefail', '-c', block], cwd=ROOT, check=True,
                   env={'PATH': os.environ['PATH'], 'HOME': str(tmp_path),
                        'PREFIX': str(prefix)})

    monkeypatch.setenv('AMENT_PREFIX_PATH', f'{prefix}:{os.environ.get("AMENT_PREFIX_PATH", "")}')
    assert get_package_prefix(PACKAGE) == str(prefix)
    assert pathlib.Path(get_package_share_directory(PACKAGE)) == prefix / 'share' / PACKAGE
    for path in ['launch/robot_driver_server_launch.py', 'config/config.yaml',
                 'sdf/ur3e_world.sdf']:
        assert (prefix / 'share' / PACKAGE / path).is_file(), path
    manifest = ET.parse(prefix / 'share' / PACKAGE / 'package.xml').getroot()
    assert manifest.findtext('name') == PACKAGE

    # What `ros2 run` executes: <prefix>/lib/<package>/<executable>, with an empty environment.
    installed = prefix / 'lib' / PACKAGE / EXECUTABLE
    assert os.access(installed, os.X_OK)
    out = subprocess.run([installed, '--help'], env={'HOME': str(tmp_path)},
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert 'thread_sampling_time_sec' in out.stdout

