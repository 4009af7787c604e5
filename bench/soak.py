"""Soak: the bridge at a 1 ms loop under a 100 Hz client for ten minutes (scripts/soak).

One simulator (gz-joint-sim, UR3e world), one bridge (sas_robot_driver_ros_gazebo_node,
thread_sampling_time_sec 0.001, Gazebo stamps) and the ±10° 100 Hz sinusoid client
(scripts/joint_interface_example_rclpy.py) run for the whole soak; bench-monitor (crates/bench)
measures it one window after the other (one per minute by default). Per window: the bridge's
RSS from /proc, the exact Gazebo → get/joint_states lag percentiles, Gazebo messages never
reported, targets never forwarded to Gazebo, of them those the bridge says a newer target
superseded (latest wins: `targets_superseded` on its /diagnostics, read around the window) and
the rest, lost (the latest target must always arrive), and the loop's overruns from the
bridge's log, beside the late wake-ups of a bare thread waking every 1 ms at the bridge's
priority in the same run (`bench-floor timer --report`): how late the machine itself is.
Prints a table, writes JSON and Markdown, and exits 1 if the bridge died, a window did not
measure, a target was lost, or RSS grew by more than the allowed margin. Processes, partition
and domain are the benchmark's (bench/run.py).
"""

import argparse
import datetime
import json
import os
import re
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run as bench  # noqa: E402  (bench/run.py: processes, isolation, parameters)
from report import fmt  # noqa: E402  (bench/report.py: the tables' number format)

ROOT = bench.ROOT
# RSS may grow by this much over the soak (allocator warm-up, DDS history buffers filling).
RSS_GROWTH_ALLOWED_MIB = 8.0


def rss_mib(pid: int) -> float:
    with open(f'/proc/{pid}/status') as f:
        for line in f:
            if line.startswith('VmRSS:'):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f'no VmRSS for {pid}')


def rss_once_recording(monitor, monitor_log: Path, bridge):
    """The bridge's RSS once the monitor starts recording (everything flows), or None if the
    monitor or the bridge ends first."""
    deadline = time.monotonic() + bench.READY_TIMEOUT_S
    while time.monotonic() < deadline and monitor.poll() is None and bridge.poll() is None:
        if 'recording' in monitor_log.read_text(errors='replace'):
            return rss_mib(bridge.pid)
        time.sleep(0.2)
    return None


def overruns_logged(log: Path) -> int:
    """Overruns the bridge's periodic statistics lines reported (it logs them at info only
    when there were some)."""
    text = log.read_text(errors='replace') if log.exists() else ''
    return sum(int(n) for n in re.findall(r'periods in [0-9.]+ s \([0-9.]+ Hz\), (\d+) overruns',
                                          text))


