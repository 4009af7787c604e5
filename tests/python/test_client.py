"""RobotDriverClient (the controller's side, in the module) end to end: gz-joint-sim, the node
sas_robot_driver_ros_gazebo_node, each in its own process, and the client in this process in
the test's ROS domain, with an rclpy node beside it (its own context) to see what the bridge
publishes and what the client sends. Gazebo's side is read with the real Ignition CLI.
"""

import ctypes
import math
import re
import signal
import subprocess
import threading
import time

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Int32MultiArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

import sas_robot_driver_gazebo as sas
from conftest import HERE, ROOT, START_S, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, binary, \
    wait_for
from support import parse_model_text
from support.ros import DEPTH_ONE, IGN_TOPIC_CLI, RosClient

TAU = 2 * math.pi
# ur3e.sdf, in joint order: ±2π, ±2π, ±π, ±2π, ±2π, ±inf.
UR3E_LOWER = [-TAU, -TAU, -math.pi, -TAU, -TAU, -math.inf]
UR3E_UPPER = [TAU, TAU, math.pi, TAU, TAU, math.inf]
MOTION_S = 30  # joints move at <= 0.25 rad/s in sim time
ROBOT = 'ur3e_client'
PREFIX = f'/{ROBOT}'
EXAMPLE = ROOT / 'scripts' / 'joint_interface_example.py'
# Everything sent, in order: to tell whether anything arrived that should not have.
KEEP_ALL = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)
STOP_S = 2.0
# What a process must never print on its way out.
CRASHES = ['panicked', 'Segmentation fault', 'Fatal Python error', 'terminate called',
           'Aborted', 'core dumped', 'rcutils_set_error_state', 'Failed to delete',
           'double free', 'corrupted']


class Robot:
    """gz-joint-sim (on the Fortress prefix, so the Ignition CLI reads it) and the node serving
    it as ROBOT, with its joint states stamped with Gazebo's sim time (one stamp per Gazebo
    message)."""

    def __init__(self, world):
        self.world = world
        self.sim = world.sim('--msgs-prefix', 'ignition.msgs.')
        params = world.params_file(f"""
{ROBOT}:
  ros__parameters:
    joint_names: {UR3E_JOINTS}
    joint_positions_topic_prefix: "{UR3E_PREFIX}"
    joint_states_topic: "{UR3E_STATES}"
    robot_name: "{ROBOT}"
    gz_msgs_prefix: "ignition.msgs."
    joint_states_stamp: "gazebo"
""")
        self.bridge = world.start([binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node'),
                                   '--ros-args', '-r', f'__node:={ROBOT}',
                                   '--params-file', params])

    def gazebo_positions(self) -> list[float]:
        """The simulator's joint positions in UR3E_JOINTS order, read by the Ignition CLI."""
        out = subprocess.run([IGN_TOPIC_CLI, '-e', '-t', UR3E_STATES, '-n', '1'],
                             env=self.world.env(), capture_output=True, text=True, timeout=30)
        by_name = parse_model_text(out.stdout)
        assert by_name, f'no Model from the Ignition CLI:\n{out.stdout}\n{out.stderr}'
        return [by_name[joint] for joint in UR3E_JOINTS]


@pytest.fixture
def robot(world):
    return Robot(world)


@pytest.fixture
def observer(world):
    """An rclpy node in the test's domain (its own context)."""
    node = RosClient(world.domain, 'client_test_observer')
    try:
        yield node
    finally:
        node.close()


@pytest.fixture
def clients(world):
    """Makes RobotDriverClients in the test's domain; closes them after the test."""
    made = []

    def make(prefix=PREFIX, blacklisted_modes=(), name='controller'):
        client = sas.RobotDriverClient(name, prefix, blacklisted_modes, args=[],
                                       domain_id=world.domain)
        made.append(client)
        return client

    try:
        yield make
    finally:
        for client in made:
            client.close()


@pytest.fixture
def client(robot, clients):
    """A client of the running bridge, enabled."""
    c = clients()
    wait_for(c.is_enabled, START_S, f'the client of {PREFIX} to be enabled')
    return c


def subscribe(observer, msg_type, topic: str, qos=DEPTH_ONE) -> list:
    received = []
    observer.node.create_subscription(msg_type, topic, received.append, qos)
    return received


