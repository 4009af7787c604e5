"""sas_simulator_server_gazebo_node against gz-joint-sim's world control service, called as a
user calls it (rclpy std_srvs/Trigger clients), judged by Gazebo's own clock."""

import time

from std_srvs.srv import Trigger

from conftest import binary

START_S = 30
PREFIX = '/sas_simulator_server_gazebo_node'


def call(world, service: str, timeout: float = 30):
    """Calls Trigger service `service` once it is served; its response, and how long the call
    took once sent."""
    client = world.node.create_client(Trigger, service)
    world.wait_for(client.service_is_ready, START_S, f'the service {service}')
    sent = time.monotonic()
    future = client.call_async(Trigger.Request())
    world.wait_for(future.done, timeout, f'the answer of {service}')
    return future.result(), time.monotonic() - sent


def advancing(world) -> bool:
    """Whether Gazebo's sim time moves: two clocks read 0.5 s apart (wall time)."""
    first = world.sim_time()
    time.sleep(0.5)
    return world.sim_time() > first


def test_stop_and_start_pause_and_run_the_world(world):
    world.sim()
    server = world.simulator_server()  # the shipped config: autostart false, as the original's
    server.wait_output('start_simulation', START_S)
    assert advancing(world), 'the world runs before any call'

    stopped, _ = call(world, f'{PREFIX}/stop_simulation')
    assert stopped.success, stopped.message
    assert 'stopped' in stopped.message
    paused_at = world.sim_time()
    time.sleep(1.0)
    assert world.sim_time() == paused_at, 'sim time stands still while paused'

    started, _ = call(world, f'{PREFIX}/start_simulation')
    assert started.success, started.message
    assert world.sim_time() > paused_at or advancing(world), 'the world runs again'
    assert server.alive(), server.output()


def test_autostart_starts_a_paused_world_once_gazebo_is_found(world):
    # The server first, Gazebo later: it says it waits, then starts the world.
    server = world.simulator_server('autostart:=true')
    server.wait_output('autostart: waiting for Gazebo', START_S)
    world.sim('--paused')
    server.wait_output('autostart: Simulation started', START_S)
    assert advancing(world), 'the paused world runs after autostart'


def test_without_gazebo_a_call_fails_within_the_timeout_and_says_why(world):
    server = world.simulator_server('autostart:=false', 'gazebo_timeout_sec:=0.5')
    server.wait_output('start_simulation', START_S)
    response, took = call(world, f'{PREFIX}/start_simulation')
    assert not response.success
    assert 'was not found' in response.message and '/world/ur3e_world/control' in response.message
    # Bounded by gazebo_timeout_sec (plus DDS's round trip on loaded cores), not a hang.
    assert took < 10, f'{took:.1f} s'
    # The executor was never held: the other service answers meanwhile too.
    response, _ = call(world, f'{PREFIX}/stop_simulation')
    assert not response.success
    assert server.alive(), server.output()


def test_a_missing_service_name_is_a_usage_error_naming_it(world):
    program = binary('SIMULATOR_SERVER_BIN', 'sas_simulator_server_gazebo_node')
    node = world.start([program, '--ros-args', '-p', 'autostart:=false'])
    assert node.wait_exit(START_S) == 2
    assert 'parameter "service_name" is missing' in node.output(), node.output()
