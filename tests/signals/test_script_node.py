"""The legacy script's node is the native node as ROS sees it (issue 13): started as launch
starts it (`-r __node:=ur3e_1 --params-file config/config.yaml`), the script shows the same
one node, with the same parameters (names, types, values, descriptions, read-only), the same
publishers, subscriptions and services, and its lines on /rosout under the node's name at
the level `--ros-args --log-level` chooses."""

import sys

import pytest
import rclpy
from rcl_interfaces.msg import Log
from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters
from rclpy.parameter import parameter_value_to_python
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from conftest import CONFIG, SCRIPT, START_S, binary, new_domain
from support.ros import RosClient

ROS_ARGS = ['--ros-args', '-r', '__node:=ur3e_1', '--params-file', str(CONFIG)]
SURFACE = {'/ur3e_1/get/joint_states', '/ur3e_1/get/joint_positions_min',
           '/ur3e_1/get/joint_positions_max', '/ur3e_1/get/home_states',
           '/ur3e_1/set/target_joint_positions'}
# /rosout as rcl publishes it: reliable, transient local, so lines before the match arrive.
ROSOUT_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


class Client(RosClient):
    """An rclpy node in one ROS domain."""

    def __init__(self, domain: int):
        super().__init__(domain, 'signals_test_client')

    def call(self, srv_type, name: str, request):
        client = self.node.create_client(srv_type, name)
        self.wait_for(client.service_is_ready, START_S, f'the service {name}')
        future = client.call_async(request)
        self.wait_for(future.done, START_S, f'the response of {name}')
        self.node.destroy_client(client)
        return future.result()

    def parameters(self, node: str) -> dict:
        """Every parameter of `node`: name -> (type, value, description, read_only, the
        rest of its descriptor)."""
        names = sorted(self.call(ListParameters, f'{node}/list_parameters',
                                 ListParameters.Request()).result.names)
        values = self.call(GetParameters, f'{node}/get_parameters',
                           GetParameters.Request(names=names)).values
        descriptors = self.call(DescribeParameters, f'{node}/describe_parameters',
                                DescribeParameters.Request(names=names)).descriptors
        return {name: (value.type, parameter_value_to_python(value), d.description,
                       d.read_only, (d.type, d.additional_constraints, d.dynamic_typing,
                                     list(d.floating_point_range), list(d.integer_range)))
                for name, value, d in zip(names, values, descriptors)}

    def graph(self, name: str = 'ur3e_1') -> dict:
        """What `ros2 node info` shows of `name`, and the nodes of the domain."""
        def by_node(query):
            try:
                return sorted((topic, tuple(types)) for topic, types in query(name, '/'))
            except rclpy.node.NodeNameNonExistentError:
                return []
        nodes = {f'{ns.rstrip("/")}/{n}' for n, ns in self.node.get_node_names_and_namespaces()}
        return {'nodes': sorted(nodes - {'/signals_test_client'}),
                'publishers': by_node(self.node.get_publisher_names_and_types_by_node),
                'subscriptions': by_node(self.node.get_subscriber_names_and_types_by_node),
                'services': by_node(self.node.get_service_names_and_types_by_node)}


@pytest.fixture
def clients():
    made = []
    try:
        yield lambda domain: made.append(Client(domain)) or made[-1]
    finally:
        for client in made:
            client.close()


def test_the_script_node_has_the_native_nodes_parameters_topics_and_services(world, clients):
    """Both without Gazebo: parameters and topics exist from the start."""
    native_domain, script_domain = new_domain(), new_domain()
    native = world.start([binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node'),
                          *ROS_ARGS], domain=native_domain)
    script = world.start([sys.executable, SCRIPT, *ROS_ARGS], domain=script_domain)
    native_client, script_client = clients(native_domain), clients(script_domain)
    for process in (native, script):
        process.wait_output('::Initializing robot...', START_S)

    native_parameters = native_client.parameters('/ur3e_1')
    script_parameters = script_client.parameters('/ur3e_1')
    assert script_parameters == native_parameters
    assert len(native_parameters) >= 12, native_parameters  # use_sim_time + the node's
    # The values are the params file's and the node's defaults, read-only as the node's.
    assert script_parameters['robot_name'][1] == 'ur3e_1'
    assert script_parameters['thread_sampling_time_sec'][1] == 0.002
    assert script_parameters['joint_states_stamp'][1] == 'node_clock'
    assert script_parameters['joint_names'][3] is True
    assert 'loop period' in script_parameters['thread_sampling_time_sec'][2]

    def surfaces_match():
        native_graph, script_graph = native_client.graph(), script_client.graph()
        return (SURFACE <= {topic for topic, _ in script_graph['publishers']}
                | {topic for topic, _ in script_graph['subscriptions']}
                and native_graph == script_graph)
    script_client.wait_for(surfaces_match, START_S,
                           f'the same node info: native {native_client.graph()}, '
                           f'script {script_client.graph()}')
    # One node in the script's process: no rclpy node beside the extension's.
    assert script_client.graph()['nodes'] == ['/ur3e_1']


@pytest.mark.parametrize('subject', ['native', 'script'])
@pytest.mark.parametrize('level', ['debug', 'info'])
def test_log_lines_reach_rosout_under_the_nodes_name_at_the_chosen_level(world, clients,
                                                                         subject, level):
    world.sim()
    domain = new_domain()
    client = clients(domain)
    lines: list[Log] = []
    client.node.create_subscription(Log, '/rosout', lines.append, ROSOUT_QOS)
    command = ([binary('BRIDGE_NODE_BIN', 'sas_robot_driver_ros_gazebo_node')]
               if subject == 'native' else [sys.executable, SCRIPT])
    bridge = world.start([*command, *ROS_ARGS, '--log-level', level], domain=domain)

    def ours(text: str, severity: int):
        return [line for line in lines
                if line.name == 'ur3e_1' and text in line.msg and line.level == severity]
    client.wait_for(lambda: ours('::Robot initialized.', Log.INFO) or not bridge.alive(),
                    START_S, "'::Robot initialized.' on /rosout")
    assert ours('::Loading parameters from parameter server.', Log.INFO), bridge.output()
    assert ours('::Robot initialized.', Log.INFO), bridge.output()
    # The driver's and gz-transport's lines too, at debug only when asked for.
    debug = ours('gz-transport node started', Log.DEBUG)
    assert bool(debug) == (level == 'debug'), [line.msg for line in lines]
    # The console shows the ROS format, not tracing's.
    assert any(line.startswith('[INFO] [') and '] [ur3e_1]: ::Robot initialized.' in line
               for line in bridge.lines), bridge.output()
    assert not any(' INFO ' in line and 'bridge_node::' in line for line in bridge.lines)
