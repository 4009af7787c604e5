"""Gazebo restarts under a running bridge: the simulator killed with SIGKILL and started
again, and a second simulator on the same topics while the first runs. Flow on
get/joint_states resumes without restarting the node, within 1 s of the new simulator's
first message, and the latest target reaches the new simulator, also when the bridge only
forwards changed targets (target_keepalive_sec > 0). Timed by the peers' own clocks: when
the bridge published (the DDS source timestamp), when the simulator started (its log
stamp), when this process sent the kill; not by when this process got round to looking."""

import datetime
import os
import signal
import time

import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from node_fixtures import DEPTH_ONE, UR3E_JOINTS, UR3E_STATES, UR3E_WORLD, binary

START_S = 30
MOTION_S = 30
TARGET = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]


def stamp_s(msg) -> float:
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


def bridge(world, keepalive: float):
    params = world.params_file(f"""
restart_bridge:
  ros__parameters:
    joint_names: {UR3E_JOINTS}
    joint_positions_topic_prefix: "/model/ur3e/joint/"
    joint_states_topic: "{UR3E_STATES}"
    robot_name: "ur3e"
    thread_sampling_time_sec: 0.002
    joint_states_stamp: "gazebo"
    target_keepalive_sec: {keepalive}
""")
    return world.bridge('-r', '__node:=restart_bridge', '--params-file', params)


def timed_states(world) -> list:
    """(when the bridge published it: its DDS source timestamp, on the system clock;
    JointState) for every report of the bridge."""
    received = []
    world.node.create_subscription(
        JointState, '/ur3e/get/joint_states',
        lambda m, info: received.append((info['source_timestamp'] * 1e-9, m)), DEPTH_ONE)
    return received


def at_target(msg) -> bool:
    return all(abs(p - t) < 1e-3 for p, t in zip(msg.position, TARGET))


def start_sim(world):
    """A simulator process, not waited for."""
    return world.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), UR3E_WORLD])


def sim_log_stamp(world, sim, text: str) -> float:
    """When gz-joint-sim logged the first line holding `text`, by its own stamp
    (`2026-12-02T11:42:03.373360Z  INFO …`, UTC; the system clock, as `time.time()`)."""
    world.wait_for(lambda: sim.count(text) > 0 or sim.proc.poll() is not None,
                   START_S, f'{text!r}')
    line = next((line for line in list(sim.lines) if text in line), None)
    assert line is not None, sim.output()
    return datetime.datetime.fromisoformat(line.split()[0]).timestamp()


@pytest.mark.parametrize('keepalive', [0.0, 3600.0], ids=['every_period', 'on_change'])
def test_a_killed_and_restarted_simulator_is_followed_and_gets_the_target(world, keepalive):
    first = world.sim()
    node = bridge(world, keepalive)
    states = timed_states(world)
    world.wait_for(lambda: states, START_S, 'joint states')
    world.publisher(Float64MultiArray, '/ur3e/set/target_joint_positions').publish(
        Float64MultiArray(data=TARGET))
    world.wait_for(lambda: at_target(states[-1][1]), MOTION_S, 'the joints at the target')
    world.wait_for(lambda: stamp_s(states[-1][1]) > 1.5, START_S, 'sim time past 1.5 s')

    killed_at = time.time()
    os.killpg(first.proc.pid, signal.SIGKILL)
    first.proc.wait(10)
    last_stamp = stamp_s(states[-1][1])
    second = start_sim(world)
    # It publishes from its first step on, right after saying so.
    first_message_at = sim_log_stamp(world, second, 'joint states')
    # The second simulator starts from the world's initial positions and a sim time of 0.
    world.wait_for(lambda: stamp_s(states[-1][1]) < last_stamp, START_S,
                   'joint states of the restarted simulator')
    resumed = next(i for i, (t, m) in enumerate(states)
                   if t > killed_at and stamp_s(m) < last_stamp)
    resumed_at = states[resumed][0]
    world.wait_for(lambda: stamp_s(states[-1][1]) < last_stamp and at_target(states[-1][1]),
                   MOTION_S, 'the restarted simulator at the latest target')
    at_target_at = next(t for t, m in states[resumed:] if at_target(m))
    recovery = resumed_at - first_message_at
    print(f'\n[{keepalive=}] flow resumed {recovery * 1e3:.0f} ms after the restarted '
          f'simulator started publishing ({(resumed_at - killed_at) * 1e3:.0f} ms after '
          f'the kill); target reported {at_target_at - first_message_at:.2f} s after')
    assert recovery < 1.0, f'flow resumed {recovery:.3f} s after the first message'
    assert node.proc.poll() is None, 'the node was not restarted'
    assert node.count('now come from') == 1, node.output()


def test_a_second_simulator_does_not_interleave_and_takes_over_when_the_first_dies(world):
    first = world.sim()
    node = bridge(world, 0.0)
    states = timed_states(world)
    world.wait_for(lambda: states, START_S, 'joint states')
    world.wait_for(lambda: stamp_s(states[-1][1]) > 1.5, START_S, 'sim time past 1.5 s')

    second = world.sim()
    node.wait_output('a second publisher', START_S)
    overlap_from = len(states)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        world.spin()
    stamps = [stamp_s(m) for _, m in states[overlap_from:]]
    assert stamps == sorted(stamps), 'while both run, reports come from the first only'
    assert node.count('a second publisher') == 1, node.output()

    last_stamp = stamp_s(states[-1][1])
    killed_at = time.time()
    os.killpg(first.proc.pid, signal.SIGKILL)
    first.proc.wait(10)
    world.wait_for(lambda: stamp_s(states[-1][1]) < last_stamp, START_S,
                   'joint states of the second simulator')
    taken_over = next(t for t, m in states if t > killed_at and stamp_s(m) < last_stamp)
    print(f'\nthe second simulator took over {(taken_over - killed_at) * 1e3:.0f} ms '
          f'after the first was killed')
    assert taken_over - killed_at < 1.0
    assert node.proc.poll() is None
    assert second.proc.poll() is None
