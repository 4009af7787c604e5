"""Helper of the ROS tests: a separate rclpy process that measures a bridge's joint states.

    joint_state_probe.py TOPIC SECONDS PARTITION PERIOD

Waits (at most 60 s) for the first message on TOPIC, then measures the messages the bridge
published during the next SECONDS, by their DDS source timestamps (when the bridge published
them), so that this process being slow to take them changes nothing:
- rate: messages published in the window / SECONDS; and the rate a bridge publishing each
  Gazebo message on arrival under the bridge's rate cap (none for a Gazebo slower than 4/3 of
  the loop's rate, else n + 4 over any n PERIODs) would reach from Gazebo's messages in the
  window, counted by the simulator's own numbering (its simulation time), not by how many this
  process happened to sample: Gazebo starved by other load sends fewer, late and in bursts,
  and a capped burst is published as its latest;
- state age: when the bridge published a state minus when Gazebo's message it came from was
  received; and staleness: how long before publishing a newer Gazebo message had arrived
  (the part of the age that is the bridge's: Gazebo being late adds to the age only). The bridge publishes with joint_states_stamp "gazebo", so each state names its
  Gazebo message by simulation time; this process receives the same Gazebo messages into its
  own driver cache (on a Rust thread, which stamps their arrival) and a thread samples that
  cache every 0.5 ms, which gives when each Gazebo message arrived (a message missed between
  two samples is interpolated from its neighbours).
Prints one JSON line.
"""

import bisect
import json
import sys
import threading
import time

import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

import sas_robot_driver_gazebo as sas

from conftest import UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES

WARMUP_S = 0.5
topic, partition = sys.argv[1], sys.argv[3]
seconds, period = float(sys.argv[2]), float(sys.argv[4])
gazebo = sas.RobotDriverGazebo(sas.RobotDriverGazeboConfiguration(
    UR3E_JOINTS, UR3E_PREFIX, UR3E_STATES, partition=partition))
gazebo.connect()

rclpy.init()
node = rclpy.create_node('joint_state_probe')
gazebo_arrivals: dict[float, float] = {}  # simulation time → wall time it reached us
published: list[tuple[float, float]] = []  # (wall time the bridge published, simulation time)


sampling = threading.Event()


def sample_gazebo():
    while not sampling.is_set():
        snapshot = gazebo.snapshot()
        if snapshot['sim_time_sec'] is not None:
            gazebo_arrivals.setdefault(round(snapshot['sim_time_sec'], 6),
                                       time.time() - snapshot['age_sec'])
        time.sleep(0.0005)


sampler = threading.Thread(target=sample_gazebo)
sampler.start()


def on_state(message: JointState, info):
    stamp = message.header.stamp
    published.append((info['source_timestamp'] * 1e-9, stamp.sec + stamp.nanosec * 1e-9))


# Deep history on our side: a slow probe must not count as a slow bridge.
node.create_subscription(JointState, topic, on_state,
                         QoSProfile(depth=5000, reliability=ReliabilityPolicy.RELIABLE,
                                    durability=DurabilityPolicy.VOLATILE))
deadline = time.monotonic() + 60
while not published and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
if not published:
    print(json.dumps({'error': f'no message on {topic} within 60 s'}), flush=True)
    sampling.set()
    sys.exit(1)
start = published[0][0] + WARMUP_S
end = start + seconds
deadline = time.monotonic() + WARMUP_S + seconds + 30
while published[-1][0] < end and time.monotonic() < deadline:
    rclpy.spin_once(node, timeout_sec=0.05)
sampling.set()
sampler.join()
if published[-1][0] < end:
    print(json.dumps({'error': f'the messages of the window did not all arrive within '
                               f'{seconds + 30} s'}), flush=True)
    sys.exit(1)

window = [(at, sim) for at, sim in published if start <= at < end]
known = sorted(gazebo_arrivals)
if len(window) < 2 or not known:
    print(json.dumps({'error': f'{len(window)} messages in the window, {len(known)} Gazebo '
                               'messages sampled'}), flush=True)
    sys.exit(1)


