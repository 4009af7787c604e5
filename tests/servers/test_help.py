"""Each server's `--help` table against the running server: exactly the parameters it
declares, each default the one it declared. The tables were hand-written once and could say
what the servers did not declare."""

from conftest import binary
from support import check_help_against_node

START_S = 30


def test_the_simulator_servers_help_lists_exactly_what_it_declares(world):
    program = binary('SIMULATOR_SERVER_BIN', 'sas_simulator_server_gazebo_node')
    # No Gazebo: the server declares its parameters, serves, and waits for Gazebo.
    server = world.start([program, '--ros-args',
                          '-p', 'service_name:=/world/ur3e_world/control'])
    server.wait_output('::Serving', START_S)
    check_help_against_node(world, program, '/sas_simulator_server_gazebo_node',
                            {'service_name'}, exact=True)


def test_the_object_servers_help_lists_exactly_what_it_declares(world):
    program = binary('OBJECT_SERVER_BIN', 'sas_object_server_gazebo_node')
    server = world.start([program, '--ros-args',
                          '-p', 'set_pose_service_name:=/world/ur3e_world/set_pose',
                          '-p', 'get_pose_topic_name:=/world/ur3e_world/pose/info',
                          '-p', 'entity_names:=[frame_x]'])
    server.wait_output('::Serving', START_S)
    check_help_against_node(world, program, '/sas_object_server_gazebo_node',
                            {'set_pose_service_name', 'get_pose_topic_name', 'entity_names'},
                            exact=True)
