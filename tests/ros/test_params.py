"""rclrs parameters from a params file, as the bridge node reads them.

`--ros-args --params-file f.yaml` sets the declared parameters; with `-r __node:=other` the
block keyed by the new name applies (and the one keyed by the old name does not). The
values are then read back and changed through rclrs' parameter services (generated
rcl_interfaces types) from rclpy.
"""

from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, SetParameters

PARAMS_YAML = """\
rs_params:
  ros__parameters:
    robot_name: decoy
    thread_sampling_time_sec: 0.5
    joint_names: [d1]
    joint_limits_min: [9.0]
    enabled: false
    count: 1
other:
  ros__parameters:
    robot_name: ur3e
    thread_sampling_time_sec: 0.002
    joint_names: [shoulder, elbow, wrist]
    joint_limits_min: [-1.5, -2.5, 0.25]
    enabled: true
    count: 7
"""

OTHER = [
    'node=/other',
    'robot_name=ur3e',
    'thread_sampling_time_sec=0.002',
    'joint_names=["shoulder", "elbow", "wrist"]',
    'joint_limits_min=[-1.5, -2.5, 0.25]',
    'enabled=true',
    'count=7',
]


def params_lines(peer):
    peer.wait_output('ready', 30)
    return [line for line in peer.lines if '=' in line]


def test_params_file(ros):
    path = ros.tmp / 'params.yaml'
    path.write_text(PARAMS_YAML)
    peer = ros.peer('params', '--ros-args', '--params-file', path)
    assert params_lines(peer) == [
        'node=/rs_params',
        'robot_name=decoy',
        'thread_sampling_time_sec=0.5',
        'joint_names=["d1"]',
        'joint_limits_min=[9.0]',
        'enabled=false',
        'count=1',
    ], peer.output()


def test_params_file_with_node_remap(ros):
    path = ros.tmp / 'params.yaml'
    path.write_text(PARAMS_YAML)
    peer = ros.peer('params', '--ros-args', '--params-file', path, '-r', '__node:=other')
    assert params_lines(peer) == OTHER, peer.output()

    node = ros.node('py_params_client')
    get = node.create_client(GetParameters, '/other/get_parameters')
    set_ = node.create_client(SetParameters, '/other/set_parameters')
    ros.wait_for(lambda: get.service_is_ready() and set_.service_is_ready(), 20,
                 'the parameter services of /other')

    def call(client, request):
        future = client.call_async(request)
        ros.wait_for(future.done, 20, f'a response from {client.srv_name}')
        return future.result()

    names = ['robot_name', 'joint_names', 'joint_limits_min', 'enabled', 'count']
    values = call(get, GetParameters.Request(names=names)).values
    assert [v.type for v in values] == [
        ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_STRING_ARRAY,
        ParameterType.PARAMETER_DOUBLE_ARRAY, ParameterType.PARAMETER_BOOL,
        ParameterType.PARAMETER_INTEGER]
    assert values[0].string_value == 'ur3e'
    assert list(values[1].string_array_value) == ['shoulder', 'elbow', 'wrist']
    assert list(values[2].double_array_value) == [-1.5, -2.5, 0.25]
    assert values[3].bool_value is True
    assert values[4].integer_value == 7

    changed = Parameter(name='robot_name', value=ParameterValue(
        type=ParameterType.PARAMETER_STRING, string_value='ur5e'))
    results = call(set_, SetParameters.Request(parameters=[changed])).results
    assert [r.successful for r in results] == [True], results
    values = call(get, GetParameters.Request(names=['robot_name'])).values
    assert values[0].string_value == 'ur5e'