def send_until(observer, send, arrived, what: str, timeout: float = START_S):
    """Sends every 0.1 s until `arrived()`: a first message can go before discovery matched
    the client's publisher with its subscribers, and the topics are volatile."""
    def sent_and_arrived():
        send()
        observer.spin_for(0.1)
        return arrived()

    wait_for(sent_and_arrived, timeout, what, step=lambda: None)


def test_states_and_limits_are_read_as_the_bridge_publishes_them(client, observer):
    # Every state the bridge publishes, so that the one the client read is among them.
    states = subscribe(observer, JointState, f'{PREFIX}/get/joint_states', KEEP_ALL)
    observer.wait_for(lambda: states, START_S, 'joint states at the observer')

    lower, upper = client.get_joint_limits()
    assert lower.tolist() == UR3E_LOWER and upper.tolist() == UR3E_UPPER
    for values in (client.get_joint_positions(), client.get_joint_velocities(),
                   client.get_joint_forces(), lower, upper):
        assert values.dtype == np.float64 and values.shape == (6,)
    assert client.is_enabled(sas.Functionality.PositionControl)
    assert client.is_enabled(sas.Functionality.VelocityControl)
    assert client.is_enabled(sas.Functionality.ForceControl), 'efforts are published (zeros)'
    assert not client.is_enabled(sas.Functionality.Homing)
    with pytest.raises(RuntimeError, match=f'{PREFIX}/get/home_states'):
        client.get_home_states()

    # One read is one bridge message: same stamp (Gazebo's sim time), same values. The bridge's
    # writer keeps only its last sample (KeepLast 1), so a Python observer on two busy cores can
    # miss the one state a read saw: read again until the observer holds the state read.
    read = {}

    def observer_holds_a_state_read():
        if read and any(_stamp_ns(m) == read['state']['stamp_ns'] for m in states):
            return True
        read['state'] = client.snapshot()
        return False

    observer.wait_for(observer_holds_a_state_read, 10,
                      'the observer to receive a state the client read')
    state = read['state']
    published = next(m for m in states if _stamp_ns(m) == state['stamp_ns'])
    assert state['positions'].tolist() == list(published.position)
    assert state['velocities'].tolist() == list(published.velocity)
    assert state['efforts'].tolist() == list(published.effort)
    assert 0 <= state['age_sec'] < 5 and 0 <= client.get_state_age() < 5

    # wait_for_new_state hands out each newer state once.
    first = client.wait_for_new_state(timeout=10)
    second = client.wait_for_new_state(timeout=10)
    assert state['sequence'] <= first < second
    assert client.snapshot()['sequence'] >= second


def _stamp_ns(message) -> int:
    return message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec


def test_a_target_reaches_gazebo(client, robot, observer):
    target = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]

    def reached():
        client.send_target_joint_positions(np.array(target))
        time.sleep(0.1)
        return np.allclose(client.get_joint_positions(), target, atol=1e-6)

    wait_for(reached, MOTION_S, f'the joints to reach {target}', step=lambda: None)
    assert robot.gazebo_positions() == pytest.approx(target, abs=1e-6)
    assert client.get_joint_positions().tolist() == pytest.approx(robot.gazebo_positions(),
                                                                  abs=1e-9)


@pytest.mark.parametrize('send, topic, msg_type, values, logged', [
    ('send_target_joint_velocities', 'set/target_joint_velocities', Float64MultiArray,
     [0.01, -0.02, 0.03, -0.04, 0.05, -0.06],
     'set_target_joint_velocities: nothing subscribes to [/model/ur3e/joint/'),
    ('send_target_joint_forces', 'set/target_joint_forces', Float64MultiArray,
     [1.0, -2.0, 3.0, -4.0, 5.0, -6.0],
     'set_target_joint_forces: nothing subscribes to [/model/ur3e/joint/'),
    ('send_homing_signal', 'set/homing_signal', Int32MultiArray, [1, 0, 1, 0, 1, 0],
     'homing is not supported'),
    ('send_clear_positions_signal', 'set/clear_positions', Int32MultiArray, [0, 1, 0, 1, 0, 1],
     'clearing positions is not supported'),
])
def test_every_mode_the_client_sends_reaches_the_bridge(client, robot, observer, send, topic,
                                                          msg_type, values, logged):
    """The node's line is its receipt: homing and clearing are accepted and ignored (logged
    once); velocities and efforts are refused, the position world having no controller for
    them (at most one line a second). The observer checks what went over the wire."""
    received = subscribe(observer, msg_type, f'{PREFIX}/{topic}')
    send_until(observer, lambda: getattr(client, send)(values),
               lambda: received and robot.bridge.count(logged),
               f'{topic} at the observer and the node')
    assert list(received[-1].data) == values
    if topic.startswith('set/target_'):
        assert robot.bridge.count(f'::Target refused::RobotDriverGazebo::{logged}') >= 1
    else:
        assert robot.bridge.count(f'::{topic}: {logged}') == 1


