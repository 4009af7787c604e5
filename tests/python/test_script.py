"""The legacy script path end to end: gz-joint-sim, `scripts/sas_robot_driver_ros_gazebo.py`
(run as the launch file's `implementation:=python` runs it) and an rclpy client, each in its
own process; the node `sas_robot_driver_ros_gazebo_node` with the same arguments is the
reference for the topics and values."""

import math
import pathlib
import signal
import time

import pytest
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import CONFIG, SCRIPT, START_S, UR3E_JOINTS, binary
from support.ros import RosClient

HERE = pathlib.Path(__file__).resolve().parent

TAU = 2 * math.pi
UR3E_LOWER = [-TAU, -TAU, -math.pi, -TAU, -TAU, -math.inf]
UR3E_UPPER = [TAU, TAU, math.pi, TAU, TAU, math.inf]
MOTION_S = 30
# The bridge's QoS on every topic: KeepLast(1), reliable, volatile.
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)
ROS_ARGS = ['--ros-args', '-r', '__node:=ur3e_1', '--params-file', str(CONFIG)]
# The original's RobotDriverServer surface (at least these).
SURFACE = {'get/joint_states', 'get/joint_positions_min', 'get/joint_positions_max',
           'get/home_states', 'set/target_joint_positions', 'set/target_joint_velocities',
           'set/target_joint_forces', 'set/homing_signal', 'set/clear_positions'}


class Client(RosClient):
    """An rclpy node in this test's ROS domain."""

    def __init__(self, domain: int):
        super().__init__(domain, 'script_test_client')

    def subscribe(self, msg_type, topic: str) -> list:
        received = []
        self.node.create_subscription(msg_type, topic, received.append, DEPTH_ONE)
        return received

    def publisher(self, topic: str):
        publisher = self.node.create_publisher(Float64MultiArray, topic, DEPTH_ONE)
        self.wait_for(lambda: publisher.get_subscription_count() > 0, START_S,
                      f'a subscriber on {topic}')
        return publisher

    def surface(self, prefix: str) -> dict:
        """The topics under `prefix` with their types, and the bridge node's name."""
        topics = {name: tuple(types) for name, types in self.node.get_topic_names_and_types()
                  if name.startswith(prefix)}
        nodes = {f'{ns.rstrip("/")}/{name}'
                 for name, ns in self.node.get_node_names_and_namespaces()}
        return {'topics': topics, 'nodes': nodes - {'/script_test_client'}}


@pytest.fixture
def client(world):
    c = Client(world.domain)
    try:
        yield c
    finally:
        c.close()


def observe(client, prefix: str, process, node_name: str = '/ur3e_1') -> dict:
    """What a running bridge shows on ROS: its surface, one state, the limits."""
    states = client.subscribe(JointState, f'{prefix}/get/joint_states')
    lower = client.subscribe(Float64MultiArray, f'{prefix}/get/joint_positions_min')
    upper = client.subscribe(Float64MultiArray, f'{prefix}/get/joint_positions_max')
    client.wait_for(lambda: states and lower and upper or process.proc.poll() is not None,
                    START_S, f'joint states and limits on {prefix}')
    assert process.proc.poll() is None, process.output()
    client.wait_for(lambda: {f'{prefix}/{t}' for t in SURFACE} <= set(
        client.surface(prefix)['topics']), START_S, f'the topics under {prefix}')
    client.wait_for(lambda: node_name in client.surface(prefix)['nodes'], START_S,
                    f'the node {node_name}')
    return {'surface': client.surface(prefix), 'states': states, 'lower': lower[-1].data,
            'upper': upper[-1].data}


def wait_for_target(client, states, target):
    client.wait_for(lambda: all(abs(p - t) < 1e-6 for p, t in zip(states[-1].position, target)),
                    MOTION_S, f'the joints to reach {target}')


