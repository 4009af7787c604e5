"""The publishing modes (issue 14) and staleness (issue 15 item 1), end to end: gz-joint-sim,
sas_robot_driver_ros_gazebo_node and rclpy (and the Ignition CLI on the Gazebo side), each in
its own process. Rates are judged over whole seconds with margins for 2 loaded cores; the
benchmark (scripts/bench), not these tests, measures speed."""

import os
import pathlib
import signal
import subprocess
import time

import pytest
from sensor_msgs.msg import JointState
from rclpy.serialization import serialize_message
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout

from conftest import CONFIG, UR3E_JOINTS, UR3E_STATES, binary

START_S = 30
STATES = '/ur3e_1/get/joint_states'
TARGETS = '/ur3e_1/set/target_joint_positions'
PAN_CMD = '/model/ur3e/joint/shoulder_pan_joint/0/cmd_pos'


def ur3e_bridge(world, *parameters):
    """The node with config/config.yaml's ur3e_1 block and `parameters` over it."""
    return world.ur3e_bridge_with(*parameters)


def sim_time(state) -> float:
    return state.header.stamp.sec + state.header.stamp.nanosec * 1e-9


def collect(world, states, seconds: float) -> list:
    """The states received during the next `seconds` (after spinning through them)."""
    start = len(states)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        world.spin()
    return states[start:]


def test_on_arrival_publishes_at_most_once_per_period(world):
    """Gazebo at 500 Hz, loop at 20 Hz: the ROS rate is the loop's, each state a new Gazebo
    message."""
    world.sim()
    bridge = ur3e_bridge(world, 'thread_sampling_time_sec:=0.05', 'joint_states_stamp:=gazebo')
    states = world.subscribe(JointState, STATES)
    world.wait_for(lambda: len(states) > 5, START_S, 'joint states')
    bridge.wait_output('::Robot initialized.', 5)
    window = collect(world, states, 4.0)
    # At most one per 50 ms period: 80 in 4 s, plus the cap's burst of 4 and one at each end.
    assert len(window) <= 80 + 4 + 2, f'{len(window)} states in 4 s at a 50 ms loop'
    assert len(window) >= 40, f'only {len(window)} states in 4 s: not publishing per period'
    stamps = [sim_time(m) for m in window]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), \
        'every state is a new Gazebo message'


def model_text(position: float) -> str:
    """A UR3e `Model` in protobuf text format: every joint at `position`, limits ±2π."""
    return ' '.join(f'joint {{ name: "{joint}" axis1 {{ position: {position} '
                    f'limit_lower: -6.28 limit_upper: 6.28 }} }}' for joint in UR3E_JOINTS)


# A little more than the driver's SOURCE_SILENCE (250 ms).
SOURCE_SILENCE_S = 0.35


