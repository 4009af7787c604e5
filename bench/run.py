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
<timestamp>.md, and prints the table. The scenarios are in scenarios.py, the summaries, targets
and tables in report.py; this module orchestrates: the processes of each scenario, its
parameters and isolation, and the run.
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
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from robots_world import NotAvailable, robots_world, robots_world_states_topic
# What is run (scenarios.py) and how it is reported (report.py); this module runs it.
from report import (client_comparison, compact_json, evaluate_targets, render, scenario_summary,
                    slim, summary_line)
from scenarios import (BY_NAME, CLIENT, CLIENT_READER, CLIENT_READERS, CONFIG,
                       ENVIRONMENT_PRIORITY, FLOOR_TOPIC, FULL, GAZEBO_RATE_HZ, GIL_HOG,
                       GIL_HOG_THREAD, LONGBOY_WORLD, MONITOR_PRIORITY, OBJECT_SERVER,
                       POSE_RATE_HZ, PYTHON, PYTHON_LOOP, PYTHON_SCRIPT, QUICK, READY_TIMEOUT_S,
                       ROOT, SCENARIOS, SERVER_KINDS, SIM_REAL_TIME_FACTOR, SIMULATOR_SERVER,
                       STOP_GRACE_S, TRAJECTORY_S, UR3E_WORLD, WORLD_CONTROL_CYCLES, Scenario,
                       ur3e_parameters)


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
            signal_group(proc, signal.SIGINT)
        deadline = time.monotonic() + STOP_GRACE_S
        for _, proc in self.started:
            try:
                proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        for _, proc in self.started:
            if signal_group(proc, signal.SIGKILL):
                proc.wait()


def signal_group(proc: subprocess.Popen, signum: int) -> bool:
    """Sends `signum` to the session `proc` leads, if it still runs; whether it did."""
    if proc.poll() is not None:
        return False
    try:
        os.killpg(proc.pid, signum)
    except ProcessLookupError:
        pass
    return True


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


@dataclass
class Plan:
    """What a scenario starts and what the monitor watches."""
    world: Path
    bridges: list            # [(label, command line)]: the processes under test
    clients: list            # [(label, robot topic)]: joint_interface_example_rclpy.py instances
    robots: list             # the monitor's robot specs
    resource_path: Path | None = None  # extra GZ_SIM_RESOURCE_PATH entry (generated models)
    readers: list = field(default_factory=list)  # [(kind, robot)]: client_reader.py instances


def robot_spec(name: str, parameters: dict, match_by: str, **extra) -> dict:
    return {'name': name, 'joint_states_topic': parameters['joint_states_topic'],
            'joint_positions_topic_prefix': parameters['joint_positions_topic_prefix'],
            'joint_names': parameters['joint_names'], 'match_by': match_by, **extra}


class NoAliases(yaml.SafeDumper):
    """rcl's params-file parser knows no YAML anchors: repeat shared values instead."""

    def ignore_aliases(self, data):
        return True


def write_params(path: Path, blocks: dict) -> Path:
    """A ROS params file: {node name: parameters}."""
    path.write_text(yaml.dump({node: {'ros__parameters': parameters}
                               for node, parameters in blocks.items()}, Dumper=NoAliases))
    return path


def node_help(bin_dir: Path) -> str:
    node = bin_dir / 'sas_robot_driver_ros_gazebo_node'
    if not node.is_file():
        raise NotAvailable(f'{node} is missing (build bridge-node)')
    return subprocess.run([node, '--help'], capture_output=True, text=True).stdout


