"""The colcon-built package, used as a ROS 2 user uses it: found through the ament index, its
installed executables run with nothing but install/setup.bash sourced, over real gz-transport
(the installed gz-joint-sim) and DDS (rclpy)."""

import ast
import os
import pathlib
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from conftest import LIB, PACKAGE, PREFIX, ROOT, SHARE, UR3E_JOINTS, WORKSPACE, executable

EXECUTABLES = {'sas_robot_driver_ros_gazebo_node', 'sas_robot_driver_ros_composer_node',
               'sas_simulator_server_gazebo_node', 'sas_object_server_gazebo_node',
               'sas_robot_driver_ros_gazebo.py', 'joint_interface_example.py',
               'gz-joint-sim', 'gz-topic', 'gz-service'}
START_S = 30      # process start + discovery, on 2 loaded cores
MOTION_S = 30     # joints move at <= 0.25 rad/s in sim time
R820_JOINTS = [f'joint{i}' for i in range(1, 8)]


def array(values) -> Float64MultiArray:
    return Float64MultiArray(data=[float(v) for v in values])


def test_the_package_resolves_through_the_ament_index_of_the_install_space():
    assert PREFIX == WORKSPACE / 'install' / PACKAGE
    assert SHARE == PREFIX / 'share' / PACKAGE
    marker = PREFIX / 'share' / 'ament_index' / 'resource_index' / 'packages' / PACKAGE
    assert marker.is_file()
    assert ET.parse(SHARE / 'package.xml').getroot().findtext('name') == PACKAGE
    for path in ['launch/robot_driver_server_launch.py', 'launch/longboy_launch.py',
                 'launch/simulator_server_launch.py', 'launch/object_server_launch.py',
                 'launch/package_actions.py',
                 'config/config.yaml', 'config/longboy.yaml', 'config/multi_robot.yaml',
                 'sdf/ur3e_world.sdf', 'sdf/longboy_world.sdf', 'sdf/ur3e.sdf']:
        assert (SHARE / path).is_file(), path


def test_the_executables_are_what_ros2_pkg_executables_lists():
    """`ros2 pkg executables` lists the executable files of <prefix>/lib/<package>."""
    listed = {p.name for p in LIB.iterdir() if p.is_file() and os.access(p, os.X_OK)}
    assert listed == EXECUTABLES


def test_nothing_installed_points_into_the_checkout():
    """No RPATH/RUNPATH (libraries come from the setup files' LD_LIBRARY_PATH), and the
    scripts' interpreter is the one the package was built with."""
    extension = next((PREFIX / 'lib').glob('python3*/site-packages/sas_robot_driver_gazebo/'
                                           '_sas_robot_driver_gazebo*.so'))
    for path in [*(LIB / n for n in EXECUTABLES if not n.endswith('.py')), extension]:
        dynamic = subprocess.run(['readelf', '-d', path], capture_output=True, text=True,
                                 check=True).stdout
        assert 'RPATH' not in dynamic and 'RUNPATH' not in dynamic, f'{path}:\n{dynamic}'
    for script in ['sas_robot_driver_ros_gazebo.py', 'joint_interface_example.py']:
        first = (LIB / script).read_text().splitlines()[0]
        # the venv's python3 (not resolved: the venv's symlink target is the system python)
        assert first.startswith('#!/'), first
        assert pathlib.Path(first[2:]).parent == pathlib.Path(sys.executable).parent, first
    assert f'{ROOT}/.venv/bin' not in os.environ['PATH'].split(':')


