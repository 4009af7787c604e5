"""RobotDriverGazebo, RobotDriverGazeboConfiguration and ShutdownSignaler from Python, against
gz-joint-sim (the Gazebo stand-in) in its own process over real gz-transport."""

import math
import pathlib
import random
import signal
import threading
import time

import numpy as np
import pytest

import sas_robot_driver_gazebo as sas
from conftest import HERE, START_S, UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, wait_for

TAU = 2 * math.pi
# ur3e.sdf, in joint order: ±2π, ±2π, ±π, ±2π, ±2π, ±inf.
UR3E_LOWER = [-TAU, -TAU, -math.pi, -TAU, -TAU, -math.inf]
UR3E_UPPER = [TAU, TAU, math.pi, TAU, TAU, math.inf]
MOTION_S = 30  # joints move at <= 0.25 rad/s in sim time
GAZEBO_RATE_HZ = 500  # the world's JointStatePublisher


@pytest.fixture
def driver(world):
    """A connected and initialized UR3e driver on a running simulator."""
    world.sim()
    d = sas.RobotDriverGazebo(world.configuration(initialize_timeout_sec=START_S))
    d.connect()
    d.initialize()
    try:
        yield d
    finally:
        d.deinitialize()
        d.disconnect()


def test_configuration_has_the_originals_fields_our_options_and_their_defaults():
    c = sas.RobotDriverGazeboConfiguration()
    assert (c.joint_names, c.joint_positions_topic_prefix, c.joint_states_topic) == ([], '', '')
    assert (c.msgs_prefix, c.partition, c.limit_policy) == ('gz.msgs.', None, 'clamp')
    assert (c.initialize_timeout_sec, c.forward_keepalive_sec) == (None, None)

    c.joint_names = ['a', 'b']
    c.joint_positions_topic_prefix = '/model/m/joint/'
    c.joint_states_topic = '/js'
    c.msgs_prefix = 'ignition.msgs.'
    c.partition = 'p'
    c.limit_policy = 'refuse'
    c.initialize_timeout_sec = 2.5
    c.forward_keepalive_sec = 0.1
    assert c == sas.RobotDriverGazeboConfiguration(
        ['a', 'b'], '/model/m/joint/', '/js', msgs_prefix='ignition.msgs.', partition='p',
        limit_policy='refuse', initialize_timeout_sec=2.5, forward_keepalive_sec=0.1)
    assert repr(c).startswith('RobotDriverGazeboConfiguration(joint_names=')


@pytest.mark.parametrize('field, value, message', [
    ('msgs_prefix', 'gz.', 'msgs_prefix must be "gz.msgs." or "ignition.msgs.", got "gz.".'),
    ('limit_policy', 'ignore', 'limit_policy must be "clamp" or "refuse", got "ignore".'),
    ('initialize_timeout_sec', -1.0, 'initialize_timeout_sec must be a positive number of '
                                     'seconds or None, got -1.'),
    ('initialize_timeout_sec', 0.0, 'initialize_timeout_sec must be a positive number'),
    ('forward_keepalive_sec', math.nan, 'forward_keepalive_sec must be a positive number of '
                                        'seconds or None, got NaN.'),
    # Finite, but a deadline that far overflows the clock: refused naming the largest value.
    ('initialize_timeout_sec', 1e18, 'longer than the longest accepted duration, 1000000000 s'),
    ('forward_keepalive_sec', 1e18, 'longer than the longest accepted duration, 1000000000 s'),
    ('command_timeout_sec', 1e18, 'longer than the longest accepted duration, 1000000000 s'),
])
def test_bad_option_values_raise_value_error_naming_the_field(field, value, message):
    c = sas.RobotDriverGazeboConfiguration()
    with pytest.raises(ValueError) as raised:
        setattr(c, field, value)
    assert message in str(raised.value)
    with pytest.raises(ValueError):
        sas.RobotDriverGazeboConfiguration(**{field: value})