def test_targets_reach_the_bridge_as_sent(client, observer):
    received = subscribe(observer, Float64MultiArray, f'{PREFIX}/set/target_joint_positions',
                         KEEP_ALL)
    target = [0.01 * k for k in range(6)]
    send_until(observer, lambda: client.send_target_joint_positions(target),
               lambda: received, 'a target at the observer')
    assert list(received[-1].data) == target


def test_watchdog_triggers_arm_and_feed_the_bridges_watchdog_and_silence_faults_it(client,
                                                                                  robot):
    period = 0.5
    armed = f'::Watchdog initialized with a {period} second period'
    wait_for(lambda: client.send_watchdog_trigger(True, period, 0.5) or robot.bridge.count(armed),
             START_S, 'the watchdog armed', step=lambda: time.sleep(0.1))
    # Fed for four periods: no fault.
    end = time.monotonic() + 4 * period
    while time.monotonic() < end:
        client.send_watchdog_trigger(True, period, 0.5)
        time.sleep(period / 5)
    assert robot.bridge.count('::Watchdog fault::') == 0, robot.bridge.output()
    assert robot.bridge.proc.poll() is None
    # Then silence: the bridge faults and exits 1.
    assert robot.bridge.wait_exit(10 + period) == 1, robot.bridge.output()
    assert 'The watchdog signal was lost!' in robot.bridge.output()


def test_send_shutdown_stops_the_bridge(client, robot):
    received = '::The shutdown signal was received!'
    wait_for(lambda: client.send_shutdown() or robot.bridge.count(received), START_S,
             'the shutdown signal at the bridge', step=lambda: time.sleep(0.1))
    assert robot.bridge.wait_exit(10) == 0, robot.bridge.output()


def test_staleness_is_visible_while_the_simulator_is_stopped(client, robot):
    client.wait_for_new_state(timeout=10)
    held = client.get_joint_positions()
    robot.sim.signal(signal.SIGSTOP)
    try:
        wait_for(lambda: client.get_state_age() > 0.5, 10, 'the state to grow older than 0.5 s')
        with pytest.raises(TimeoutError, match=rf'no new joint state on {PREFIX}/get/joint_states '
                                               r'within 0\.300 s \(\d+ received so far, the '
                                               r'latest \d+\.\d+ s ago'):
            client.wait_for_new_state(timeout=0.3)
        # As the original: the last state stays readable; its age says how old it is.
        assert client.is_enabled()
        assert client.get_joint_positions().tolist() == pytest.approx(held.tolist(), abs=0.01)
        assert client.snapshot()['age_sec'] > 0.5
    finally:
        robot.sim.signal(signal.SIGCONT)
    client.wait_for_new_state(timeout=START_S)
    assert client.get_state_age() < 0.5


