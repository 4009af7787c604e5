"""Velocity and effort control (issue 22), end to end: gz-joint-sim running the UR3e velocity
and effort worlds, sas_robot_driver_ros_gazebo_node, rclpy clients (one a separate process,
killed with SIGKILL), and the real Ignition CLI reading Gazebo's side: its joint states (the
motion is judged on them, in Gazebo's simulation time) and the command topics (what reached
Gazebo)."""

import math
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import IGN_TOPIC_CLI, ROOT, UR3E_JOINTS
from support.world import EFFORT_STATES, EFFORT_WORLD, VELOCITY_STATES, VELOCITY_WORLD

START_S = 30
STATES = '/ur3e_1/get/joint_states'
VELOCITIES = '/ur3e_1/set/target_joint_velocities'
FORCES = '/ur3e_1/set/target_joint_forces'
WRIST_3 = UR3E_JOINTS.index('wrist_3_joint')
# ur3e.sdf's <limit><velocity> and <effort>, in joint order.
VELOCITY_LIMITS = [math.pi, math.pi, math.pi, 2 * math.pi, 2 * math.pi, 2 * math.pi]
EFFORT_LIMITS = [54.0, 54.0, 28.0, 9.0, 9.0, 9.0]


def bridge(world, config: str, *parameters):
    """The node with block ur3e_1 of config/`config` and `parameters` ("name:=value") over it,
    talking to the simulator on the Fortress prefix (which the Ignition CLI reads)."""
    return world.ur3e_bridge_with(*parameters, config=config, gz_msgs_prefix='ignition.msgs.')


