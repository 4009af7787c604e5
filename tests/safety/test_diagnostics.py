"""/diagnostics (diagnostic_msgs/msg/DiagnosticArray) of the node and of the Python script
path, read by rclpy: one status per robot named `<node>: <robot_name>`, its level and
key-values, the watchdog's state."""

import time

import pytest
from diagnostic_msgs.msg import DiagnosticStatus
from sensor_msgs.msg import JointState

from conftest import (CONFIG, START_S, Controller, python_bridge, statuses, ur3e_bridge,
                      values)

KEYS = {'state_age_sec', 'gazebo_rate_hz', 'ros_publish_rate_hz', 'gazebo_messages',
        'messages_never_reported', 'stale_episodes', 'short_stalls', 'non_finite_messages',
        'periods', 'overruns',
        'targets_accepted', 'targets_refused', 'targets_clamped', 'targets_superseded',
        'incomplete_joint_states', 'joint_states_with_duplicates', 'gz_connections_refused',
        'watchdog'}


def wait_for_status(world, received, what, condition, timeout=15):
    deadline = time.monotonic() + timeout
    while not any(condition(s) for s in received):
        if time.monotonic() > deadline:
            last = received[-1] if received else None
            pytest.fail(f'timed out after {timeout} s waiting for {what}; last status: '
                        f'{last and (last.level, last.message, values(last))}')
        world.spin()
    return next(s for s in reversed(received) if condition(s))


def check_running_then_faulted(world, bridge, received):
    """A running robot is OK with every key; armed, its watchdog says so; faulted, ERROR."""
    ok = wait_for_status(world, received, 'an OK status with rates',
                         lambda s: s.level == DiagnosticStatus.OK
                         and float(values(s)['ros_publish_rate_hz']) > 0)
    kv = values(ok)
    assert set(kv) == KEYS
    assert ok.message == 'running'
    assert ok.hardware_id == 'ur3e_1'
    # 2 ms loop and gz-joint-sim's 500 Hz joint states, on loaded cores: well above 100 Hz.
    assert float(kv['ros_publish_rate_hz']) > 100, kv
    assert float(kv['gazebo_rate_hz']) > 100, kv
    assert 0 <= float(kv['state_age_sec']) < 0.5, kv
    assert kv['watchdog'] == 'disarmed (no trigger received)'
    assert int(kv['targets_accepted']) == int(kv['targets_refused']) == 0
    assert kv['incomplete_joint_states'] == kv['joint_states_with_duplicates'] == '0'
    assert kv['gz_connections_refused'] == '0', 'an unsecured transport refuses nothing'
    assert int(kv['gazebo_messages']) > 0 and int(kv['periods']) > 0, kv

    # The counters count: one target inside the limits, one clamped into them (±2π; the
    # 'clamp' policy), one of the wrong length refused; each sent once over a matched,
    # reliable subscription, the next once the status counted it (a depth-1 publisher
    # replaces a sample not yet acknowledged).
    from std_msgs.msg import Float64MultiArray
    targets = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    for target, counts in (([0.1] * 6, (1, 0, 0)), ([10.0] * 6, (2, 1, 0)),
                           ([0.1] * 5, (2, 1, 1))):
        targets.publish(Float64MultiArray(data=target))
        counted = wait_for_status(
            world, received, f'targets (accepted, clamped, refused) == {counts}',
            lambda s: tuple(int(values(s)[k]) for k in
                            ('targets_accepted', 'targets_clamped', 'targets_refused')) == counts)
    kv = values(counted)
    assert (kv['targets_accepted'], kv['targets_clamped'], kv['targets_refused']) == \
        ('2', '1', '1'), kv
    assert int(kv['gazebo_messages']) > int(values(ok)['gazebo_messages']), kv
    assert int(kv['messages_never_reported']) <= int(kv['gazebo_messages']), kv

    controller = Controller(world, 'ur3e_1')
    controller.trigger(period=5.0, delay=0.5)
    armed = wait_for_status(world, received, 'the watchdog armed',
                            lambda s: values(s)['watchdog'].startswith('armed'))
    assert values(armed)['watchdog'].startswith('armed: period 5 s, maximum delay 0.5 s, last trigger')

    controller.trigger(period=5.0, delay=0.5, status=False)
    faulted = wait_for_status(world, received, 'an ERROR status',
                              lambda s: s.level == DiagnosticStatus.ERROR)
    assert 'stopped by the watchdog' in faulted.message
    assert 'The watchdog status is false!' in faulted.message
    assert values(faulted)['watchdog'] == 'fault: The watchdog status is false!'
    assert bridge.wait_exit(10) == 1, bridge.output()


def test_the_node_reports_each_robot_ok_then_its_watchdog_then_its_fault(world):
    received = statuses(world, 'ur3e_1: ur3e_1')
    bridge = ur3e_bridge(world)
    # Without Gazebo: a warning that it waits.
    waiting = wait_for_status(world, received, 'a status while waiting for Gazebo',
                              lambda s: True, timeout=START_S)
    assert waiting.level == DiagnosticStatus.WARN
    assert waiting.message.startswith('waiting for the robot')
    world.sim()
    check_running_then_faulted(world, bridge, received)


def test_the_python_script_path_reports_the_same_status(world):
    received = statuses(world, 'ur3e_1: ur3e_1')
    world.sim()
    bridge = python_bridge(world, '-r', '__node:=ur3e_1', '--params-file', CONFIG)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states from the script')
    check_running_then_faulted(world, bridge, received)
