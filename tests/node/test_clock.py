"""Gazebo's clock on ROS (issue 22): `publish_clock` republishes Gazebo's `/clock` on ROS
`/clock` (rosgraph_msgs/Clock, ClockQoS), and `use_sim_time: true` makes every stamp of the
node simulation time. gz-joint-sim runs at a real-time factor of 0.5 or 2, so simulation time
and wall time part at once; the real Ignition CLI reads Gazebo's own clock messages, rclpy (a
node with `use_sim_time`) reads ROS's."""

import time

import pytest
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from conftest import IGN_TOPIC_CLI
from support.ros import seconds
from test_on_arrival import START_S, STATES, ur3e_bridge

# ClockQoS (what every use_sim_time subscriber asks for: best effort, volatile) with a history
# deep enough that this process being slow to take the messages loses none, where ClockQoS's
# depth 1 would let a newer one replace them: what is missing then is the bridge's loss.
CLOCK_QOS_DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1000,
                            reliability=ReliabilityPolicy.BEST_EFFORT,
                            durability=DurabilityPolicy.VOLATILE)
WINDOW_S = 3.0
STEP_S = 0.002  # sdf/ur3e_world.sdf's max_step_size: one clock message per step


def gazebo_clock(world, topic: str = '/clock'):
    """The Ignition CLI echoing Gazebo's `Clock` on `topic`: a function returning the
    `(sim, real)` times (seconds) it printed, in order."""
    echo = world.start([IGN_TOPIC_CLI, '-e', '-t', topic])

    def times() -> list[tuple[float, float]]:
        out, block, fields = [], None, {}
        current = {}
        for line in list(echo.lines):
            line = line.strip()
            if line.endswith('{'):
                block, fields = line[:-1].strip(), {}
            elif line == '}' and block is not None:
                current[block] = fields.get('sec', 0) + fields.get('nsec', 0) * 1e-9
                if block == 'sim':  # the last field of a message
                    out.append((current['sim'], current.get('real', 0.0)))
                    current = {}
                block = None
            elif block is not None and ':' in line:
                name, value = line.split(':', 1)
                fields[name.strip()] = int(value)
        return out
    return times


def slope(points) -> float:
    (x0, y0), (x1, y1) = points[0], points[-1]
    return (y1 - y0) / (x1 - x0)


