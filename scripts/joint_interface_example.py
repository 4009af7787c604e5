#!/usr/bin/env python3
"""A robot-driver client like SmartArmStack's joint_interface_example.py, on the module's
RobotDriverClient: waits until the robot is enabled (joint states and limits), reads the
initial positions q0, then sends q0 + deg2rad(10 * sin(i / (50 * pi))) on every joint at
100 Hz (a ±10° sinusoid, period ~9.9 s) on <robot_topic_name>/set/target_joint_positions.

The client receives the robot's messages on its own Rust thread, so this script is woken only
for its own steps: without --status it sleeps to each 10 ms step and reads the latest state
there; with --status it also waits for every state (wait_for_new_state) and prints a live line
once a second:
  joint_states rate, stamp age (receive time - header.stamp, the bridge-to-client delay),
  tracking lag (the shift that best aligns the reported positions with the targets sent),
  tracking error, and the CPU use of the process given by --cpu-pid (from /proc).

ROS parameter (as the original): robot_topic_name, default /ur3e_1.
Usage: joint_interface_example.py [--seconds N] [--status] [--cpu-pid PID] [--ros-args ...]
Stops on Ctrl-C, SIGTERM or after --seconds; prints a summary; exit 1 if the robot never
appeared. scripts/joint_interface_example_rclpy.py is the same client on rclpy.
"""

import argparse
import collections
import math
import os
import signal
import sys
import time

import numpy as np

PERIOD_S = 0.01
AMPLITUDE_RAD = math.radians(10.0)
ENABLED_POLL_S = 0.1  # as the original: is_enabled() every 0.1 s until the robot is there
HISTORY_S = 6.0      # targets and states kept for the lag estimate
MAX_LAG_S = 0.5      # the largest shift searched
LAG_STEP_S = 0.001
NODE_NAME = 'joint_interface_example'
TOPIC_PARAMETER = 'robot_topic_name'


def target_offset(i: int) -> float:
    """The original's sinusoid: i counts 10 ms steps."""
    return AMPLITUDE_RAD * math.sin(i / (50 * math.pi))


def split_ros_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """(the script's own arguments, the ROS arguments): everything from `--ros-args` up to a
    `--` (or the end) is ROS's, as rcl reads it."""
    own, ros, in_ros = [], [], False
    for arg in argv:
        if arg == '--ros-args':
            in_ros = True
        elif in_ros and arg == '--':
            in_ros = False
        elif in_ros:
            ros.append(arg)
        else:
            own.append(arg)
    return own, ros


def ros_parameter(ros_args: list[str], name: str, default: str) -> str:
    """The value of `-p name:=value` (or `--param`) among the ROS arguments; the last wins."""
    value = default
    for flag, assignment in zip(ros_args, ros_args[1:]):
        if flag in ('-p', '--param') and assignment.startswith(f'{name}:='):
            value = assignment.split(':=', 1)[1].strip('\'"')
    return value


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


class Tracking:
    """The targets sent and the states taken over the last HISTORY_S, the stamp ages since
    the last status line, and the lag between targets and states; the motion's step i from
    q0. Shared with scripts/joint_interface_example_rclpy.py, which only receives and sends
    another way."""

    def __init__(self):
        self.states = collections.deque()        # (receive time, positions)
        self.sent = collections.deque()          # (send time, target)
        self.stamp_ages: list[float] = []
        self.q0 = None
        self.i = 0

    def next_target(self):
        return self.q0 + target_offset(self.i)

    def add_state(self, received_at: float, positions, stamp_age: float):
        self.stamp_ages.append(stamp_age)
        self.states.append((received_at, positions))
        now = time.monotonic()
        while self.states and self.states[0][0] < now - HISTORY_S:
            self.states.popleft()

    def add_sent(self, target):
        """`target` sent now, as step i; the next step is i + 1."""
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


class JointInterfaceExample(Tracking):
    def __init__(self, prefix: str):
        # Imported here, not at the top: the rclpy version imports this file's other parts
        # and must not load the module.
        from sas_robot_driver_gazebo import RobotDriverClient

        super().__init__()
        self.prefix = prefix
        self.client = RobotDriverClient(NODE_NAME, prefix)
        self.sequence = 0                        # the latest state taken
        self.first_sequence = None

    @property
    def received(self) -> int:
        """Joint states the client received since the first one taken."""
        return self.sequence - (self.first_sequence or self.sequence)

    def take_state(self):
        """The latest state into the history, if it is new: its arrival (monotonic and wall
        clock, from its age) rather than when this script got round to reading it."""
        state = self.client.snapshot()
        if state['sequence'] == self.sequence:
            return
        now, wall = time.monotonic(), time.time()
        self.sequence = state['sequence']
        if self.first_sequence is None:
            self.first_sequence = self.sequence
        self.add_state(now - state['age_sec'], state['positions'],
                       wall - state['age_sec'] - state['stamp_ns'] * 1e-9)

    def enabled(self) -> bool:
        return self.client.is_enabled()

    def wait_for_enabled(self):
        time.sleep(ENABLED_POLL_S)

    def start(self):
        self.q0 = self.client.get_joint_positions()
        self.take_state()

    def send_next(self):
        target = self.next_target()
        self.client.send_target_joint_positions(target)
        self.add_sent(target)

    def receive(self, until: float, every_message: bool):
        if every_message:
            # Every state as it comes, for the live rate and ages (the GIL is released while
            # waiting); none before the next step: Gazebo paused or gone.
            try:
                self.client.wait_for_new_state(timeout=max(0.0, until - time.monotonic()))
            except TimeoutError:
                pass
        else:
            # As the original's client (rclcpp_spin_some each 10 ms step): sleep to the next
            # step, then read the latest state, which the client's thread kept.
            time.sleep(max(0.0, until - time.monotonic()))
        self.take_state()


