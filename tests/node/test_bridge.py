"""End to end: gz-joint-sim (the Gazebo stand-in), sas_robot_driver_ros_gazebo_node and an
rclpy client, each in its own process, over real gz-transport and DDS."""

import math
import signal
import time

import pytest
from rcl_interfaces.srv import GetParameters
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import CONFIG, UR3E_JOINTS, wait_for
from support import binary, check_help_against_node
from support.ros import check_a_refused_elbow_target_is_not_forwarded

TAU = 2 * math.pi
# ur3e.sdf, in joint order: ±2π, ±2π, ±π, ±2π, ±2π, ±inf.
UR3E_LOWER = [-TAU, -TAU, -math.pi, -TAU, -TAU, -math.inf]
UR3E_UPPER = [TAU, TAU, math.pi, TAU, TAU, math.inf]
START_S = 30      # process start + discovery, on 2 loaded cores
MOTION_S = 30     # joints move at <= 0.25 rad/s in sim time


def ur3e_bridge(world, *extra):
    """The node as the README runs it: config/config.yaml, block ur3e_1."""
    return world.bridge('-r', '__node:=ur3e_1', '--params-file', CONFIG, *extra)


def array(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def wait_for_target(world, states, target, what, tolerance=1e-6):
    world.wait_for(lambda: states and all(abs(p - t) < tolerance
                                          for p, t in zip(states[-1].position, target)),
                   MOTION_S, what)


def test_config_yaml_bridge_publishes_named_states_and_sdf_limits_and_moves_joints(world):
    world.sim()
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    lower = world.subscribe(Float64MultiArray, '/ur3e_1/get/joint_positions_min')
    upper = world.subscribe(Float64MultiArray, '/ur3e_1/get/joint_positions_max')
    world.wait_for(lambda: states and lower and upper, START_S, 'joint states and limits')
    bridge.wait_output('::Robot initialized.', 5)

    state = states[-1]
    assert list(state.name) == UR3E_JOINTS
    assert len(state.position) == len(state.velocity) == len(state.effort) == 6
    assert state.header.stamp.sec > 1_000_000_000, 'node clock (wall time) by default'
    assert list(lower[-1].data) == UR3E_LOWER
    assert list(upper[-1].data) == UR3E_UPPER

    target = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]
    world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions').publish(
        array(target))
    wait_for_target(world, states, target, 'the joints to reach the target')
    assert bridge.count('::Target refused') == 0
    assert bridge.proc.poll() is None


def test_states_are_the_simulators_positions_by_name_in_joint_names_order(world):
    """A shuffled joint_names and the Fortress prefix; the simulator's positions are read
    independently by the real Ignition CLI."""
    shuffled = ['wrist_3_joint', 'elbow_joint', 'shoulder_pan_joint', 'wrist_1_joint',
                'shoulder_lift_joint', 'wrist_2_joint']
    params = world.params_file(f"""
shuffled_bridge:
  ros__parameters:
    joint_names: {shuffled}
    joint_positions_topic_prefix: "/model/ur3e/joint/"
    joint_states_topic: "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
    robot_name: "shuffled"
    gz_msgs_prefix: "ignition.msgs."
""")
    world.sim('--msgs-prefix', 'ignition.msgs.')
    world.bridge('-r', '__node:=shuffled_bridge', '--params-file', params)
    states = world.subscribe(JointState, '/shuffled/get/joint_states')
    lower = world.subscribe(Float64MultiArray, '/shuffled/get/joint_positions_min')
    world.wait_for(lambda: states and lower, START_S, 'joint states and limits')
    assert list(states[-1].name) == shuffled
    assert list(lower[-1].data) == [UR3E_LOWER[UR3E_JOINTS.index(j)] for j in shuffled]

    by_name = {'shoulder_pan_joint': 0.05, 'shoulder_lift_joint': -0.1, 'elbow_joint': 0.15,
               'wrist_1_joint': -0.2, 'wrist_2_joint': 0.25, 'wrist_3_joint': -0.3}
    target = [by_name[j] for j in shuffled]
    world.publisher(Float64MultiArray, '/shuffled/set/target_joint_positions').publish(
        array(target))
    wait_for_target(world, states, target, 'the joints to reach the target')

    gazebo = world.gazebo_positions()
    world.spin()
    reported = dict(zip(states[-1].name, states[-1].position))
    for joint in shuffled:
        assert reported[joint] == pytest.approx(gazebo[joint], abs=1e-6), joint
        assert reported[joint] == pytest.approx(by_name[joint], abs=1e-3), joint