def plan(scenario: Scenario, bin_dir: Path, log_dir: Path) -> Plan:
    """The processes and robots of a scenario; NotAvailable if its pieces do not exist."""
    common = {'thread_sampling_time_sec': scenario.period_s, 'joint_states_stamp': 'gazebo',
              **(scenario.parameters or {})}
    node = bin_dir / 'sas_robot_driver_ros_gazebo_node'

    def ros_args(node_name: str, params: Path) -> list:
        return ['--ros-args', '-r', f'__node:={node_name}', '--params-file', params]

    if scenario.kind in ('node', 'python_script', 'python_loop'):
        parameters = {**ur3e_parameters(), **common}
        params = write_params(log_dir / 'params.yaml', {'ur3e_1': parameters})
        if scenario.kind == 'node':
            node_help(bin_dir)
            bridge, match_by = [node], 'stamp'
        elif scenario.kind == 'python_script':
            if not PYTHON_SCRIPT.is_file():
                raise NotAvailable(f'{PYTHON_SCRIPT.relative_to(ROOT)} does not exist yet '
                                   '(the Python issue is in progress)')
            bridge, match_by = [PYTHON, *hog_wrapper(scenario), PYTHON_SCRIPT], \
                python_script_match()
        else:
            check_module()
            bridge, match_by = [PYTHON, *hog_wrapper(scenario), PYTHON_LOOP], 'values'
        clients = [('client', '/ur3e_1')] if scenario.client else []
        if scenario.client_readers:
            check_module()
        readers = ([(kind, 'ur3e_1') for kind in CLIENT_READERS]
                   if scenario.client_readers else [])
        drive = scenario.targets and not (scenario.client or readers)
        return Plan(UR3E_WORLD, [('bridge', [*bridge, *ros_args('ur3e_1', params)])], clients,
                    [robot_spec('ur3e_1', parameters, match_by, drive=drive,
                                commands=scenario.targets)], readers=readers)

    if scenario.kind == 'multi_robot':
        if not scenario.floor_as_bridge and 'robots' not in node_help(bin_dir):
            raise NotAvailable('the node does not take several robots (`robots`) yet (issue 8)')
        models = log_dir / 'models'
        world = robots_world(scenario.robots, models)
        ur3e = ur3e_parameters()
        names = [f'ur3e_{k}' for k in range(1, scenario.robots + 1)]
        groups = {name: {'joint_names': ur3e['joint_names'],
                         'joint_positions_topic_prefix': f'/model/{name}/joint/',
                         'joint_states_topic': robots_world_states_topic(name)}
                  for name in names}
        if scenario.floor_as_bridge:
            pairs = [arg for name in names for arg in (
                '--topic', groups[name]['joint_states_topic'],
                '--ros-topic', f'/{name}/get/joint_states')]
            robots = [robot_spec(name, groups[name], 'stamp', drive=False, commands=False,
                                 limits=False) for name in names]
            return Plan(world, [('bridge', [bin_dir / 'bench-floor', 'bridge', *pairs])], [],
                        robots, resource_path=models)
        params = write_params(log_dir / 'params.yaml',
                              {'bench_robots': {**common, 'robots': names, **groups}})
        # The monitor sends every robot's targets (one rclpy client per robot would swamp the
        # machine) and times the command path of the first robot only.
        robots = [robot_spec(name, groups[name], 'stamp', drive=True, commands=(k == 0))
                  for k, name in enumerate(names)]
        return Plan(world, [('bridge', [node, *ros_args('bench_robots', params)])], [], robots,
                    resource_path=models)

    if scenario.kind in ('composed', 'composed_in_process'):
        config = longboy_config()
        if config is None:
            raise NotAvailable('config/longboy.yaml (issue 8) does not exist yet')
        r820, ur3e = config['r820_sim'], config['ur3e_sim']
        composed = {'joint_names': r820['joint_names'] + ur3e['joint_names'],
                    'joint_positions_topic_prefix': r820['joint_positions_topic_prefix'],
                    'joint_states_topic': r820['joint_states_topic']}
        robots = [robot_spec('longboy_sim', composed, 'stamp', drive=not scenario.client)]
        if scenario.kind == 'composed_in_process':
            if 'composites' not in node_help(bin_dir):
                raise NotAvailable('the node does not compose robots in process yet (issue 8)')
            params = write_params(log_dir / 'params.yaml',
                                  {'longboy_robots': {**config['longboy_robots'], **common}})
            bridges = [('bridge', [node, *ros_args('longboy_robots', params)])]
        else:
            composer = bin_dir / 'sas_robot_driver_ros_composer_node'
            if not composer.is_file():
                raise NotAvailable('the composer node sas_robot_driver_ros_composer_node '
                                   '(issue 8) does not exist yet')
            node_help(bin_dir)
            params = write_params(log_dir / 'params.yaml', {
                'r820_sim': {**r820, **common}, 'ur3e_sim': {**ur3e, **common},
                'longboy_sim': {**config['longboy_sim'], **common}})
            bridges = [('bridge', [node, *ros_args('r820_sim', params)]),
                       ('bridge', [node, *ros_args('ur3e_sim', params)]),
                       ('bridge', [composer, *ros_args('longboy_sim', params)])]
        clients = [('client', '/longboy_sim')] if scenario.client else []
        return Plan(LONGBOY_WORLD, bridges, clients, robots)
    raise ValueError(f'unknown scenario kind {scenario.kind}')


