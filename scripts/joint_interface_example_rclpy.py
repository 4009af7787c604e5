#!/usr/bin/env python3
"""The rclpy version of joint_interface_example.py, kept as the benchmark's seed client
(`node_2ms_seed`): the same arguments, motion and output, each message it takes woken into
Python by rclpy.

A robot-driver client like SmartArmStack's joint_interface_example.py: waits for the robot's
joint states and limits, reads the initial positions q0, then sends
q0 + deg2rad(10 * sin(i / (50 * pi))) on every joint at 100 Hz (a ±10° sinusoid, period ~9.9 s)
on <robot_topic_name>/set/target_joint_positions.

Without --status it takes what arrived once per 10 ms step, as the original's client (its
rclcpp_spin_some); with --status it takes every message as it comes and prints a live line
once a second:
  joint_states rate, stamp age (receive time - header.stamp, the bridge-to-client delay),
  tracking lag (the shift that best aligns the reported positions with the targets sent),
  tracking error, and the CPU use of the process given by --cpu-pid (from /proc).

ROS parameter (as the original): robot_topic_name, default /ur3e_1.
Usage: joint_interface_example_rclpy.py [--seconds N] [--status] [--cpu-pid PID] [--ros-args ...]
Stops on Ctrl-C, SIGTERM or after --seconds; prints a summary; exit 1 if the robot never
appeared.
"""

import argparse
import collections
import math
import os
import signal
import sys
import time

import numpy as np
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

PERIOD_S = 0.01
AMPLITUDE_RAD = math.radians(10.0)
DEPTH_ONE = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                       durability=DurabilityPolicy.VOLATILE)
HISTORY_S = 6.0      # targets and states kept for the lag estimate
MAX_LAG_S = 0.5      # the largest shift searched
LAG_STEP_S = 0.001


def target_offset(i: int) -> float:
    """The original's sinusoid: i counts 10 ms steps."""
    return AMPLITUDE_RAD * math.sin(i / (50 * math.pi))


