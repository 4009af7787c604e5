"""sas_simulator_server_gazebo_node against gz-joint-sim's world control service, called as a
user calls it (rclpy std_srvs/Trigger clients), judged by Gazebo's own clock."""

import signal
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


def test_on_fortress_type_names_too(world):
    world.sim('--msgs-prefix', 'ignition.msgs.')
    world.simulator_server('autostart:=false', 'gz_msgs_prefix:=ignition.msgs.')
    stopped, _ = call(world, f'{PREFIX}/stop_simulation')
    assert stopped.success, stopped.message
    assert not advancing(world)
    started, _ = call(world, f'{PREFIX}/start_simulation')
    assert started.success, started.message
    assert advancing(world)


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
    # Without autostart too it says that it waits, and says it again a few seconds later.
    server.wait_output("waiting for Gazebo's world control service /world/ur3e_world/control",
                       START_S, count=2)
    assert 'autostart' not in server.output()
    response, took = call(world, f'{PREFIX}/start_simulation')
    assert not response.success
    assert 'was not found' in response.message and '/world/ur3e_world/control' in response.message
    # Bounded by gazebo_timeout_sec (plus DDS's round trip on loaded cores), not a hang.
    assert took < 10, f'{took:.1f} s'
    # The executor was never held: the other service answers meanwhile too.
    response, _ = call(world, f'{PREFIX}/stop_simulation')
    assert not response.success
    assert server.alive(), server.output()


def test_a_gazebo_that_does_not_answer_fails_the_call_within_the_timeout(world):
    """Gazebo found, then frozen (SIGSTOP: its sockets still take the request, nothing
    answers): the call fails with the reason within gazebo_timeout_sec, the node serves on,
    and once Gazebo goes on, so do the calls."""
    sim = world.sim()
    server = world.simulator_server('autostart:=false', 'gazebo_timeout_sec:=0.5')
    server.wait_output("Found Gazebo's world control service", START_S)
    # One call answered first, so the request reaches Gazebo's socket and waits there
    # (frozen before any call, the connection's handshake is what fails: 'cannot reach').
    response, _ = call(world, f'{PREFIX}/stop_simulation')
    assert response.success, response.message
    sim.signal(signal.SIGSTOP)
    try:
        response, took = call(world, f'{PREFIX}/start_simulation')
        assert not response.success
        assert 'did not answer within 500ms' in response.message, response.message
        assert took < 10, f'{took:.1f} s'
        response, _ = call(world, f'{PREFIX}/start_simulation')
        assert not response.success, response.message
    finally:
        sim.signal(signal.SIGCONT)
    response, _ = call(world, f'{PREFIX}/stop_simulation')
    assert response.success, response.message
    assert not advancing(world)
    assert server.alive(), server.output()


def test_a_missing_service_name_is_a_usage_error_naming_it(world):
    program = binary('SIMULATOR_SERVER_BIN', 'sas_simulator_server_gazebo_node')
    node = world.start([program, '--ros-args', '-p', 'autostart:=false'])
    assert node.wait_exit(START_S) == 2
    assert 'parameter "service_name" is missing' in node.output(), node.output()


# --- simulation_interfaces: step, reset, state ---------------------------------------------

STEP_S = 0.002  # sdf/ur3e_world.sdf's max_step_size


def sim_call(world, service_type, name: str, request, timeout: float = 60):
    client = world.node.create_client(service_type, f'{PREFIX}/{name}')
    world.wait_for(client.service_is_ready, START_S, f'the service {name}')
    future = client.call_async(request)
    world.wait_for(future.done, timeout, f'the answer of {name}')
    return future.result()


def test_step_simulation_takes_exactly_n_steps_of_a_paused_world_and_refuses_a_running_one(world):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import StepSimulation
    world.sim('--paused')
    world.simulator_server('autostart:=false')
    before = world.sim_time()
    response = sim_call(world, StepSimulation, 'step_simulation', StepSimulation.Request(steps=250))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    # Answered once done: the clock stands at exactly 250 steps on, and stays there.
    after = world.sim_time()
    assert abs(after - (before + 250 * STEP_S)) < 1e-9, (before, after)
    time.sleep(0.5)
    assert world.sim_time() == after, 'paused again after the steps'

    call(world, f'{PREFIX}/start_simulation')
    response = sim_call(world, StepSimulation, 'step_simulation', StepSimulation.Request(steps=1))
    assert response.result.result == Result.RESULT_OPERATION_FAILED
    assert 'running' in response.result.error_message


def test_reset_simulation_puts_the_clock_back_and_keeps_the_world_running(world):
    from simulation_interfaces.msg import Result
    from simulation_interfaces.srv import ResetSimulation
    world.sim()
    world.simulator_server('autostart:=false')
    world.wait_for(lambda: world.sim_time() > 1.5, START_S, 'sim time past 1.5 s')
    response = sim_call(world, ResetSimulation, 'reset_simulation',
                        ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_ALL))
    assert response.result.result == Result.RESULT_OK, response.result.error_message
    assert world.sim_time() < 1.0, 'sim time went back to the start'
    assert advancing(world), 'a running world runs on after the reset'
    response = sim_call(world, ResetSimulation, 'reset_simulation',
                        ResetSimulation.Request(scope=ResetSimulation.Request.SCOPE_STATE))
    assert response.result.result == Result.RESULT_FEATURE_UNSUPPORTED
    assert 'model_only' in response.result.error_message


def test_the_simulation_state_is_read_off_the_clock_and_set(world):
    from simulation_interfaces.msg import Result, SimulationState
    from simulation_interfaces.srv import GetSimulationState, SetSimulationState
    world.sim()
    world.simulator_server('autostart:=false')

    def state():
        response = sim_call(world, GetSimulationState, 'get_simulation_state',
                            GetSimulationState.Request())
        assert response.result.result == Result.RESULT_OK, response.result.error_message
        return response.state.state

    def set_state(target):
        return sim_call(world, SetSimulationState, 'set_simulation_state',
                        SetSimulationState.Request(state=SimulationState(state=target))).result

    assert state() == SimulationState.STATE_PLAYING
    assert set_state(SimulationState.STATE_PAUSED).result == Result.RESULT_OK
    assert state() == SimulationState.STATE_PAUSED
    assert set_state(SimulationState.STATE_PAUSED).result == \
        SetSimulationState.Response.ALREADY_IN_TARGET_STATE
    assert set_state(SimulationState.STATE_PLAYING).result == Result.RESULT_OK
    assert state() == SimulationState.STATE_PLAYING
    world.wait_for(lambda: world.sim_time() > 1.0, START_S, 'sim time past 1 s')
    # Stopped: paused and back at the start.
    assert set_state(SimulationState.STATE_STOPPED).result == Result.RESULT_OK
    assert state() == SimulationState.STATE_PAUSED
    assert world.sim_time() < 0.5
    assert set_state(SimulationState.STATE_QUITTING).result == Result.RESULT_FEATURE_UNSUPPORTED