def test_invalid_targets_are_refused_while_the_node_keeps_publishing(world):
    world.sim()
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states')
    targets = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    good = [0.05] * 6
    targets.publish(array(good))
    wait_for_target(world, states, good, 'the joints to reach the valid target')

    # One refusal is logged per second at most: send each bad target until its line shows.
    for bad, line in [
        ([0.3] * 5, 'expected 6 values, got 5.'),
        ([0.3, 0.3, math.nan, 0.3, 0.3, 0.3], 'value 2 (elbow_joint) is NaN'),
        ([0.3] * 5 + [math.inf], 'value 5 (wrist_3_joint) is inf'),
    ]:
        def refused():
            targets.publish(array(bad))
            end = time.monotonic() + 0.2
            while time.monotonic() < end:
                world.spin()
            return bridge.count(line) > 0
        wait_for(refused, 15, f'the refusal {line!r}')
        assert bridge.count('::Target refused::') > 0

    received = len(states)
    world.wait_for(lambda: len(states) >= received + 100, 10, 'joint states after refusals')
    assert all(math.isfinite(p) for p in states[-1].position)
    assert list(states[-1].position) == pytest.approx(good, abs=1e-3), \
        'the previous target stays in force'
    assert bridge.proc.poll() is None


@pytest.mark.parametrize('block, message', [
    ('joint_names: ["shoulder_pan_joint"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"',
     'parameter "robot_name" is missing'),
    ('joint_names: ["shoulder_pan_joint"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    thread_sampling_time_sec: 1',
     'parameter "thread_sampling_time_sec" must be a double'),
    ('joint_names: ["shoulder_pan_joint"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    thread_sampling_time_sec: 0.0',
     'parameter "thread_sampling_time_sec" is invalid'),
    ('joint_names: "shoulder_pan_joint"\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"',
     'parameter "joint_names" must be a string array'),
    ('joint_names: ["a", "a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"',
     'parameter "joint_names" is invalid'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    target_limit_policy: "wrap"',
     'parameter "target_limit_policy" is invalid'),
    ('joint_names: ["a", "b"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    joint_velocity_limits: [1.0]',
     'parameter "joint_velocity_limits" is invalid: RobotDriverGazebo: joint_velocity_limits is '
     'invalid: it has 1 values for 2 joints'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    joint_effort_limits: [-5.0]',
     'value 0 (a) is -5; a limit is positive'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    command_timeout_sec: 0.0',
     'parameter "command_timeout_sec" is invalid'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    publish_clock: "yes"',
     'parameter "publish_clock" must be a bool'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    publish_clock: true\n'
     '    gazebo_clock_topic: ""',
     'parameter "gazebo_clock_topic" is invalid: it is empty'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n'
     '    joint_states_topic: "/s"\n    robot_name: "r"\n    publish_clock: true\n'
     '    gazebo_clock_topic: "not a topic"',
     'parameter "gazebo_clock_topic" is invalid: invalid topic name "not a topic"'),
])
def test_a_missing_or_bad_parameter_exits_non_zero_naming_it(world, block, message):
    params = world.params_file(f'ur3e_1:\n  ros__parameters:\n    {block}\n')
    bridge = world.bridge('-r', '__node:=ur3e_1', '--params-file', params)
    assert bridge.wait_exit(START_S) == 2, bridge.output()
    assert message in bridge.output()


def test_a_remapped_node_name_applies_its_own_block_and_the_default_period(world):
    params = world.params_file("""
ur3e_1:
  ros__parameters:
    robot_name: "not_this_one"
other:
  ros__parameters:
    joint_names: ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
    joint_positions_topic_prefix: "/model/ur3e/joint/"
    joint_states_topic: "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
    robot_name: "other_robot"
""")
    world.sim()
    world.bridge('-r', '__node:=other', '--params-file', params)
    states = world.subscribe(JointState, '/other_robot/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states on /other_robot')
    assert list(states[-1].name) == UR3E_JOINTS

    client = world.node.create_client(GetParameters, '/other/get_parameters')
    world.wait_for(client.service_is_ready, START_S, 'the parameter service of /other')
    future = client.call_async(GetParameters.Request(
        names=['robot_name', 'thread_sampling_time_sec', 'joint_states_stamp']))
    world.wait_for(future.done, 10, 'the parameter values')
    robot_name, period, stamp = future.result().values
    assert robot_name.string_value == 'other_robot'
    assert period.double_value == 0.002
    assert stamp.string_value == 'node_clock'