def test_limits_sent_once_are_kept_and_a_change_is_taken(world, clients, observer):
    """A server that sends its limits once, when the client's subscriptions match, and on
    change (as bridges do that do not repeat them every period): the client keeps the last
    ones it received. The server here is an rclpy node publishing the sas topics."""
    client = clients('/limits_once')
    lower_topic, upper_topic = '/limits_once/get/joint_positions_min', \
        '/limits_once/get/joint_positions_max'
    lower = observer.node.create_publisher(Float64MultiArray, lower_topic, DEPTH_ONE)
    upper = observer.node.create_publisher(Float64MultiArray, upper_topic, DEPTH_ONE)
    states = observer.node.create_publisher(JointState, '/limits_once/get/joint_states',
                                            DEPTH_ONE)
    observer.wait_for(lambda: min(p.get_subscription_count() for p in (lower, upper, states)),
                      START_S, "the client's subscriptions to match")
    lower.publish(Float64MultiArray(data=[-1.0, -2.0]))
    upper.publish(Float64MultiArray(data=[1.0, 2.0]))

    def state_sent_and_enabled():
        states.publish(JointState(position=[0.1, 0.2], velocity=[0.0, 0.0]))
        observer.spin_for(0.02)
        return client.is_enabled()

    wait_for(state_sent_and_enabled, 10, 'the client enabled by states and limits sent once',
             step=lambda: None)
    for _ in range(25):
        states.publish(JointState(position=[0.1, 0.2], velocity=[0.0, 0.0]))
        observer.spin_for(0.02)
    assert [a.tolist() for a in client.get_joint_limits()] == [[-1.0, -2.0], [1.0, 2.0]]
    assert client.get_joint_positions().tolist() == [0.1, 0.2]
    assert client.is_enabled(sas.Functionality.VelocityControl)
    assert not client.is_enabled(sas.Functionality.ForceControl), 'no efforts were sent'
    with pytest.raises(RuntimeError, match='the latest state on /limits_once/get/joint_states '
                                           'has no joint efforts'):
        client.get_joint_forces()

    upper.publish(Float64MultiArray(data=[1.5, 2.5]))
    wait_for(lambda: client.get_joint_limits()[1].tolist() == [1.5, 2.5], 10,
             'the changed upper limits')
    assert client.get_joint_limits()[0].tolist() == [-1.0, -2.0]


def test_states_and_limits_of_the_wrong_length_never_mix_into_what_the_client_reads(
        world, clients, observer, capfd):
    """An rclpy server whose limits give the robot 2 joints: a stray first state of 3 joints
    does not fix the joint count (it would have locked out every right state); the 2-joint
    states are read; then limits and states of another length are dropped, never returned,
    the warning naming both lengths."""
    client = clients('/lengths')
    lower = observer.node.create_publisher(Float64MultiArray, '/lengths/get/joint_positions_min',
                                           DEPTH_ONE)
    upper = observer.node.create_publisher(Float64MultiArray, '/lengths/get/joint_positions_max',
                                           DEPTH_ONE)
    states = observer.node.create_publisher(JointState, '/lengths/get/joint_states', DEPTH_ONE)
    observer.wait_for(lambda: min(p.get_subscription_count() for p in (lower, upper, states)),
                      START_S, "the client's subscriptions to match")

    def sent_until(publish, done, what):
        def sent_and_done():
            publish()
            observer.spin_for(0.02)
            return done()
        wait_for(sent_and_done, 10, what, step=lambda: None)

    # The limits first (a bridge sends them as a subscription matches), taken before any state.
    lower.publish(Float64MultiArray(data=[-1.0, -2.0]))
    upper.publish(Float64MultiArray(data=[1.0, 2.0]))
    observer.spin_for(0.2)
    for _ in range(5):
        states.publish(JointState(position=[7.0, 7.0, 7.0]))
        observer.spin_for(0.02)
    sent_until(lambda: states.publish(JointState(position=[0.1, 0.2])), client.is_enabled,
               'the client enabled by the 2-joint states')
    assert client.get_joint_positions().tolist() == [0.1, 0.2]
    # Limits of 3 values now: dropped, the 2-joint limits stay.
    for _ in range(10):
        upper.publish(Float64MultiArray(data=[5.0, 5.0, 5.0]))
        states.publish(JointState(position=[0.3, 0.4]))
        observer.spin_for(0.02)
    wait_for(lambda: client.get_joint_positions().tolist() == [0.3, 0.4], 10, 'the newer state')
    assert [a.tolist() for a in client.get_joint_limits()] == [[-1.0, -2.0], [1.0, 2.0]]
    for _ in range(10):
        states.publish(JointState(position=[9.0]))
        observer.spin_for(0.02)
    assert client.get_joint_positions().tolist() == [0.3, 0.4]
    # The first drop is logged (later ones within 5 s are counted into the next line).
    assert 'dropped a message on /lengths/get/joint_states with 3 positions; the robot has 2 ' \
           'joints (as both joint limits)' in capfd.readouterr().err