def test_the_script_serves_the_nodes_topics_and_values_and_stops_on_sigint(world, client):
    world.sim()
    script = world.python(SCRIPT, *ROS_ARGS)
    seen = observe(client, '/ur3e_1', script)
    script.wait_output('::Robot initialized.', 5)
    assert '::Loading parameters from parameter server.' in script.output()

    state = seen['states'][-1]
    assert list(state.name) == UR3E_JOINTS
    assert len(state.position) == len(state.velocity) == len(state.effort) == 6
    assert state.header.stamp.sec > 1_000_000_000, 'node clock (wall time), as configured'
    assert list(seen['lower']) == UR3E_LOWER and list(seen['upper']) == UR3E_UPPER
    assert '/ur3e_1' in seen['surface']['nodes']

    target = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]
    client.publisher('/ur3e_1/set/target_joint_positions').publish(
        Float64MultiArray(data=target))
    wait_for_target(client, seen['states'], target)

    sent = time.time()
    script.signal(signal.SIGINT)
    assert script.wait_exit(10) == 0, script.output()
    # By the script's own log stamp: this process may get round to looking later.
    stopped = script.log_stamp('::Control loop stopped after') - sent
    assert stopped < 2.0, f'the loop stopped {stopped:.3f} s after SIGINT'
    client.wait_for(lambda: '/ur3e_1' not in client.surface('/ur3e_1')['nodes'], START_S,
                    'the script node to leave the graph')

    # The node, same arguments, same Gazebo (joints holding the target): same surface, values.
    node = world.start([binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node'),
                        *ROS_ARGS])
    reference = observe(client, '/ur3e_1', node)
    assert reference['surface'] == seen['surface']
    assert list(reference['lower']) == list(seen['lower'])
    assert list(reference['upper']) == list(seen['upper'])
    assert list(reference['states'][-1].name) == list(state.name)
    wait_for_target(client, reference['states'], target)
    node.signal(signal.SIGTERM)
    assert node.wait_exit(10) == 0, node.output()


