"""Velocity and effort targets from Python (`RobotDriverGazebo.set_target_joint_velocities`
and `set_target_joint_forces`), against gz-joint-sim running the UR3e velocity and effort
worlds: the joint moves as asked, zero follows the command timeout with no control loop
running (the driver's own timer), bad input raises naming the joint, and a mode with no
controller raises naming the topic."""

import contextlib
import gc
import math
import threading
import time

import numpy as np
import pytest

import sas_robot_driver_gazebo as sas
from conftest import START_S, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, wait_for
from support.world import EFFORT_STATES, EFFORT_WORLD, VELOCITY_STATES, VELOCITY_WORLD

WRIST_3 = UR3E_JOINTS.index('wrist_3_joint')


def driver_for(world, states_topic, **options):
    options.setdefault('partition', world.partition)
    d = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
        UR3E_JOINTS, UR3E_PREFIX, states_topic, initialize_timeout_sec=START_S, **options))
    d.connect()
    d.initialize()
    return d


@contextlib.contextmanager
def initialized_driver(world, states_topic, **options):
    """`driver_for`'s driver, deinitialized and disconnected when the block ends."""
    d = driver_for(world, states_topic, **options)
    try:
        yield d
    finally:
        d.deinitialize()
        d.disconnect()


def move_wrist_3(driver, watcher):
    """0.5 rad/s on wrist_3_joint (0 on the others) from `driver`, once `watcher` (a driver
    on the same robot) reads Gazebo moving the joint at that velocity."""
    target = np.zeros(6)
    target[WRIST_3] = 0.5
    driver.set_target_joint_velocities(target)
    wait_for(lambda: watcher.get_joint_velocities()[WRIST_3] == pytest.approx(0.5), 10,
             'Gazebo moving wrist_3_joint at 0.5 rad/s')


def test_configuration_fields_of_the_new_modes():
    c = sas.RobotDriverGazeboConfiguration()
    assert (c.joint_velocities_topic_prefix, c.joint_forces_topic_prefix) == (None, None)
    assert (c.velocity_limits, c.effort_limits, c.command_timeout_sec) == ([], [], 0.1)
    c.command_timeout_sec = 0.25
    c.velocity_limits = [1.0, 2.0]
    assert (c.command_timeout_sec, c.velocity_limits) == (0.25, [1.0, 2.0])
    with pytest.raises(ValueError, match='command_timeout_sec must be a positive number'):
        c.command_timeout_sec = 0.0


def test_a_velocity_target_moves_the_joint_and_stops_at_the_timeout_without_a_loop(world):
    """No control loop runs: the driver's own timer sends the zero 0.1 s after the last
    target, while the interpreter is busy elsewhere."""
    world.sim(world_file=VELOCITY_WORLD)
    with initialized_driver(world, VELOCITY_STATES) as d:
        move_wrist_3(d, watcher=d)
        at_last_target = d.get_joint_positions()[WRIST_3]
        wait_for(lambda: d.get_joint_velocities()[WRIST_3] == 0, 5,
                 'wrist_3_joint stopped after the command timeout')
        stopped = d.get_joint_positions()[WRIST_3]
        assert 0 < stopped - at_last_target < 0.5 * (0.1 + 0.4)
        time.sleep(0.3)
        assert d.get_joint_positions()[WRIST_3] == stopped
        assert np.all(d.get_joint_velocities() == 0)


def test_an_effort_target_accelerates_the_joint_and_the_call_releases_the_gil(world):
    world.sim(world_file=EFFORT_WORLD)
    with initialized_driver(world, EFFORT_STATES, limit_policy='refuse',
                            effort_limits=[54.0, 54.0, 28.0, 9.0, 9.0, 9.0]) as d:
        target = [0.0] * 6
        target[WRIST_3] = 0.001
        ticks = []
        stop = threading.Event()
        ticker = threading.Thread(target=lambda: [ticks.append(1) or time.sleep(0.001)
                                                  for _ in iter(stop.is_set, True)])
        ticker.start()
        for _ in range(20):
            d.set_target_joint_forces(target)
            time.sleep(0.01)
        stop.set()
        ticker.join()
        assert ticks, 'another Python thread ran meanwhile'
        wait_for(lambda: d.get_joint_velocities()[WRIST_3] > 0.5, 10,
                 'Gazebo accelerating wrist_3_joint')
        with pytest.raises(ValueError, match=r'set_target_joint_forces: value 2 \(elbow_joint\) '
                                             r'= 30 is outside the effort limits \[-28, 28\]'):
            d.set_target_joint_forces([0, 0, 30.0, 0, 0, 0])


@pytest.mark.parametrize('target, message', [
    ([0.0] * 5, r'set_target_joint_velocities: expected 6 values, got 5\.'),
    ([0, 0, math.nan, 0, 0, 0], r'set_target_joint_velocities: value 2 \(elbow_joint\) is NaN'),
    ([0, 0, 0, 0, 0, math.inf], r'set_target_joint_velocities: value 5 \(wrist_3_joint\) is inf'),
])
def test_bad_velocity_targets_raise_value_error_naming_the_joint(world, target, message):
    world.sim(world_file=VELOCITY_WORLD)
    with initialized_driver(world, VELOCITY_STATES) as d, \
            pytest.raises(ValueError, match=message):
        d.set_target_joint_velocities(target)


def test_a_mode_without_a_controller_raises_naming_the_topics(world):
    world.sim()  # the position world: no ApplyJointForce
    with initialized_driver(world, UR3E_STATES) as d, \
            pytest.raises(RuntimeError, match=r'set_target_joint_forces: nothing subscribes '
                                              r'to \[/model/ur3e/joint/shoulder_pan_joint/'
                                              r'cmd_force, '):
        d.set_target_joint_forces([0.0] * 6)


def test_a_driver_dropped_with_a_velocity_in_force_leaves_the_joint_still(world):
    """A minute's command timeout, and the script drops its driver without deinitialize():
    the driver sets the velocity to zero as it goes. A second driver watches Gazebo."""
    world.sim(world_file=VELOCITY_WORLD)
    with initialized_driver(world, VELOCITY_STATES) as watcher:
        d = driver_for(world, VELOCITY_STATES, command_timeout_sec=60.0)
        move_wrist_3(d, watcher)
        del d
        gc.collect()
        wait_for(lambda: watcher.get_joint_velocities()[WRIST_3] == 0, 5,
                 'wrist_3_joint stopped once the driver was dropped')
