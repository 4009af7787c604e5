"""The control loop run from Python keeps its rate whatever Python does meanwhile (the
original held the GIL for the whole loop, and joint states arrived seconds late).

Three processes over real gz-transport and DDS: gz-joint-sim (Gazebo, 500 joint states/s),
the bridge run from Python (`gil_pressure.py`: RobotDriverROS.control_loop() at 2 ms on the
main thread, plus a Python workload) and a separate rclpy process measuring
`<robot>/get/joint_states` for 10 s (`joint_state_probe.py`). "idle" (no Python work) is the
baseline; with the original's GIL-holding loop, "busy" and "callbacks" would show states
seconds old. The three processes run ahead of the machine's other load where permitted
(conftest.raise_priority), so that it is not measured as the bridge's lateness.

Criteria, at a 2 ms period: at least 90 % of 500 messages/s, or of what Gazebo's messages
allowed when the simulator itself was starved (the probe's `capped_gazebo_rate_hz`: Gazebo's
messages in the window as the simulator numbers them by its simulation time, whether or not
the probe's sampler saw each; under the rate cap a burst is published as its latest); the
state age (bridge
publication − arrival of the Gazebo message it came from) under 3 periods for 95 % of states,
and its staleness (publication − arrival of a newer Gazebo message, when there was one: the
part of the age due to the bridge) under 3 periods for 99 % of states.
"""

import signal

import pytest

from conftest import HERE, START_S, record_figure

PERIOD_S = 0.002
MEASURE_S = 10
WINDOWS = 2
NOMINAL_HZ = 1 / PERIOD_S


def quantiles(values: dict) -> list[float]:
    return [round(values[k], 2) for k in ('p50', 'p95', 'p99', 'max')]


def shortfalls(measured: dict) -> list[str]:
    """What a window of measurements misses of the criteria (empty: met)."""
    limit_ms = 3 * PERIOD_S * 1e3
    found = []
    expected_hz = min(NOMINAL_HZ, measured['capped_gazebo_rate_hz'])
    if measured['rate_hz'] < 0.9 * expected_hz:
        found.append(f"rate {measured['rate_hz']:.1f} Hz < 90 % of {expected_hz:.0f} Hz "
                     f"(Gazebo's messages allowed {measured['capped_gazebo_rate_hz']:.0f} Hz)")
    # Gazebo's own hiccups (the simulator starved by other load) add to the age but not to
    # the staleness, which is the bridge's share: hence p95 for the one, p99 for the other.
    if measured['age_ms']['p95'] >= limit_ms:
        found.append(f"state age p95 {measured['age_ms']['p95']:.2f} ms >= {limit_ms} ms")
    if measured['staleness_ms']['p99'] >= limit_ms:
        found.append(f"staleness p99 {measured['staleness_ms']['p99']:.2f} ms >= {limit_ms} ms")
    return found


@pytest.mark.parametrize('workload', ['idle', 'busy', 'callbacks'])
def test_joint_states_keep_their_rate_and_stay_fresh_under_python_load(world, workload):
    """Up to WINDOWS windows of 10 s while the workload runs: the first that meets the
    criteria passes (a moment of heavy load elsewhere on the machine can spoil one window; a
    bridge that needs the GIL spoils every one)."""
    robot = f'gil_{workload}'
    world.sim(priority=True)
    bridge = world.python(HERE / 'gil_pressure.py', workload, robot, world.partition,
                          priority=True)
    bridge.wait_output('::Robot initialized.', START_S)
    bridge.wait_output('workload running', START_S)
    windows = []
    for _ in range(WINDOWS):
        probe = world.python(HERE / 'joint_state_probe.py', f'/{robot}/get/joint_states',
                             str(MEASURE_S), world.partition, str(PERIOD_S), priority=True)
        assert probe.wait_exit(60 + MEASURE_S + START_S) == 0, probe.output()
        windows.append(probe.json_line('rate_hz'))
        if not shortfalls(windows[-1]):
            break

    bridge.signal(signal.SIGINT)
    assert bridge.wait_exit(10) == 0, bridge.output()
    report = bridge.json_line('statistics')
    done, statistics = report['workload'], report['statistics']

    measured = windows[-1]
    record_figure(f'GIL pressure ({workload})', {
        'windows measured': len(windows),
        'joint_states rate (Hz, separate rclpy process)': round(measured['rate_hz'], 1),
        "rate Gazebo's messages allowed (Hz)": round(measured['capped_gazebo_rate_hz'], 1),
        "share of Gazebo's messages the probe sampled": round(
            measured['gazebo_messages_sampled_share'], 3),
        'state age p50/p95/p99/max (ms)': quantiles(measured['age_ms']),
        'staleness p50/p95/p99/max (ms)': quantiles(measured['staleness_ms']),
        "Gazebo's own gaps p50/p95/p99/max (ms)": quantiles(measured['gazebo_gap_ms']),
        'largest gap between messages (ms)': round(measured['max_gap_ms'], 2),
        'loop periods / overruns / max lateness (ms), whole run': [
            statistics['periods'], statistics['overruns'],
            round(statistics['max_lateness_sec'] * 1e3, 2)],
        'workload': done,
        'processes ahead of other load (autogroup nice -10)': world.boosted,
    })
    # The workload really ran, and hard: the GIL was busy the whole time.
    if workload == 'busy':
        assert done['iterations'] > 1000 * report['elapsed_sec'], done
    elif workload == 'callbacks':
        assert done['state_callbacks'] > 100 * report['elapsed_sec'], done
        assert done['timer_callbacks'] > 100 * report['elapsed_sec'], done
    assert not shortfalls(measured), (
        f'every window fell short: {[shortfalls(w) for w in windows]}; measured: {windows}')


def test_shutdown_from_another_python_thread_ends_the_loop(world):
    """Covered by the script tests for signals; here RobotDriverROS.shutdown()."""
    world.sim()
    child = world.python(HERE / 'shutdown_from_thread.py', world.partition)
    assert child.wait_exit(START_S + 10) == 0, child.output()
    assert child.count('loop returned') == 1