def test_beyond_the_rate_caps_budget_a_state_waits_for_its_slot_and_the_latest_wins(world):
    """Our gz-topic CLI plays Gazebo (it waits for the bridge's subscription before it
    sends), far faster than the bridge's 10 s period: the rate cap lets n + 4 states out over
    any n periods, so messages 1 to 5 are published as they arrive, 6 and 7 exceed the
    budget and wait for the slot a period after the first, where the latest, 7, wins and 6 is
    never reported."""
    period = 10.0
    bridge = ur3e_bridge(world, f'thread_sampling_time_sec:={period}')
    gz_topic = binary('GZ_TOPIC_BIN', 'gz-topic')
    received = []
    # When the bridge published (the DDS source timestamp, system clock), not when this
    # process got round to taking the message: it does not spin while a CLI run is going on.
    world.node.create_subscription(
        JointState, STATES,
        lambda m, info: received.append((info['source_timestamp'] * 1e-9, m)), 10)

    def gazebo_sends(position: float):
        subprocess.run([gz_topic, '-t', UR3E_STATES, '-m', 'gz.msgs.Model', '--wait', '20',
                        '-p', model_text(position)], env=world.env(), check=True, timeout=30,
                       capture_output=True)

    # Volatile topics: a state published before discovery matched us would be lost.
    world.wait_for(lambda: world.node.count_publishers(STATES) > 0, START_S,
                   'the bridge\'s joint-state publisher')
    gazebo_sends(1.0)
    world.wait_for(lambda: received, START_S, 'the state of the first Model')
    bridge.wait_output('::Robot initialized.', 5)
    first_at, first = received[0]
    assert list(first.position) == [1.0] * 6
    # Each CLI run is a new publisher: the bridge takes joint states from one publisher at a
    # time and lets another take over once the current one was silent for 250 ms (the driver's
    # SOURCE_SILENCE), so each run waits that long after the previous one sent.
    for position in range(2, 8):
        time.sleep(SOURCE_SILENCE_S)
        gazebo_sends(float(position))
    sent = time.time()
    assert sent - first_at < period - 1.0, 'the CLI took too long to test within one period'
    world.wait_for(lambda: len(received) >= 6, period + 5, 'the state at the slot')
    collect(world, received, 0.5)
    positions = [list(m.position)[0] for _, m in received]
    assert positions == [1.0, 2.0, 3.0, 4.0, 5.0, 7.0], \
        f'{positions}: 1-5 at once (the budget), 7 at the slot (latest wins), 6 never'
    for at, m in received[1:5]:
        assert at - first_at < period / 2, \
            f'state {m.position[0]} published {at - first_at:.2f} s after the first: held back'
    slot_at = received[5][0]
    assert slot_at - first_at > period - 0.1, \
        f'published {slot_at - first_at:.2f} s after the first: sooner than the rate cap'
    assert slot_at - sent < period, 'published when its slot came'


def test_a_model_lacking_a_joint_is_not_published_as_fresh_and_diagnostics_name_it(world):
    """Our gz-topic CLI plays Gazebo: one complete Model, then three that lack wrist_3_joint
    (a model reloaded with the joint renamed) with every other joint moved to 0.5. None of
    them is published as a state (the lacking joint's old value would carry the new stamp);
    the node warns once naming the joint, and /diagnostics names it and counts the three."""
    from diagnostic_msgs.msg import DiagnosticArray

    bridge = ur3e_bridge(world)
    gz_topic = binary('GZ_TOPIC_BIN', 'gz-topic')
    received = []
    world.node.create_subscription(JointState, STATES, received.append, 10)
    diagnostics = world.subscribe(DiagnosticArray, '/diagnostics')

    def gazebo_sends(text: str):
        subprocess.run([gz_topic, '-t', UR3E_STATES, '-m', 'gz.msgs.Model', '--wait', '20',
                        '-p', text], env=world.env(), check=True, timeout=30,
                       capture_output=True)

    world.wait_for(lambda: world.node.count_publishers(STATES) > 0, START_S,
                   'the bridge\'s joint-state publisher')
    gazebo_sends(model_text(1.0))
    world.wait_for(lambda: received, START_S, 'the state of the complete Model')
    bridge.wait_output('::Robot initialized.', 5)
    partial = ' '.join(f'joint {{ name: "{joint}" axis1 {{ position: 0.5 limit_lower: -6.28 '
                       f'limit_upper: 6.28 }} }}' for joint in UR3E_JOINTS[:-1])
    for _ in range(3):
        # Each CLI run is a new publisher, taken once the previous one was silent.
        time.sleep(SOURCE_SILENCE_S)
        gazebo_sends(partial)

    def robot_status():
        for array in reversed(list(diagnostics)):
            for status in array.status:
                if status.hardware_id == 'ur3e_1':
                    return status, {kv.key: kv.value for kv in status.values}
        return None, {}

    world.wait_for(lambda: robot_status()[1].get('incomplete_joint_states') == '3', START_S,
                   'diagnostics counting the three incomplete Models')
    status, values = robot_status()
    assert 'lack the configured joint(s) wrist_3_joint' in status.message, status.message
    assert values['gazebo_messages'] == '1', values
    collect(world, received, 0.5)
    moved = [list(m.position) for m in received if 0.5 in list(m.position)]
    assert not moved, f'states published from Models lacking wrist_3_joint: {moved}'
    assert bridge.count('lacks the configured joint(s) wrist_3_joint') == 1, bridge.output()