def array(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def gazebo_stream(world, topic: str):
    """The Ignition CLI printing every message on `topic` (a Process collecting its lines)."""
    return world.start([IGN_TOPIC_CLI, '-e', '-t', topic])


def parse_models(lines: list[str]) -> list[tuple[float, dict]]:
    """(sim time, {joint: (position, velocity, force)}) of every complete `gz.msgs.Model` the
    CLI printed (protobuf text; proto3 omits zeros)."""
    models, current, stack, joint = [], None, [], None
    for raw in lines:
        line = raw.strip()
        if line.endswith('{'):
            name = line[:-1].strip()
            if not stack and name == 'header':
                current = {'sec': 0, 'nsec': 0, 'joints': {}}
            stack.append(name)
            if stack == ['joint']:
                joint = {'name': None, 'position': 0.0, 'velocity': 0.0, 'force': 0.0}
        elif line == '}':
            if stack == ['joint'] and current is not None and joint['name']:
                current['joints'][joint['name']] = (joint['position'], joint['velocity'],
                                                    joint['force'])
            stack.pop()
            if not stack and current is not None and current['joints'] and \
                    len(current['joints']) == len(UR3E_JOINTS):
                models.append((current['sec'] + current['nsec'] * 1e-9, current['joints']))
                current = {'sec': 0, 'nsec': 0, 'joints': {}}
        elif ':' in line and current is not None:
            key, value = (part.strip() for part in line.split(':', 1))
            if stack == ['header', 'stamp'] and key in ('sec', 'nsec'):
                current[key] = int(value)
            elif stack == ['joint'] and key == 'name':
                joint['name'] = value.strip('"')
            elif stack == ['joint', 'axis1'] and key in ('position', 'velocity', 'force'):
                joint[key] = float(value)
    # Each header starts a new message: keep one entry per stamp, the last complete one.
    unique = {}
    for stamp, joints in models:
        unique[stamp] = joints
    return sorted(unique.items())


def commands_on(stream) -> list[float]:
    """The `data` of every `gz.msgs.Double` the CLI printed (proto3 omits 0: `data` absent)."""
    values, seen = [], False
    for line in list(stream.lines):
        line = line.strip()
        if line.startswith('data:'):
            values.append(float(line.split(':', 1)[1]))
            seen = True
    return values if seen else []


def spin_publishing(world, publisher, target, seconds: float, hz: float = 100.0):
    """Publishes `target` at `hz` for `seconds`, spinning meanwhile."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        publisher.publish(array(target))
        step_end = time.monotonic() + 1.0 / hz
        while time.monotonic() < step_end:
            world.executor.spin_once(timeout_sec=max(0.0, step_end - time.monotonic()))


def wait_for_motion(world, models_of, joint: int, what: str, timeout: float = START_S):
    """Until Gazebo's states show `joint` moving."""
    world.wait_for(lambda: any(abs(j[UR3E_JOINTS[joint]][1]) > 1e-9 for _, j in models_of()),
                   timeout, what)


CLIENT = r'''
import sys, time
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray
rclpy.init()
node = rclpy.create_node('velocity_client')
qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                 durability=DurabilityPolicy.VOLATILE)
publisher = node.create_publisher(Float64MultiArray, sys.argv[1], qos)
while publisher.get_subscription_count() == 0:
    time.sleep(0.01)
print('client matched', flush=True)
target = Float64MultiArray(data=[float(v) for v in sys.argv[2].split(',')])
while True:
    publisher.publish(target)
    time.sleep(0.01)
'''


def test_a_velocity_target_moves_the_joint_at_that_velocity_and_stops_when_its_client_dies(
        world):
    """A client process streams 0.5 rad/s for wrist_3_joint at 100 Hz; Gazebo's own joint
    states (read by the Ignition CLI) show the joint moving at 0.5 rad/s of simulation time.
    The client is then killed with SIGKILL: within the command timeout (0.1 s) zero velocity
    is sent and the joint stops."""
    world.sim('--msgs-prefix', 'ignition.msgs.', world_file=VELOCITY_WORLD)
    node = bridge(world, 'ur3e_velocity.yaml')
    node.wait_output('::Robot initialized.', START_S)
    states = world.subscribe(JointState, STATES)
    gazebo = gazebo_stream(world, VELOCITY_STATES)
    velocity = 0.5
    target = [0.0] * 6
    target[WRIST_3] = velocity
    client_env = {k: v for k, v in os.environ.items() if k not in world.env()}
    client = world.start([sys.executable, '-c', CLIENT, VELOCITIES,
                          ','.join(str(v) for v in target)], **client_env)
    client.wait_output('client matched', START_S)

    def models():
        return parse_models(list(gazebo.lines))

    wait_for_motion(world, models, WRIST_3, 'Gazebo moving wrist_3_joint')
    # A second of simulation time under the target.
    first_moving = next(t for t, j in models() if j['wrist_3_joint'][1] != 0)
    world.wait_for(lambda: models()[-1][0] > first_moving + 1.2, START_S,
                   'a second of motion in Gazebo')
    moving = [(t, j['wrist_3_joint']) for t, j in models()
              if first_moving + 0.1 <= t <= first_moving + 1.1]
    (t0, (p0, v0, _)), (t1, (p1, v1, _)) = moving[0], moving[-1]
    slope = (p1 - p0) / (t1 - t0)
    assert slope == pytest.approx(velocity, rel=1e-3), \
        f'wrist_3_joint moved at {slope} rad/s of sim time, asked {velocity}'
    assert v0 == pytest.approx(velocity) and v1 == pytest.approx(velocity)
    others = [j for _, j in models()[-5:]]
    assert all(j[name][1] == 0 for j in others for name in UR3E_JOINTS if name != 'wrist_3_joint')

    world.wait_for(lambda: len(states) > 0, START_S, 'joint states from the bridge')
    world.spin_for(0.05)
    at_kill = states[-1].position[WRIST_3]
    # The kill's moment and the node's own log stamp of the zero, both the system clock: how
    # late this process reads the node's output changes nothing.
    killed_at = time.time()
    client.proc.send_signal(signal.SIGKILL)
    client.proc.wait(10)
    node.wait_output('no new target within the command timeout (100 ms); zero sent', 10)
    logged_after = node.log_stamp('no new target within the command timeout') - killed_at
    world.wait_for(lambda: models() and models()[-1][1]['wrist_3_joint'][1] == 0, 10,
                   'Gazebo reporting wrist_3_joint stopped')
    stopped_at, stopped = models()[-1]
    # Stopped for good: the next second of sim time it stays where it is.
    world.wait_for(lambda: models()[-1][0] > stopped_at + 1.0, START_S, 'a second more in Gazebo')
    assert models()[-1][1]['wrist_3_joint'][0] == stopped['wrist_3_joint'][0]
    # Travel after the kill: the timeout's 0.1 s at 0.5 rad/s, and slack for scheduling.
    travel = stopped['wrist_3_joint'][0] - at_kill
    assert 0 <= travel < velocity * (0.1 + 0.4), f'{travel} rad after the client died'
    print(f'velocity run: {velocity} rad/s asked, {slope:.6f} rad/s of sim time measured; '
          f'{travel:.4f} rad after SIGKILL; zero logged {logged_after:.3f} s after it')
    for t, j in models()[::max(1, len(models()) // 12)]:
        print(f'  sim {t:8.3f} s  wrist_3 position {j["wrist_3_joint"][0]:.5f} '
              f'velocity {j["wrist_3_joint"][1]:.5f}')
    # The stop came from the timeout: the node sent zero once the client went quiet, which
    # with a dead client takes the timeout (plus scheduling on 2 loaded cores).
    assert logged_after < 2.0, f'zero sent {logged_after:.2f} s after the kill'
    assert node.count('::Target refused') == 0
    assert node.alive()


def test_an_effort_target_accelerates_the_joint_by_its_inertia_and_zero_follows_the_timeout(
        world):
    """0.001 N·m on wrist_3_joint: the SDF gives it no damping and, about its axis, the
    child link's izz (centre of mass on the axis), so Gazebo's velocity grows at τ / I. When
    the targets stop, zero effort is sent within the timeout: the (frictionless) joint then
    coasts at constant velocity, and the reported effort is 0."""
    root = ET.parse(ROOT / 'sdf' / 'ur3e.sdf').getroot()
    link = root.find(".//link[@name='wrist_3_link']")
    inertia = float(link.find('inertial/inertia/izz').text)
    assert link.find('inertial/pose').text.split()[:2] == ['0', '0'], 'centre of mass on axis'
    joint = root.find(".//joint[@name='wrist_3_joint']")
    assert joint.find('axis/dynamics') is None, 'no damping in the SDF'
    torque = 0.001
    expected = torque / inertia  # 7.48 rad/s²

    world.sim('--msgs-prefix', 'ignition.msgs.', '--report-effort', 'force-commanded',
              world_file=EFFORT_WORLD)
    node = bridge(world, 'ur3e_effort.yaml')
    node.wait_output('::Robot initialized.', START_S)
    gazebo = gazebo_stream(world, EFFORT_STATES)
    publisher = world.publisher(Float64MultiArray, FORCES)
    target = [0.0] * 6
    target[WRIST_3] = torque

    def models():
        return parse_models(list(gazebo.lines))

    world.wait_for(lambda: len(models()) > 10, START_S, 'Gazebo\'s joint states')
    # Until the joint nears its velocity limit (2π rad/s after 0.84 s of sim time).
    spin_publishing(world, publisher, target, 0.3)
    world.wait_for(lambda: any(j['wrist_3_joint'][1] > 0 for _, j in models()), 10,
                   'Gazebo accelerating wrist_3_joint')
    stop_sending = time.time()
    node.wait_output('no new target within the command timeout (100 ms); zero sent', 10)
    # By the node's own log stamp (the system clock, as stop_sending).
    assert node.log_stamp('no new target within the command timeout') - stop_sending < 2.0
    world.wait_for(lambda: models()[-1][1]['wrist_3_joint'][2] == 0
                   and models()[-1][1]['wrist_3_joint'][1] > 0, 10,
                   'Gazebo reporting zero effort on a moving wrist_3_joint')
    driven = [(t, j['wrist_3_joint']) for t, j in models() if j['wrist_3_joint'][2] == torque]
    assert len(driven) > 20, f'only {len(driven)} states under the torque'
    (t0, (_, v0, _)), (t1, (_, v1, _)) = driven[1], driven[-1]
    acceleration = (v1 - v0) / (t1 - t0)
    assert acceleration == pytest.approx(expected, rel=0.01), \
        f'{acceleration} rad/s² under {torque} N·m; τ/I = {expected}'
    # Coasting after the zero: constant velocity (no damping, no friction).
    coasting_from = models()[-1][0]
    world.wait_for(lambda: models()[-1][0] > coasting_from + 0.2, 10, 'more states in Gazebo')
    coasting = [j['wrist_3_joint'][1] for t, j in models() if t >= coasting_from]
    assert max(coasting) - min(coasting) < 1e-9
    assert coasting[0] < 2 * math.pi, 'zero came before the velocity limit'
    assert node.count('::Target refused') == 0
    print(f'effort run: {torque} N·m asked on wrist_3_joint (I = {inertia} kg·m², no damping); '
          f'{acceleration:.4f} rad/s² measured, τ/I = {expected:.4f}')
    rows = [(t, j['wrist_3_joint']) for t, j in models() if t >= driven[0][0] - 0.01]
    for t, (p, v, f) in rows[:len(driven) + 60:max(1, (len(driven) + 60) // 12)]:
        print(f'  sim {t:8.3f} s  wrist_3 position {p:.5f} velocity {v:.5f} effort {f:.4f}')


def test_the_zero_follows_a_non_default_command_timeout_while_gazebo_sends_no_states(world):
    """A simulator that stops sending joint states (SIGSTOP: a paused or hung Gazebo) while
    its JointController still holds the command: one velocity target, and the zero follows
    at the configured command timeout (0.5 s, not the 0.1 s default) by the loop's clock, no
    joint state arriving meanwhile. Judged by the node's own log stamps (not before the
    timeout, and by a bound far short of "never"), and on Gazebo's side: resumed, the
    simulator's joint states show the joint stopped, the zero having been the last command."""
    timeout = 0.5
    sim = world.sim('--msgs-prefix', 'ignition.msgs.', world_file=VELOCITY_WORLD)
    # No limits heartbeat or target keepalive: no other duty wakes the loop and sends the zero
    # by the way (with them, a loop that forgot the command's deadline sent it at the next
    # heartbeat, 1 s later).
    node = bridge(world, 'ur3e_velocity.yaml', f'command_timeout_sec:={timeout}',
                  'state_timeout_sec:=0.2', 'joint_limits_heartbeat_sec:=0.0',
                  'target_keepalive_sec:=0.0')
    node.wait_output('::Robot initialized.', START_S)
    publisher = world.publisher(Float64MultiArray, VELOCITIES)
    world.wait_for(lambda: publisher.get_subscription_count() > 0, START_S,
                   'the node subscribing set/target_joint_velocities')
    sim.signal(signal.SIGSTOP)
    try:
        # The node sees the states stop: nothing but its own clock drives it from here.
        node.wait_output('is stale: no joint states', START_S)
        target = [0.0] * 6
        target[WRIST_3] = 0.5
        sent_at = time.time()
        publisher.publish(array(target))
        node.wait_output(f'no new target within the command timeout ({timeout * 1e3:.0f} ms); '
                         'zero sent', START_S)
    finally:
        sim.signal(signal.SIGCONT)
    zero_at = node.log_stamp('no new target within the command timeout')
    assert zero_at - sent_at >= timeout, \
        f'zero sent {zero_at - sent_at:.3f} s after the target, before the {timeout} s timeout'
    # Far short of the next event that would have woken a loop driven by arrivals: none.
    assert zero_at - sent_at < timeout + 5.0
    gazebo = gazebo_stream(world, VELOCITY_STATES)

    def models():
        return parse_models(list(gazebo.lines))

    world.wait_for(lambda: len(models()) > 5, START_S, 'Gazebo\'s joint states after SIGCONT')
    assert models()[-1][1]['wrist_3_joint'][1] == 0, 'the zero was not the last command'
    assert node.alive()
    print(f'zero logged {zero_at - sent_at:.3f} s after the target (timeout {timeout} s), '
          'no joint state meanwhile')


def test_bad_velocity_targets_are_refused_naming_the_joint_and_nothing_reaches_gazebo(world):
    """Wrong length, NaN, inf and out of the velocity limit under `refuse`: each refused with
    an error naming the joint; the Ignition CLI on a command topic (shown connected by a
    valid target it received first) sees none of them."""
    world.sim('--msgs-prefix', 'ignition.msgs.', world_file=VELOCITY_WORLD)
    node = bridge(world, 'ur3e_velocity.yaml', 'target_limit_policy:=refuse',
                  f'joint_velocity_limits:={VELOCITY_LIMITS}')
    node.wait_output('::Robot initialized.', START_S)
    commands = gazebo_stream(world, '/model/ur3e/joint/elbow_joint/cmd_vel')
    publisher = world.publisher(Float64MultiArray, VELOCITIES)
    good = [0.0, 0.0, 0.25, 0.0, 0.0, 0.0]
    world.wait_for(lambda: (spin_publishing(world, publisher, good, 0.1),
                            0.25 in commands_on(commands))[1], START_S,
                   'a valid target on elbow_joint/cmd_vel')
    node.wait_output('no new target within the command timeout (100 ms); zero sent', 10)
    before = len(commands_on(commands))
    for bad, line in [
        ([0.1] * 5, 'set_target_joint_velocities: expected 6 values, got 5.'),
        ([0.1, 0.1, math.nan, 0.1, 0.1, 0.1],
         'set_target_joint_velocities: value 2 (elbow_joint) is NaN'),
        ([0.1] * 5 + [-math.inf], 'set_target_joint_velocities: value 5 (wrist_3_joint) is -inf'),
        ([0.1, 0.1, 3.2, 0.1, 0.1, 0.1],
         'set_target_joint_velocities: value 2 (elbow_joint) = 3.2 is outside the velocity '
         'limits [-3.141592653589793, 3.141592653589793]'),
    ]:
        # One refusal is logged per second at most: send until its line shows.
        world.wait_for(lambda: (spin_publishing(world, publisher, bad, 0.2, hz=10),
                                node.count(line) > 0)[1], 10, f'the refusal {line!r}')
    # The CLI prints what reaches it within milliseconds; give it a moment for a straggler.
    world.spin_for(0.3)
    assert commands_on(commands)[before:] == [], 'a refused target reached Gazebo'
    assert node.alive()


def test_an_out_of_limit_effort_is_clamped_under_clamp(world):
    """Policy `clamp` (the default): 100 N·m on elbow_joint (limit 28) is sent as 28, with a
    warning naming the joint and the effort limits."""
    world.sim('--msgs-prefix', 'ignition.msgs.', world_file=EFFORT_WORLD)
    node = bridge(world, 'ur3e_effort.yaml', f'joint_effort_limits:={EFFORT_LIMITS}')
    node.wait_output('::Robot initialized.', START_S)
    commands = gazebo_stream(world, '/model/ur3e/joint/elbow_joint/cmd_force')
    publisher = world.publisher(Float64MultiArray, FORCES)
    target = [0.0, 0.0, -100.0, 0.0, 0.0, 0.0]
    world.wait_for(lambda: (spin_publishing(world, publisher, target, 0.1),
                            -28.0 in commands_on(commands))[1], 10,
                   'the clamped effort on elbow_joint/cmd_force')
    assert all(abs(v) <= 28.0 for v in commands_on(commands))
    node.wait_output('set_target_joint_forces: clamped 1 value(s) into the effort limits, '
                     'first 2 (elbow_joint) = -100 into [-28, 28]', 5)


def test_a_mode_no_controller_listens_to_is_refused_naming_the_topic(world):
    """The position world has no JointController: a velocity target is refused naming the
    cmd_vel topics nothing subscribes to; the node keeps serving positions."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    node = bridge(world, 'config.yaml')
    node.wait_output('::Robot initialized.', START_S)
    publisher = world.publisher(Float64MultiArray, VELOCITIES)
    line = ('set_target_joint_velocities: nothing subscribes to '
            '[/model/ur3e/joint/shoulder_pan_joint/cmd_vel, ')
    world.wait_for(lambda: (spin_publishing(world, publisher, [0.1] * 6, 0.2, hz=10),
                            node.count(line) > 0)[1], 10, 'the refusal naming cmd_vel')
    assert re.search(r"is Gazebo's JointController \(velocity mode\) loaded, and "
                     r'joint_velocities_topic_prefix right\?', node.output())
    states = world.subscribe(JointState, STATES)
    positions = world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions')
    goal = [0.05] * 6
    world.wait_for(lambda: (spin_publishing(world, positions, goal, 0.1),
                            states and all(abs(p - g) < 1e-3 for p, g in
                                           zip(states[-1].position, goal)))[1],
                   START_S, 'the position target reached')


def test_a_stopping_node_sets_the_velocity_in_force_to_zero(world):
    """With a long command timeout, a SIGTERM to the node still leaves Gazebo at zero
    velocity: the orderly stop sends it."""
    world.sim('--msgs-prefix', 'ignition.msgs.', world_file=VELOCITY_WORLD)
    node = bridge(world, 'ur3e_velocity.yaml', 'command_timeout_sec:=60.0')
    node.wait_output('::Robot initialized.', START_S)
    gazebo = gazebo_stream(world, VELOCITY_STATES)
    publisher = world.publisher(Float64MultiArray, VELOCITIES)
    target = [0.0] * 6
    target[WRIST_3] = 0.5

    def models():
        return parse_models(list(gazebo.lines))

    world.wait_for(lambda: (spin_publishing(world, publisher, target, 0.1),
                            any(j['wrist_3_joint'][1] > 0 for _, j in models()))[1],
                   START_S, 'Gazebo moving wrist_3_joint')
    node.signal(signal.SIGTERM)
    assert node.wait_exit(10) == 0
    world.wait_for(lambda: models()[-1][1]['wrist_3_joint'][1] == 0, 10,
                   'Gazebo reporting wrist_3_joint stopped after the node stopped')


def test_realtime_priority_reaches_the_listener_thread_on_a_velocity_target(world):
    """The DDS listener thread that forwards targets gets `realtime_priority` with the first
    target it takes, a velocity target as well as a position one."""
    if subprocess.run(['chrt', '--fifo', '1', 'true'], capture_output=True).returncode != 0:
        pytest.skip('SCHED_FIFO is not allowed here')
    world.sim('--msgs-prefix', 'ignition.msgs.', world_file=VELOCITY_WORLD)
    node = bridge(world, 'ur3e_velocity.yaml', 'realtime_priority:=3')
    node.wait_output('::Robot initialized.', START_S)
    publisher = world.publisher(Float64MultiArray, VELOCITIES)
    target = [0.0] * 6
    target[WRIST_3] = 0.5
    line = 'the DDS listener thread (targets forwarded on arrival) runs at SCHED_FIFO 3'
    world.wait_for(lambda: (spin_publishing(world, publisher, target, 0.1),
                            node.count(line) == 1)[1],
                   START_S, 'the listener thread at SCHED_FIFO 3')


def test_a_fortress_subscriber_counts_as_a_controller(world):
    """The real Ignition CLI (gz-transport 11, Fortress) subscribed to the one cmd_vel topic
    of a one-joint robot in the position world: the node knows it is there (it announced its
    connection) and takes the velocity target, which the CLI receives; refused before it
    subscribed."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    params = world.params_file("""
wrist_only:
  ros__parameters:
    joint_names: ["wrist_3_joint"]
    joint_positions_topic_prefix: "/model/ur3e/joint/"
    joint_states_topic: "/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state"
    robot_name: "wrist_only"
    gz_msgs_prefix: "ignition.msgs."
""")
    node = world.bridge('-r', '__node:=wrist_only', '--params-file', params)
    node.wait_output('::Robot initialized.', START_S)
    publisher = world.publisher(Float64MultiArray, '/wrist_only/set/target_joint_velocities')
    refused = ('set_target_joint_velocities: nothing subscribes to '
               '[/model/ur3e/joint/wrist_3_joint/cmd_vel]')
    world.wait_for(lambda: (spin_publishing(world, publisher, [0.125], 0.2, hz=10),
                            node.count(refused) > 0)[1], 10, 'the refusal before the CLI')
    commands = gazebo_stream(world, '/model/ur3e/joint/wrist_3_joint/cmd_vel')
    world.wait_for(lambda: (spin_publishing(world, publisher, [0.125], 0.1),
                            0.125 in commands_on(commands))[1], START_S,
                   'the target at the Ignition CLI')
