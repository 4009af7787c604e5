#!/usr/bin/env python3
"""The bridge benchmark, run by scripts/bench (which builds the binaries and sources scripts/env).

For each scenario: gz-joint-sim runs the world, the bridge under test runs beside it, the
±10° 100 Hz sinusoid client (scripts/joint_interface_example.py) drives the robot, and
bench-monitor (crates/bench) measures from one process on one monotonic clock: exact lag of
every Gazebo message to the first get/joint_states report carrying it, target → cmd_pos lag,
the original bridge_lag_monitor figure on the same run, and CPU/RSS of the bridge from /proc.

Every scenario runs in its own gz partition and ROS domain, on loopback only; every process it
starts is stopped (SIGINT, then SIGKILL) when the scenario ends, also on Ctrl-C or SIGTERM.
A scenario whose pieces do not exist yet is reported as "not run: <reason>".

Writes <results-dir>/<timestamp>.json, the plots <timestamp>-*.png and the table
<timestamp>.md, and prints the table.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / '.venv' / 'bin' / 'python'
CLIENT = ROOT / 'scripts' / 'joint_interface_example.py'
PYTHON_SCRIPT = ROOT / 'scripts' / 'sas_robot_driver_ros_gazebo.py'
PYTHON_LOOP = ROOT / 'bench' / 'python_loop.py'
GIL_HOG = ROOT / 'bench' / 'gil_hog.py'
UR3E_WORLD = ROOT / 'sdf' / 'ur3e_world.sdf'
LONGBOY_WORLD = ROOT / 'sdf' / 'longboy_world.sdf'
CONFIG = ROOT / 'config' / 'config.yaml'

# Full runs as the seed's (45 s, the first 10 s skipped); quick runs for CI smoke use.
FULL = {'duration_s': 45.0, 'skip_s': 10.0}
QUICK = {'duration_s': 10.0, 'skip_s': 3.0}
READY_TIMEOUT_S = 90.0
# The simulator runs a hair slower than real time (a 2.001 ms step for a 2 ms world step), so
# the phase between its steps and the bridge's periods sweeps its whole range every 4 s. At
# exactly 1.0 both run on the same monotonic clock with the same period, and the phase they
# happened to start with would decide the lag (anywhere in 0..period) for the whole run.
SIM_REAL_TIME_FACTOR = 0.9995
# The monitor runs with a real-time priority when the system allows it, so that its own
# timestamps stay accurate on a loaded machine; the processes under test run as users run them.
MONITOR_PRIORITY = ['chrt', '--fifo', '10']
STOP_GRACE_S = 5.0
# The name of the GIL-hogging thread (bench/gil_hog.py), excluded from the bridge's CPU.
GIL_HOG_THREAD = 'gil-hog'


class NotAvailable(Exception):
    """A scenario's pieces do not exist (yet)."""


@dataclass
class Scenario:
    name: str
    title: str
    period_s: float
    kind: str                  # node | python_script | python_loop | multi_robot | composed
    gil_hog: str | None = None  # None | 'hold' (GIL held while sleeping) | 'busy' (+ a core)
    robots: int = 1


SCENARIOS = [
    Scenario('node_2ms', 'node, 2 ms', 0.002, 'node'),
    Scenario('node_1ms', 'node, 1 ms', 0.001, 'node'),
    Scenario('python_2ms', 'Python script, 2 ms', 0.002, 'python_script'),
    Scenario('python_2ms_gil', 'Python script, 2 ms, thread holding the GIL', 0.002,
             'python_script', gil_hog='hold'),
    Scenario('python_2ms_busy', 'Python script, 2 ms, busy Python thread', 0.002,
             'python_script', gil_hog='busy'),
    Scenario('python_loop_2ms', 'Python loop (rclpy timer + module getters), 2 ms', 0.002,
             'python_loop'),
    Scenario('robots_1', '1 robot in one process, 2 ms', 0.002, 'multi_robot', robots=1),
    Scenario('robots_4', '4 robots in one process, 2 ms', 0.002, 'multi_robot', robots=4),
    Scenario('robots_16', '16 robots in one process, 2 ms', 0.002, 'multi_robot', robots=16),
    Scenario('composed', 'composed R820 + UR3e (13 joints), 2 ms', 0.002, 'composed'),
]
BY_NAME = {s.name: s for s in SCENARIOS}