def test_any_joint_state_rclpy_sends_is_read_bit_for_bit(world, clients, observer):
    """The client reads joint states from their CDR bytes (no C message): states serialized
    by rclpy's own typesupport, with names and frame ids of every length modulo 8 (so each
    array lands at every alignment), empty velocity or effort arrays, negative stamps and
    values that only compare by their bits, are read exactly as sent."""
    from builtin_interfaces.msg import Time
    from std_msgs.msg import Header

    client = clients('/cdr')
    states = observer.node.create_publisher(JointState, '/cdr/get/joint_states', DEPTH_ONE)
    observer.wait_for(lambda: states.get_subscription_count(), START_S,
                      "the client's joint-state subscription to match")
    values = [-0.0, math.nan, 5e-324, -math.inf, 1e300, 0.1]
    sent = 0
    for names_length in range(8):
        for velocity, effort in ((True, True), (False, True), (True, False), (False, False)):
            sent += 1
            stamp = Time(sec=-3 + sent, nanosec=999_999_999 - sent)
            message = JointState(
                header=Header(stamp=stamp, frame_id='f' * (names_length * 3 % 8)),
                name=['j' * names_length, 'é' * names_length, ''],
                position=values[sent % 3:sent % 3 + 3],
                velocity=[v * 2 for v in values[:3]] if velocity else [],
                effort=values[3:] if effort else [])
            stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec

            def read_it():
                states.publish(message)
                observer.spin_for(0.02)
                try:
                    return client.snapshot()['stamp_ns'] == stamp_ns
                except RuntimeError:
                    return False

            wait_for(read_it, 10, f'state {sent} read by the client', step=lambda: None)
            state = client.snapshot()
            bits = lambda array: np.asarray(array, dtype=np.float64).view(np.uint64).tolist()
            assert bits(state['positions']) == bits(message.position), sent
            assert bits(state['velocities']) == bits(message.velocity), sent
            assert bits(state['efforts']) == bits(message.effort), sent


def test_before_the_first_state_everything_names_the_topics(world, clients):
    """Nobody serves the prefix: not enabled, getters and waits name the topics, targets
    cannot be checked so nothing is sent."""
    client = clients('/nobody_serves_this')
    time.sleep(0.5)
    assert not client.is_enabled()
    missing = ('/nobody_serves_this/get/joint_states, /nobody_serves_this/get/'
               'joint_positions_min, /nobody_serves_this/get/joint_positions_max')
    for getter in ('get_joint_positions', 'get_joint_limits'):
        with pytest.raises(RuntimeError, match=rf'/nobody_serves_this::RobotDriverInterface::'
                                               rf'{getter}\(\)::trying to get .* but '
                                               rf'uninitialized: nothing has arrived yet on '
                                               rf'{missing}'):
            getattr(client, getter)()
    for getter in ('get_joint_velocities', 'get_joint_forces', 'snapshot', 'get_state_age'):
        with pytest.raises(RuntimeError, match='/nobody_serves_this/get/joint_states'):
            getattr(client, getter)()
    start = time.monotonic()
    with pytest.raises(TimeoutError, match=r'no new joint state on /nobody_serves_this/get/'
                                           r'joint_states within 0\.300 s \(none at all'):
        client.wait_for_new_state(timeout=0.3)
    assert time.monotonic() - start < 2
    with pytest.raises(RuntimeError, match='joint count is unknown until a state arrives on '
                                           '/nobody_serves_this/get/joint_states; nothing was'):
        client.send_target_joint_positions([0.0] * 6)


def test_a_bad_node_name_prefix_or_ros_argument_raises_value_error_naming_it(world):
    domain = world.domain
    with pytest.raises(ValueError, match='cannot create the node "bad name!"'):
        sas.RobotDriverClient('bad name!', PREFIX, domain_id=domain, args=[])
    with pytest.raises(ValueError, match='cannot create the subscription on "/x//y/get/'
                                         'joint_states"'):
        sas.RobotDriverClient('controller', '/x//y', domain_id=domain, args=[])
    with pytest.raises(ValueError, match='cannot initialise ROS from the arguments given'):
        sas.RobotDriverClient('controller', PREFIX, domain_id=domain,
                              args=['prog', '--ros-args', '-p'])
    with pytest.raises(TypeError, match='ModeBlacklistFlag'):
        sas.RobotDriverClient('controller', PREFIX, [0], domain_id=domain, args=[])