class CpuMeter:
    """CPU use of a process (user + system, % of one core) from /proc/<pid>/stat."""

    def __init__(self, pid: int):
        self.pid = pid
        self.ticks_per_s = os.sysconf('SC_CLK_TCK')
        self.last = self._sample()

    def _sample(self):
        try:
            with open(f'/proc/{self.pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            return time.monotonic(), int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            return None

    def percent(self):
        now = self._sample()
        last, self.last = self.last, now
        if now is None or last is None or now[0] <= last[0]:
            return None
        return 100.0 * (now[1] - last[1]) / self.ticks_per_s / (now[0] - last[0])


class JointInterfaceExample(Node):
    def __init__(self):
        super().__init__('joint_interface_example')
        prefix = self.declare_parameter('robot_topic_name', '/ur3e_1').value.rstrip('/')
        self.prefix = prefix
        self.states = collections.deque()        # (receive time, positions)
        self.sent = collections.deque()          # (send time, target)
        self.stamp_ages: list[float] = []
        self.received = 0
        self.limits = [None, None]
        self.q0 = None
        self.i = 0
        self.create_subscription(JointState, f'{prefix}/get/joint_states', self._on_state,
                                 DEPTH_ONE)
        self.limit_subscriptions = [
            self.create_subscription(Float64MultiArray, f'{prefix}/get/joint_positions_{name}',
                                     lambda m, which=which: self._on_limit(which, m), DEPTH_ONE)
            for which, name in enumerate(['min', 'max'])]
        self.publisher = self.create_publisher(
            Float64MultiArray, f'{prefix}/set/target_joint_positions', DEPTH_ONE)

    def _on_state(self, msg: JointState):
        now = time.monotonic()
        self.received += 1
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self.stamp_ages.append(time.time() - stamp)
        self.states.append((now, np.array(msg.position)))
        while self.states and self.states[0][0] < now - HISTORY_S:
            self.states.popleft()

    def _on_limit(self, which: int, msg: Float64MultiArray):
        self.limits[which] = list(msg.data)

    def enabled(self) -> bool:
        """The original client's is_enabled(PositionControl): positions and both limits."""
        return bool(self.states) and all(limit is not None for limit in self.limits)

    def send_next(self):
        offset = target_offset(self.i)
        target = self.q0 + offset
        self.publisher.publish(Float64MultiArray(data=target.tolist()))
        now = time.monotonic()
        self.sent.append((now, target))
        while self.sent and self.sent[0][0] < now - HISTORY_S:
            self.sent.popleft()
        self.i += 1

    def lag_estimate(self):
        """(lag in s, largest gap in rad at that lag) aligning the reported positions with the
        targets sent, over the history; None until there is enough motion."""
        if len(self.sent) < 50 or len(self.states) < 50:
            return None
        sent_t = np.array([t for t, _ in self.sent])
        sent_q = np.array([q for _, q in self.sent])
        state_t = np.array([t for t, _ in self.states])
        state_q = np.array([q for _, q in self.states])
        # Only states whose shifted instant falls inside the sent history.
        keep = state_t - MAX_LAG_S >= sent_t[0]
        if keep.sum() < 20:
            return None
        state_t, state_q = state_t[keep], state_q[keep]
        best = None
        for lag in np.arange(0.0, MAX_LAG_S, LAG_STEP_S):
            # The target in force at t - lag is the last one sent before it (zero-order hold).
            index = np.searchsorted(sent_t, state_t - lag, side='right') - 1
            gap = np.abs(state_q - sent_q[index]).max()
            if best is None or gap < best[1]:
                best = (lag, gap)
        return best


def status_line(node: JointInterfaceExample, rate: float, cpu) -> str:
    ages = np.array(node.stamp_ages) * 1e3
    node.stamp_ages.clear()
    lag = node.lag_estimate()
    parts = [f'joint_states {rate:6.1f} Hz']
    if len(ages):
        parts.append(f'stamp age {np.median(ages):5.2f} ms (max {ages.max():6.2f})')
    if lag is not None:
        parts.append(f'tracking lag {lag[0] * 1e3:4.0f} ms, gap {math.degrees(lag[1]):.3f}°')
    if cpu is not None:
        parts.append(f'node CPU {cpu:5.1f} %')
    return ' | '.join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=0.0,
                        help='stop after this many seconds of motion (0: until Ctrl-C)')
    parser.add_argument('--status', action='store_true', help='print a live status line')
    parser.add_argument('--cpu-pid', type=int, help='report the CPU use of this process')
    parser.add_argument('--wait', type=float, default=60.0,
                        help='seconds to wait for the robot before giving up')
    args = parser.parse_args(remove_ros_args(sys.argv)[1:])

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.append(True))
    node = JointInterfaceExample()
    try:
        deadline = time.monotonic() + args.wait
        print(f'waiting for {node.prefix}/get/joint_states and the joint limits ...',
              flush=True)
        while not node.enabled() and not stop:
            if time.monotonic() > deadline:
                print(f'no joint states and limits on {node.prefix} within {args.wait} s',
                      file=sys.stderr)
                return 1
            rclpy.spin_once(node, timeout_sec=0.1)
        if stop:
            return 0
        node.q0 = node.states[-1][1].copy()
        # The limits are fixed and the bridge publishes them every period (as the original):
        # read once, their subscriptions would only wake this process 2000 times a second.
        for subscription in node.limit_subscriptions:
            node.destroy_subscription(subscription)
        print(f'q0 = {np.round(node.q0, 4).tolist()}; sending ±10° sinusoids at 100 Hz on '
              f'{node.prefix}/set/target_joint_positions', flush=True)

        cpu = CpuMeter(args.cpu_pid) if args.cpu_pid else None
        tty = sys.stdout.isatty()
        start = next_send = next_status = time.monotonic()
        received_at_status = node.received
        while not stop:
            now = time.monotonic()
            if args.seconds and now - start >= args.seconds:
                break
            if now >= next_send:
                node.send_next()
                # Absolute deadlines: a late step does not shift the ones after it.
                next_send += PERIOD_S * max(1, math.ceil((now - next_send) / PERIOD_S))
            if args.status and now >= next_status + 1.0:
                rate = (node.received - received_at_status) / (now - next_status)
                received_at_status, next_status = node.received, now
                line = status_line(node, rate, cpu.percent() if cpu else None)
                print(f'\r{line}   ' if tty else line, end='' if tty else '\n', flush=True)
            if args.status:
                # Every message as it comes, for the live rate and ages.
                rclpy.spin_once(node, timeout_sec=max(0.0, next_send - time.monotonic()))
            else:
                # As the original's client (rclcpp_spin_some each 10 ms step): sleep to the
                # next step, then take what arrived; depth 1, so at most the latest state.
                time.sleep(max(0.0, next_send - time.monotonic()))
                rclpy.spin_once(node, timeout_sec=0.0)
        elapsed = time.monotonic() - start
        if args.status and tty:
            print()
        lag = node.lag_estimate()
        print(f'sent {node.i} targets in {elapsed:.1f} s, received {node.received} joint '
              f'states' + (f'; tracking lag {lag[0] * 1e3:.0f} ms, gap '
                           f'{math.degrees(lag[1]):.3f}°' if lag else ''), flush=True)
        return 0
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == '__main__':
    sys.exit(main())