def test_grid_mode_publishes_every_period(world):
    world.sim()
    ur3e_bridge(world, 'thread_sampling_time_sec:=0.05', 'joint_states_publishing:=grid')
    states = world.subscribe(JointState, STATES)
    world.wait_for(lambda: len(states) > 5, START_S, 'joint states')
    window = collect(world, states, 4.0)
    assert 60 <= len(window) <= 82, f'{len(window)} states in 4 s on a 50 ms grid'


def stop_gazebo_and_resume(world, sim, bridge, states) -> tuple[list, list]:
    """Freezes the simulator (SIGSTOP) until the bridge says the robot is stale, collects what
    is published meanwhile, resumes it and waits for the recovery line. Returns the states
    received before the outage's second measured, and those received during it."""
    world.wait_for(lambda: len(states) > 10, START_S, 'joint states')
    bridge.wait_output('::Robot initialized.', 5)
    os.kill(sim.proc.pid, signal.SIGSTOP)
    try:
        bridge.wait_output('is stale', 10)
        line = next(l for l in bridge.lines if 'is stale' in l)
        assert 'Robot ur3e_1 is stale' in line and UR3E_STATES in line, line
        assert ' ms (state timeout 200.0 ms)' in line, line
        collect(world, states, 0.3)  # what was on its way when the simulator stopped
        before = list(states)
        during = collect(world, states, 1.0)
    finally:
        os.kill(sim.proc.pid, signal.SIGCONT)
    bridge.wait_output('again after an outage of', 10)
    line = next(l for l in bridge.lines if 'again after an outage of' in l)
    assert 'Robot ur3e_1: joint states on' in line and UR3E_STATES in line, line
    after = len(states)
    world.wait_for(lambda: len(states) > after + 5, 10, 'joint states after the outage')
    # One WARN per outage: each "is stale" is followed by its recovery, and nothing else
    # (a loaded machine may stall the simulator into an outage of its own: logged the same).
    said = ['stale' if 'is stale' in l else 'recovered' for l in list(bridge.lines)
            if 'is stale' in l or 'again after an outage' in l]
    assert said == ['stale', 'recovered'] * (len(said) // 2), said
    return before, during


def test_nothing_is_published_while_gazebo_is_stopped_and_the_outage_is_logged(world):
    sim = world.sim()
    bridge = ur3e_bridge(world, 'state_timeout_sec:=0.2')
    states = world.subscribe(JointState, STATES)
    _, during = stop_gazebo_and_resume(world, sim, bridge, states)
    assert during == [], f'{len(during)} states published while Gazebo was stopped'


def test_grid_mode_withholds_stale_state_by_default(world):
    sim = world.sim()
    bridge = ur3e_bridge(world, 'state_timeout_sec:=0.2', 'joint_states_publishing:=grid')
    states = world.subscribe(JointState, STATES)
    _, during = stop_gazebo_and_resume(world, sim, bridge, states)
    assert during == [], f'{len(during)} states published while Gazebo was stopped'


@pytest.mark.parametrize('stamp', ['node_clock', 'gazebo'])
def test_grid_mode_republishes_stale_state_as_the_original_when_asked(world, stamp):
    """The original publishes what its cache holds every period: while Gazebo is stopped, the
    last state it sent (positions, velocities, efforts), stamped with the node clock at each
    publication. Under `gazebo` stamps the republished state keeps its simulation time: the
    stale state is not presented as a new one. The joints are moving when Gazebo stops, so an
    older state, or zeros, differ from the last."""
    sim = world.sim()
    bridge = ur3e_bridge(world, 'state_timeout_sec:=0.2', 'joint_states_publishing:=grid',
                         'stale_joint_states:=republish', f'joint_states_stamp:={stamp}')
    published = {}  # id(state) -> when the node published it (DDS source timestamp)
    states = []

    def received(state, info):
        published[id(state)] = info['source_timestamp'] * 1e-9
        states.append(state)
    world.node.create_subscription(JointState, STATES, received, 10)
    world.wait_for(lambda: states, START_S, 'joint states')
    world.publisher(Float64MultiArray, TARGETS).publish(
        Float64MultiArray(data=[2.0, 1.0, 1.0, 1.0, 1.0, 1.0]))
    world.wait_for(lambda: states[-1].position[0] > 0.2, START_S, 'the joints moving')

    before, during = stop_gazebo_and_resume(world, sim, bridge, states)
    # The joints rise toward the target: Gazebo's last state is the one furthest on.
    last = max(before, key=lambda state: state.position[0])
    assert 0.2 < last.position[0] < 2.0, f'not moving when Gazebo stopped: {last.position}'
    assert len(during) > 5, 'republish: the last state goes on every period'
    for state in during:
        assert (list(state.position), list(state.velocity), list(state.effort)) == (
            list(last.position), list(last.velocity), list(last.effort)), \
            f'republished {state.position}, the last state was {last.position}'
    stamps = [sim_time(state) for state in during]
    if stamp == 'gazebo':
        assert set(stamps) == {sim_time(last)}, \
            f'republished with {len(set(stamps))} stamps from {min(stamps):.3f} to ' \
            f'{max(stamps):.3f} s, the last state\'s is {sim_time(last):.3f} s'
    else:
        assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps), \
            'a new node-clock stamp per publication'
        # Each stamped when it was published (a loaded machine may stall a thread between
        # the two; a stamp kept from the last fresh state is over 0.8 s old here).
        for state in during:
            late = published[id(state)] - sim_time(state)
            assert 0 <= late < 0.5, f'stamped {late:.3f} s before it was published'