def test_the_python_module_is_the_install_spaces():
    out = subprocess.run([sys.executable, '-c', 'import sas_robot_driver_gazebo as m; print(m.__file__)'],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert pathlib.Path(out.stdout.strip()).is_relative_to(PREFIX), out.stdout


@pytest.mark.parametrize('program', ['sas_robot_driver_ros_gazebo_node',
                                     'sas_robot_driver_ros_gazebo.py'])
def test_the_installed_bridge_serves_the_topic_surface_and_moves_a_joint(world, program):
    """As `ros2 launch … implementation:=cpp|python` starts it: node name ur3e_1, the
    installed config.yaml."""
    world.sim()
    bridge = world.start([executable(program), '--ros-args', '-r', '__node:=ur3e_1',
                          '--params-file', SHARE / 'config' / 'config.yaml'])
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    lower = world.subscribe(Float64MultiArray, '/ur3e_1/get/joint_positions_min')
    world.wait_for(lambda: states and lower, START_S, f'joint states and limits from {program}')
    assert list(states[-1].name) == UR3E_JOINTS
    assert len(states[-1].position) == len(lower[-1].data) == 6

    target = list(states[-1].position)
    target[1] += 0.2
    world.publisher(Float64MultiArray, '/ur3e_1/set/target_joint_positions').publish(array(target))
    world.wait_for(lambda: abs(states[-1].position[1] - target[1]) < 1e-6, MOTION_S,
                   'shoulder_lift_joint to reach its target')
    assert bridge.proc.poll() is None, bridge.output()


def test_the_installed_servers_serve_the_installed_world(world):
    """As their launch files start them: the installed config.yaml's blocks, under the
    default node names; frame_x's pose from Gazebo, and the world stopped and started."""
    from geometry_msgs.msg import PoseStamped
    from std_srvs.srv import Trigger
    world.sim()
    config = SHARE / 'config' / 'config.yaml'
    servers = [world.start([executable(name), '--ros-args', '--params-file', config])
               for name in ('sas_object_server_gazebo_node', 'sas_simulator_server_gazebo_node')]
    frame_x = world.subscribe(PoseStamped, '/frame_x/get/pose')
    world.wait_for(lambda: frame_x, START_S, 'frame_x\'s pose from the object server')
    p = frame_x[-1].pose.position
    assert (round(p.x, 6), round(p.y, 6), round(p.z, 6)) == (0.3, 0.2, 0.3)
    for verb in ('stop', 'start'):
        client = world.node.create_client(
            Trigger, f'/sas_simulator_server_gazebo_node/{verb}_simulation')
        world.wait_for(client.service_is_ready, START_S, f'{verb}_simulation')
        future = client.call_async(Trigger.Request())
        world.wait_for(future.done, START_S, f'the answer of {verb}_simulation')
        assert future.result().success, future.result().message
    assert all(s.proc.poll() is None for s in servers), [s.output() for s in servers]


def test_the_installed_composer_composes_the_installed_bridges(world):
    """launch/longboy_launch.py's three processes: r820_sim, ur3e_sim and the composer
    longboy_sim, with the installed longboy.yaml. A 13-joint target sent to longboy_sim
    reaches Gazebo split between the parts: the installed gz-topic echoing a command topic of
    each part shows its joint's own value, and the parts report their joints there."""
    world.sim('longboy_world.sdf')
    gz_topic = executable('gz-topic')
    joint1 = world.gazebo_commands('/model/longboy/joint/joint1/0/cmd_pos', cli=gz_topic)
    lift = world.gazebo_commands('/model/longboy/joint/shoulder_lift_joint/0/cmd_pos',
                                 cli=gz_topic)
    config = SHARE / 'config' / 'longboy.yaml'
    node = executable('sas_robot_driver_ros_gazebo_node')
    for name in ['r820_sim', 'ur3e_sim']:
        world.start([node, '--ros-args', '-r', f'__node:={name}', '--params-file', config])
    composer = world.start([executable('sas_robot_driver_ros_composer_node'), '--ros-args',
                            '-r', '__node:=longboy_sim', '--params-file', config])
    states = world.subscribe(JointState, '/longboy_sim/get/joint_states')
    r820 = world.subscribe(JointState, '/r820_sim/get/joint_states')
    ur3e = world.subscribe(JointState, '/ur3e_sim/get/joint_states')
    world.wait_for(lambda: states and r820 and ur3e, START_S, 'joint states of longboy_sim')
    assert list(states[-1].name) == R820_JOINTS + UR3E_JOINTS

    # Each joint a value of its own (none 0: proto3 does not print a 0).
    target = [round(0.01 * (k + 1), 2) for k in range(13)]
    world.publisher(Float64MultiArray, '/longboy_sim/set/target_joint_positions').publish(
        array(target))
    world.wait_for(lambda: joint1() and lift(), START_S, 'the target on both parts\' topics')
    assert set(joint1()) == {target[0]}, f'joint1 was commanded {joint1()}'
    assert set(lift()) == {target[8]}, f'shoulder_lift_joint was commanded {lift()}'
    world.wait_for(lambda: all(abs(p - t) < 1e-6 for p, t in
                               zip([*r820[-1].position, *ur3e[-1].position], target)),
                   MOTION_S, 'both parts at their segments of the target')
    assert composer.proc.poll() is None, composer.output()


# --- launch files ------------------------------------------------------------------------
# launch and launch_ros have no wheels for Jazzy (and no other PyPI distribution of them):
# they cannot be loaded here. What can be checked without them is checked: the files parse,
# name only Jazzy launch API, declare the original's arguments with their defaults, and
# every Node they start is an installed executable of this package. The launch files are made
# of the actions of launch/package_actions.py, installed next to them: its functions are
# checked for what the launch files' checks take them to declare and start.

# Names each launch module has in Jazzy (launch 3.4, launch_ros 0.26).
JAZZY_LAUNCH_API = {
    'launch': {'LaunchDescription'},
    'launch.actions': {'DeclareLaunchArgument'},
    'launch.conditions': {'IfCondition', 'UnlessCondition'},
    'launch.substitutions': {'EqualsSubstitution', 'LaunchConfiguration'},
    'launch_ros.actions': {'Node'},
    'ament_index_python.packages': {'get_package_share_directory'},
    'os': None,
    'sys': None,
}
ACTIONS = 'package_actions'
LAUNCH_FILES = ['robot_driver_server_launch.py', 'longboy_launch.py',
                'simulator_server_launch.py', 'object_server_launch.py']


def launch_file(name: str):
    path = SHARE / 'launch' / name
    return ast.parse(path.read_text(), filename=str(path))


def calls(tree, function: str):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name) and n.func.id == function]