def test_bad_input_raises_value_error_and_nothing_is_sent(client, observer):
    positions = subscribe(observer, Float64MultiArray, f'{PREFIX}/set/target_joint_positions',
                          KEEP_ALL)
    velocities = subscribe(observer, Float64MultiArray, f'{PREFIX}/set/target_joint_velocities',
                           KEEP_ALL)
    homing = subscribe(observer, Int32MultiArray, f'{PREFIX}/set/homing_signal', KEEP_ALL)
    good, marker = [0.0] * 6, [0.5] * 6
    send_until(observer, lambda: client.send_target_joint_positions(good), lambda: positions,
               'the first good target')
    send_until(observer, lambda: client.send_target_joint_velocities(good), lambda: velocities,
               'the first good velocities')
    send_until(observer, lambda: client.send_homing_signal([0] * 6), lambda: homing,
               'the first homing signal')
    sent_before = (len(positions), len(velocities), len(homing))

    for bad, message in [
        ([0.1] * 5, 'expected 6 values \\(one per joint\\), got 5; nothing was sent'),
        ([0.1] * 7, 'expected 6 values \\(one per joint\\), got 7'),
        ([0.1, 0.1, math.nan, 0.1, 0.1, 0.1], 'value 2 is NaN; every value must be finite'),
        ([0.1] * 5 + [-math.inf], 'value 5 is -inf'),
        ([[0.1] * 6], 'expected a 1-D sequence of numbers, got 2 dimensions'),
        (['a'] * 6, 'expected a 1-D sequence of numbers'),
    ]:
        for send in (client.send_target_joint_positions, client.send_target_joint_velocities,
                     client.send_target_joint_forces):
            with pytest.raises(ValueError, match=message):
                send(bad)
    with pytest.raises(ValueError, match='expected 6 values'):
        client.send_homing_signal([1] * 5)
    with pytest.raises(ValueError, match='expected 6 values'):
        client.send_clear_positions_signal([1] * 7)
    for period, max_delay in [(0.0, 0.5), (-1.0, 0.5), (math.nan, 0.5), (1.0, -0.1),
                              (1.0, math.inf)]:
        with pytest.raises(ValueError, match='period must be a positive and max_delay a '
                                             'non-negative number of seconds'):
            client.send_watchdog_trigger(True, period, max_delay)
    with pytest.raises(ValueError, match='timeout must be a non-negative number of seconds'):
        client.wait_for_new_state(timeout=-1.0)
    with pytest.raises(ValueError, match='Functionality::None has no meaning'):
        client.is_enabled(getattr(sas.Functionality, 'None'))
    with pytest.raises(ValueError, match='Functionality::ClearPositions has no meaning'):
        client.is_enabled(sas.Functionality.ClearPositions)

    # A marker after the refusals: what arrived in between is exactly nothing.
    client.send_target_joint_positions(marker)
    client.send_target_joint_velocities(marker)
    client.send_homing_signal([1] * 6)
    observer.wait_for(lambda: len(positions) > sent_before[0] and len(velocities) >
                      sent_before[1] and len(homing) > sent_before[2], 10, 'the markers')
    observer.spin_for(0.3)
    assert [list(m.data) for m in positions[sent_before[0]:]] == [marker]
    assert [list(m.data) for m in velocities[sent_before[1]:]] == [marker]
    assert [list(m.data) for m in homing[sent_before[2]:]] == [[1] * 6]


def _graph_nodes(observer, topic: str, publishers: bool) -> set[str]:
    infos = (observer.node.get_publishers_info_by_topic(topic) if publishers
             else observer.node.get_subscriptions_info_by_topic(topic))
    return {info.node_name for info in infos}