def status_line(tracking: Tracking, rate: float, cpu) -> str:
    ages = np.array(tracking.stamp_ages) * 1e3
    tracking.stamp_ages.clear()
    lag = tracking.lag_estimate()
    parts = [f'joint_states {rate:6.1f} Hz']
    if len(ages):
        parts.append(f'stamp age {np.median(ages):5.2f} ms (max {ages.max():6.2f})')
    if lag is not None:
        parts.append(f'tracking lag {lag[0] * 1e3:4.0f} ms, gap {math.degrees(lag[1]):.3f}°')
    if cpu is not None:
        parts.append(f'node CPU {cpu:5.1f} %')
    return ' | '.join(parts)


def summary(tracking: Tracking, elapsed: float, received: int) -> str:
    lag = tracking.lag_estimate()
    return (f'sent {tracking.i} targets in {elapsed:.1f} s, received {received} joint states'
            + (f'; tracking lag {lag[0] * 1e3:.0f} ms, gap {math.degrees(lag[1]):.3f}°'
               if lag else ''))


def argument_parser(doc: str) -> argparse.ArgumentParser:
    """The arguments of both versions; `doc`, the script's docstring, describes it."""
    parser = argparse.ArgumentParser(description=doc.split('\n\n')[0])
    parser.add_argument('--seconds', type=float, default=0.0,
                        help='stop after this many seconds of motion (0: until Ctrl-C)')
    parser.add_argument('--status', action='store_true', help='print a live status line')
    parser.add_argument('--cpu-pid', type=int, help='report the CPU use of this process')
    parser.add_argument('--wait', type=float, default=60.0,
                        help='seconds to wait for the robot before giving up')
    return parser


def run(example, args) -> int:
    """The client, the same on both versions: waits until `example` is enabled, takes q0,
    sends the sinusoid until stopped and prints the summary; the exit status. `example` is a
    Tracking with `prefix`, `received` and the steps `enabled()`, `wait_for_enabled()`,
    `start()` (q0 and what comes with it), `send_next()` and `receive(until, every_message)`
    (wait until the monotonic instant `until`, taking what arrives)."""
    stop = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.append(True))
    deadline = time.monotonic() + args.wait
    print(f'waiting for {example.prefix}/get/joint_states and the joint limits ...', flush=True)
    while not example.enabled() and not stop:
        if time.monotonic() > deadline:
            print(f'no joint states and limits on {example.prefix} within {args.wait} s',
                  file=sys.stderr)
            return 1
        example.wait_for_enabled()
    if stop:
        return 0
    example.start()
    print(f'q0 = {np.round(example.q0, 4).tolist()}; sending ±10° sinusoids at 100 Hz on '
          f'{example.prefix}/set/target_joint_positions', flush=True)

    cpu = CpuMeter(args.cpu_pid) if args.cpu_pid else None
    tty = sys.stdout.isatty()
    start = next_send = next_status = time.monotonic()
    received_at_status = example.received
    while not stop:
        now = time.monotonic()
        if args.seconds and now - start >= args.seconds:
            break
        if now >= next_send:
            example.send_next()
            # Absolute deadlines: a late step does not shift the ones after it.
            next_send += PERIOD_S * max(1, math.ceil((now - next_send) / PERIOD_S))
        if args.status and now >= next_status + 1.0:
            rate = (example.received - received_at_status) / (now - next_status)
            received_at_status, next_status = example.received, now
            line = status_line(example, rate, cpu.percent() if cpu else None)
            print(f'\r{line}   ' if tty else line, end='' if tty else '\n', flush=True)
        example.receive(next_send, every_message=args.status)
    elapsed = time.monotonic() - start
    if args.status and tty:
        print()
    print(summary(example, elapsed, example.received), flush=True)
    return 0


def main() -> int:
    own_args, ros_args = split_ros_args(sys.argv)
    args = argument_parser(__doc__).parse_args(own_args[1:])
    prefix = ros_parameter(ros_args, TOPIC_PARAMETER, '/ur3e_1').rstrip('/')
    example = JointInterfaceExample(prefix)
    try:
        return run(example, args)
    finally:
        example.client.close()


if __name__ == '__main__':
    sys.exit(main())