@pytest.mark.parametrize('field', ['thread_sampling_time_sec', 'target_keepalive_sec',
                                   'joint_limits_heartbeat_sec', 'state_timeout_sec'])
def test_ros_configuration_durations_past_the_longest_accepted_raise_naming_it(field):
    """Finite but far past what a deadline can hold (a panic at run time once): refused at
    construction, naming the field and the largest accepted value."""
    with pytest.raises(ValueError) as raised:
        sas.RobotDriverROSConfiguration('r', **{field: 1e18})
    assert field in str(raised.value)
    assert 'longer than the longest accepted duration, 1000000000 s' in str(raised.value)
    sas.RobotDriverROSConfiguration('r', **{field: 1e9})


def test_field_types_are_checked():
    c = sas.RobotDriverGazeboConfiguration()
    with pytest.raises(TypeError):
        c.joint_names = 'shoulder_pan_joint'  # a str is not a list of names
    with pytest.raises(TypeError):
        c.joint_states_topic = 3


@pytest.mark.parametrize('joint_names, prefix, topic, message', [
    ([], UR3E_PREFIX, UR3E_STATES, 'RobotDriverGazebo: joint_names is empty.'),
    (['a', ''], UR3E_PREFIX, UR3E_STATES, 'RobotDriverGazebo: joint_names[1] is empty.'),
    (['a', 'b', 'a'], UR3E_PREFIX, UR3E_STATES,
     'RobotDriverGazebo: joint_names has "a" twice (at 0 and 2).'),
    (['a'], '', UR3E_STATES, 'RobotDriverGazebo: joint_positions_topic_prefix is empty.'),
    (['a'], UR3E_PREFIX, '', 'RobotDriverGazebo: joint_states_topic is empty.'),
])
def test_an_invalid_configuration_raises_value_error_with_the_drivers_message(
        joint_names, prefix, topic, message):
    with pytest.raises(ValueError) as raised:
        sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(joint_names, prefix, topic))
    assert str(raised.value) == message


def test_the_driver_is_built_from_a_configuration_with_or_without_a_signaler(world):
    c = world.configuration()
    signaler = sas.ShutdownSignaler()
    for d in (sas.RobotDriverGazebo(c), sas.RobotDriverGazebo(signaler, c),
              sas.RobotDriverGazebo(configuration=c),
              sas.RobotDriverGazebo(c, shutdown_signaler=signaler)):
        assert d.configuration == c
    with pytest.raises(TypeError, match=r'configuration must be a RobotDriverGazeboConfiguration'):
        sas.RobotDriverGazebo(signaler)
    with pytest.raises(TypeError, match=r'shutdown_signaler must be a ShutdownSignaler'):
        sas.RobotDriverGazebo(c, c)
    with pytest.raises(TypeError, match=r'missing the configuration'):
        sas.RobotDriverGazebo()
    with pytest.raises(TypeError):
        sas.RobotDriverGazebo(signaler, c, c)


def test_configuration_is_a_read_only_copy(world):
    c = world.configuration()
    d = sas.RobotDriverGazebo(c)
    with pytest.raises(AttributeError):
        d.configuration = c
    d.configuration.joint_names = ['changed']
    c.joint_names = ['changed too']
    assert d.configuration.joint_names == UR3E_JOINTS


def test_the_shutdown_signaler_is_a_shared_flag():
    s = sas.ShutdownSignaler()
    assert not s.should_shutdown()
    s.shutdown()
    s.shutdown()
    assert s.should_shutdown()


def test_before_initialize_getters_and_targets_raise_runtime_error_with_the_originals_messages(
        world):
    d = sas.RobotDriverGazebo(world.configuration())
    for connected in (False, True):
        for getter, what in [(d.get_joint_positions, 'joint positions'),
                             (d.get_joint_velocities, 'joint velocities'),
                             (d.get_joint_torques, 'joint torques'),
                             (d.get_joint_limits, 'joint limits')]:
            with pytest.raises(RuntimeError) as raised:
                getter()
            assert str(raised.value) == f'RobotDriverGazebo: {what} not initialized.'
        with pytest.raises(RuntimeError, match=r'not initialized; call initialize\(\) first'):
            d.set_target_joint_positions([0.0] * 6)
        d.connect()
    d.disconnect()
    with pytest.raises(RuntimeError) as raised:
        d.initialize()
    assert str(raised.value) == ('RobotDriverGazebo::initialize: not connected; '
                                 'call connect() first.')