def longboy_config():
    """The parameter blocks of config/longboy.yaml, or None if it does not exist."""
    path = ROOT / 'config' / 'longboy.yaml'
    if not path.is_file():
        return None
    with open(path) as f:
        return {node: block['ros__parameters'] for node, block in yaml.safe_load(f).items()}


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
                 work_dir: Path, priorities: dict) -> dict:
    if scenario.kind in SERVER_KINDS:
        return run_server_scenario(scenario, index, timing, bin_dir, work_dir, priorities)
    entry = {'name': scenario.name, 'title': scenario.title, 'period_s': scenario.period_s,
             'kind': scenario.kind, 'gil_hog': scenario.gil_hog, 'robots_in_process':
             scenario.robots, 'bridge_parameters': scenario.parameters or {}}
    log_dir = work_dir / scenario.name
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        setup = plan(scenario, bin_dir, log_dir)
    except NotAvailable as why:
        entry.update(status='not run', reason=str(why))
        return entry
    env, partition = isolated_env(scenario.name, index)
    env['ROS_LOG_DIR'] = str(log_dir / 'ros')
    resources = [str(setup.resource_path)] if setup.resource_path else []
    env['GZ_SIM_RESOURCE_PATH'] = ':'.join([*resources, str(ROOT / 'sdf')])
    entry['load_average_before'] = load_average()
    print(f'--- {scenario.name}: {scenario.title} ({timing["duration_s"]:.0f} s, '
          f'first {timing["skip_s"]:.0f} s skipped)', flush=True)
    with Processes(log_dir) as procs:
        sim = procs.start('simulator', [*priorities['environment'],
                                        bin_dir / 'gz-joint-sim', setup.world,
                                        '--partition', partition,
                                        '--real-time-factor', SIM_REAL_TIME_FACTOR], env)
        bridge_env = {**env, **(scenario.env or {})}
        bridges = [procs.start(f'{label}{k}', [*priorities['bridge'], *args], bridge_env)
                   for k, (label, args) in enumerate(setup.bridges)]
        clients = [procs.start(f'{label}{k}', [*priorities['environment'], PYTHON, CLIENT,
                                               '--wait', READY_TIMEOUT_S, '--ros-args', '-p',
                                               f'robot_topic_name:={topic}'], env)
                   for k, (label, topic) in enumerate(setup.clients)]
        # The controllers compared run ahead of the machine's load, as the seed's client: a
        # starved one would read fewer states and so spend less, and its lag would be the
        # load's. Their CPU then compares what each spends per state.
        readers = [(f'client_{kind}', log_dir / f'reads_{kind}.txt', robot)
                   for kind, robot in setup.readers]
        reader_procs = [procs.start(label, [*priorities['environment'], PYTHON, CLIENT_READER,
                                            label.removeprefix('client_'), '--robot',
                                            f'/{robot}', '--record', path, '--wait',
                                            READY_TIMEOUT_S], env)
                        for label, path, robot in readers]
        floor = bin_dir / 'bench-floor'
        floors = [procs.start('timer_floor', [floor, 'timer', '--hz', GAZEBO_RATE_HZ], env),
                  procs.start('transport_floor', [floor, 'transport', '--topic',
                                                  setup.robots[0]['joint_states_topic']], env),
                  procs.start('bridge_floor', [floor, 'bridge', '--topic',
                                               setup.robots[0]['joint_states_topic'],
                                               '--ros-topic', FLOOR_TOPIC], env)]
        load = ([procs.start('load', [floor, 'busy', '--threads', scenario.busy_threads], env)]
                if scenario.busy_threads else [])
        exclude = [GIL_HOG_THREAD] if scenario.gil_hog else []
        spec = {
            **timing,
            'ready_timeout_s': READY_TIMEOUT_S,
            'trajectory_s': TRAJECTORY_S,
            'partition': partition,
            'robots': setup.robots,
            'floor_topic': FLOOR_TOPIC,
            'watch': [
                *({'label': 'bridge', 'pid': p.pid, 'exclude_threads': exclude} for p in bridges),
                {'label': 'simulator', 'pid': sim.pid},
                *({'label': 'client', 'pid': p.pid} for p in clients),
                *({'label': label, 'pid': p.pid}
                  for (label, _, _), p in zip(readers, reader_procs)),
                {'label': 'timer_floor', 'pid': floors[0].pid},
                {'label': 'transport_floor', 'pid': floors[1].pid},
                {'label': 'bridge_floor', 'pid': floors[2].pid},
                *({'label': 'load', 'pid': p.pid} for p in load),
            ],
            'readers': [{'label': label, 'robot': robot, 'path': str(path)}
                        for label, path, robot in readers],
        }
        spec_file = log_dir / 'spec.json'
        spec_file.write_text(json.dumps(spec, indent=1))
        out_file = log_dir / 'monitor.json'
        monitor = procs.start('monitor', [*priorities['monitor'], bin_dir / 'bench-monitor',
                                          '--spec', spec_file, '--out', out_file], env)
        code = wait_monitor(monitor, log_dir / 'monitor.log', bridges,
                            READY_TIMEOUT_S + timing['duration_s'] + 60)
        bridges_alive = all(p.poll() is None for p in bridges)
        entry['load_average_after'] = load_average()
        bridge_logs = {f'bridge{k}': procs.log_tail(f'bridge{k}') for k in range(len(bridges))}
        if code != 0 or not out_file.exists():
            entry.update(status='failed',
                         reason=f'bench-monitor exited with {code}: '
                                f'{procs.log_tail("monitor", 5)}',
                         bridge_logs=bridge_logs,
                         client_logs={f'client{k}': procs.log_tail(f'client{k}', 5)
                                      for k in range(len(clients))})
            return entry
        entry.update(status='run', bridge_alive_at_end=bridges_alive,
                     **slim(json.loads(out_file.read_text())))
        if readers:
            entry['client_comparison'] = client_comparison(entry)
        if not bridges_alive:
            entry['bridge_logs'] = bridge_logs
    return entry


