"""Several robots in one sas_robot_driver_ros_gazebo_node (the `robots` parameter): one
process, one executor, one gz-transport node, a control loop per robot. The simulators
(gz-joint-sim) and the node share the test's gz partition and ROS domain."""

import signal

import pytest
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import (MOTION_S, MULTI_ROBOT_CONFIG, R820_JOINTS, R820_WORLD, START_S,
                      UR3E_JOINTS, UR3E_WORLD)
from support.ros import check_a_refused_elbow_target_is_not_forwarded

R820_BLOCK = """      joint_names: ["joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7"]
      joint_positions_topic_prefix: "/model/r820/joint/"
      joint_states_topic: "/world/r820_world/model/r820/model/r820_position_controller/model/r820/joint_state"
"""
UR3E_BLOCK = """      joint_names: ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
      joint_positions_topic_prefix: "/model/ur3e/joint/"
      joint_states_topic: "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
"""


def array(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def reached(states, target, tolerance=1e-6) -> bool:
    return bool(states) and len(states[-1].position) == len(target) and all(
        abs(p - t) < tolerance for p, t in zip(states[-1].position, target))


def wait_for_target(world, states, target, what):
    world.wait_for(lambda: reached(states, target), MOTION_S, what)


def test_two_robots_in_one_process_are_commanded_independently_and_survive_each_others_world(
        world):
    world.sim(UR3E_WORLD)
    r820_world = world.sim(R820_WORLD)
    node = world.node_process('multi_robot', MULTI_ROBOT_CONFIG)
    ur3e = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    r820 = world.subscribe(JointState, '/r820_1/get/joint_states')
    world.wait_for(lambda: ur3e and r820, START_S, 'joint states of both robots')
    assert list(ur3e[-1].name) == UR3E_JOINTS
    assert list(r820[-1].name) == R820_JOINTS
    node.wait_output('[ur3e_1] ::Robot initialized.', 5)
    node.wait_output('[r820_1] ::Robot initialized.', 5)
    r820_start = list(r820[-1].position)

    # Each robot moves on its own targets only.
    ur3e_targets = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    ur3e_target = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]
    ur3e_targets.publish(array(ur3e_target))
    wait_for_target(world, ur3e, ur3e_target, 'the UR3e to reach its target')
    assert list(r820[-1].position) == pytest.approx(r820_start, abs=1e-9), \
        'the R820 moved on the UR3e target'
    r820_target = [0.2, -0.1, 0.15, -0.2, 0.1, -0.05, 0.3]
    world.publisher(Float64MultiArray, '/r820_1/set/target_joint_positions').publish(
        array(r820_target))
    wait_for_target(world, r820, r820_target, 'the R820 to reach its target')
    assert reached(ur3e, ur3e_target), 'the UR3e moved on the R820 target'

    # The R820's world goes away: the UR3e keeps publishing and following targets.
    r820_world.kill()
    second = [-0.1, 0.1, -0.2, 0.15, -0.25, 0.2]
    ur3e_targets.publish(array(second))
    wait_for_target(world, ur3e, second, 'the UR3e to follow a target after the R820 world left')
    received = len(ur3e)
    world.wait_for(lambda: len(ur3e) >= received + 100, 10, 'UR3e joint states')
    # The R820's state is stale: said once, naming it, and never published as fresh (the
    # original went on reporting the last state it got).
    node.wait_output('Robot r820_1 is stale', 10)
    received, ur3e_received = len(r820), len(ur3e)
    world.wait_for(lambda: len(ur3e) >= ur3e_received + 100, 10, 'UR3e joint states')
    assert len(r820) <= received + 1, 'the stale R820 state was published'
    assert reached(r820, r820_target)
    assert node.alive()
    assert node.count('Exception') == 0, node.output()

    node.signal(signal.SIGTERM)
    assert node.wait_exit(10) == 0, node.output()
    assert node.count('::Control loop stopped after') == 2, node.output()