def test_getters_return_1d_float64_arrays_of_the_simulators_state(driver):
    for getter in (driver.get_joint_positions, driver.get_joint_velocities,
                   driver.get_joint_torques):
        values = getter()
        assert isinstance(values, np.ndarray)
        assert values.dtype == np.float64 and values.shape == (6,)
        assert np.all(np.isfinite(values))
    lower, upper = driver.get_joint_limits()
    assert lower.dtype == upper.dtype == np.float64 and lower.shape == upper.shape == (6,)
    assert list(lower) == UR3E_LOWER and list(upper) == UR3E_UPPER
    positions = driver.get_joint_positions()
    assert np.all((lower <= positions) & (positions <= upper))

    snapshot = driver.snapshot()
    assert set(snapshot) == {'positions', 'velocities', 'efforts', 'sequence', 'sim_time_sec',
                             'age_sec'}
    assert snapshot['sequence'] > 0 and snapshot['sim_time_sec'] > 0
    assert 0 <= snapshot['age_sec'] < 5
    assert snapshot['positions'].dtype == np.float64 and snapshot['positions'].shape == (6,)


def wait_for_positions(driver, target, tolerance=1e-6):
    wait_for(lambda: np.allclose(driver.get_joint_positions(), target, atol=tolerance, rtol=0),
             MOTION_S, f'the joints to reach {list(target)}')


def test_a_target_is_sent_to_gazebo_and_the_joints_reach_it(driver):
    target = [0.1, -0.2, 0.3, -0.15, 0.25, -0.3]
    assert driver.set_target_joint_positions(target) is None
    wait_for_positions(driver, target)
    wait_for(lambda: np.allclose(driver.get_joint_velocities(), 0, atol=1e-3), 10,
             'the joints to stop at the target')

    # numpy arrays of other dtypes, tuples and 1-D views are converted
    driver.set_target_joint_positions(np.array([0, 0, 1, 0, 0, 0], dtype=np.int64))
    wait_for_positions(driver, [0, 0, 1, 0, 0, 0])
    driver.set_target_joint_positions(np.array([0.5, 0, 0, 0, 0, 0], dtype=np.float32))
    wait_for_positions(driver, [0.5, 0, 0, 0, 0, 0])
    driver.set_target_joint_positions(np.zeros((2, 6))[1])
    wait_for_positions(driver, np.zeros(6))


