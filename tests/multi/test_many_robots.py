"""Sixteen UR3e arms in one simulated world, bridged by one node (`robots`): each robot's states
on its own topic, named and from its own Gazebo model, and a target to one robot moves that
robot only. Structure, not speed: the benchmark's robots_16 measures the cost."""

import sys

import yaml
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import ROOT, START_S, UR3E_JOINTS, binary

sys.path.insert(0, str(ROOT / 'bench'))
from robots_world import robots_world, robots_world_states_topic  # noqa: E402

ROBOTS = [f'ur3e_{k}' for k in range(1, 17)]


def test_sixteen_robots_in_one_process_each_publish_their_own_states(world):
    models = world.tmp / 'models'
    world_file = robots_world(len(ROBOTS), models)
    sim = world.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), world_file],
                      GZ_SIM_RESOURCE_PATH=f'{models}:{ROOT / "sdf"}')
    sim.wait_output('joint states', START_S)
    # A list of its own per robot: rcl's params-file parser knows no YAML aliases.
    groups = {name: {'joint_names': list(UR3E_JOINTS),
                     'joint_positions_topic_prefix': f'/model/{name}/joint/',
                     'joint_states_topic': robots_world_states_topic(name)}
              for name in ROBOTS}
    params = world.params_file(yaml.safe_dump(
        {'many': {'ros__parameters': {'robots': ROBOTS, **groups}}}))
    node = world.node_process('many', params)
    states = {name: world.subscribe(JointState, f'/{name}/get/joint_states') for name in ROBOTS}
    world.wait_for(lambda: all(states.values()), START_S, 'the states of all 16 robots')
    node.wait_output('Running 16 robots in one process', 5)
    for name, received in states.items():
        assert list(received[-1].name) == UR3E_JOINTS, name
    # Each robot is its own Gazebo model: a target to ur3e_7 moves ur3e_7's elbow only.
    start = {name: received[-1].position[2] for name, received in states.items()}
    world.publisher(Float64MultiArray, '/ur3e_7/set/target_joint_positions').publish(
        Float64MultiArray(data=[0.0, 0.0, start['ur3e_7'] + 0.1, 0.0, 0.0, 0.0]))
    world.wait_for(lambda: states['ur3e_7'][-1].position[2] > start['ur3e_7'] + 0.05, 20,
                   'ur3e_7 moving to its target')
    world.spin_for(0.5)
    moved = [name for name, received in states.items()
             if abs(received[-1].position[2] - start[name]) > 1e-6]
    assert moved == ['ur3e_7'], f'moved: {moved}'
    assert node.count('::Target refused') == 0