def test_a_robot_that_fails_leaves_the_others_running_and_the_node_exits_1(world):
    params = world.params_file(f"""
isolated:
  ros__parameters:
    robots: ["ur3e_1", "ghost"]
    ur3e_1:
{UR3E_BLOCK}    ghost:
      joint_names: ["joint1"]
      joint_positions_topic_prefix: "/model/ghost/joint/"
      joint_states_topic: "/world/nowhere/model/ghost/joint_state"
      initialize_timeout_sec: 1.0
""")
    world.sim(UR3E_WORLD)
    node = world.node_process('isolated', params)
    node.wait_output('[ghost] ::Exception caught::RobotDriverGazebo::initialize: timed out',
                     START_S)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: states, START_S, 'UR3e joint states')
    target = [0.05, -0.05, 0.05, -0.05, 0.05, -0.05]
    world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions').publish(
        array(target))
    wait_for_target(world, states, target, 'the UR3e to reach its target')
    assert node.alive()

    node.signal(signal.SIGTERM)
    assert node.wait_exit(10) == 1, 'a robot failed: the node reports it when it stops'
    assert '[ur3e_1] ::Control loop stopped after' in node.output()


def test_the_nodes_optional_parameters_are_every_robots_defaults(world):
    """The node's target_limit_policy "refuse" is the UR3e's; the R820 overrides it with
    "clamp". Proved on Gazebo's side (the Ignition CLI echoing the command topics): the UR3e's
    out-of-limit target never reaches Gazebo, whose elbow keeps the previous command; the
    R820's reaches it clamped to the limit."""
    params = world.params_file(f"""
defaults:
  ros__parameters:
    target_limit_policy: "refuse"
    gz_msgs_prefix: "ignition.msgs."
    robots: ["ur3e_1", "r820_1"]
    ur3e_1:
{UR3E_BLOCK}    r820_1:
{R820_BLOCK}      target_limit_policy: "clamp"
      robot_name: "clamping_r820"
""")
    world.sim(UR3E_WORLD, '--msgs-prefix', 'ignition.msgs.')
    world.sim(R820_WORLD, '--msgs-prefix', 'ignition.msgs.')
    elbow = world.gazebo_commands('/model/ur3e/joint/elbow_joint/0/cmd_pos')
    joint1 = world.gazebo_commands('/model/r820/joint/joint1/0/cmd_pos')
    node = world.node_process('defaults', params)
    refusing = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    clamping = world.subscribe(JointState, '/clamping_r820/get/joint_states')
    r820_upper = world.subscribe(Float64MultiArray, '/clamping_r820/get/joint_positions_max')
    world.wait_for(lambda: refusing and clamping and r820_upper, START_S,
                   'joint states of both robots, the R820\'s limits')

    # elbow_joint is limited to ±π, joint1 to ±2.967 rad.
    ur3e_targets = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    check_a_refused_elbow_target_is_not_forwarded(world, ur3e_targets, elbow, node,
                                                  '[ur3e_1] ::Target refused::')

    world.publisher(Float64MultiArray, '/clamping_r820/set/target_joint_positions').publish(
        array([4.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]))
    node.wait_output('[clamping_r820] RobotDriverGazebo::set_target_joint_positions: clamped',
                     15)
    world.wait_for(lambda: joint1(), 10, "the R820's target at Gazebo")
    limit = r820_upper[-1].data[0]
    assert 2.9 < limit < 3.0
    assert set(joint1()) == {limit}, f'Gazebo got {joint1()}, not the limit {limit}'
    assert node.count('::Target refused::') == 1


