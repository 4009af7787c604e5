#!/usr/bin/env python3
"""/clock rate and lag against Gazebo's own clock messages (issue 22).

Runs gz-joint-sim (Fortress prefix, so the Ignition CLI reads it) at a real-time factor,
sas_robot_driver_ros_gazebo_node with `publish_clock: true`, the Ignition CLI echoing
Gazebo's `/clock`, and an rclpy subscriber on ROS `/clock` (ClockQoS), each in a partition and
ROS domain of their own, for `--seconds`. Every clock message carries Gazebo's wall time at
publication (`system`); per sim stamp it prints when each reader had it:

  gz CLI     the line of that stamp read from the Ignition CLI's output (pipe + this process)
  ROS pub    the DDS source timestamp of our /clock message (Gazebo -> our receive thread ->
             DDS write)
  ROS recv   the DDS reception timestamp at rclpy (before rclpy's executor)

as lags after Gazebo's `system` stamp (p50/p99/max, ms), and each side's rate (Hz). The node
runs with `use_sim_time: true`: for each of its joint states, how far its stamp (the node's
clock) is behind the latest /clock rclpy had received before it (DDS reception order).

    . scripts/env && .venv/bin/python bench/clock_lag.py --rtf 2 --seconds 10
"""

import argparse
import os
import pathlib
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
CLI = '/usr/libexec/ignition/transport11/ign-transport-topic'
CONFIG = ROOT / 'config' / 'config.yaml'


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summary(name, lags_s):
    ms = [1e3 * v for v in lags_s]
    return (f'{name:9s} n={len(ms):6d}  p50 {percentile(ms, 0.5):7.3f} ms  '
            f'p99 {percentile(ms, 0.99):7.3f} ms  max {max(ms):7.3f} ms')


def cli_reader(process, out):
    """(read time, sim, system) per Clock the CLI printed."""
    block, fields, message = None, {}, {}
    for line in process.stdout:
        now = time.time()
        line = line.strip()
        if line.endswith('{'):
            block, fields = line[:-1].strip(), {}
        elif line == '}' and block is not None:
            message[block] = fields.get('sec', 0) * 10**9 + fields.get('nsec', 0)
            if block == 'sim':
                out.append((now, message['sim'], message.get('system', 0)))
                message = {}
            block = None
        elif block is not None and ':' in line:
            name, value = line.split(':', 1)
            fields[name.strip()] = int(value)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--rtf', type=float, default=1.0)
    parser.add_argument('--seconds', type=float, default=10.0)
    parser.add_argument('--domain', type=int, default=142)
    args = parser.parse_args()

    partition = f'clock_lag_{os.getpid()}'
    env = dict(os.environ, GZ_PARTITION=partition, IGN_PARTITION=partition, GZ_IP='127.0.0.1',
               IGN_IP='127.0.0.1', ROS_DOMAIN_ID=str(args.domain),
               ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST', RCUTILS_LOGGING_BUFFERED_STREAM='0')
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')})
    import rclpy
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    release = ROOT / 'target' / 'release'
    processes = []

    def start(argv, **kw):
        p = subprocess.Popen([str(a) for a in argv], env=env, text=True, **kw)
        processes.append(p)
        return p
    try:
        start([release / 'gz-joint-sim', ROOT / 'sdf' / 'ur3e_world.sdf', '--msgs-prefix',
               'ignition.msgs.', '--real-time-factor', args.rtf], stdout=subprocess.DEVNULL,
              stderr=subprocess.DEVNULL)
        start([release / 'sas_robot_driver_ros_gazebo_node', '--ros-args', '-r',
               '__node:=ur3e_1', '--params-file', CONFIG, '-p', 'publish_clock:=true', '-p',
               'gz_msgs_prefix:=ignition.msgs.', '-p', 'use_sim_time:=true'],
              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        cli = start([CLI, '-e', '-t', '/clock'], stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL, bufsize=1)
        gz = []
        threading.Thread(target=cli_reader, args=(cli, gz), daemon=True).start()

        rclpy.init()
        node = rclpy.create_node('clock_lag')
        ros = []
        node.create_subscription(
            Clock, '/clock',
            lambda m, info: ros.append((info['received_timestamp'], info['source_timestamp'],
                                        m.clock.sec * 10**9 + m.clock.nanosec)),
            # Best effort as ClockQoS, but a history deep enough that this process being
            # slow to take them loses none (the count is the bridge's, not rclpy's).
            QoSProfile(depth=1000, reliability=ReliabilityPolicy.BEST_EFFORT))
        states = []
        node.create_subscription(
            JointState, '/ur3e_1/get/joint_states',
            lambda m, info: states.append((info['received_timestamp'],
                                           m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)),
            100)
        deadline = time.monotonic() + 60
        while not (ros and gz):
            if time.monotonic() > deadline:
                sys.exit('no /clock within 60 s')
            rclpy.spin_once(node, timeout_sec=0.05)
        ros.clear()
        gz.clear()
        states.clear()
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            rclpy.spin_once(node, timeout_sec=0.05)
        ros_now, gz_now, states_now = list(ros), list(gz), list(states)
        node.destroy_node()
        rclpy.shutdown()
    finally:
        for p in reversed(processes):
            p.terminate()
        for p in processes:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()

    # The CLI's output (a pipe) may trail: only what both had by the end.
    ros_now = [r for r in ros_now if r[2] <= gz_now[-1][1]]
    system_of = {sim: system for _, sim, system in gz_now}
    matched = [(recv, src, sim) for recv, src, sim in ros_now if sim in system_of]
    first, last = ros_now[0][2], ros_now[-1][2]
    gz_window = [g for g in gz_now if first <= g[1] <= last]
    print(f'real-time factor {args.rtf}, {args.seconds} s; /clock values Gazebo never sent: '
          f'{len(ros_now) - len(matched)}')
    print(f'rate: Gazebo (CLI) {len(gz_now) / args.seconds:.1f} Hz, ROS /clock '
          f'{len(ros_now) / args.seconds:.1f} Hz; over the same sim time {len(gz_window)} '
          f'Gazebo, {len(ros_now)} ROS messages')
    print('lag after Gazebo published (its `system` stamp):')
    print(summary('gz CLI', [(t - s * 1e-9) for t, _, s in gz_window]))
    print(summary('ROS pub', [(src - system_of[sim]) * 1e-9 for _, src, sim in matched]))
    print(summary('ROS recv', [(recv - system_of[sim]) * 1e-9 for recv, _, sim in matched]))
    clock_by_reception = sorted((recv, sim) for recv, _, sim in ros_now)
    behind, zero = [], 0
    for recv, stamp in states_now:
        before = [sim for r, sim in clock_by_reception if r <= recv]
        if stamp == 0:
            zero += 1
        elif before:
            behind.append((before[-1] - stamp) * 1e-9)
    print(f'joint_states (use_sim_time): {len(states_now)}, stamped 0: {zero}; stamp behind '
          'the latest /clock received before it:')
    print(summary('stamp', behind).replace(' ms', ' sim ms'))


if __name__ == '__main__':
    main()