@pytest.mark.parametrize('rtf', [0.5, 2.0])
def test_clock_follows_gazebos_sim_time_and_the_nodes_stamps_are_sim_time(world, rtf):
    world.sim('--msgs-prefix', 'ignition.msgs.', '--real-time-factor', str(rtf))
    gazebo = gazebo_clock(world)
    bridge = ur3e_bridge(world, 'gz_msgs_prefix:=ignition.msgs.', 'publish_clock:=true',
                         'use_sim_time:=true')
    bridge.wait_output("::Publishing Gazebo's clock [/clock] (ignition.msgs.Clock) on ROS "
                       '/clock', START_S)

    clocks, states, diagnostics = [], [], []
    # Each /clock at its DDS source timestamp (when the node published it, system clock), not
    # when this process got round to taking it: the rate is the node's, not this process's.
    world.node.create_subscription(
        Clock, '/clock',
        lambda m, info: clocks.append((info['source_timestamp'] * 1e-9, seconds(m.clock),
                                       m.clock.sec * 10**9 + m.clock.nanosec)),
        CLOCK_QOS_DEEP)
    world.node.create_subscription(
        JointState, STATES, lambda m: states.append(seconds(m.header.stamp)), 10)
    world.node.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda m: diagnostics.append(seconds(m.header.stamp)), 10)
    # A node on simulation time, as a user's controller would be.
    sim_node = rclpy.create_node('sim_time_user', context=world.context,
                                 parameter_overrides=[Parameter('use_sim_time', value=True)])
    world.executor.add_node(sim_node)
    try:
        world.wait_for(lambda: world.node.count_publishers('/clock') == 1, START_S,
                       'the /clock publisher')
        bridge.wait_output('::Robot initialized.', START_S)
        world.wait_for(lambda: clocks and states and diagnostics, START_S,
                       '/clock, joint states and diagnostics')
        assert world.node.count_publishers('/clock') == 1
        # A window starting now: whatever was stamped before the first /clock is past.
        for received in (clocks, states, diagnostics):
            received.clear()
        world.spin_for(WINDOW_S)
        window_states, window_diagnostics = list(states), list(diagnostics)
        user_ns = sim_node.get_clock().now().nanoseconds
        ros = [(source, sim) for source, sim, _ in clocks]
        # The CLI's output (a pipe, read by a thread here) may trail by a few messages.
        world.wait_for(lambda: gazebo() and gazebo()[-1][0] >= ros[-1][1], 10,
                       "the Ignition CLI to print Gazebo's clock up to the last /clock")
        gz = gazebo()

        # Values: each one is one Gazebo sent (bit for bit, as the CLI printed it).
        assert len(ros) > 0.5 * WINDOW_S * rtf / STEP_S, f'{len(ros)} /clock messages'
        sent = {round(sim, 9) for sim, _ in gz}
        foreign = [sim for _, sim in ros if round(sim, 9) not in sent]
        assert not foreign, f'/clock values Gazebo never sent: {foreign[:5]}'
        # Rate: as many as Gazebo sent over the same sim time, and simulation time advancing
        # on the node's publication times as fast as on Gazebo's own real time.
        first, last = ros[0][1], ros[-1][1]
        sent_in_window = [g for g in gz if first <= g[0] <= last]
        assert len(ros) >= 0.95 * len(sent_in_window), \
            f'{len(ros)} /clock messages for {len(sent_in_window)} of Gazebo'
        ros_rtf, gz_rtf = slope(ros), slope([(real, sim) for sim, real in sent_in_window])
        assert abs(ros_rtf - gz_rtf) < 0.1 * rtf, \
            f'/clock advances {ros_rtf:.3f} s per wall s, Gazebo {gz_rtf:.3f}'
        # Far from 1 either way (a loaded machine may keep the simulator below its target).
        assert 0.6 * rtf < gz_rtf < 1.3 * rtf, \
            f'Gazebo ran at a real-time factor of {gz_rtf:.3f} for a target of {rtf}'

        # rclpy's clock with use_sim_time is Gazebo's sim time, far from wall time: the value
        # it read is a /clock message the bridge published (this process's deep
        # /clock queue may trail the time source's depth-1 one, so wait for it to catch up).
        world.wait_for(lambda: clocks and clocks[-1][2] >= user_ns, 10,
                       "this process's /clock subscription to reach the use_sim_time node's time")
        # Within one step of a published value (best effort may lose the very message).
        nearest = min(abs(ns - user_ns) for _, _, ns in clocks)
        assert nearest <= STEP_S * 1e9, \
            f'use_sim_time node at {user_ns * 1e-9:.9f} s, {nearest * 1e-9:.3f} s from any /clock'
        # The node's stamps are sim time: its joint states within the window's clock, its
        # diagnostics too (once a second).
        # The window's /clock ends where this process's deep queue caught up, at or past
        # the last stamp the node gave before the window closed.
        newest = clocks[-1][1]
        assert window_states and window_diagnostics
        for what, stamps in (('joint_states', window_states),
                             ('diagnostics', window_diagnostics)):
            outside = [s for s in stamps if not first - 0.25 <= s <= newest + 0.25]
            assert not outside, \
                f'{what} stamps outside sim time [{first:.3f}, {newest:.3f}]: {outside[:5]}'
        assert slope(list(enumerate(window_states))) > 0, 'joint_states stamps do not advance'
    finally:
        world.executor.remove_node(sim_node)
        sim_node.destroy_node()


def test_without_publish_clock_there_is_no_clock_publisher_and_stamps_are_wall_time(world):
    world.sim()
    bridge = ur3e_bridge(world)
    states = world.subscribe(JointState, STATES)
    bridge.wait_output('::Robot initialized.', START_S)
    world.wait_for(lambda: states, START_S, 'joint states')
    assert world.node.count_publishers(STATES) == 1
    assert world.node.count_publishers('/clock') == 0
    assert "Gazebo's clock" not in bridge.output()
    assert abs(seconds(states[-1].header.stamp) - time.time()) < 5


def test_use_sim_time_without_a_clock_stamps_0_and_says_so(world):
    """No /clock anywhere: the node's clock stays at 0 (as any ROS node's would), and the node
    warns once, naming the cure."""
    world.sim()
    bridge = ur3e_bridge(world, 'use_sim_time:=true')
    states = world.subscribe(JointState, STATES)
    bridge.wait_output('::use_sim_time: every stamp is ROS /clock time', START_S)
    world.wait_for(lambda: states, START_S, 'joint states')
    assert seconds(states[-1].header.stamp) == 0
    bridge.wait_output('::use_sim_time is true but nothing arrived on /clock in 5 s: every '
                       'stamp is 0. Set publish_clock: true', 15)
    assert bridge.count('nothing arrived on /clock') == 1