def test_the_script_publishes_gazebos_clock_and_stamps_sim_time(world, client):
    """publish_clock and use_sim_time on the script path: the node in the Python process
    publishes /clock itself, and stamps its joint states with it."""
    world.sim()
    script = world.python(SCRIPT, *ROS_ARGS, '-p', 'publish_clock:=true',
                          '-p', 'use_sim_time:=true')
    clocks = []
    client.node.create_subscription(
        Clock, '/clock', lambda m: clocks.append(m.clock.sec + m.clock.nanosec * 1e-9),
        QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    states = client.subscribe(JointState, '/ur3e_1/get/joint_states')
    client.wait_for(lambda: len(clocks) > 10 and len(states) > 10, START_S,
                    '/clock and joint states from the script')
    assert client.node.count_publishers('/clock') == 1
    stamp = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec * 1e-9
    assert 0 < clocks[0] < clocks[-1] < 1_000_000, 'sim time, not wall time'
    assert abs(stamp - clocks[-1]) < 0.5, f'joint states stamped {stamp}, /clock {clocks[-1]}'


def test_the_original_classes_publish_gazebos_clock_when_configured(world, client):
    """RobotDriverROSConfiguration(publish_clock=True): RobotDriverROS publishes /clock, and
    with use_sim_time in its arguments stamps its joint states with it."""
    world.sim()
    child = world.python(HERE / 'clock_from_library.py', world.partition)
    clocks = []
    client.node.create_subscription(
        Clock, '/clock', lambda m: clocks.append(m.clock.sec + m.clock.nanosec * 1e-9),
        QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    states = client.subscribe(JointState, '/ur3e_1/get/joint_states')
    client.wait_for(lambda: (len(clocks) > 10 and len(states) > 10) or not child.alive(),
                    START_S, '/clock and joint states from RobotDriverROS')
    assert child.alive(), child.output()
    assert client.node.count_publishers('/clock') == 1
    stamp = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec * 1e-9
    assert 0 < stamp < 1_000_000 and abs(stamp - clocks[-1]) < 0.5, (stamp, clocks[-1])
    child.signal(signal.SIGTERM)
    assert child.wait_exit(10) == 0, child.output()
    assert child.count('loop returned') == 1


def test_sigterm_while_waiting_for_gazebo_exits_0(world, client):
    """No simulator: the script waits in initialize, publishing nothing, until SIGTERM."""
    script = world.python(SCRIPT, *ROS_ARGS)
    script.wait_output('::Initializing robot...', START_S)
    states = client.subscribe(JointState, '/ur3e_1/get/joint_states')
    client.wait_for(lambda: client.node.count_publishers('/ur3e_1/get/joint_states') > 0,
                    START_S, 'the joint_states publisher to be discovered')
    sent = time.time()
    script.signal(signal.SIGTERM)
    assert script.wait_exit(10) == 0, script.output()
    stopped = script.log_stamp('::Stopped while initializing') - sent
    assert stopped < 2.0, f'stopped {stopped:.3f} s after SIGTERM, by the script\'s log stamp'
    assert states == []


def test_sigterm_in_the_loop_exits_0(world, client):
    world.sim()
    script = world.python(SCRIPT, *ROS_ARGS)
    states = client.subscribe(JointState, '/ur3e_1/get/joint_states')
    client.wait_for(lambda: states, START_S, 'joint states')
    script.signal(signal.SIGTERM)
    assert script.wait_exit(10) == 0, script.output()
    assert '::Control loop stopped after' in script.output()


BLOCK = ('joint_positions_topic_prefix: "/m/"\n    joint_states_topic: "/s"\n'
         '    robot_name: "r"')


@pytest.mark.parametrize('block, status, message', [
    (BLOCK, 2, 'parameter "joint_names" is missing: node /ur3e_1 needs a string array'),
    ('joint_names: ["a"]\n    joint_positions_topic_prefix: "/m/"\n    robot_name: "r"', 2,
     'parameter "joint_states_topic" is missing'),
    (f'joint_names: ["a"]\n    {BLOCK}\n    thread_sampling_time_sec: 1', 2,
     'parameter "thread_sampling_time_sec" must be a double in seconds, e.g. 0.002 '
     '(write 1.0, not 1), but it is an integer (1).'),
    (f'joint_names: ["a"]\n    {BLOCK}\n    thread_sampling_time_sec: 0.0', 2,
     'parameter "thread_sampling_time_sec" is invalid: 0 s; it must be greater than zero'),
    (f'joint_names: "a"\n    {BLOCK}', 2, 'parameter "joint_names" must be a string array'),
    (f'joint_names: ["EMPTY_LIST"]\n    {BLOCK}', 2, 'RobotDriverGazebo: joint_names is empty.'),
    (f'joint_names: ["a", "a"]\n    {BLOCK}', 2,
     'RobotDriverGazebo: joint_names has "a" twice (at 0 and 1).'),
    (f'joint_names: ["a"]\n    {BLOCK}\n    target_limit_policy: "wrap"', 2,
     'parameter "target_limit_policy" is invalid: unknown policy "wrap"'),
    (f'joint_names: ["a"]\n    {BLOCK}\n    initialize_timeout_sec: 0.5', 1,
     '::Exception caught::RobotDriverGazebo::initialize: timed out after 0.5 s waiting for '
     'joint states on [/s]; still missing: a.'),
])
def test_errors_exit_non_zero_with_a_message_naming_what_is_wrong(world, block, status,
                                                                  message):
    """The node's own messages: the script runs the node."""
    params = world.tmp / 'params.yaml'
    params.write_text(f'ur3e_1:\n  ros__parameters:\n    {block}\n')
    script = world.python(SCRIPT, '--ros-args', '-r', '__node:=ur3e_1', '--params-file', params)
    assert script.wait_exit(START_S) == status, script.output()
    assert '[ERROR] [' in script.output() and '] [ur3e_1]: ::Exception' in script.output()
    assert message in script.output()


def test_bad_ros_arguments_exit_2(world):
    script = world.python(SCRIPT, '--ros-args', '--params-file', world.tmp / 'missing.yaml')
    assert script.wait_exit(START_S) == 2, script.output()
    assert 'cannot initialise ROS (check --ros-args)' in script.output()
