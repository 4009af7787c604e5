"""Non-finite joint states from Gazebo (issue 21 item 9): the real Ignition CLI plays a Gazebo
whose physics blew up — a `Model` with `position: nan` on one joint and `velocity: inf` on
another. The node passes them on as received, and says so: one ERROR line per episode naming
the joints, ERROR on /diagnostics while it lasts, a line when the states are finite again."""

import math
import subprocess
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState

from conftest import IGN_TOPIC_CLI, UR3E_STATES
from support.world import ur3e_model_text as model
from test_on_arrival import SOURCE_SILENCE_S, START_S, STATES, ur3e_bridge


def gazebo_sends_until(world, text: str, done, what: str):
    """The Ignition CLI publishes `text` (a new publisher each time; the node takes over from
    the last one once it was silent for 250 ms) until `done()`."""
    deadline = time.monotonic() + START_S
    while not done():
        assert time.monotonic() < deadline, f'timed out waiting for {what}'
        subprocess.run([IGN_TOPIC_CLI, '-t', UR3E_STATES, '-m', 'ignition.msgs.Model',
                        '-p', text], env=world.env(), timeout=30, capture_output=True)
        world.spin_for(SOURCE_SILENCE_S)


def test_non_finite_joint_states_are_passed_on_and_reported_once_per_episode(world):
    bridge = ur3e_bridge(world, 'gz_msgs_prefix:=ignition.msgs.')
    states = world.subscribe(JointState, STATES)
    statuses = world.subscribe(DiagnosticArray, '/diagnostics')
    gazebo_sends_until(world, model({}), lambda: bridge.count('::Robot initialized.'),
                       'the node to initialize')

    blown_up = model({'elbow_joint': {'position': 'nan'}, 'wrist_1_joint': {'velocity': 'inf'}})
    for _ in range(3):  # an episode of several messages
        gazebo_sends_until(world, blown_up,
                           lambda: states and math.isnan(states[-1].position[2]),
                           'the non-finite state on get/joint_states')
        states.clear()
    line = bridge.lines[[k for k, l in enumerate(bridge.lines)
                         if 'carry non-finite values' in l][0]]
    assert 'elbow_joint position NaN' in line and 'wrist_1_joint velocity inf' in line, line
    assert '[ERROR]' in line, line
    world.wait_for(lambda: any(s.level == DiagnosticStatus.ERROR and 'elbow_joint' in s.message
                               for array in statuses for s in array.status), 5,
                   'ERROR on /diagnostics naming the joints')

    gazebo_sends_until(world, model({}), lambda: bridge.count('are finite again'),
                       'the end of the episode')
    assert bridge.count('carry non-finite values') == 1, bridge.output()
    assert bridge.alive()
