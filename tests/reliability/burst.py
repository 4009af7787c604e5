"""One hostile client of the bridge: sends FINAL (a valid target) as its first target, then
ROUNDS times publishes on TOPIC at RATE for SECONDS a cycle of valid targets and bad ones
(wrong lengths, empty, NaN, ±inf, huge values), then FINAL, waits until it is acknowledged,
prints `burst K: sent N in S s` and pauses PAUSE seconds; at last sends FINAL once more and
prints `closed`. One process for every round, so the bridge sees no new participants.

The bridge's reader of the topic holds one sample (depth 1) for all publishers, and it counts
a publisher's replaced targets from the gaps in its sequence numbers between the targets it
took. So the first and the closing target of each client must be taken, not replaced by
another client's: client INDEX sends its first at FIRST_AT + INDEX * STAGGER_S (wall clock),
every client starts its bursts at BURSTS_AT, and closes INDEX * STAGGER_S after its last pause.

usage: burst.py TOPIC RATE_HZ SECONDS FINAL_CSV ROUNDS PAUSE INDEX FIRST_AT BURSTS_AT
(ROS_DOMAIN_ID etc. from the environment)
"""

import math
import sys
import time

import rclpy
import rclpy.duration
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray

# Apart by far more than the bridge's executor needs to take an acknowledged target.
STAGGER_S = 1.0


def sleep_until(wall_clock: float):
    time.sleep(max(0.0, wall_clock - time.time()))


def cycle(final):
    n = len(final)
    yield from ([0.01 * k] * n for k in range(5))     # valid, within every limit
    yield []                                           # empty
    yield [0.1] * (n - 1)                              # one short
    yield [0.1] * (n + 1)                              # one long
    yield [0.1] * 1000                                 # far too long
    yield [math.nan] * n
    yield [0.1] * (n - 1) + [math.inf]
    yield [-math.inf] + [0.1] * (n - 1)
    yield [1e308] * n                                  # huge: clamped into the limits
    yield [-1e300] + [0.1] * (n - 1)


def main() -> int:
    topic, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    final = [float(v) for v in sys.argv[4].split(',')]
    rclpy.init()
    node = rclpy.create_node('burst')
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    publisher = node.create_publisher(Float64MultiArray, topic, qos)
    deadline = time.monotonic() + 30
    while publisher.get_subscription_count() == 0:
        if time.monotonic() > deadline:
            print('no subscriber', flush=True)
            return 1
        time.sleep(0.01)
    index, first_at, bursts_at = int(sys.argv[7]), float(sys.argv[8]), float(sys.argv[9])

    def send_final(what: str) -> bool:
        publisher.publish(Float64MultiArray(data=final))
        # A reliable sample lost in the flood is repaired after the writer's next heartbeat.
        if not publisher.wait_for_all_acked(rclpy.duration.Duration(seconds=30)):
            print(f'the {what} target was not acknowledged within 30 s', flush=True)
            return False
        return True

    # Our side of discovery is done, the bridge's may not be: a reader that has not matched
    # this writer yet drops what it sends. Once the bridge acknowledged a first target, it
    # hears every one.
    sleep_until(first_at + index * STAGGER_S)
    if not send_final('first'):
        return 1
    sleep_until(bursts_at)
    messages = [Float64MultiArray(data=values) for values in cycle(final)]
    period = 1.0 / rate
    for round_ in range(1, int(sys.argv[5]) + 1):
        start = time.monotonic()
        next_at, sent = start, 0
        while next_at - start < seconds:
            publisher.publish(messages[sent % len(messages)])
            sent += 1
            next_at += period
            pause = next_at - time.monotonic()
            if pause > 0:
                time.sleep(pause)
        elapsed = time.monotonic() - start
        send_final('final')
        print(f'burst {round_}: sent {sent} in {elapsed:.2f} s', flush=True)
        time.sleep(float(sys.argv[6]))
    time.sleep(index * STAGGER_S)
    send_final('closing')
    time.sleep(STAGGER_S)  # taken by the bridge before we go
    print('closed', flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main())
