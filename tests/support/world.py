"""One test's world: a gz partition and a ROS domain of its own, the processes started in
them (each killed at the end), and the shipped UR3e world the suites simulate. The suites'
conftests subclass `World` for what they start (`support.ros.RosWorld` adds an rclpy client).
"""

import itertools
import os
import pathlib
import re

import pytest

from support import IGN_TOPIC_CLI, ROOT, Process, binary, double_values

UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
UR3E_JOINTS = ['shoulder_pan_joint', 'shoulder_lift_joint', 'elbow_joint',
               'wrist_1_joint', 'wrist_2_joint', 'wrist_3_joint']
UR3E_PREFIX = '/model/ur3e/joint/'
UR3E_STATES = '/world/ur3e_world/model/ur3e/model/ur3e_position_controller/model/ur3e/joint_state'
# Both middlewares on loopback: every child's environment, and the test process's own in the
# suites that run rclpy or the module in it.
LOOPBACK = {'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST', 'GZ_IP': '127.0.0.1',
            'IGN_IP': '127.0.0.1'}
# The UR3e under velocity control (JointController) and under effort control (ApplyJointForce).
def ur3e_model_text(overrides: dict) -> str:
    """A UR3e `Model` in protobuf text format (what `ign topic -p` takes), every joint at 0.1 rad
    and at rest, limits ±2π; `overrides`: joint → axis fields (`{'elbow_joint': {'position':
    'nan'}}`)."""
    joints = []
    for joint in UR3E_JOINTS:
        fields = {'position': '0.1', 'velocity': '0', 'limit_lower': '-6.28',
                  'limit_upper': '6.28', **overrides.get(joint, {})}
        axis = ' '.join(f'{key}: {value}' for key, value in fields.items())
        joints.append(f'joint {{ name: "{joint}" axis1 {{ {axis} }} }}')
    return ' '.join(joints)


VELOCITY_WORLD = ROOT / 'sdf' / 'ur3e_velocity_world.sdf'
EFFORT_WORLD = ROOT / 'sdf' / 'ur3e_effort_world.sdf'
VELOCITY_STATES = ('/world/ur3e_velocity_world/model/ur3e/model/ur3e_velocity_controller/'
                   'model/ur3e/joint_state')
EFFORT_STATES = ('/world/ur3e_effort_world/model/ur3e/model/ur3e_effort_controller/'
                 'model/ur3e/joint_state')


def domain_ids(seed: int):
    """A function giving a new ROS domain id per call. Fast DDS accepts 0..232; runs started
    at the same time, and each suite (its own `seed`), start from different bases."""
    counter = itertools.count((os.getpid() * seed) % 200 + 2 * seed)
    return lambda: next(counter) % 230 + 1


class World:
    """A gz partition named after the test, a ROS domain, and the processes started in them.

    `inherit_environment`: children get this process's environment (the venv's Python and
    libraries) under the test's variables; otherwise only the test's variables, so a binary
    must find its libraries by itself (its RPATH)."""

    def __init__(self, tmp_path: pathlib.Path, test_name: str, *, prefix: str, new_domain,
                 start_s: float, inherit_environment: bool):
        self.tmp = tmp_path
        self.partition = re.sub(r'[^A-Za-z0-9_]', '_',
                                f'{prefix}_{os.getpid()}_{test_name}')[:80]
        self.domain = new_domain()
        self.start_s = start_s
        self.inherit_environment = inherit_environment
        self.processes: list[Process] = []

    def env(self, domain: int | None = None, **extra) -> dict:
        """What a child gets: the test's partition and domain (or `domain`), loopback only,
        unbuffered logs, and `extra`."""
        env = dict(os.environ) if self.inherit_environment else {'HOME': str(self.tmp)}
        env.update({
            **LOOPBACK,
            'ROS_DOMAIN_ID': str(self.domain if domain is None else domain),
            'GZ_PARTITION': self.partition,
            'IGN_PARTITION': self.partition,
            'RCUTILS_LOGGING_BUFFERED_STREAM': '0',
            'PYTHONUNBUFFERED': '1',
            'RUST_BACKTRACE': '1',
        })
        env.update(extra)
        return env

    def start(self, args, domain: int | None = None, **env) -> Process:
        process = Process(args, self.env(domain, **env))
        self.processes.append(process)
        return process

    def sim(self, *extra, world_file: pathlib.Path = UR3E_WORLD, **start_options) -> Process:
        """gz-joint-sim running `world_file`, once it publishes joint states."""
        process = self.start([binary('GZ_JOINT_SIM_BIN', 'gz-joint-sim'), world_file, *extra],
                             **start_options)
        process.wait_output('joint states', self.start_s)
        return process

    def gazebo_commands(self, topic: str, cli=IGN_TOPIC_CLI):
        """What Gazebo's side receives on the command topic `topic` (`gz.msgs.Double`): a
        function giving the values so far, in order, as `cli` echoes them (by default the real
        Ignition CLI, which needs the simulator and the bridge on the `ignition.msgs.`
        prefix). Started before the command is sent; a bridge sends its target again to a
        subscription that connects later (the driver's rule for a (re)connecting controller)."""
        echo = self.start([cli, '-e', '-t', topic])
        return lambda: double_values(list(echo.lines))

    def params_file(self, text: str) -> pathlib.Path:
        path = self.tmp / f'params_{len(list(self.tmp.glob("params_*")))}.yaml'
        path.write_text(text)
        return path

    def close(self):
        for process in self.processes:
            process.kill()


def world_fixture(make):
    """The suite's `world` fixture: `make(tmp_path, test_name)`, closed after the test."""

    @pytest.fixture
    def world(tmp_path, request):
        w = make(tmp_path, request.node.name)
        try:
            yield w
        finally:
            w.close()

    return world