def gazebo_arrival(sim: float) -> float:
    """When Gazebo's message of simulation time `sim` arrived: sampled, or interpolated
    between the sampled messages around it."""
    key = round(sim, 6)
    if key in gazebo_arrivals:
        return gazebo_arrivals[key]
    i = bisect.bisect_left(known, key)
    if i == 0 or i == len(known):
        near = known[0] if i == 0 else known[-1]
        return gazebo_arrivals[near] + (key - near)
    before, after = known[i - 1], known[i]
    share = (key - before) / (after - before)
    return gazebo_arrivals[before] + share * (gazebo_arrivals[after] - gazebo_arrivals[before])


ages_ms = sorted(1e3 * (at - gazebo_arrival(sim)) for at, sim in window)


def staleness(at: float, sim: float) -> float:
    """How long before `at` a newer Gazebo message than `sim` had arrived (0: the state was
    the newest there was). Unlike the age, Gazebo being late or silent adds nothing."""
    i = bisect.bisect_right(known, round(sim, 6))
    return max(0.0, at - gazebo_arrival(known[i])) if i < len(known) else 0.0


stale_ms = sorted(1e3 * staleness(at, sim) for at, sim in window)
in_window = [gazebo_arrivals[k] for k in known if start - 1 <= gazebo_arrivals[k] < end]
gazebo_gaps_ms = sorted(1e3 * (b - a) for a, b in zip(in_window, in_window[1:]))
gaps_ms = [1e3 * (b[0] - a[0]) for a, b in zip(window, window[1:])]


def capped_publications(arrivals: list[float]) -> int:
    """How many states an ideal on-arrival bridge under the rate cap publishes from messages
    arriving at `arrivals` (sorted): every one, unless Gazebo sends at least 4/3 as fast as the
    loop; then at most n + 4 over any n periods, a message held back going out at the
    budget's slot, the latest winning."""
    if len(arrivals) < 2:
        return len(arrivals)
    gaps = sorted(b - a for a, b in zip(arrivals, arrivals[1:]))
    if gaps[len(gaps) // 2] >= 0.75 * period:
        return len(arrivals)
    count, schedule, i = 0, arrivals[0], 0
    while i < len(arrivals):
        at = max(arrivals[i], schedule - 4 * period)
        count, schedule = count + 1, max(schedule, at) + period
        while i < len(arrivals) and arrivals[i] <= at:
            i += 1
    return count


def gazebo_messages() -> list[float]:
    """When each of Gazebo's messages arrived, every one from the first sampled to the last by
    the simulator's own numbering (one per step of its simulation time, the smallest gap
    between sampled messages): a message the sampler missed (between two samples, or its
    thread starved) counts all the same, at an interpolated arrival. So the rate expected of
    the bridge never drops because this process looked less often."""
    if len(known) < 2:
        return [gazebo_arrivals[k] for k in known]
    step = min(b - a for a, b in zip(known, known[1:]))
    steps = round((known[-1] - known[0]) / step)
    return sorted(gazebo_arrival(known[0] + k * step) for k in range(steps + 1))


gazebo_in_window = [a for a in gazebo_messages() if start <= a < end]
sampled_in_window = sum(start <= a < end for a in gazebo_arrivals.values())


def percentiles(values: list[float]) -> dict:
    def at(p: float) -> float:
        return values[min(len(values) - 1, int(p / 100 * len(values)))]
    return {'mean': sum(values) / len(values), 'p50': at(50), 'p95': at(95), 'p99': at(99),
            'max': values[-1]}


print(json.dumps({
    'count': len(window),
    'seconds': seconds,
    'rate_hz': len(window) / seconds,
    'capped_gazebo_rate_hz': capped_publications(gazebo_in_window) / seconds,
    'gazebo_messages_sampled_share': sampled_in_window / max(1, len(gazebo_in_window)),
    'age_ms': percentiles(ages_ms),
    'staleness_ms': percentiles(stale_ms),
    'gazebo_gap_ms': percentiles(gazebo_gaps_ms),
    'max_gap_ms': max(gaps_ms),
    'states_from_unsampled_gazebo_messages': sum(round(sim, 6) not in gazebo_arrivals
                                                 for _, sim in window),
}), flush=True)
node.destroy_node()
rclpy.shutdown()
gazebo.disconnect()