def test_help_lists_every_parameter_with_the_default_the_node_declares(world):
    """`--help`'s table against the running node: every parameter the node declares has a
    row, and every optional row's default is the value the node declared when nothing set
    it. The help text once said target_keepalive_sec 0.0 while the node defaulted to 1.0."""
    params = world.params_file("""
help_check:
  ros__parameters:
    joint_names: ["a"]
    joint_positions_topic_prefix: "/model/m/joint/"
    joint_states_topic: "/world/w/model/m/joint_state"
    robot_name: "help_check"
""")
    # No Gazebo: the node declares its parameters and waits in initialize.
    bridge = world.bridge('-r', '__node:=help_check', '--params-file', params)
    bridge.wait_output('::Initializing robot', START_S)
    check_help_against_node(world, binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node'),
                            '/help_check', {'joint_names', 'joint_positions_topic_prefix',
                                            'joint_states_topic', 'robot_name'})


def stop_time(bridge, signum, log_line: str) -> float:
    """Sends `signum`; the node must exit with status 0. The seconds from sending to the
    node's log stamp of `log_line`: by its own stamp, since this process may get round to
    looking later."""
    sent = time.time()
    bridge.signal(signum)
    assert bridge.wait_exit(10) == 0, bridge.output()
    return bridge.log_stamp(log_line) - sent


def test_sigterm_stops_the_node_with_status_0_within_a_second(world):
    world.sim()
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states')
    stopped = stop_time(bridge, signal.SIGTERM, '::Control loop stopped after')
    assert stopped < 1.0, f'the loop stopped {stopped:.3f} s after SIGTERM'


def test_without_gazebo_the_node_waits_publishing_nothing_and_sigint_stops_it(world):
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    bridge.wait_output('::Initializing robot...', START_S)
    world.wait_for(lambda: world.node.count_publishers('/ur3e_1/get/joint_states') > 0,
                   START_S, 'the joint_states publisher to be discovered')
    # Discovered, matched, and still nothing: nothing is published before initialize.
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        world.spin()
    assert states == []
    stopped = stop_time(bridge, signal.SIGINT, '::Stopped while initializing')
    assert stopped < 1.0, f'stopped {stopped:.3f} s after SIGINT, by the node\'s log stamp'


def test_a_second_publisher_and_a_mode_without_a_controller_are_logged_not_fatal(world):
    """The position world has no JointController: velocity targets are refused (one error
    per second at most) and leave the position target in force."""
    world.sim()
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'joint states')
    first = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    second = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    bridge.wait_output('/ur3e_1/set/target_joint_positions has 2 publishers', 15)
    first.publish(array([0.02] * 6))
    second.publish(array([0.04] * 6))

    velocities = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_velocities')
    for _ in range(3):
        velocities.publish(array([0.1] * 6))
    refused = 'set_target_joint_velocities: nothing subscribes to'
    bridge.wait_output(refused, 10)

    wait_for_target(world, states, [0.04] * 6, 'the latest target to win')
    assert bridge.count(refused) == 1
    assert bridge.proc.poll() is None


def test_gazebo_stamps_and_the_refuse_policy(world):
    """Refused, proved on Gazebo's side: the Ignition CLI echoing the elbow's command topic
    sees the previous target only, also at the keepalive after the refusal."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    elbow = world.gazebo_commands('/model/ur3e/joint/elbow_joint/0/cmd_pos')
    bridge = ur3e_bridge(world, '-p', 'joint_states_stamp:=gazebo',
                         '-p', 'target_limit_policy:=refuse',
                         '-p', 'gz_msgs_prefix:=ignition.msgs.')
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: len(states) > 10, START_S, 'joint states')
    stamps = [s.header.stamp.sec + s.header.stamp.nanosec * 1e-9 for s in states[-10:]]
    assert 0 < stamps[0] < 3600, 'simulation time, not wall time'
    assert stamps == sorted(stamps)

    targets = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    check_a_refused_elbow_target_is_not_forwarded(
        world, targets, elbow, bridge, 'value 2 (elbow_joint) = 4 is outside the joint limits')


def test_an_initialize_timeout_without_gazebo_exits_1_naming_what_is_missing(world):
    bridge = ur3e_bridge(world, '-p', 'initialize_timeout_sec:=1.0')
    assert bridge.wait_exit(START_S) == 1, bridge.output()
    assert 'timed out after 1.0 s waiting for joint states' in bridge.output()
    assert 'still missing: shoulder_pan_joint, shoulder_lift_joint' in bridge.output()