def server_block(node_name: str) -> dict:
    """A server's block of config/config.yaml (the shipped configuration)."""
    with open(CONFIG) as f:
        return dict(yaml.safe_load(f)[node_name]['ros__parameters'])


def run_server_scenario(scenario: Scenario, index: int, timing: dict, bin_dir: Path,
                        work_dir: Path, priorities: dict) -> dict:
    """Issue 33's servers: gz-joint-sim (100 Hz poses; paused for world control), the server
    under test with its block of config/config.yaml (plus the scenario's parameters, in a
    params file of its own: a file's node block would win over -p), and `bench-servers`, the
    monitor: it counts Gazebo's poses and the get/pose that arrive (and moves the entities, in
    object_server_2_moving), or times the world-control round trips against the direct call;
    and samples the server's, the simulator's, the floor's and its own CPU."""
    quick = timing['duration_s'] < FULL['duration_s']
    entry = {'name': scenario.name, 'title': scenario.title, 'kind': scenario.kind,
             'bridge_parameters': scenario.parameters or {}}
    log_dir = work_dir / scenario.name
    log_dir.mkdir(parents=True, exist_ok=True)
    node_name = OBJECT_SERVER if scenario.kind == 'object_server' else SIMULATOR_SERVER
    missing = [path for path in (bin_dir / node_name, bin_dir / 'bench-servers')
               if not path.is_file()]
    if missing:
        entry.update(status='not run', reason=f'{missing[0]} is missing')
        return entry
    block = {**server_block(node_name), **(scenario.parameters or {})}
    params = write_params(log_dir / 'params.yaml', {node_name: block})
    env, partition = isolated_env(scenario.name, index)
    env['ROS_LOG_DIR'] = str(log_dir / 'ros')
    env['GZ_SIM_RESOURCE_PATH'] = str(ROOT / 'sdf')
    entry['load_average_before'] = load_average()
    if scenario.kind == 'world_control':
        cycles = WORLD_CONTROL_CYCLES['quick' if quick else 'full']
        entry['cycles'] = cycles
        print(f'--- {scenario.name}: {scenario.title} ({cycles} round trips of each path)',
              flush=True)
    else:
        print(f'--- {scenario.name}: {scenario.title} ({timing["duration_s"]:.0f} s, first '
              f'{timing["skip_s"]:.0f} s skipped)', flush=True)
    with Processes(log_dir) as procs:
        sim = procs.start('simulator', [*priorities['environment'], bin_dir / 'gz-joint-sim',
                                        UR3E_WORLD, '--partition', partition,
                                        '--real-time-factor', SIM_REAL_TIME_FACTOR,
                                        '--pose-rate', POSE_RATE_HZ,
                                        *(['--paused'] if scenario.kind == 'world_control'
                                          else [])], env)
        server = procs.start('bridge0', [*priorities['bridge'], bin_dir / node_name,
                                         '--ros-args', '--params-file', params], env)
        watch = ['--watch', f'bridge={server.pid}', '--watch', f'simulator={sim.pid}']
        out_file = log_dir / 'monitor.json'
        common = ['--partition', partition, '--ready-timeout-s', READY_TIMEOUT_S,
                  '--out', out_file]
        if scenario.kind == 'object_server':
            floor = procs.start('transport_floor', [bin_dir / 'bench-floor', 'transport',
                                                    '--topic', block['get_pose_topic_name'],
                                                    '--pose-v'], env)
            watch += ['--watch', f'transport_floor={floor.pid}']
            command = ['poses', *common, *watch, '--pose-topic', block['get_pose_topic_name'],
                       *(a for e in block['entity_names'] for a in ('--entity', e)),
                       '--duration-s', timing['duration_s'], '--skip-s', timing['skip_s'],
                       '--set-rate-hz', scenario.set_rate_hz]
            timeout = READY_TIMEOUT_S + timing['duration_s'] + 60
        else:
            service = block['service_name']
            clock = service.removesuffix('/control') + '/clock'
            command = ['world-control', *common, *watch, '--control', service, '--clock', clock,
                       '--ros-prefix', f'/{node_name}', '--cycles', entry['cycles']]
            timeout = READY_TIMEOUT_S + entry['cycles'] * 2 + 60
        monitor = procs.start('monitor', [*priorities['monitor'], bin_dir / 'bench-servers',
                                          *command], env)
        code = wait_monitor(monitor, log_dir / 'monitor.log', [server], timeout)
        alive = server.poll() is None
        entry['load_average_after'] = load_average()
        if code != 0 or not out_file.exists():
            entry.update(status='failed',
                         reason=f'bench-servers exited with {code}: '
                                f'{procs.log_tail("monitor", 5)}',
                         bridge_logs={'bridge0': procs.log_tail('bridge0')})
            return entry
        measured = json.loads(out_file.read_text())
        for summary in (measured.get('set_to_get'), *(
                (measured.get(path) or {}).get(key) for path in ('ros', 'floor')
                for key in ('response', 'first_advanced_clock'))):
            if summary:
                summary['cdf'] = summary.get('cdf', [])[::4]  # plots need no more
        entry.update(status='run', bridge_alive_at_end=alive, **measured)
        if not alive:
            entry['bridge_logs'] = {'bridge0': procs.log_tail('bridge0')}
    return entry