def keywords(call) -> dict:
    return {k.arg: k.value for k in call.keywords}


def function(tree, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def declared_arguments(tree) -> dict:
    """name -> (default, choices) of every argument declared: by DeclareLaunchArgument, or by
    package_actions' name_argument (default: its argument), config_file_argument (default:
    config/<its argument>) and switch_argument ("false" of "true"/"false"), as
    test_the_package_actions_declare_and_start_what_the_launch_files_take_them_to checks."""
    out = {}
    for call in calls(tree, 'DeclareLaunchArgument'):
        kw = keywords(call)
        default = kw.get('default_value')
        out[call.args[0].value] = (
            default.value if isinstance(default, ast.Constant) else ast.unparse(default),
            ast.literal_eval(kw['choices']) if 'choices' in kw else None)
    for call in calls(tree, 'name_argument'):
        out['name'] = (call.args[0].value, None)
    for call in calls(tree, 'config_file_argument'):
        out['config_file'] = (f'config/{call.args[0].value}', None)
    for call in calls(tree, 'switch_argument'):
        out[call.args[0].value] = ('false', ['true', 'false'])
    return out


def started_executables(tree) -> list:
    """The first argument of every package_node, node (longboy_launch.py's helper around
    package_node) and server_launch_description call, as a name where it is a constant."""
    constants = {n.targets[0].id: n.value.value for n in tree.body
                 if isinstance(n, ast.Assign) and isinstance(n.value, ast.Constant)}
    started = [c.args[0] for f in ('package_node', 'node', 'server_launch_description')
               for c in calls(tree, f)]
    names = [e.value if isinstance(e, ast.Constant) else constants.get(e.id) for e in started]
    return [n for n in names if n is not None]  # a helper's parameter


@pytest.mark.parametrize('name', LAUNCH_FILES + [f'{ACTIONS}.py'])
def test_the_launch_files_use_only_jazzys_launch_api_and_installed_executables(name):
    tree = launch_file(name)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == ACTIONS:
            # Importable as ros2 launch runs the file: its own folder first on sys.path.
            assert 'sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))' in \
                ast.unparse(tree), name
            actions = {n.name for n in launch_file(f'{ACTIONS}.py').body
                       if isinstance(n, ast.FunctionDef)}
            assert {a.name for a in node.names} <= actions, f'{name}: {ast.unparse(node)}'
        elif isinstance(node, ast.ImportFrom):
            known = JAZZY_LAUNCH_API.get(node.module)
            assert known is not None, f'{name} imports from {node.module}'
            assert {a.name for a in node.names} <= known, f'{name}: {ast.unparse(node)}'
        elif isinstance(node, ast.Import):
            assert all(a.name in JAZZY_LAUNCH_API for a in node.names), ast.unparse(node)
    assert 'LaunchConfigurationEquals' not in (SHARE / 'launch' / name).read_text()
    if name in LAUNCH_FILES:
        assert any(n.name == 'generate_launch_description' for n in tree.body
                   if isinstance(n, ast.FunctionDef))
        names = started_executables(tree)
        assert names and set(names) <= EXECUTABLES, names


def test_the_package_actions_declare_and_start_what_the_launch_files_take_them_to():
    tree = launch_file(f'{ACTIONS}.py')
    package = next(n.value.value for n in tree.body if isinstance(n, ast.Assign)
                   and n.targets[0].id == 'PACKAGE')
    assert package == PACKAGE
    (node,) = calls(tree, 'Node')
    assert {k: ast.unparse(v) for k, v in keywords(node).items()} == {
        'package': 'PACKAGE', 'executable': 'executable', 'name': 'name',
        'parameters': 'parameters', 'output': "'screen'", 'emulate_tty': 'True',
        'condition': 'condition'}
    assert calls(function(tree, 'package_node'), 'Node') == [node]

    def declared(function_name):
        (call,) = calls(function(tree, function_name), 'DeclareLaunchArgument')
        return [ast.unparse(a) for a in call.args], \
            {k: ast.unparse(v) for k, v in keywords(call).items()}

    assert declared('name_argument')[0] == ["'name'"]
    assert declared('name_argument')[1]['default_value'] == 'default_name'
    assert declared('config_file_argument')[0] == ["'config_file'"]
    assert declared('config_file_argument')[1]['default_value'] == 'default_config'
    default_config = next(n.value for n in ast.walk(function(tree, 'config_file_argument'))
                          if isinstance(n, ast.Assign) and n.targets[0].id == 'default_config')
    assert ast.unparse(default_config) == \
        "os.path.join(get_package_share_directory(PACKAGE), 'config', file_name)"
    assert declared('switch_argument') == (['name'], {
        'default_value': "'false'", 'choices': "['true', 'false']",
        'description': 'description'})
    server = function(tree, 'server_launch_description')
    assert [ast.unparse(c) for c in calls(server, 'name_argument')] == \
        ['name_argument(executable)']
    assert [ast.unparse(c) for c in calls(server, 'config_file_argument')] == \
        ["config_file_argument('config.yaml')"]
    assert [ast.unparse(c) for c in calls(server, 'package_node')] == [
        "package_node(executable, LaunchConfiguration('name'), "
        "[LaunchConfiguration('config_file')])"]


def test_robot_driver_server_launch_keeps_the_originals_arguments():
    tree = launch_file('robot_driver_server_launch.py')
    arguments = declared_arguments(tree)
    assert set(arguments) == {'name', 'config_file', 'implementation', 'use_sim_time',
                              'publish_clock'}
    assert arguments['name'][0] == 'ur3e_1'
    assert arguments['config_file'][0] == 'config/config.yaml'
    assert arguments['implementation'] == ('cpp', ['cpp', 'python'])
    assert ast.unparse(function(tree, 'implemented_by').body[0].value) == \
        'IfCondition(EqualsSubstitution(implementation, choice))'
    started = [(c.args[0].value, ast.unparse(c.args[3])) for c in calls(tree, 'package_node')]
    assert started == [('sas_robot_driver_ros_gazebo_node', "implemented_by('cpp')"),
                       ('sas_robot_driver_ros_gazebo.py', "implemented_by('python')")]


@pytest.mark.parametrize('name, node', [
    ('simulator_server_launch.py', 'sas_simulator_server_gazebo_node'),
    ('object_server_launch.py', 'sas_object_server_gazebo_node')])
def test_the_server_launch_files_keep_the_originals_arguments(name, node):
    """server_launch_description(node): the arguments name (default: node) and config_file
    (default: config/config.yaml), and the node, as the test of package_actions checks."""
    tree = launch_file(name)
    generate = function(tree, 'generate_launch_description')
    assert ast.unparse(generate.body[-1]) == f"return server_launch_description('{node}')"
    assert node in EXECUTABLES
    # The shipped config has the node's block under that default name.
    assert f'\n{node}:\n' in (SHARE / 'config' / 'config.yaml').read_text()


def parameter_overrides(tree) -> list[dict]:
    """The dict literals among the launch file's parameters: name -> source of the value."""
    return [{ast.literal_eval(k): ast.unparse(v) for k, v in zip(d.keys, d.values)}
            for d in ast.walk(tree) if isinstance(d, ast.Dict)
            and all(isinstance(k, ast.Constant) for k in d.keys) and d.keys]


def test_the_launch_files_pass_use_sim_time_and_publish_clock_after_the_config_file():
    """Both launch files declare the two arguments ("false" by default) and hand them to the
    nodes in a dict after the config file, which launch_ros turns into a second params file
    (the next test runs the installed node with such a file)."""
    server = launch_file('robot_driver_server_launch.py')
    arguments = declared_arguments(server)
    for name in ('use_sim_time', 'publish_clock'):
        assert arguments[name] == ('false', ['true', 'false'])
    assert parameter_overrides(server) == [{
        'use_sim_time': "LaunchConfiguration('use_sim_time')",
        'publish_clock': "LaunchConfiguration('publish_clock')"}]
    assert ast.unparse(next(n.value for n in ast.walk(server) if isinstance(n, ast.Assign)
                            and getattr(n.targets[0], 'id', None) == 'parameters')
                       ).startswith("[LaunchConfiguration('config_file'), {")
    longboy = launch_file('longboy_launch.py')
    arguments = declared_arguments(longboy)
    for name in ('in_process', 'use_sim_time', 'publish_clock'):
        assert arguments[name] == ('false', ['true', 'false'])
    assert arguments['config_file'][0] == 'config/longboy.yaml'
    assert [ast.unparse(c) for c in calls(longboy, 'package_node')] == [
        'package_node(executable, name, [config_file, overrides], condition)']
    # One /clock publisher whichever way the robot is composed.
    clocks = [ast.unparse(c.args[1]) for c in calls(longboy, 'node') if len(c.args) > 3]
    assert clocks == ["'r820_sim'", "'longboy_robots'"]


@pytest.mark.parametrize('program', ['sas_robot_driver_ros_gazebo_node',
                                     'sas_robot_driver_ros_gazebo.py'])
def test_the_installed_bridge_takes_sim_time_from_a_launch_params_file(world, program, tmp_path):
    """`ros2 launch … publish_clock:=true use_sim_time:=true`: launch_ros writes the dict
    after the config file as a params file of its own, keyed by the node's full name, with
    the arguments read as YAML (bools). The installed node then publishes Gazebo's clock on
    /clock and stamps its joint states with it."""
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock

    # ClockQoS, as every use_sim_time subscriber asks for it (best effort, volatile).
    clock_qos = QoSProfile(depth=10, reliability=ReliabilityPolicy.BEST_EFFORT,
                           durability=DurabilityPolicy.VOLATILE)

    overrides = tmp_path / 'launch_params.yaml'
    overrides.write_text("/ur3e_1:\n  ros__parameters:\n    publish_clock: true\n"
                         "    use_sim_time: true\n")
    world.sim()
    bridge = world.start([executable(program), '--ros-args', '-r', '__node:=ur3e_1',
                          '--params-file', SHARE / 'config' / 'config.yaml',
                          '--params-file', overrides])
    clocks = []
    world.node.create_subscription(Clock, '/clock', clocks.append, clock_qos)
    states = world.subscribe(JointState, '/ur3e_1/get/joint_states')
    world.wait_for(lambda: len(clocks) > 10 and len(states) > 10, START_S,
                   f'/clock and joint states from {program}')
    sim_now = clocks[-1].clock.sec + clocks[-1].clock.nanosec * 1e-9
    stamp = states[-1].header.stamp.sec + states[-1].header.stamp.nanosec * 1e-9
    # Sim time started with the simulator (seconds), not the wall clock (decades).
    assert sim_now < 3600, f'/clock at {sim_now} s is not the simulator\'s time'
    assert abs(stamp - sim_now) < 1.0, f'joint states stamped {stamp} s, /clock {sim_now} s'
    assert bridge.proc.poll() is None, bridge.output()