class SupersededTargets:
    """The bridge's own count of targets a newer one superseded before its loop took them,
    from the `targets_superseded` of its status on /diagnostics (1 Hz), on a thread of ours."""

    def __init__(self, env: dict, status_name: str):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.executors import SingleThreadedExecutor

        self._rclpy = rclpy
        self._context = rclpy.Context()
        # rclpy reads the domain from the environment when it starts.
        for key in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE'):
            os.environ[key] = env[key]
        rclpy.init(context=self._context)
        self._node = rclpy.create_node('soak_diagnostics', context=self._context)
        self._counts = []  # (monotonic time received, targets_superseded)
        self._lock = threading.Lock()

        def on_diagnostics(array):
            for status in array.status:
                if status.name == status_name:
                    value = next((kv.value for kv in status.values
                                  if kv.key == 'targets_superseded'), None)
                    if value is not None:
                        with self._lock:
                            self._counts.append((time.monotonic(), int(value)))

        self._node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._thread = threading.Thread(target=self._executor.spin, daemon=True)
        self._thread.start()

    def latest(self) -> int | None:
        with self._lock:
            return self._counts[-1][1] if self._counts else None

    def after(self, moment: float, timeout: float = 5.0) -> int | None:
        """The first count received after `moment` (waits up to `timeout` for it)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                later = [count for at, count in self._counts if at > moment]
            if later:
                return later[0]
            time.sleep(0.1)
        return None

    def close(self):
        self._executor.shutdown()
        self._node.destroy_node()
        self._rclpy.shutdown(context=self._context)


def floor_late(log: Path) -> int | None:
    """Late wake-ups so far of the bare 1 ms timer (its last report line)."""
    text = log.read_text(errors='replace') if log.exists() else ''
    found = re.findall(r'timer: \d+ wake-ups, (\d+) later than one period', text)
    return int(found[-1]) if found else None


def window_row(index: int, measured: dict, rss: float, overruns: int,
               superseded: int | None, floor_late_wakeups: int | None) -> dict:
    robot = measured['robots'][0]
    state, command = robot['state'], robot.get('command') or {}
    lag = state.get('lag') or {}
    never_forwarded = command.get('never_forwarded')
    return {
        'window': index + 1,
        'rss_mib': round(rss, 2),
        'gazebo_messages': state['gazebo_messages'],
        'never_reported': state['never_reported'],
        'lag_ms': {k: lag.get(f'{k}_ms') for k in ('p50', 'p90', 'p99', 'max')},
        'targets': command.get('targets'),
        # Never seen on cmd_pos: superseded by a newer target before the loop took it (latest
        # wins; the bridge counts those), or lost. The bridge's count is read from just before
        # the monitor started to just after it ended, a little longer than the window.
        'never_forwarded': never_forwarded,
        'superseded': superseded,
        'targets_lost': None if never_forwarded is None or superseded is None
        else max(0, never_forwarded - superseded),
        'command_lag_p99_ms': (command.get('lag') or {}).get('p99_ms'),
        'report_rate_hz': robot.get('report_rate_hz'),
        'overruns': overruns,
        'timer_floor_late_wakeups': floor_late_wakeups,
    }


def markdown(result: dict) -> str:
    lines = [f"# Soak {result['created']}", '',
             f"{result['windows']} windows of {result['window_s']:.0f} s, loop "
             f"{result['period_s'] * 1e3:.0f} ms, 100 Hz client, bridge realtime_priority "
             f"{result['realtime_priority']}. Bridge RSS "
             f"{result['rss_start_mib']:.2f} MiB at start, {result['rss_end_mib']:.2f} MiB at "
             f"end. Verdict: **{result['verdict']}**.", '',
             '| window | RSS MiB | Gazebo msgs | never reported | lag p50 | p90 | p99 | max ms '
             '| targets | never forwarded | superseded | lost | overruns | bare 1 ms timer late |',
             '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|']
    for row in result['rows']:
        lag = row['lag_ms']
        lines.append(f"| {row['window']} | {row['rss_mib']:.2f} | {row['gazebo_messages']} | "
                     f"{row['never_reported']} | {fmt(lag['p50'])} | "
                     f"{fmt(lag['p90'])} | {fmt(lag['p99'])} | "
                     f"{fmt(lag['max'])} | {row['targets']} | {row['never_forwarded']} | "
                     f"{row['superseded']} | {row['targets_lost']} | {row['overruns']} | "
                     f"{row['timer_floor_late_wakeups']} |")
    if result['problems']:
        lines += ['', 'Problems:', *(f'- {p}' for p in result['problems'])]
    return '\n'.join(lines) + '\n'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--windows', type=int, default=10, help='measurement windows (10)')
    parser.add_argument('--window-s', type=float, default=60.0, help='seconds per window (60)')
    parser.add_argument('--bin-dir', type=Path, required=True)
    parser.add_argument('--results-dir', type=Path, default=ROOT / 'bench' / 'results')
    parser.add_argument('--realtime-priority', type=int, default=0,
                        help="the bridge's realtime_priority (0: normal scheduling, as users' "
                             'default; 1-99: SCHED_FIFO loop and receive threads)')
    args = parser.parse_args()
    period_s = 0.001
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
    work = Path(bench.tempfile.mkdtemp(prefix='sas-soak-'))
    env, partition = bench.isolated_env('soak', 0)
    env['ROS_LOG_DIR'] = str(work / 'ros')
    parameters = {**bench.ur3e_parameters(), 'thread_sampling_time_sec': period_s,
                  'joint_states_stamp': 'gazebo', 'realtime_priority': args.realtime_priority}
    params = bench.write_params(work / 'params.yaml', {'ur3e_1': parameters})
    robot = bench.robot_spec('ur3e_1', parameters, 'stamp', drive=False, commands=True)
    problems, rows = [], []
    print(f'soak: {args.windows} x {args.window_s:.0f} s, logs in {work}', flush=True)
    superseded = SupersededTargets(env, 'ur3e_1: ur3e_1')
    with bench.Processes(work) as procs:
        sim = procs.start('simulator', [args.bin_dir / 'gz-joint-sim', bench.UR3E_WORLD,
                                        '--partition', partition, '--real-time-factor',
                                        bench.SIM_REAL_TIME_FACTOR], env)
        bridge = procs.start('bridge', [args.bin_dir / 'sas_robot_driver_ros_gazebo_node',
                                        '--ros-args', '-r', '__node:=ur3e_1',
                                        '--params-file', params], env)
        procs.start('client', [bench.PYTHON, bench.CLIENT, '--wait', bench.READY_TIMEOUT_S,
                               '--ros-args', '-p', 'robot_topic_name:=/ur3e_1'], env)
        procs.start('timer_floor', [args.bin_dir / 'bench-floor', 'timer', '--hz', 1 / period_s,
                                    '--report', '--priority', args.realtime_priority], env)
        floor_log = work / 'timer_floor.log'
        rss_start = None
        overruns_before = 0
        for index in range(args.windows):
            spec = {'duration_s': args.window_s, 'skip_s': 0.0,
                    'ready_timeout_s': bench.READY_TIMEOUT_S, 'trajectory_s': 0.1,
                    'partition': partition, 'robots': [robot],
                    'watch': [{'label': 'bridge', 'pid': bridge.pid},
                              {'label': 'simulator', 'pid': sim.pid}]}
            spec_file, out_file = work / f'spec{index}.json', work / f'window{index}.json'
            spec_file.write_text(json.dumps(spec))
            floor_before = floor_late(floor_log) or 0
            superseded_before = superseded.latest()
            if superseded_before is None:  # the first window waits for the bridge's first status
                superseded_before = superseded.after(0.0, bench.READY_TIMEOUT_S)
            monitor = procs.start(f'monitor{index}', [args.bin_dir / 'bench-monitor', '--spec',
                                                      spec_file, '--out', out_file], env)
            if rss_start is None:
                rss_start = rss_once_recording(monitor, work / f'monitor{index}.log', bridge)
            code = bench.wait_monitor(monitor, work / f'monitor{index}.log', [bridge],
                                      bench.READY_TIMEOUT_S + args.window_s + 60)
            if bridge.poll() is not None:
                problems.append(f'the bridge exited ({bridge.returncode}) in window {index + 1}')
                break
            if code != 0 or not out_file.exists():
                problems.append(f'window {index + 1}: bench-monitor exited with {code}: '
                                f'{procs.log_tail(f"monitor{index}", 5)}')
                continue
            overruns = overruns_logged(work / 'bridge.log')
            superseded_after = superseded.after(time.monotonic())
            row = window_row(index, json.loads(out_file.read_text()), rss_mib(bridge.pid),
                             overruns - overruns_before,
                             None if superseded_before is None or superseded_after is None
                             else superseded_after - superseded_before,
                             None if floor_late(floor_log) is None
                             else floor_late(floor_log) - floor_before)
            overruns_before = overruns
            rows.append(row)
            lag = row['lag_ms']
            print(f"window {row['window']:2}: RSS {row['rss_mib']:7.2f} MiB, lag p50/p90/p99/max "
                  f"{fmt(lag['p50'])}/{fmt(lag['p90'])}/{fmt(lag['p99'])}/"
                  f"{fmt(lag['max'])} ms, {row['gazebo_messages']} Gazebo messages, "
                  f"{row['never_reported']} never reported, {row['targets']} targets, "
                  f"{row['never_forwarded']} never forwarded ({row['superseded']} superseded, "
                  f"{row['targets_lost']} lost), {row['overruns']} overruns; a bare 1 ms "
                  f"timer woke late {row['timer_floor_late_wakeups']} times", flush=True)
            if row['targets_lost'] is None:
                problems.append(f"window {row['window']}: no targets_superseded on /diagnostics")
            elif row['targets_lost']:
                problems.append(f"window {row['window']}: {row['targets_lost']} targets lost")
            if not row['gazebo_messages'] or row['lag_ms']['p50'] is None:
                problems.append(f"window {row['window']}: no joint states measured (stall)")
        rss_end = rss_mib(bridge.pid) if bridge.poll() is None else None
    superseded.close()
    if rss_start is not None and rss_end is not None \
            and rss_end - rss_start > RSS_GROWTH_ALLOWED_MIB:
        problems.append(f'RSS grew from {rss_start:.2f} to {rss_end:.2f} MiB')
    result = {'created': stamp, 'windows': args.windows, 'window_s': args.window_s,
              'period_s': period_s, 'realtime_priority': args.realtime_priority,
              'rss_start_mib': rss_start, 'rss_end_mib': rss_end,
              'rows': rows, 'problems': problems,
              'verdict': 'FAILED' if problems else 'passed',
              'load_average_after': bench.load_average()}
    print(f'RSS at start {rss_start} MiB, at end {rss_end} MiB; verdict {result["verdict"]}')
    for problem in problems:
        print(f'  problem: {problem}')
    args.results_dir.mkdir(parents=True, exist_ok=True)
    (args.results_dir / f'soak-{stamp}.json').write_text(json.dumps(result, indent=1) + '\n')
    (args.results_dir / f'soak-{stamp}.md').write_text(markdown(result))
    print(f"written {args.results_dir / f'soak-{stamp}.md'}")
    if not problems:
        bench.shutil.rmtree(work, ignore_errors=True)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