def test_the_clamp_policy_sends_an_out_of_limit_target_clamped(world):
    """What reaches Gazebo, read by the real Ignition CLI on the command topics: the elbow's
    4.0 as its limit π; wrist_3's 100.0, unbounded, as it is."""
    world.sim('--msgs-prefix', 'ignition.msgs.')
    elbow = world.gazebo_commands(f'{UR3E_PREFIX}elbow_joint/0/cmd_pos')
    wrist_3 = world.gazebo_commands(f'{UR3E_PREFIX}wrist_3_joint/0/cmd_pos')
    d = sas.RobotDriverGazebo(world.configuration(msgs_prefix='ignition.msgs.',
                                                  initialize_timeout_sec=START_S))
    d.connect()
    d.initialize()
    try:
        # Sent on each call (no loop runs here to re-send it): until the CLI's subscription
        # is connected and it shows.
        inside = [0.1, 0.1, 0.5, 0.1, 0.1, 0.2]

        def shown() -> bool:
            d.set_target_joint_positions(inside)
            time.sleep(0.1)
            return 0.5 in elbow() and 0.2 in wrist_3()
        wait_for(shown, START_S, 'a target inside the limits at the Ignition CLI')

        d.set_target_joint_positions([0.1, 0.1, 4.0, 0.1, 0.1, 0.2])  # elbow limit is ±π
        wait_for(lambda: elbow()[-1] != 0.5, 10, 'the clamped target at the Ignition CLI')
        assert elbow()[-1] == math.pi, f'the elbow was commanded {elbow()[-1]}, not π'
        assert 4.0 not in elbow()
        wait_for(lambda: d.get_joint_positions()[2] > 1.0, MOTION_S, 'the elbow to move')

        d.set_target_joint_positions([0.1, 0.1, 0.5, 0.1, 0.1, 100.0])  # wrist_3 is unbounded
        wait_for(lambda: wrist_3()[-1] != 0.2, 10, "wrist_3's target at the Ignition CLI")
        assert wrist_3()[-1] == 100.0, f'wrist_3 was commanded {wrist_3()[-1]}, not 100'
        wait_for(lambda: elbow()[-1] != math.pi, 10, "the elbow's new target")
        assert elbow()[-1] == 0.5
    finally:
        d.disconnect()


@pytest.mark.parametrize('target, message', [
    ([0.0] * 5, 'RobotDriverGazebo::set_target_joint_positions: expected 6 values, got 5.'),
    ([0.0] * 7, 'RobotDriverGazebo::set_target_joint_positions: expected 6 values, got 7.'),
    ([], 'RobotDriverGazebo::set_target_joint_positions: expected 6 values, got 0.'),
    ([0, 0, math.nan, 0, 0, 0], 'RobotDriverGazebo::set_target_joint_positions: value 2 '
                                '(elbow_joint) is NaN; targets must be finite.'),
    ([0, 0, 0, 0, 0, -math.inf], 'RobotDriverGazebo::set_target_joint_positions: value 5 '
                                 '(wrist_3_joint) is -inf; targets must be finite.'),
    (np.zeros((2, 3)), 'RobotDriverGazebo::set_target_joint_positions: expected a 1-D '
                       'sequence of numbers, got 2 dimensions.'),
    (0.5, 'expected a 1-D sequence of numbers, got 0 dimensions.'),
    ('abcdef', 'RobotDriverGazebo::set_target_joint_positions: expected a 1-D sequence of '
               'numbers: could not convert string to float'),
    ([0, 0, 'x', 0, 0, 0], 'expected a 1-D sequence of numbers: could not convert'),
])
def test_invalid_targets_raise_value_error_and_the_previous_target_stays(driver, target,
                                                                          message):
    previous = [0.2, 0, 0, 0, 0, 0]
    driver.set_target_joint_positions(previous)
    with pytest.raises(ValueError) as raised:
        driver.set_target_joint_positions(target)
    assert message in str(raised.value)
    wait_for_positions(driver, previous)


def test_the_refuse_policy_raises_value_error_naming_joint_value_and_limits(world):
    world.sim()
    d = sas.RobotDriverGazebo(world.configuration(limit_policy='refuse',
                                                  initialize_timeout_sec=START_S))
    d.connect()
    d.initialize()
    with pytest.raises(ValueError) as raised:
        d.set_target_joint_positions([0, 0, 4.0, 0, 0, 0])
    assert str(raised.value) == (
        'RobotDriverGazebo::set_target_joint_positions: value 2 (elbow_joint) = 4 is outside '
        f'the joint limits [{-math.pi}, {math.pi}].')
    d.disconnect()


def test_initialize_times_out_naming_the_missing_joints(world):
    """No simulator in this partition: nothing ever arrives."""
    d = sas.RobotDriverGazebo(world.configuration(initialize_timeout_sec=0.3))
    d.connect()
    with pytest.raises(TimeoutError) as raised:
        d.initialize()
    assert str(raised.value) == (
        'RobotDriverGazebo::initialize: timed out after 0.3 s waiting for joint states on '
        f'[{UR3E_STATES}]; still missing: {", ".join(UR3E_JOINTS)}.')


