"""The R820 + UR3e world (one 13-joint model) bridged as r820_sim and ur3e_sim and composed as
longboy_sim, both ways: three processes (two bridge nodes and sas_robot_driver_ros_composer_node
reaching them over ROS topics, as the original) and one process (the bridge node's `robots` and
`composites`, the composite reading the robots' caches). The simulator runs on the Fortress
message prefix so the real Ignition CLI can read Gazebo's positions independently."""

import json
import math
import os
import signal
import time

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from support import binary, check_help_against_node
from conftest import (LONGBOY_CONFIG, LONGBOY_STATES, LONGBOY_WORLD, MOTION_S, R820_JOINTS,
                      START_S, UR3E_JOINTS)

LONGBOY_JOINTS = R820_JOINTS + UR3E_JOINTS
FORTRESS = ['-p', 'gz_msgs_prefix:=ignition.msgs.']


def array(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def at(states, target, tolerance=1e-6) -> bool:
    return bool(states) and len(states[-1].position) == len(target) and all(
        abs(p - t) < tolerance for p, t in zip(states[-1].position, target))


def start_robots(world, in_process: bool):
    """The simulator and the bridges r820_sim and ur3e_sim; returns the process that
    composes longboy_sim (the composer, or the one node running everything)."""
    world.sim(LONGBOY_WORLD, '--msgs-prefix', 'ignition.msgs.')
    if in_process:
        return world.node_process('longboy_robots', LONGBOY_CONFIG, *FORTRESS)
    world.node_process('r820_sim', LONGBOY_CONFIG, *FORTRESS)
    world.node_process('ur3e_sim', LONGBOY_CONFIG, *FORTRESS)
    return world.composer('longboy_sim', LONGBOY_CONFIG)


class Topics:
    """Everything the test reads, of the two robots and the composite."""

    def __init__(self, world):
        self.r820 = world.subscribe(JointState, '/r820_sim/get/joint_states')
        self.ur3e = world.subscribe(JointState, '/ur3e_sim/get/joint_states')
        self.longboy = world.subscribe(JointState, '/longboy_sim/get/joint_states')
        self.limits = {
            (robot, side): world.subscribe(Float64MultiArray,
                                           f'/{robot}/get/joint_positions_{side}')
            for robot in ['r820_sim', 'ur3e_sim', 'longboy_sim'] for side in ['min', 'max']}
        world.wait_for(lambda: self.r820 and self.ur3e and self.longboy
                       and all(self.limits.values()), START_S,
                       'joint states and limits of r820_sim, ur3e_sim and longboy_sim')


@pytest.mark.parametrize('in_process', [False, True], ids=['over_topics', 'in_process'])
def test_the_composite_is_the_concatenation_moves_both_robots_and_refuses_a_wrong_length(
        world, in_process):
    composing = start_robots(world, in_process)
    topics = Topics(world)
    composite = topics.longboy[-1]
    assert list(composite.name) == LONGBOY_JOINTS
    assert len(composite.position) == len(composite.velocity) == len(composite.effort) == 13
    for side in ['min', 'max']:
        assert list(topics.limits['longboy_sim', side][-1].data) == \
            list(topics.limits['r820_sim', side][-1].data) + \
            list(topics.limits['ur3e_sim', side][-1].data)

    # One composite target: R820 first, then the UR3e.
    target = [0.05, -0.05, 0.04, -0.04, 0.03, -0.03, 0.02,
              0.1, -0.1, 0.08, -0.08, 0.06, -0.06]
    targets = world.publisher(Float64MultiArray, '/longboy_sim/set/target_joint_positions')
    targets.publish(array(target))
    world.wait_for(lambda: at(topics.r820, target[:7]) and at(topics.ur3e, target[7:])
                   and at(topics.longboy, target)
                   and all(v == 0.0 for v in topics.longboy[-1].velocity),
                   MOTION_S, 'both robots (and the composite) at the composite target')
    gazebo = world.gazebo_positions(LONGBOY_STATES)
    for joint, value in zip(LONGBOY_JOINTS, target):
        assert gazebo[joint] == pytest.approx(value, abs=1e-6), joint

    # At rest, the composite's state is the robots' end to end (positions, velocities,
    # efforts), as each robot reports it.
    world.spin_for(0.3)
    r820, ur3e, longboy = topics.r820[-1], topics.ur3e[-1], topics.longboy[-1]
    for field in ['position', 'velocity', 'effort']:
        assert list(getattr(longboy, field)) == pytest.approx(
            list(getattr(r820, field)) + list(getattr(ur3e, field)), abs=1e-12), field

    # 12 values for 13 joints: refused (rate-limited error), the composite keeps publishing
    # and the previous target stays in force.
    line = 'expected 13 values (7 for r820_sim + 6 for ur3e_sim), got 12.'

    def refused():
        targets.publish(array([0.3] * 12))
        world.spin_for(0.2)
        return composing.count(line) > 0
    world.wait_for(refused, 15, f'the refusal {line!r}')
    assert composing.count('::Target refused::') > 0
    received = len(topics.longboy)
    world.wait_for(lambda: len(topics.longboy) >= received + 100, 10,
                   'composite joint states after the refusal')
    assert at(topics.longboy, target), 'the previous target stays in force'
    assert at(topics.r820, target[:7]) and at(topics.ur3e, target[7:])
    assert composing.alive()

    composing.signal(signal.SIGTERM)
    assert composing.wait_exit(10) == 0, composing.output()


def test_the_composer_waits_for_its_robots_publishing_nothing_and_sigint_stops_it(world):
    composer = world.composer('longboy_sim', LONGBOY_CONFIG)
    states = world.subscribe(JointState, '/longboy_sim/get/joint_states')
    composer.wait_output('::Initializing robot...', START_S)
    world.wait_for(lambda: world.node.count_publishers('/longboy_sim/get/joint_states') > 0,
                   START_S, 'the composite joint_states publisher to be discovered')
    # Its clients are discovered as the robots' peers would see them.
    world.wait_for(
        lambda: world.node.count_subscribers('/r820_sim/get/joint_states') > 0
        and world.node.count_publishers('/ur3e_sim/set/target_joint_positions') > 0,
        START_S, "the composer's clients to be discovered")
    world.spin_for(1.0)
    assert states == []
    composer.signal(signal.SIGINT)
    assert composer.wait_exit(10) == 0, composer.output()
    assert '::Stopped while initializing' in composer.output()
    assert 'r820_sim/get/joint_states' in composer.output(), 'names what it waited for'


def dh_file(path, lower_deg, upper_deg):
    """A DQ_SerialManipulatorDH robot parameter file (degrees, revolute joints)."""
    n = len(lower_deg)
    path.write_text(json.dumps({
        'robot_type': 'DQ_SerialManipulatorDH', 'angle_mode': 'degree',
        'theta': [0] * n, 'd': [0] * n, 'a': [0] * n, 'alpha': [0] * n, 'types': [0] * n,
        'lower_q_limit': lower_deg, 'upper_q_limit': upper_deg,
        'lower_q_dot_limit': [-90] * n, 'upper_q_dot_limit': [90] * n,
        'effector': [1, 0, 0, 0, 0, 0, 0, 0], 'reference_frame': [1, 0, 0, 0, 0, 0, 0, 0]}))
    return path


def composer_params(world, name, file):
    return world.params_file(f"""
{name}:
  ros__parameters:
    robot_driver_client_names: ["r820_sim", "ur3e_sim"]
    override_joint_limits_with_robot_parameter_file: true
    robot_parameter_file_path: "{file}"
    thread_sampling_time_sec: 0.004
""")


def test_the_robot_parameter_files_limits_replace_the_robots_and_must_fit_them(world):
    world.sim(LONGBOY_WORLD)
    world.node_process('r820_sim', LONGBOY_CONFIG)
    world.node_process('ur3e_sim', LONGBOY_CONFIG)
    lower = [-10.0 * (i + 1) for i in range(13)]
    upper = [5.0 * (i + 1) for i in range(13)]
    good = dh_file(world.tmp / 'longboy.json', lower, upper)
    world.composer('longboy_sim', composer_params(world, 'longboy_sim', good))
    low = world.subscribe(Float64MultiArray, '/longboy_sim/get/joint_positions_min')
    high = world.subscribe(Float64MultiArray, '/longboy_sim/get/joint_positions_max')
    world.wait_for(lambda: low and high, START_S, 'the composite limits')
    assert list(low[-1].data) == pytest.approx([math.radians(v) for v in lower])
    assert list(high[-1].data) == pytest.approx([math.radians(v) for v in upper])

    # A file for 12 joints does not fit 13: the composer says so and exits 1.
    short = dh_file(world.tmp / 'short.json', lower[:12], upper[:12])
    composer = world.composer('short_sim', composer_params(world, 'short_sim', short))
    assert composer.wait_exit(START_S) == 1, composer.output()
    assert ('the joint limits given have 12 lower and 12 upper values, but the composed robots '
            'have 13 joints (7 for r820_sim + 6 for ur3e_sim)') in composer.output()


@pytest.mark.parametrize('params, file_text, message', [
    ('robot_driver_client_names: ["a"]\n    thread_sampling_time_sec: 1', None,
     'parameter "thread_sampling_time_sec" must be a double'),
    ('thread_sampling_time_sec: 0.002', None,
     'parameter "robot_driver_client_names" is missing'),
    ('robot_driver_client_names: ["a", "a"]', None,
     'parameter "robot_driver_client_names" is invalid: "a" is listed twice'),
    ('robot_driver_client_names: ["a"]\n'
     '    override_joint_limits_with_robot_parameter_file: true', None,
     'parameter "robot_parameter_file_path" is missing'),
    ('robot_driver_client_names: ["a"]\n'
     '    override_joint_limits_with_robot_parameter_file: true\n'
     '    robot_parameter_file_path: "{file}"', '{"robot_type": "DQ_SerialManipulatorDH", ',
     'parameter "robot_parameter_file_path" is invalid: the robot parameter file'),
    ('robot_driver_client_names: ["a"]\n'
     '    override_joint_limits_with_robot_parameter_file: true\n'
     '    robot_parameter_file_path: "{file}"',
     '{"robot_type": "DQ_SerialManipulatorDH", "angle_mode": "rad", '
     '"lower_q_limit": [-1, -1], "upper_q_limit": [1]}',
     '"lower_q_limit" has 2 values but "upper_q_limit" has 1'),
    ('robot_driver_client_names: ["a"]\n'
     '    override_joint_limits_with_robot_parameter_file: true\n'
     '    robot_parameter_file_path: "/nonexistent/robot.json"', None,
     'cannot read the robot parameter file /nonexistent/robot.json'),
])
def test_a_bad_composer_parameter_or_robot_parameter_file_exits_2_naming_it(
        world, params, file_text, message):
    file = world.tmp / 'robot.json'
    if file_text is not None:
        file.write_text(file_text)
    block = params.replace('{file}', str(file))
    composer = world.composer('longboy_sim',
                              world.params_file(f'longboy_sim:\n  ros__parameters:\n    {block}\n'))
    assert composer.wait_exit(START_S) == 2, composer.output()
    assert message in composer.output()


def test_a_stalled_robot_warns_the_composer_once_per_real_outage_and_never_for_a_short_stall(
        world):
    """ur3e_sim's bridge is stopped (SIGSTOP) for 150 ms five times, then for 1.5 s: the
    composite is stale each time (and publishes nothing then), but only the long outage is
    warned about, once, with its end; the short ones are counted on /diagnostics."""
    world.sim(LONGBOY_WORLD, '--msgs-prefix', 'ignition.msgs.')
    world.node_process('r820_sim', LONGBOY_CONFIG, *FORTRESS)
    ur3e = world.node_process('ur3e_sim', LONGBOY_CONFIG, *FORTRESS)
    composer = world.composer('longboy_sim', LONGBOY_CONFIG)
    statuses = world.subscribe(DiagnosticArray, '/diagnostics')
    longboy = world.subscribe(JointState, '/longboy_sim/get/joint_states')
    world.wait_for(lambda: len(longboy) > 50, START_S, 'the composite\'s states')

    def stall(seconds: float):
        ur3e.signal(signal.SIGSTOP)
        time.sleep(seconds)  # the stall itself: what the test does to the robot
        ur3e.signal(signal.SIGCONT)
        world.spin_for(0.4)

    for _ in range(5):
        stall(0.15)
    stall(1.5)
    world.wait_for(lambda: composer.count('again after an outage') >= 1, 10,
                   'the end of the long outage')
    world.spin_for(1.5)  # a /diagnostics status after it

    warnings = [line for line in composer.lines if 'is stale' in line]
    resumed = [line for line in composer.lines if 'again after an outage' in line]
    outages_ms = [float(line.split('outage of ')[1].split(' ms')[0]) for line in resumed]
    # One warning and one end per outage past the 500 ms budget, none for the 150 ms stalls
    # (a loaded machine may add a long stall of its own: each warned outage is a long one).
    assert len(warnings) == len(resumed) >= 1, composer.output()
    assert all(outage >= 500 for outage in outages_ms), outages_ms
    assert any(outage >= 1400 for outage in outages_ms), outages_ms
    # The short stalls still show: counted on /diagnostics.
    status = next(s for array in reversed(statuses) for s in array.status
                  if s.hardware_id == 'longboy_sim')
    values = {kv.key: kv.value for kv in status.values}
    assert int(values['short_stalls']) >= 3, values
    assert int(values['stale_episodes']) >= int(values['short_stalls']) + 1, values


@pytest.mark.parametrize('in_process', [False, True], ids=['over_topics', 'in_process'])
def test_on_sim_time_the_composite_is_stamped_with_gazebos_clock(world, in_process):
    """One process publishes Gazebo's clock (the first bridge, or the one node); every
    process runs on use_sim_time, the composer included: all stamps are sim time."""
    world.sim(LONGBOY_WORLD)
    sim_time = ['-p', 'use_sim_time:=true']
    clock = ['-p', 'publish_clock:=true']
    if in_process:
        world.node_process('longboy_robots', LONGBOY_CONFIG, *sim_time, *clock)
    else:
        world.node_process('r820_sim', LONGBOY_CONFIG, *sim_time, *clock)
        world.node_process('ur3e_sim', LONGBOY_CONFIG, *sim_time)
        world.composer('longboy_sim', LONGBOY_CONFIG, *sim_time)
    clocks = []
    world.node.create_subscription(
        Clock, '/clock', lambda m: clocks.append(m.clock.sec + m.clock.nanosec * 1e-9),
        QoSProfile(depth=1, reliability=ReliabilityPolicy.BEST_EFFORT))
    topics = Topics(world)
    world.wait_for(lambda: len(clocks) > 100, START_S, '/clock')
    topics.longboy.clear()
    world.wait_for(lambda: len(topics.longboy) > 10, START_S, 'composite states')
    assert world.node.count_publishers('/clock') == 1
    for name, states in [('r820_sim', topics.r820), ('ur3e_sim', topics.ur3e),
                         ('longboy_sim', topics.longboy)]:
        stamp = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec * 1e-9
        assert 0 < stamp < 1_000_000 and abs(stamp - clocks[-1]) < 1.0, \
            f'{name} stamped {stamp}, /clock at {clocks[-1]}'


def stamp_of(state) -> int:
    return state.header.stamp.sec * 1_000_000_000 + state.header.stamp.nanosec


def test_over_topics_the_composite_publishes_each_gazebo_step_once_both_robots_sent_it(world):
    """The composite is new once both robots sent a newer state, whichever robot started
    first (their own message counts differ) and whichever state arrives first: one report
    per Gazebo step, stamped with that step, at once (not a report with one robot's new
    state under the older stamp and the complete one a grace period later)."""
    world.sim(LONGBOY_WORLD, '--msgs-prefix', 'ignition.msgs.')
    stamp = ['-p', 'joint_states_stamp:=gazebo']
    world.node_process('r820_sim', LONGBOY_CONFIG, *FORTRESS, *stamp)
    r820 = world.subscribe(JointState, '/r820_sim/get/joint_states')
    world.wait_for(lambda: len(r820) > 500, START_S, 'r820_sim running a second alone')
    world.node_process('ur3e_sim', LONGBOY_CONFIG, *FORTRESS, *stamp)
    world.composer('longboy_sim', LONGBOY_CONFIG, *stamp)
    topics = Topics(world)
    topics.longboy.clear()
    world.wait_for(lambda: len(topics.longboy) >= 1000, 20, '1000 composite states')
    composite = [stamp_of(state) for state in topics.longboy]
    steps = set(composite)
    # A robot's state more than half a period late lets the composite out without it (a
    # report under the older stamp): rare, not every other step (the old count: 1.7 reports
    # per step).
    assert len(composite) <= 1.15 * len(steps) + 10, \
        f'{len(composite)} composite reports for {len(steps)} Gazebo steps'
    assert composite == sorted(composite), 'a composite stamp went back in time'
    step_ns = 2_000_000  # the world's step
    assert all(stamp % step_ns == 0 for stamp in steps), 'composite stamps are Gazebo steps'


def thread_cpu_s(pid: int, name: str) -> float:
    """CPU time (user + system) of the process's thread called `name`."""
    tick = os.sysconf('SC_CLK_TCK')
    for task in os.listdir(f'/proc/{pid}/task'):
        with open(f'/proc/{pid}/task/{task}/stat') as f:
            stat = f.read()
        if stat[stat.index('(') + 1:stat.rindex(')')] == name:
            fields = stat[stat.rindex(')') + 2:].split()
            return (int(fields[11]) + int(fields[12])) / tick
    raise AssertionError(f'no thread {name!r} in process {pid}')


def test_in_process_the_robots_loops_sleep_while_the_composite_forwards_their_targets(world):
    """The composite sends its parts' targets through their drivers, so a part's own loop
    never sends them itself: its keepalive must follow the driver's last send, whoever made
    it (it once followed the loop's own, long past, and the part's loop thread spun)."""
    composing = start_robots(world, in_process=True)
    topics = Topics(world)
    targets = world.publisher(Float64MultiArray, '/longboy_sim/set/target_joint_positions')
    threads = ['loop-r820_sim', 'loop-ur3e_sim']

    def stream(seconds: float):
        end = time.monotonic() + seconds
        step = 0
        while time.monotonic() < end:
            step += 1
            targets.publish(array([0.02 * math.sin(step / 20)] * 13))
            world.spin_for(0.02)

    stream(0.5)
    # A controller (re)connecting on a joint's command topic: the part's own loop sends it the
    # target (its rule for a new subscription); then past that send's one-second keepalive.
    commands = world.gazebo_commands('/model/longboy/joint/joint1/0/cmd_pos')
    world.wait_for(lambda: (stream(0.1), commands())[1], START_S,
                   'the target sent to a new cmd_pos subscriber')
    stream(2.0)
    before = {name: thread_cpu_s(composing.proc.pid, name) for name in threads}
    stream(3.0)
    used = {name: thread_cpu_s(composing.proc.pid, name) - before[name] for name in threads}
    assert len(topics.longboy) > 300 and composing.alive()
    # Sleeping, each wakes for a few deadlines a second (well under 0.1 s of CPU in 3 s);
    # spinning, one took ~12 % of a core.
    assert all(cpu < 0.1 for cpu in used.values()), \
        f'CPU seconds of the robots\' loop threads in 3 s: {used}'


def test_the_composers_help_lists_every_parameter_with_the_default_it_declares(world):
    """The composer's `--help` table against a running composer given only its mandatory
    parameter: every declared parameter has a row and every default is the declared one
    (the hand-written table listed none of the publishing options)."""
    params = world.params_file("""
help_check:
  ros__parameters:
    robot_driver_client_names: ["nobody"]
""")
    composer = world.composer('help_check', params)
    composer.wait_output('::Parameters OK.', START_S)
    check_help_against_node(
        world, binary('COMPOSER_NODE_BIN', 'sas_robot_driver_ros_composer_node'),
        '/help_check', {'robot_driver_client_names'})
