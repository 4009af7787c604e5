"""A binary linked with crates/ros-link runs with an empty environment (no LD_LIBRARY_PATH,
AMENT_PREFIX_PATH, HOME, ...): rcl initialises, the generated types' C libraries load and
their type supports and IDL defaults work.

Without HOME, ROS_HOME and ROS_LOG_DIR rcl's file logging has no directory, so the run
disables it with `--disable-external-lib-logs`, as a service without a home would.
"""

import subprocess

from conftest import peer_binary


def test_runs_with_empty_environment():
    result = subprocess.run([peer_binary(), 'selftest', '--ros-args', '--disable-external-lib-logs'],
                            env={}, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'selftest ok' in result.stdout