def test_blacklisted_modes_leave_out_their_topics_and_methods(robot, clients, observer):
    full = clients(name='full_client')
    no_control = clients(blacklisted_modes=[sas.ModeBlacklistFlag.JOINT_CONTROL],
                         name='no_control_client')
    no_monitoring = clients(blacklisted_modes=(sas.ModeBlacklistFlag.JOINT_MONITORING,),
                            name='no_monitoring_client')
    no_watchdog = clients(blacklisted_modes=[sas.ModeBlacklistFlag.WATCHDOG_CONTROL],
                          name='no_watchdog_client')
    wait_for(lambda: full.is_enabled() and no_control.is_enabled() and
             no_watchdog.is_enabled(), START_S, 'the monitoring clients to be enabled')
    watchdog_topic = f'{PREFIX}/set/watchdog_trigger'
    observer.wait_for(lambda: {'full_client', 'no_control_client', 'no_monitoring_client'} <=
                      _graph_nodes(observer, watchdog_topic, publishers=True), START_S,
                      'the watchdog publishers in the graph')
    states_topic = f'{PREFIX}/get/joint_states'
    targets_topic = f'{PREFIX}/set/target_joint_positions'
    observer.wait_for(lambda: {'full_client', 'no_control_client', 'no_watchdog_client'} <=
                      _graph_nodes(observer, states_topic, publishers=False), START_S,
                      'the joint-state subscriptions in the graph')
    assert 'no_monitoring_client' not in _graph_nodes(observer, states_topic, publishers=False)
    assert 'no_control_client' not in _graph_nodes(observer, targets_topic, publishers=True)
    assert 'no_watchdog_client' not in _graph_nodes(observer, watchdog_topic, publishers=True)

    for send, args in [('send_target_joint_positions', [0.0] * 6),
                       ('send_target_joint_velocities', [0.0] * 6),
                       ('send_target_joint_forces', [0.0] * 6),
                       ('send_homing_signal', [0] * 6),
                       ('send_clear_positions_signal', [0] * 6)]:
        with pytest.raises(RuntimeError, match=rf'RobotDriverClient::{send}::This method is '
                                               rf'blacklisted \(JOINT_CONTROL'):
            getattr(no_control, send)(args)
    no_control.send_watchdog_trigger(True, 1.0, 0.5)
    with pytest.raises(RuntimeError, match='send_watchdog_trigger::This method is blacklisted '
                                           '\\(WATCHDOG_CONTROL'):
        no_watchdog.send_watchdog_trigger(True)

    # Reads nothing while the others do; sends unchecked for length (the count is unknown).
    assert full.is_enabled() and not no_monitoring.is_enabled()
    with pytest.raises(RuntimeError, match='JOINT_MONITORING is blacklisted'):
        no_monitoring.get_joint_positions()
    with pytest.raises(RuntimeError, match='wait_for_new_state::This method is blacklisted'):
        no_monitoring.wait_for_new_state(timeout=0.1)
    no_monitoring.send_target_joint_positions(full.get_joint_positions()[:3])
    with pytest.raises(ValueError, match='every value must be finite'):
        no_monitoring.send_target_joint_positions([math.nan])