def test_several_robots_publish_one_clock_from_the_world_named(world):
    """Both worlds publish `/clock` in the partition: the node reads the UR3e world's own
    clock topic, so /clock on ROS is that world's only, from one publisher."""
    params = world.params_file(f"""
clocked:
  ros__parameters:
    publish_clock: true
    gazebo_clock_topic: "/world/ur3e_world/clock"
    use_sim_time: true
    robots: ["ur3e_1", "r820_1"]
    ur3e_1:
{UR3E_BLOCK}    r820_1:
{R820_BLOCK}""")
    world.sim(UR3E_WORLD)
    node = world.node_process('clocked', params)
    node.wait_output('[ur3e_1] ::Initializing robot...', START_S)
    # Started later: its sim time is seconds behind the UR3e world's.
    world.sim(R820_WORLD)
    clocks = []
    world.node.create_subscription(
        Clock, '/clock', lambda m: clocks.append(m.clock.sec + m.clock.nanosec * 1e-9),
        QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    r820 = world.subscribe(JointState, '/r820_1/get/joint_states')
    world.wait_for(lambda: len(clocks) > 200 and r820, START_S, '/clock and the R820 states')
    assert world.node.count_publishers('/clock') == 1
    assert node.count("::Publishing Gazebo's clock [/world/ur3e_world/clock]") == 1
    # One world's clock: it never steps back (the R820 world's would, by seconds).
    steps_back = [(a, b) for a, b in zip(clocks, clocks[1:]) if b < a]
    assert not steps_back, f'/clock stepped back: {steps_back[:3]}'
    # Every robot's stamps are that clock (use_sim_time), the R820's too.
    stamp = r820[-1].header.stamp.sec + r820[-1].header.stamp.nanosec * 1e-9
    assert abs(stamp - clocks[-1]) < 1.0, f'R820 stamped {stamp}, /clock {clocks[-1]}'


@pytest.mark.parametrize('block, message', [
    ('robots: ["a"]\n    a:\n      joint_positions_topic_prefix: "/m/"\n'
     '      joint_states_topic: "/s"',
     'parameter "a.joint_names" is missing'),
    ('robots: ["a"]\n    a:\n' + UR3E_BLOCK + '      thread_sampling_time_sec: 1',
     'parameter "a.thread_sampling_time_sec" must be a double'),
    ('robots: ["a", "b"]\n    a:\n' + UR3E_BLOCK + '      robot_name: "same"\n    b:\n' +
     UR3E_BLOCK + '      robot_name: "same"',
     'parameter "b.robot_name" is invalid: "same" is also the robot_name of "a"'),
    ('robots: ["a"]\n    a:\n' + UR3E_BLOCK + '    composites: ["c"]\n    c:\n'
     '      robots: ["a", "x"]',
     'parameter "c.robots" is invalid: "x" is not a robot of this node'),
    ('robots: ["a", "a"]',
     'parameter "robots" is invalid: "a" is also in `robots`'),
    ('composites: ["c"]\n    c:\n      robots: ["a"]',
     'parameter "composites" is invalid'),
    ('robots: ["a.b"]',
     'parameter "robots" is invalid: "a.b" is not a parameter group name'),
])
def test_a_bad_robot_or_composite_parameter_exits_2_naming_it(world, block, message):
    params = world.params_file(f'robots_node:\n  ros__parameters:\n    {block}\n')
    node = world.node_process('robots_node', params)
    assert node.wait_exit(START_S) == 2, node.output()
    assert message in node.output()


def test_sigint_while_the_robots_wait_for_gazebo_stops_the_node_with_status_0(world):
    node = world.node_process('multi_robot', MULTI_ROBOT_CONFIG)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    node.wait_output('[ur3e_1] ::Initializing robot...', START_S)
    node.wait_output('[r820_1] ::Initializing robot...', START_S)
    world.wait_for(lambda: world.node.count_publishers('/r820_1/get/joint_states') > 0,
                   START_S, 'the R820 publisher to be discovered')
    world.spin_for(0.5)
    assert states == []
    node.signal(signal.SIGINT)
    assert node.wait_exit(10) == 0, node.output()
    assert node.count('::Stopped while initializing') == 2
