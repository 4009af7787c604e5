"""Velocity targets through a composite, both ways (the composer over ROS topics, and the one
node composing its own robots): the UR3e of the velocity world bridged as two robots, `arm`
(three joints) and `wrist` (three), composed as `ur3e_composed`. A composite target is split
across the robots, moves every joint at its velocity in Gazebo, and each robot's node sets its
joints to zero once the targets stop (its command timeout)."""

import time

import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import START_S, UR3E_JOINTS
from support.world import VELOCITY_WORLD

STATES = ('/world/ur3e_velocity_world/model/ur3e/model/ur3e_velocity_controller/'
          'model/ur3e/joint_state')


def robot_block(joints, indent: str) -> str:
    return (f'{indent}joint_names: {joints}\n'
            f'{indent}joint_positions_topic_prefix: "/model/ur3e/joint/"\n'
            f'{indent}joint_states_topic: "{STATES}"\n')


def params(world):
    arm, wrist = UR3E_JOINTS[:3], UR3E_JOINTS[3:]
    return world.params_file(
        'arm:\n  ros__parameters:\n    robot_name: "arm"\n' + robot_block(arm, '    ')
        + 'wrist:\n  ros__parameters:\n    robot_name: "wrist"\n' + robot_block(wrist, '    ')
        + 'ur3e_composed:\n  ros__parameters:\n'
          '    robot_driver_client_names: ["arm", "wrist"]\n'
          '    override_joint_limits_with_robot_parameter_file: false\n'
        + 'together:\n  ros__parameters:\n    robots: ["arm", "wrist"]\n'
          '    arm:\n' + robot_block(arm, '      ') + '    wrist:\n' + robot_block(wrist, '      ')
        + '    composites: ["ur3e_composed"]\n    ur3e_composed:\n      robots: ["arm", "wrist"]\n')


@pytest.mark.parametrize('in_process', [False, True], ids=['over_topics', 'in_process'])
def test_a_composite_splits_velocity_targets_and_the_robots_stop_when_they_end(world,
                                                                               in_process):
    world.sim(VELOCITY_WORLD)
    file = params(world)
    if in_process:
        composer = world.node_process('together', file)
    else:
        world.node_process('arm', file)
        world.node_process('wrist', file)
        composer = world.composer('ur3e_composed', file)
    arm = world.subscribe(JointState, '/arm/get/joint_states')
    wrist = world.subscribe(JointState, '/wrist/get/joint_states')
    composed = world.subscribe(JointState, '/ur3e_composed/get/joint_states')
    world.wait_for(lambda: arm and wrist and composed, START_S, 'the three robots\' states')
    publisher = world.publisher(Float64MultiArray, '/ur3e_composed/set/target_joint_velocities')
    target = [0.2, 0.0, -0.3, 0.0, 0.4, 0.0]

    def moving() -> bool:
        publisher.publish(Float64MultiArray(data=target))
        world.spin_for(0.02)
        return (list(arm[-1].velocity) == pytest.approx(target[:3])
                and list(wrist[-1].velocity) == pytest.approx(target[3:]))

    world.wait_for(moving, START_S, 'both robots moving at the composite target')
    stopped_sending = time.monotonic()
    world.wait_for(lambda: all(v == 0 for v in list(arm[-1].velocity) + list(wrist[-1].velocity)),
                   10, 'both robots stopped after the targets ended')
    assert time.monotonic() - stopped_sending < 3.0
    assert composer.alive()
    assert composer.count('::Target refused') == 0