def test_targets_on_arrival_reach_gazebo_without_waiting_for_a_period(world):
    """A 300 s loop: forwarded every period, a target sent just after initialization would
    wait ~300 s for the first one, far beyond every wait here; on arrival Gazebo (read by the
    Ignition CLI) has it at once and the joint moves."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    bridge = ur3e_bridge(world, 'gz_msgs_prefix:=ignition.msgs.',
                         'thread_sampling_time_sec:=300.0', 'target_forwarding:=on_arrival')
    targets = world.publisher(Float64MultiArray, TARGETS)
    bridge.wait_output('::Robot initialized.', START_S)
    start = world.gazebo_positions()['shoulder_pan_joint']
    sent = time.monotonic()
    targets.publish(Float64MultiArray(data=[start + 0.5, 0.0, 0.0, 0.0, 0.0, 0.0]))
    world.wait_for(lambda: time.monotonic() > sent + 1.5, 5, '1.5 s')
    moved = world.gazebo_positions()['shoulder_pan_joint'] - start
    assert moved > 0.1, f'the joint moved {moved:.3f} rad towards a target 0.5 rad away'
    assert bridge.count('::Target refused') == 0


def thread_policies(pid: int) -> dict[str, int]:
    """Scheduling policy (0 normal, 1 FIFO) by thread name."""
    policies = {}
    for tid in os.listdir(f'/proc/{pid}/task'):
        try:
            name = pathlib.Path(f'/proc/{pid}/task/{tid}/comm').read_text().strip()
            stat = pathlib.Path(f'/proc/{pid}/task/{tid}/stat').read_text()
        except OSError:
            continue
        fields = stat.rsplit(')', 1)[1].split()
        policies[f'{name}:{tid}' if tid != str(pid) else 'main'] = int(fields[38])
    return policies


def test_realtime_priority_runs_the_loop_and_receive_threads_at_sched_fifo(world):
    if subprocess.run(['chrt', '--fifo', '1', 'true'], capture_output=True).returncode != 0:
        pytest.skip('SCHED_FIFO is not allowed here')
    world.sim()
    bridge = ur3e_bridge(world, 'realtime_priority:=3')
    states = world.subscribe(JointState, STATES)
    world.wait_for(lambda: len(states) > 5, START_S, 'joint states')
    bridge.wait_output('the gz-transport receive thread runs at SCHED_FIFO 3', 10)
    assert bridge.count('the loop thread runs at SCHED_FIFO 3') == 1
    policies = thread_policies(bridge.proc.pid)
    assert policies['main'] == 1, policies
    assert any(name.startswith('gz-receive') and p == 1 for name, p in policies.items()), policies


def test_realtime_priority_without_the_capability_warns_naming_it_and_keeps_running(world):
    """Root without CAP_SYS_NICE (dropped from the bounding set) and RLIMIT_RTPRIO 0, as an
    ordinary user is."""
    if os.geteuid() != 0:
        pytest.skip('needs root to drop CAP_SYS_NICE')
    world.sim()
    node = binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')
    bridge = world.start(['prlimit', '--rtprio=0', '--', 'setpriv', '--bounding-set=-sys_nice',
                          '--inh-caps=-sys_nice', node, '--ros-args', '-r', '__node:=ur3e_1',
                          '--params-file', CONFIG, '-p', 'realtime_priority:=3'])
    # (realtime_priority is not in the ur3e_1 block, so the -p override applies.)
    states = world.subscribe(JointState, STATES)
    world.wait_for(lambda: len(states) > 5, START_S, 'joint states despite the warning')
    bridge.wait_output('the loop thread keeps normal scheduling', 10)
    line = next(l for l in bridge.lines if 'the loop thread keeps normal scheduling' in l)
    assert '[WARN]' in line, line
    assert 'CAP_SYS_NICE' in line and 'RLIMIT_RTPRIO is 0' in line, line
    bridge.wait_output('the gz-transport receive thread keeps normal scheduling', 10)
    assert all(p == 0 for p in thread_policies(bridge.proc.pid).values())


def test_targets_are_read_from_their_cdr_past_any_layout_and_unreadable_ones_are_dropped(world):
    """The node takes set/* targets as CDR and reads them itself: bytes that end inside the
    data (rclpy publishing them raw) are dropped with an error naming the topic, the node keeps
    serving, and a target with a layout (a labelled dimension, which moves the data's
    alignment) reaches Gazebo (read by the Ignition CLI)."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    bridge = ur3e_bridge(world, 'gz_msgs_prefix:=ignition.msgs.')
    targets = world.publisher(Float64MultiArray, TARGETS)
    bridge.wait_output('::Robot initialized.', START_S)
    start = world.gazebo_positions()['shoulder_pan_joint']
    goal = [start + 0.2, 0.0, 0.0, 0.0, 0.0, 0.0]
    message = Float64MultiArray(
        layout=MultiArrayLayout(dim=[MultiArrayDimension(label='joints', size=6, stride=6)]),
        data=goal)
    truncated = serialize_message(message)[:-5]
    unreadable = (f"::{TARGETS.lstrip('/')}: a message that is not a readable Float64MultiArray "
                  'was dropped')
    # Sent until the node's reader has matched this writer and the error shows.
    world.wait_for(lambda: targets.publish(truncated) or bridge.count(unreadable), 10,
                   'the error naming the unreadable target')
    line = next(l for l in bridge.lines if unreadable in l)
    assert '[ERROR]' in line and 'inside data' in line, line
    assert bridge.alive()
    targets.publish(message)
    world.wait_for(lambda: abs(world.gazebo_positions()['shoulder_pan_joint'] - goal[0]) < 0.01,
                   30, 'the joint at the target sent with a layout')
    assert bridge.count('::Target refused') == 0