@pytest.mark.parametrize('cancel, message', [
    ('signaler', 'RobotDriverGazebo::initialize: shutdown while waiting for joint states on '
                 f'[{UR3E_STATES}].'),
    ('disconnect', 'RobotDriverGazebo::initialize: disconnected while waiting for joint states '
                   f'on [{UR3E_STATES}].'),
])
def test_a_waiting_initialize_is_cancelled_from_another_thread(world, cancel, message):
    signaler = sas.ShutdownSignaler()
    d = sas.RobotDriverGazebo(signaler, world.configuration(initialize_timeout_sec=60))
    d.connect()
    waiting = threading.Event()

    def cancel_it():
        waiting.wait(10)
        time.sleep(0.2)  # let initialize() start waiting
        signaler.shutdown() if cancel == 'signaler' else d.disconnect()

    threading.Thread(target=cancel_it, daemon=True).start()
    start = time.monotonic()
    waiting.set()
    with pytest.raises(RuntimeError) as raised:
        d.initialize()
    assert str(raised.value) == message
    assert time.monotonic() - start < 10


def test_a_triggered_signaler_cancels_initialize_at_once(world):
    signaler = sas.ShutdownSignaler()
    signaler.shutdown()
    d = sas.RobotDriverGazebo(signaler, world.configuration(initialize_timeout_sec=60))
    d.connect()
    with pytest.raises(RuntimeError, match='shutdown while waiting'):
        d.initialize()


