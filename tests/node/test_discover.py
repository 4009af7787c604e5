"""sas-gz-discover against gz-joint-sim running the shipped worlds: the blocks it prints are
given unchanged to sas_robot_driver_ros_gazebo_node, which must then drive the robots."""

import os
import subprocess

import pytest
import yaml
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import ROOT, binary

START_S = 30      # process start + discovery, on 2 loaded cores
MOTION_S = 40     # joints move at <= 0.25 rad/s in sim time

HARMONIC_STATES = '/world/{w}/model/{m}/model/{m}_position_controller/model/{m}/joint_state'
WORLDS = {
    # world file: (model, joint count)
    'ur3e_world.sdf': ('ur3e', 6),
    'r820_world.sdf': ('r820', 7),
    'longboy_world.sdf': ('longboy', 13),
}


def discover(world, *args, timeout=20) -> subprocess.CompletedProcess:
    tool = binary('GZ_DISCOVER_BIN', 'sas-gz-discover')
    return subprocess.run([tool, '--timeout', str(timeout), *args], env=world.env(),
                          capture_output=True, text=True, timeout=timeout + 30)


def start_sim(world, path, *extra):
    sim = world.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), path, *extra])
    sim.wait_output('joint states', START_S)
    return sim


def drive(world, key: str, params: dict, params_path):
    """Runs the bridge on `params_path` as node `key` and moves every joint to a target."""
    joints = params['joint_names']
    robot = params['robot_name']
    world.bridge('-r', f'__node:={key}', '--params-file', params_path)
    states = world.subscribe(JointState, f'/{robot}/get/joint_states')
    world.wait_for(lambda: states, START_S, f'{robot} joint states')
    assert list(states[-1].name) == joints
    target = [0.05 * (i % 5 + 1) * (-1) ** i for i in range(len(joints))]
    world.publisher(Float64MultiArray, f'/{robot}/set/target_joint_positions').publish(
        Float64MultiArray(data=target))
    world.wait_for(lambda: all(abs(p - t) < 1e-6
                               for p, t in zip(states[-1].position, target)),
                   MOTION_S, f'{robot} at its target')


@pytest.mark.parametrize('world_file', list(WORLDS))
def test_discovered_blocks_run_the_bridge_unchanged(world, world_file):
    model, joint_count = WORLDS[world_file]
    start_sim(world, ROOT / 'sdf' / world_file)
    out = discover(world)
    assert out.returncode == 0, out.stderr
    print(out.stdout)
    config = yaml.safe_load(out.stdout)
    assert list(config) == [f'{model}_1']
    params = config[f'{model}_1']['ros__parameters']
    assert params['joint_states_topic'] == HARMONIC_STATES.format(
        w=world_file.removesuffix('.sdf'), m=model)
    assert params['joint_positions_topic_prefix'] == f'/model/{model}/joint/'
    assert len(params['joint_names']) == joint_count
    assert 'gz_msgs_prefix' not in params
    assert 'no position controller' not in out.stdout and 'not checked' not in out.stdout
    drive(world, f'{model}_1', params, world.params_file(out.stdout))


def test_a_fortress_world_gets_the_ignition_prefix_and_runs_the_bridge(world):
    start_sim(world, ROOT / 'sdf' / 'fortress' / 'ur3e_world.sdf',
              '--msgs-prefix', 'ignition.msgs.')
    out = discover(world, '--msgs-prefix', 'ignition.msgs.')
    assert out.returncode == 0, out.stderr
    params = yaml.safe_load(out.stdout)['ur3e_1']['ros__parameters']
    assert params['gz_msgs_prefix'] == 'ignition.msgs.'
    drive(world, 'ur3e_1', params, world.params_file(out.stdout))


def test_a_joint_without_controller_is_commented_and_filters_apply(world, tmp_path):
    # The UR3e world with the wrist_3 controller removed.
    sdf = ROOT / 'sdf'
    for name in ['ur3e_world.sdf', 'ur3e.sdf', 'reference_frame.sdf']:
        (tmp_path / name).write_text((sdf / name).read_text())
    controllers = (sdf / 'ur3e_position_controller.sdf').read_text()
    start = controllers.index('<joint_name>wrist_3_joint</joint_name>')
    start = controllers.rindex('<plugin', 0, start)
    end = controllers.index('</plugin>', start) + len('</plugin>')
    (tmp_path / 'ur3e_position_controller.sdf').write_text(controllers[:start] + controllers[end:])
    start_sim(world, tmp_path / 'ur3e_world.sdf')
    out = discover(world, '--model', 'ur3e')
    assert out.returncode == 0, out.stderr
    commented = [line for line in out.stdout.splitlines() if 'no position controller' in line]
    assert commented == ['      - "wrist_3_joint"  # no position controller listening on '
                         '/model/ur3e/joint/wrist_3_joint/0/cmd_pos'], out.stdout
    assert len(yaml.safe_load(out.stdout)['ur3e_1']['ros__parameters']['joint_names']) == 6
    # A filter that matches nothing: exit 1, saying so.
    out = discover(world, '--model', 'r820', timeout=3)
    assert out.returncode == 1 and 'no model named r820' in out.stderr, out.stderr


def test_without_gazebo_it_exits_1_with_a_clear_message(world):
    out = discover(world, timeout=2)
    assert out.returncode == 1
    assert out.stdout == ''
    assert 'no model with joints found within 2 s' in out.stderr
    assert world.partition in out.stderr