def wait_monitor(monitor: subprocess.Popen, monitor_log: Path, bridges: list, timeout: float):
    """The monitor's exit status; None if it ran out of time, or if a bridge exited before
    the monitor started recording (it would only wait out its timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return monitor.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            pass
        bridge_gone = any(p.poll() is not None for p in bridges)
        if bridge_gone and 'recording' not in monitor_log.read_text(errors='replace'):
            return None
    return None


def scheduling(bridge_realtime: bool) -> dict:
    """The command prefix giving each role its priority; empty where not granted."""
    try:
        granted = subprocess.run([*MONITOR_PRIORITY, 'true'], capture_output=True).returncode == 0
    except FileNotFoundError:
        granted = False
    if not granted:
        return {'monitor': [], 'environment': [], 'bridge': []}
    return {'monitor': MONITOR_PRIORITY, 'environment': ENVIRONMENT_PRIORITY,
            'bridge': ENVIRONMENT_PRIORITY if bridge_realtime else []}


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
    parser.add_argument('--bin-dir', type=Path,
                        help='where gz-joint-sim, bench-monitor and the node were built')
    parser.add_argument('--render', type=Path, metavar='RESULT.json',
                        help='only redraw the table and plots of an existing result')
    parser.add_argument('--no-plots', action='store_true')
    parser.add_argument('--bridge-realtime', action='store_true',
                        help='run the bridge at real-time priority too (SCHED_FIFO 10), which '
                             'shields it from the rest of a loaded machine')
    parser.add_argument('--keep-logs', action='store_true',
                        help='keep the processes\' logs also when every scenario ran')
    args = parser.parse_args()
    if args.render:
        render(args.render, plots=not args.no_plots)
        return 0
    if args.bin_dir is None:
        parser.error('--bin-dir is required')
    unknown = [name for name in args.scenario if name not in BY_NAME]
    if unknown:
        parser.error(f"unknown scenario {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    selected = [BY_NAME[name] for name in args.scenario] or SCENARIOS
    for binary in ('gz-joint-sim', 'bench-monitor', 'bench-floor'):
        if not (args.bin_dir / binary).is_file():
            print(f'bench: {args.bin_dir / binary} is missing', file=sys.stderr)
            return 1

    # SIGTERM stops like Ctrl-C: the running scenario's processes are stopped on the way out.
    signal.signal(signal.SIGTERM, interrupt)
    timing = QUICK if args.quick else FULL
    priorities = scheduling(args.bridge_realtime)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime('%Y%m%dT%H%M%SZ')
    result = {
        'created': stamp,
        'mode': 'quick' if args.quick else 'full',
        'bridge_realtime': args.bridge_realtime,
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
                                'error (arrival − stamp, less its minimum over ±50 ms)',
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
            'scheduling': {role: ' '.join(prefix) or 'normal'
                           for role, prefix in priorities.items()},
        },
        'scenarios': [],
    }
    work_dir = Path(tempfile.mkdtemp(prefix='sas_bench_'))
    by_name = {}
    try:
        for index, scenario in enumerate(selected):
            entry = run_scenario(scenario, index, timing, args.bin_dir, work_dir, priorities)
            by_name[scenario.name] = entry
            result['scenarios'].append(entry)
            print(summary_line(entry), flush=True)
    except KeyboardInterrupt:
        print(f'bench: interrupted; no results written (logs in {work_dir})', file=sys.stderr)
        return 130
    result['machine']['load_average_after'] = load_average()
    result['targets'] = evaluate_targets(by_name)
    result['summary'] = {name: scenario_summary(entry) for name, entry in by_name.items()
                         if entry.get('status') == 'run'}
    args.results_dir.mkdir(parents=True, exist_ok=True)
    json_path = args.results_dir / f'{stamp}.json'
    json_path.write_text(compact_json(result))
    render(json_path, plots=not args.no_plots)
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


if __name__ == '__main__':
    sys.exit(main())