def test_initialize_releases_the_gil_while_it_waits(world):
    """A pure-Python thread runs freely during a 1 s initialize() (with the GIL held it would
    not run at all)."""
    d = sas.RobotDriverGazebo(world.configuration(initialize_timeout_sec=1.0))
    d.connect()
    counts = [0]
    stop = threading.Event()

    def count():
        while not stop.is_set():
            counts[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        before = counts[0]
        with pytest.raises(TimeoutError):
            d.initialize()
        during = counts[0] - before
    finally:
        stop.set()
        counter.join()
    assert during > 100_000, f'the Python thread counted only {during} during initialize()'


def test_joint_states_keep_arriving_while_python_holds_the_gil(driver):
    """The receive thread never needs the GIL: while one C call holds it for about a second,
    the cache keeps taking Gazebo's messages at their rate."""
    before = driver.snapshot()
    start = time.monotonic()
    sum(range(40_000_000))  # one C call: no bytecode, so the GIL is never handed over
    held = time.monotonic() - start
    after = driver.snapshot()
    received = after['sequence'] - before['sequence']
    assert held > 0.3, f'the GIL was held for {held:.3f} s only; make the work longer'
    assert received >= 0.8 * GAZEBO_RATE_HZ * held, (
        f'{received} messages in {held:.2f} s with the GIL held (Gazebo sends {GAZEBO_RATE_HZ}/s)')
    assert after['age_sec'] < 0.1


def test_ctrl_c_interrupts_a_waiting_initialize(world):
    """SIGINT reaches Python while initialize() waits with the GIL released."""
    child = world.python(HERE / 'initialize_until_interrupted.py', world.partition)
    child.wait_output('waiting for joint states', START_S)
    child.signal(signal.SIGINT)
    assert child.wait_exit(10) == 0, child.output()
    assert child.count('KeyboardInterrupt') == 1


LIFECYCLE_CALLS = ['connect', 'initialize', 'deinitialize', 'disconnect', 'get_joint_positions',
                   'get_joint_velocities', 'get_joint_torques', 'get_joint_limits', 'snapshot',
                   'set_target_joint_positions']


def test_the_lifecycle_in_any_order_raises_only_runtime_errors_and_recovers(world):
    """Random call sequences (seeded): only RuntimeError, only where the state refuses the
    call; connect → initialize always works again afterwards."""
    world.sim()
    d = sas.RobotDriverGazebo(world.configuration(initialize_timeout_sec=START_S))
    rng = random.Random(7)
    state = 'disconnected'
    for _ in range(200):
        call = rng.choice(LIFECYCLE_CALLS)
        args = ([0.0] * 6,) if call == 'set_target_joint_positions' else ()
        try:
            getattr(d, call)(*args)
        except RuntimeError as error:
            refused = (call == 'initialize' and state == 'disconnected') or (
                call.startswith(('get_', 'set_')) and state != 'initialized')
            assert refused, f'{call} in state {state}: {error}'
        else:
            assert not (call.startswith(('get_', 'set_')) and state != 'initialized'), call
        state = {'connect': 'connected' if state == 'disconnected' else state,
                 'initialize': 'initialized' if state != 'disconnected' else state,
                 'deinitialize': 'connected' if state == 'initialized' else state,
                 'disconnect': 'disconnected'}.get(call, state)
    d.disconnect()
    d.connect()
    d.initialize()
    assert d.get_joint_positions().shape == (6,)
    d.disconnect()
    del d


def test_many_threads_share_one_driver(driver):
    errors = []

    def read():
        try:
            for _ in range(2000):
                assert driver.get_joint_positions().shape == (6,)
                driver.set_target_joint_positions([0.0] * 6)
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors and not any(t.is_alive() for t in threads)


def test_non_finite_values_from_gazebo_are_returned_with_a_runtime_warning_naming_them(world):
    """The real Ignition CLI plays a Gazebo whose physics blew up (elbow_joint's position
    NaN, wrist_1_joint's velocity inf): the getters return the values as received and warn
    (RuntimeWarning) naming the joint and field; a finite state warns nothing."""
    import subprocess
    import warnings
    from support import IGN_TOPIC_CLI
    from support.world import ur3e_model_text as model

    def gazebo_sends_until(text: str, done, what: str):
        deadline = time.monotonic() + START_S
        while not done():
            assert time.monotonic() < deadline, f'timed out waiting for {what}'
            subprocess.run([IGN_TOPIC_CLI, '-t', UR3E_STATES, '-m', 'ignition.msgs.Model',
                            '-p', text], env=world.env(), timeout=30, capture_output=True)
            # A new CLI process is a new publisher, taken once the last one was silent.
            time.sleep(0.35)

    driver = sas.RobotDriverGazebo(world.configuration(msgs_prefix='ignition.msgs.',
                                                       initialize_timeout_sec=START_S))
    driver.connect()
    try:
        initialized = threading.Event()
        thread = threading.Thread(target=lambda: (driver.initialize(), initialized.set()))
        thread.start()
        blown_up = model({'elbow_joint': {'position': 'nan'},
                          'wrist_1_joint': {'velocity': 'inf'}})
        gazebo_sends_until(blown_up, initialized.is_set, 'initialize on the blown-up states')
        thread.join(START_S)
        with pytest.warns(RuntimeWarning, match=r"non-finite values \(elbow_joint position "
                                                r"NaN, wrist_1_joint velocity inf\)"):
            positions = driver.get_joint_positions()
        assert math.isnan(positions[2]) and positions[0] == pytest.approx(0.1)
        with pytest.warns(RuntimeWarning, match='wrist_1_joint velocity inf'):
            assert math.isinf(driver.get_joint_velocities()[3])
        gazebo_sends_until(model({}),
                           lambda: not math.isnan(_quiet(driver.get_joint_positions)[2]),
                           'finite states again')
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            driver.get_joint_positions()
    finally:
        driver.deinitialize()
        driver.disconnect()


def _quiet(getter):
    """`getter()` with its warnings silenced."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return getter()


def test_the_package_ships_its_type_stubs():
    package = pathlib.Path(sas.__file__).parent
    assert (package / 'py.typed').is_file()
    stubs = (package / '_sas_robot_driver_gazebo.pyi').read_text()
    for name in sas.__all__:
        assert f'class {name}:' in stubs or f'def {name}(' in stubs