def test_a_python_thread_holding_the_gil_does_not_delay_the_clients_cache(client):
    """The client's thread never needs the GIL: the cache takes the bridge's states at the
    rate it takes them with the GIL free, while one C call holds the GIL for a second, and
    while another thread holds it in a loop (handing it over only when asked). Both hold it
    sleeping, as the original's control loop did, so that the machine's CPU is not what
    is measured."""
    def rate_over(seconds: float, work) -> tuple[float, float]:
        before = client.snapshot()['sequence']
        start = time.monotonic()
        work(seconds)
        elapsed = time.monotonic() - start
        after = client.snapshot()
        return (after['sequence'] - before) / elapsed, after['age_sec']

    free, _ = rate_over(1.0, time.sleep)
    assert free > 100, f'the bridge published only {free:.0f} states/s'

    usleep = ctypes.PyDLL(None).usleep  # a C call that keeps the GIL

    def hold_in_one_call(seconds):
        usleep(int(seconds * 1e6))  # no bytecode runs, so the GIL is never handed over

    held, age = rate_over(1.0, hold_in_one_call)
    assert held >= 0.8 * free, f'{held:.0f} states/s with the GIL held, {free:.0f} without'
    assert age < 0.1

    stop = threading.Event()

    def hog():
        while not stop.is_set():
            usleep(1000)

    def read_every_state(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            client.wait_for_new_state(timeout=1.0)
            client.get_joint_positions()

    hogger = threading.Thread(target=hog)
    hogger.start()
    try:
        hogged, age = rate_over(2.0, read_every_state)
    finally:
        stop.set()
        hogger.join(10)
    assert hogged >= 0.8 * free, f'{hogged:.0f} states/s beside a GIL hog, {free:.0f} without'
    assert age < 0.1


@pytest.mark.parametrize('pattern', [
    [(0.0, signal.SIGINT)],
    [(0.0, signal.SIGINT), (0.0, signal.SIGINT)],
    [(0.0, signal.SIGINT), (0.05, signal.SIGINT)],
    [(0.0, signal.SIGINT), (0.01, signal.SIGTERM)],
    [(0.0, signal.SIGINT), (0.0, signal.SIGTERM), (0.0, signal.SIGHUP)],
], ids=['SIGINT', 'two SIGINT 0 ms apart', 'two SIGINT 50 ms apart',
        'SIGINT, SIGTERM 10 ms later', 'burst SIGINT+SIGTERM+SIGHUP'])
@pytest.mark.parametrize('stage', ['waiting', 'reading', 'sleeping'])
def test_the_clients_thread_ends_cleanly_on_signals(world, stage, pattern):
    """A controller stopped by signals at each stage exits within 2 s of the first, with no
    crash in its output and nothing of it left running. One SIGINT exits 0 through the
    script's handler; a later signal may end the exit early (Python's KeyboardInterrupt, or
    the signal's default action once the interpreter restored it while finalizing)."""
    if stage == 'reading':
        Robot(world)
    prefix = PREFIX if stage == 'reading' else '/nobody_serves_this'
    child = world.python(HERE / 'client_until_interrupted.py', stage, prefix,
                         str(world.domain))
    child.wait_output(f'{stage} ready', START_S + 60)
    start = time.monotonic()
    for delay, signum in pattern:
        time.sleep(delay)
        child.signal(signum)
    code = child.wait_exit(10)
    seconds = time.monotonic() - start
    output = child.output()
    assert seconds < STOP_S, f'took {seconds:.2f} s:\n{output}'
    assert not [c for c in CRASHES if c in output], output
    assert not child.group_alive()
    if len(pattern) == 1:
        assert code == 0 and 'interrupted' in output, output
    else:
        # Signals at once may interrupt the handler of the first one (Python re-raises).
        assert code in (0, *(-signum for _, signum in pattern)), output


def test_the_clients_thread_ends_cleanly_at_interpreter_exit(world):
    """The script returns with its client alive and a daemon thread blocked in
    wait_for_new_state(): the exit closes the client (the thread is woken with
    RuntimeError) and the process ends at once, status 0."""
    child = world.python(HERE / 'client_until_interrupted.py', 'exiting',
                         '/nobody_serves_this', str(world.domain))
    code = child.wait_exit(START_S + 10)
    output = child.output()
    assert code == 0, output
    assert 'exiting ready' in output
    assert 'daemon thread: RobotDriverClient(/nobody_serves_this)::wait_for_new_state: the ' \
           'client is closed.' in output, output
    assert not [c for c in CRASHES if c in output], output


def test_the_joint_interface_example_moves_the_robot_and_reports(robot, world, observer):
    states = subscribe(observer, JointState, f'{PREFIX}/get/joint_states')
    example = world.python(EXAMPLE, '--seconds', '3', '--status', '--ros-args', '-p',
                           f'robot_topic_name:={PREFIX}')
    example.wait_output('sending ±10° sinusoids at 100 Hz on '
                        f'{PREFIX}/set/target_joint_positions', START_S + 30)
    observer.wait_for(lambda: example.proc.poll() is not None, 30, 'the example to finish')
    assert example.wait_exit(5) == 0, example.output()
    output = example.output()
    assert f'waiting for {PREFIX}/get/joint_states and the joint limits ...' in output
    assert 'joint_states ' in output and ' Hz | stamp age ' in output, output
    summary = next(line for line in example.lines if line.startswith('sent '))
    sent, received = (int(x) for x in re.search(
        r'sent (\d+) targets in 3\.\d s, received (\d+) joint states', summary).groups())
    # 100 Hz for 3 s, less the steps a loaded machine made it skip.
    assert 150 <= sent <= 301 and received > 100, summary
    # Gazebo followed the sinusoid: the first joint moved by degrees.
    moved = max(abs(m.position[0] - states[0].position[0]) for m in states)
    assert moved > math.radians(2), f'moved {math.degrees(moved):.2f}° only'
