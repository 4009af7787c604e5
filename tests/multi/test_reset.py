"""A world reset seen by several robots of one world in one node (config/longboy.yaml's
longboy_robots: the R820 and the UR3e of sdf/longboy_world.sdf, and their composite): one line
says the world was reset, not one per robot, and every robot and the composite go on
publishing the new world's states. The reset is requested with our gz-service CLI (gz.msgs.
types) from the world control service gz-joint-sim serves."""

import datetime
import re
import subprocess

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from conftest import LONGBOY_CONFIG, LONGBOY_WORLD, START_S, binary

DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5000,
                  reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
ROBOTS = ['r820_sim', 'ur3e_sim', 'longboy_sim']


def seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def test_one_line_for_a_reset_of_a_world_several_robots_see(world):
    sim = world.sim(LONGBOY_WORLD)
    node = world.node_process('longboy_robots', LONGBOY_CONFIG,
                              '-p', 'joint_states_stamp:=gazebo')
    states = {robot: [] for robot in ROBOTS}
    for robot in ROBOTS:
        world.node.create_subscription(
            JointState, f'/{robot}/get/joint_states',
            lambda m, info, robot=robot: states[robot].append(
                (info['source_timestamp'] * 1e-9, seconds(m.header.stamp))), DEEP)
    world.wait_for(lambda: all(states.values()), START_S, 'joint states of every robot')
    world.wait_for(lambda: all(s[-1][1] > 1.5 for s in states.values()), START_S,
                   'a second and a half of sim time')
    before = {robot: len(s) for robot, s in states.items()}
    cli = subprocess.Popen(
        [binary('GZ_SERVICE_BIN', 'gz-service'), '-s', '/world/longboy_world/control',
         '--reqtype', 'gz.msgs.WorldControl', '--reptype', 'gz.msgs.Boolean',
         '--timeout', '5000', '--req', 'reset { all: true }'],
        env=world.env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    world.wait_for(lambda: cli.poll() is not None, 30, 'gz-service to call the service')
    out, _ = cli.communicate()
    assert 'data: true' in out, f'the world control service answered:\n{out}'
    sim.wait_output('world reset: sim time back to 0', 10)
    line = next(line for line in sim.lines if 'world reset: sim time back to 0' in line)
    reset_at = datetime.datetime.fromisoformat(
        re.sub(r'\x1b\[[0-9;]*m', '', line).split()[0].replace('Z', '+00:00')).timestamp()

    def new_world(robot):
        """From the first state stamped before the last one of the old world, on."""
        received, start = states[robot], before[robot]
        old = received[start - 1][1]
        first = next((i for i in range(start, len(received)) if received[i][1] < old), None)
        return [] if first is None else received[first:]

    # Every robot and the composite: the new world's states, within a second of the reset,
    # and a second of them.
    world.wait_for(lambda: all(new_world(r) and new_world(r)[-1][1] > 1.0 for r in ROBOTS),
                   START_S, "a second of the new world on every robot's topic")
    for robot in ROBOTS:
        first = new_world(robot)[0][0] - reset_at
        assert first < 1.0, f'{robot}: the new world published {first:.3f} s after the reset'
        stamps = [s[1] for s in new_world(robot)]
        # The composite is stamped with its oldest part's stamp, which it may publish twice
        # (also before any reset: a composite matter, not the reset's); it never goes back.
        composite = robot == 'longboy_sim'
        bad = [(a, b) for a, b in zip(stamps, stamps[1:]) if b < a or (b == a and not composite)]
        assert not bad, f'{robot}: new-world stamps out of order: {bad[:5]}'
        print(f'{robot}: first new-world state published {first * 1e3:.1f} ms after the reset')
    world.spin_for(0.5)
    assert node.count('the world was reset') == 1, node.output()
