"""A world reset seen by several robots of one world in one node (config/longboy.yaml's
longboy_robots: the R820 and the UR3e of sdf/longboy_world.sdf, and their composite): one line
says the world was reset, not one per robot, and every robot and the composite go on
publishing the new world's states. The reset is requested with our gz-service CLI (gz.msgs.
types) from the world control service gz-joint-sim serves."""

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from conftest import LONGBOY_CONFIG, LONGBOY_WORLD, START_S, binary
from support.ros import Reset, seconds, sim_reset_time

DEEP = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=5000,
                  reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
ROBOTS = ['r820_sim', 'ur3e_sim', 'longboy_sim']


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
    resets = {robot: Reset(s) for robot, s in states.items()}
    world.reset_world(binary('GZ_SERVICE_BIN', 'gz-service'), 'longboy_world', 'gz.msgs.')
    reset_at = sim_reset_time(sim)

    def new_world(robot):
        return resets[robot].new_world(states[robot])

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
