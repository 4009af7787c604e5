"""A user's shell over the wheel underlay, as README's "In a ROS 2 workspace" tells it:
`source install/setup.bash`, then the README's own `export PATH=…/.venv/bin…` line (read from
README.md, so the text and the test cannot drift apart). Without the line, `python3` is the
system's and cannot import rclpy; with it, rclpy and the installed module import, the
workspace's package still resolves, and the venv's tools are found."""

import re
import subprocess

from conftest import PACKAGE, PREFIX, ROOT, WORKSPACE

# The line as README.md writes it, `<checkout>` standing for the checkout that ran setup.
README_LINE = re.compile(r'^export PATH="<checkout>/\.venv/bin:\$PATH"', re.MULTILINE)
CHECK = ('import rclpy, sas_robot_driver_gazebo\n'
         'from ament_index_python.packages import get_package_prefix\n'
         f'print(get_package_prefix("{PACKAGE}"))\n'
         'print(sas_robot_driver_gazebo.__file__)\n')


def readme_line() -> str:
    match = README_LINE.search((ROOT / 'README.md').read_text())
    assert match, 'README.md no longer has the export PATH line for the wheel underlay'
    return match.group(0).replace('<checkout>', str(ROOT))


def user_shell(*lines: str) -> subprocess.CompletedProcess:
    """A login-less bash that has only what a user's fresh terminal has, plus `lines`."""
    script = '\n'.join([f'source "{WORKSPACE}/install/setup.bash"', *lines])
    return subprocess.run(['env', '-i', 'HOME=/tmp', 'PATH=/usr/bin:/bin', 'LANG=C.UTF-8',
                           'bash', '-c', script], capture_output=True, text=True, timeout=120)


def test_without_the_readme_line_python3_cannot_import_rclpy():
    shell = user_shell("python3 -c 'import rclpy'")
    assert shell.returncode != 0
    assert "No module named 'rclpy'" in shell.stderr, shell.stderr


def test_with_the_readme_line_python3_imports_rclpy_and_the_installed_module():
    shell = user_shell(readme_line(), f"python3 -c '{CHECK}'", 'command -v python3 colcon')
    assert shell.returncode == 0, shell.stderr
    prefix, module, python3, colcon = shell.stdout.split()
    assert prefix == str(PREFIX)
    assert module.startswith(str(PREFIX)), module
    assert python3 == f'{ROOT}/.venv/bin/python3'
    assert colcon == f'{ROOT}/.venv/bin/colcon'