def ur3e_parameters() -> dict:
    """The ur3e_1 block of config/config.yaml (the original's configuration)."""
    with open(CONFIG) as f:
        return dict(yaml.safe_load(f)['ur3e_1']['ros__parameters'])


class Processes:
    """Processes of one scenario, each in its own session, logs in files; all stopped on exit."""

    def __init__(self, log_dir: Path):
        self.log_dir = log_dir
        self.started: list[tuple[str, subprocess.Popen]] = []

    def start(self, label: str, args: list, env: dict) -> subprocess.Popen:
        log = open(self.log_dir / f'{label}.log', 'wb')
        proc = subprocess.Popen([str(a) for a in args], env=env, cwd=ROOT, stdout=log,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        log.close()
        self.started.append((label, proc))
        return proc

    def log_tail(self, label: str, lines: int = 15) -> str:
        path = self.log_dir / f'{label}.log'
        if not path.exists():
            return ''
        return '\n'.join(path.read_text(errors='replace').splitlines()[-lines:])

    def __enter__(self):
        return self

    def __exit__(self, *_):
        for _, proc in self.started:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + STOP_GRACE_S
        for _, proc in self.started:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for _, proc in self.started:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()


def load_average() -> list[float]:
    with open('/proc/loadavg') as f:
        return [float(x) for x in f.read().split()[:3]]


def isolated_env(scenario: str, index: int) -> tuple[dict, str]:
    """The environment of one scenario's processes: own partition and domain, loopback only."""
    partition = f'sas_bench_{os.getpid()}_{scenario}'
    env = dict(os.environ)
    env.update({
        'GZ_PARTITION': partition, 'IGN_PARTITION': partition,
        'GZ_IP': '127.0.0.1', 'IGN_IP': '127.0.0.1',
        # Fast DDS accepts domain ids 0..232; a base apart from the test suites'.
        'ROS_DOMAIN_ID': str((os.getpid() * 17 + index) % 230 + 1),
        'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST',
        'RCUTILS_LOGGING_BUFFERED_STREAM': '0',
        'PYTHONUNBUFFERED': '1',
    })
    return env, partition


def bridge_command(scenario: Scenario, params_file: Path, bin_dir: Path) -> tuple[list, str]:
    """The bridge's command line and how its reports are matched to Gazebo messages."""
    ros_args = ['--ros-args', '-r', '__node:=ur3e_1', '--params-file', params_file]
    if scenario.kind == 'node':
        node = bin_dir / 'sas_robot_driver_ros_gazebo_node'
        if not node.is_file():
            raise NotAvailable(f'{node} is missing (build bridge-node)')
        return [node, *ros_args], 'stamp'
    if scenario.kind == 'python_script':
        if not PYTHON_SCRIPT.is_file():
            raise NotAvailable(f'{PYTHON_SCRIPT.relative_to(ROOT)} does not exist yet '
                               '(the Python issue is in progress)')
        return [PYTHON, *hog_wrapper(scenario), PYTHON_SCRIPT, *ros_args], python_script_match()
    if scenario.kind == 'python_loop':
        check_module()
        return [PYTHON, *hog_wrapper(scenario), PYTHON_LOOP, *ros_args], 'values'
    if scenario.kind == 'multi_robot':
        raise NotAvailable('the multi-robot node (issue 8) does not exist yet')
    if scenario.kind == 'composed':
        raise NotAvailable('the composer node (issue 8) does not exist yet')
    raise ValueError(f'unknown scenario kind {scenario.kind}')


def hog_wrapper(scenario: Scenario) -> list:
    if scenario.gil_hog is None:
        return []
    return [GIL_HOG, *(['--busy'] if scenario.gil_hog == 'busy' else [])]


def python_script_match() -> str:
    """Stamp matching if the script passes joint_states_stamp on to the loop."""
    return 'stamp' if 'joint_states_stamp' in PYTHON_SCRIPT.read_text() else 'values'


def check_module():
    probe = subprocess.run([PYTHON, '-c', 'import sas_robot_driver_gazebo'],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ['?'])[-1]
        raise NotAvailable(f'the Python module sas_robot_driver_gazebo cannot be imported '
                           f'({last}); build it with scripts/setup')


def run_scenario(scenario: Scenario, index: int, timing: dict, bin_dir: Path,
                 work_dir: Path) -> dict:
    entry = {'name': scenario.name, 'title': scenario.title, 'period_s': scenario.period_s,
             'kind': scenario.kind, 'gil_hog': scenario.gil_hog, 'robots': scenario.robots}
    log_dir = work_dir / scenario.name
    log_dir.mkdir(parents=True, exist_ok=True)
    parameters = ur3e_parameters()
    parameters.update(thread_sampling_time_sec=scenario.period_s,
                      joint_states_stamp='gazebo')
    params_file = log_dir / 'params.yaml'
    params_file.write_text(yaml.safe_dump({'ur3e_1': {'ros__parameters': parameters}}))
    try:
        bridge_args, match_by = bridge_command(scenario, params_file, bin_dir)
    except NotAvailable as why:
        entry.update(status='not run', reason=str(why))
        return entry
    env, partition = isolated_env(scenario.name, index)
    env['ROS_LOG_DIR'] = str(log_dir / 'ros')
    entry['load_average_before'] = load_average()
    print(f'--- {scenario.name}: {scenario.title} ({timing["duration_s"]:.0f} s, '
          f'first {timing["skip_s"]:.0f} s skipped)', flush=True)
    with Processes(log_dir) as procs:
        sim = procs.start('simulator', [bin_dir / 'gz-joint-sim', UR3E_WORLD,
                                        '--partition', partition,
                                        '--real-time-factor', SIM_REAL_TIME_FACTOR], env)
        bridge = procs.start('bridge', bridge_args, env)
        client = procs.start('client', [PYTHON, CLIENT, '--wait', READY_TIMEOUT_S,
                                        '--ros-args', '-p', 'robot_topic_name:=/ur3e_1'], env)
        spec = {
            **timing,
            'ready_timeout_s': READY_TIMEOUT_S,
            'partition': partition,
            'robots': [{
                'name': 'ur3e_1',
                'joint_states_topic': parameters['joint_states_topic'],
                'joint_positions_topic_prefix': parameters['joint_positions_topic_prefix'],
                'joint_names': parameters['joint_names'],
                'match_by': match_by,
            }],
            'watch': [
                {'label': 'bridge', 'pid': bridge.pid,
                 'exclude_threads': [GIL_HOG_THREAD] if scenario.gil_hog else []},
                {'label': 'simulator', 'pid': sim.pid},
                {'label': 'client', 'pid': client.pid},
            ],
        }
        spec_file = log_dir / 'spec.json'
        spec_file.write_text(json.dumps(spec, indent=1))
        out_file = log_dir / 'monitor.json'
        monitor = procs.start('monitor', [*monitor_priority(), bin_dir / 'bench-monitor',
                                          '--spec', spec_file, '--out', out_file], env)
        try:
            code = monitor.wait(timeout=READY_TIMEOUT_S + timing['duration_s'] + 60)
        except subprocess.TimeoutExpired:
            code = None
        bridge_alive = bridge.poll() is None
        entry['load_average_after'] = load_average()
        if code != 0 or not out_file.exists():
            entry.update(status='failed',
                         reason=f'bench-monitor exited with {code}: '
                                f'{procs.log_tail("monitor", 5)}',
                         bridge_log=procs.log_tail('bridge'),
                         client_log=procs.log_tail('client', 5))
            return entry
        entry.update(status='run', match_by=match_by, bridge_alive_at_end=bridge_alive,
                     **json.loads(out_file.read_text()))
        if not bridge_alive:
            entry['bridge_log'] = procs.log_tail('bridge')
    return entry


def monitor_priority() -> list:
    """The real-time priority prefix, if this system grants it."""
    try:
        granted = subprocess.run([*MONITOR_PRIORITY, 'true'], capture_output=True).returncode == 0
    except FileNotFoundError:
        granted = False
    return MONITOR_PRIORITY if granted else []


def bridge_usage(entry: dict):
    for process in entry.get('processes', []):
        if process['label'] == 'bridge':
            return process
    return None


def state_p99(entry: dict):
    if entry.get('status') != 'run':
        return None
    lag = entry['robots'][0]['state']['lag']
    return lag['p99_ms'] if lag else None


def evaluate_targets(scenarios: dict) -> list[dict]:
    """The issue's targets, each met / not met / not run with its measured value."""
    def run(name):
        entry = scenarios.get(name)
        return entry if entry and entry.get('status') == 'run' else None

    def not_run(name):
        entry = scenarios.get(name)
        if entry is None:
            return 'not selected in this run'
        return entry.get('reason', entry.get('status'))

    def limit(target, name, measured, bound, unit):
        if measured is None:
            return {'target': target, 'scenario': name, 'status': 'not run',
                    'reason': not_run(name), 'limit': bound, 'unit': unit}
        return {'target': target, 'scenario': name, 'measured': measured, 'limit': bound,
                'unit': unit, 'status': 'met' if measured <= bound else 'not met'}

    def cpu(name):
        entry = run(name)
        usage = bridge_usage(entry) if entry else None
        return usage['cpu_percent'] if usage else None

    targets = [
        limit('exact lag p99 ≤ 2.1 ms at 2 ms', 'node_2ms',
              state_p99(run('node_2ms') or {}), 2.1, 'ms'),
        limit('exact lag p99 ≤ 1.1 ms at 1 ms', 'node_1ms',
              state_p99(run('node_1ms') or {}), 1.1, 'ms'),
    ]
    node, python = run('node_2ms'), run('python_2ms_gil')
    if node and python and state_p99(node) is not None and state_p99(python) is not None:
        ratio = state_p99(python) / state_p99(node)
        targets.append({'target': 'Python path under GIL pressure within 10 % of the node '
                                  '(exact lag p99)',
                        'scenario': 'python_2ms_gil vs node_2ms',
                        'measured': round(ratio, 3), 'limit': 1.1, 'unit': 'ratio',
                        'status': 'met' if ratio <= 1.1 else 'not met'})
    else:
        missing = 'python_2ms_gil' if not python else 'node_2ms'
        targets.append({'target': 'Python path under GIL pressure within 10 % of the node '
                                  '(exact lag p99)',
                        'scenario': 'python_2ms_gil vs node_2ms', 'status': 'not run',
                        'reason': not_run(missing), 'limit': 1.1, 'unit': 'ratio'})
    targets += [
        limit('bridge CPU ≤ 2 % of a core at 2 ms', 'node_2ms', cpu('node_2ms'), 2.0, '%'),
        limit('bridge CPU ≤ 4 % of a core at 1 ms', 'node_1ms', cpu('node_1ms'), 4.0, '%'),
        limit('16 robots ≤ 15 % of a core', 'robots_16', cpu('robots_16'), 15.0, '%'),
        limit('composed exact lag p99 ≤ one period (2 ms)', 'composed',
              state_p99(run('composed') or {}), 2.0, 'ms'),
    ]
    return targets


def fmt(value, digits=2):
    return '–' if value is None else f'{value:.{digits}f}'


def markdown(result: dict) -> str:
    """The results table, the targets, and the conditions, as Markdown."""
    lines = [
        '| Scenario | Exact lag p50 / p90 / p99 / max (ms) | Never reported | '
        'Target → cmd_pos p50 / p99 (ms) | Original method | Bridge CPU (% core) | '
        'RSS (MiB) | Wake-ups/s |',
        '|---|---|---|---|---|---|---|---|',
    ]
    for entry in result['scenarios']:
        if entry['status'] != 'run':
            lines.append(f"| {entry['title']} | {entry['status']}: {entry.get('reason', '')} "
                         '| | | | | | |')
            continue
        robot = entry['robots'][0]
        state, command = robot['state'], robot['command']
        lag, cmd = state['lag'] or {}, command['lag'] or {}
        original = robot['original_method']
        usage = bridge_usage(entry) or {}
        never = (f"{state['never_reported']} / {state['gazebo_messages']}"
                 + (' (by values)' if state['matched_by'] == 'values' else ''))
        lines.append(
            f"| {entry['title']} | {fmt(lag.get('p50_ms'))} / {fmt(lag.get('p90_ms'))} / "
            f"{fmt(lag.get('p99_ms'))} / {fmt(lag.get('max_ms'))} | {never} | "
            f"{fmt(cmd.get('p50_ms'))} / {fmt(cmd.get('p99_ms'))} | "
            f"{fmt(original and original['lag_ms'], 0)} ms, "
            f"{fmt(original and original['largest_gap_deg'])}° | "
            f"{fmt(usage.get('cpu_percent'), 1)} | {fmt(usage.get('rss_max_mib'), 1)} | "
            f"{fmt(usage.get('wakeups_per_s'), 0)} |")
    lines += ['', '| Target | Measured | Status |', '|---|---|---|']
    for target in result['targets']:
        measured = (f"{target['measured']} {target['unit']}" if 'measured' in target
                    else f"not run: {target.get('reason', '')}")
        lines.append(f"| {target['target']} | {measured} | {target['status']} |")
    machine = result['machine']
    lines += ['', f"Machine: {machine['cpus']} cores ({machine['cpu_model']}), "
                  f"load average {machine['load_average_before']} before, "
                  f"{machine['load_average_after']} after; {result['mode']} run, "
                  f"{result['timing']['duration_s']:.0f} s per scenario, first "
                  f"{result['timing']['skip_s']:.0f} s skipped."]
    return '\n'.join(lines) + '\n'


def cpu_model() -> str:
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or 'unknown'


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--quick', action='store_true',
                        help=f"{QUICK['duration_s']:.0f} s per scenario instead of "
                             f"{FULL['duration_s']:.0f} s (CI smoke)")
    parser.add_argument('--scenario', action='append', default=[],
                        help='run only this scenario (repeatable): ' + ', '.join(BY_NAME))
    parser.add_argument('--results-dir', type=Path, default=ROOT / 'bench' / 'results')
    parser.add_argument('--bin-dir', type=Path, required=True,
                        help='where gz-joint-sim, bench-monitor and the node were built')
    parser.add_argument('--no-plots', action='store_true')
    parser.add_argument('--keep-logs', action='store_true',
                        help='keep the processes\' logs also when every scenario ran')
    args = parser.parse_args()
    unknown = [name for name in args.scenario if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    selected = [BY_NAME[name] for name in args.scenario] or SCENARIOS
    for binary in ('gz-joint-sim', 'bench-monitor'):
        if not (args.bin_dir / binary).is_file():
            print(f'bench: {args.bin_dir / binary} is missing', file=sys.stderr)
            return 1

    # SIGTERM stops like Ctrl-C: the running scenario's processes are stopped on the way out.
    signal.signal(signal.SIGTERM, interrupt)
    timing = QUICK if args.quick else FULL
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
    result = {
        'created': stamp,
        'mode': 'quick' if args.quick else 'full',
        'timing': timing,
        'machine': {
            'cpus': os.cpu_count(), 'cpu_model': cpu_model(), 'kernel': platform.release(),
            'python': platform.python_version(), 'load_average_before': load_average(),
            'note': 'shared machine: other builds and tests ran at the same time; see each '
                    "scenario's load_average_before/after",
        },
        'method': {
            'clock': 'one monotonic clock in one monitor process (bench-monitor)',
            'state_lag': 'for every Gazebo joint-state message arriving at the monitor in the '
                         'window: arrival of the first get/joint_states report carrying it '
                         'minus the arrival of the Gazebo message. "stamp": the report\'s '
                         'header stamp equals the Gazebo message\'s sim-time stamp (bridge '
                         'run with joint_states_stamp: gazebo); "values": the report\'s '
                         'positions equal the Gazebo message\'s bit for bit, counting only '
                         'messages whose positions changed.',
            'publication_time': 'arrival at the monitor, which subscribes to the simulator '
                                'like the bridge; gazebo_delivery.delay_over_best bounds the '
                                'error (arrival − stamp, less its minimum over ±0.5 s)',
            'command_lag': 'target arrival on set/target_joint_positions at the monitor → '
                           'first cmd_pos message carrying each changed value (the last one)',
            'original_method': 'bridge_lag_monitor.py emulated on the recorded streams: Gazebo '
                               'throttled to 50 msg/s, rows every ≥20 ms on spin_once(5 ms), '
                               'best-alignment shift and largest gap at zero shift',
            'cpu': 'user+sys from /proc/<pid>/stat per second of the monotonic clock, % of '
                   'one core, over the window (after warm-up); RSS = VmRSS; wake-ups = '
                   'voluntary context switches of all threads',
            'simulator_real_time_factor': SIM_REAL_TIME_FACTOR,
            'phase': 'the simulator runs at real-time factor 0.9995, so the phase between its '
                     'steps and the bridge periods sweeps its whole range every 4 s (at 1.0 '
                     'it would stay at its random starting value for the whole run)',
            'monitor_scheduling': ' '.join(monitor_priority()) or 'normal (no real-time '
                                  'priority granted)',
        },
        'scenarios': [],
    }
    work_dir = Path(tempfile.mkdtemp(prefix='sas_bench_'))
    by_name = {}
    try:
        for index, scenario in enumerate(selected):
            entry = run_scenario(scenario, index, timing, args.bin_dir, work_dir)
            by_name[scenario.name] = entry
            result['scenarios'].append(entry)
            print(summary_line(entry), flush=True)
    except KeyboardInterrupt:
        print(f'bench: interrupted; no results written (logs in {work_dir})', file=sys.stderr)
        return 130
    result['machine']['load_average_after'] = load_average()
    result['targets'] = evaluate_targets(by_name)
    args.results_dir.mkdir(parents=True, exist_ok=True)
    json_path = args.results_dir / f'{stamp}.json'
    json_path.write_text(json.dumps(result, indent=1, ensure_ascii=False) + '\n')
    table = markdown(result)
    (args.results_dir / f'{stamp}.md').write_text(table)
    if not args.no_plots:
        sys.path.insert(0, str(Path(__file__).parent))
        import plot
        for path in plot.plot_all(result, args.results_dir / stamp):
            print(f'plot: {path}')
    print(table)
    failed = [e['name'] for e in result['scenarios'] if e['status'] == 'failed']
    if failed or args.keep_logs:
        print(f'results: {json_path} (logs in {work_dir})')
    else:
        shutil.rmtree(work_dir, ignore_errors=True)
        print(f'results: {json_path}')
    if failed:
        print(f"bench: failed scenarios: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def interrupt(signum, _frame):
    raise KeyboardInterrupt(f'signal {signum}')


def summary_line(entry: dict) -> str:
    if entry['status'] != 'run':
        return f"    {entry['status']}: {entry.get('reason', '')}"
    robot = entry['robots'][0]
    lag = robot['state']['lag'] or {}
    usage = bridge_usage(entry) or {}
    return (f"    exact lag p50 {fmt(lag.get('p50_ms'))} p99 {fmt(lag.get('p99_ms'))} ms, "
            f"never reported {robot['state']['never_reported']}/"
            f"{robot['state']['gazebo_messages']}, bridge CPU "
            f"{fmt(usage.get('cpu_percent'), 1)} %, original: "
            f"{(robot['original_method'] or {}).get('printed', '–')}")


if __name__ == '__main__':
    sys.exit(main())
