"""The benchmark's reporting: what a scenario's measurements sum up to (the result's
`summary`, the controllers side by side), the targets judged against them, the Markdown table,
the one-line summaries printed while it runs, and `render` (a result file's table and plots).
bench/run.py measures; this only reads what it recorded.
"""

import json
import re
import sys
from pathlib import Path

from scenarios import SERVER_KINDS

def slim(measured: dict) -> dict:
    """The monitor's result without the CDFs nobody plots (secondary figures, robots after the
    first), to keep result files small; percentiles stay. The full result stays in the logs."""
    for index, robot in enumerate(measured['robots']):
        secondary = [robot['state'].get('until_published'), robot['gazebo_delivery'].get(
            'delay_over_best'), (robot.get('state_by_values') or {}).get('lag')]
        if index > 0:
            secondary += [robot['state'].get('lag'), (robot.get('command') or {}).get('lag')]
        secondary += [read.get('lag') for read in (robot.get('reads') or {}).values()]
        for summary in secondary:
            if summary:
                summary.pop('cdf', None)
        if robot.get('state_by_values'):
            robot['state_by_values'].pop('until_published', None)
    return measured


def client_comparison(entry: dict) -> dict:
    """Each controller's CPU and the exact lag of its reads (Gazebo message → the client saw
    it), side by side."""
    reads = entry['robots'][0].get('reads') or {}
    window_s = entry['window_s'][1] - entry['window_s'][0]
    compared = {}
    for label, read in reads.items():
        lag = read.get('lag') or {}
        cpu = process_cpu(entry, label)
        reads_per_s = read['reports'] / window_s
        compared[label] = {'cpu_percent': cpu,
                           'lag_p50_ms': lag.get('p50_ms'), 'lag_p99_ms': lag.get('p99_ms'),
                           'never_seen': read['never_reported'],
                           'gazebo_messages': read['gazebo_messages'],
                           'reads_per_s': round(reads_per_s, 1),
                           'cpu_us_per_read': (round(cpu * 1e4 / reads_per_s, 1)
                                               if cpu is not None and reads_per_s else None)}
    return compared


def bridge_usage(entry: dict):
    """CPU, RSS and wake-ups of the process(es) under test, summed over them."""
    bridges = [p for p in entry.get('processes', []) if p['label'] == 'bridge']
    if not bridges:
        return None
    if len(bridges) == 1:
        return bridges[0]

    def total(key):
        values = [p[key] for p in bridges]
        return None if None in values else round(sum(values), 3)

    return {'label': 'bridge', 'processes': len(bridges), 'cpu_percent': total('cpu_percent'),
            'rss_max_mib': total('rss_max_mib'), 'wakeups_per_s': total('wakeups_per_s')}


def state_of(entry: dict) -> dict:
    """The state lag of a scenario: its robot's, or all robots' pooled."""
    pooled = entry.get('all_robots')
    if pooled:
        return {**pooled, 'matched_by': entry['robots'][0]['state']['matched_by']}
    return entry['robots'][0]['state']


def state_p99(entry: dict):
    if entry.get('status') != 'run':
        return None
    lag = state_of(entry)['lag']
    return lag['p99_ms'] if lag else None


def process_cpu(entry: dict, label: str):
    """Mean CPU (% of a core) of the watched process labelled `label`, summed if several."""
    values = [p.get('cpu_percent') for p in entry.get('processes', []) if p['label'] == label]
    if not values or None in values:
        return None
    return round(sum(values), 3)


def gazebo_rate_hz(entry: dict):
    """Gazebo joint-state messages per second that the scenario's robots were reported from
    (all robots; a composite counts its first part's), over the monitor's window."""
    state = state_of(entry)
    start, end = entry.get('window_s') or (None, None)
    if not state.get('gazebo_messages') or start is None or end <= start:
        return None
    return state['gazebo_messages'] / (end - start)


def scenario_summary(entry: dict) -> dict | None:
    """The figures compared across runs (the result's `summary`), None if it did not run."""
    if entry.get('status') != 'run':
        return None
    if entry.get('kind') in SERVER_KINDS:
        return server_summary(entry)
    state = state_of(entry)
    lag = state['lag'] or {}
    command = (entry['robots'][0].get('command') or {}).get('lag') or {}
    usage = bridge_usage(entry) or {}
    messages = state.get('gazebo_messages') or 0
    rate = gazebo_rate_hz(entry)
    wakeups = usage.get('wakeups_per_s')
    return {
        'lag_p99_ms': lag.get('p99_ms'),
        'lag_p50_ms': lag.get('p50_ms'),
        'never_reported_share': (round(state['never_reported'] / messages, 6)
                                 if messages else None),
        'cpu_percent': usage.get('cpu_percent'),
        'wakeups_per_gazebo_message': (round(wakeups / rate, 3)
                                       if wakeups is not None and rate else None),
        'timer_floor_cpu_percent': process_cpu(entry, 'timer_floor'),
        'transport_floor_cpu_percent': process_cpu(entry, 'transport_floor'),
        'bridge_floor_cpu_percent': process_cpu(entry, 'bridge_floor'),
        'limits_rate_hz': entry['robots'][0].get('limits_rate_hz'),
        'command_p99_ms': command.get('p99_ms'),
    }


def thread_wakeups(usage: dict, name: str):
    """Wake-ups per second of a process's threads named `name`."""
    threads = [t for t in usage.get('by_thread') or [] if t['name'] == name]
    return round(sum(t['wakeups_per_s'] for t in threads), 1) if threads else None


def server_summary(entry: dict) -> dict:
    """The figures of a server scenario compared across runs."""
    usage = bridge_usage(entry) or {}
    if entry['kind'] == 'object_server':
        wakeups, rate = usage.get('wakeups_per_s'), entry.get('gazebo_rate_hz')
        set_to_get = entry.get('set_to_get') or {}
        return {
            'cpu_percent': usage.get('cpu_percent'),
            'rss_max_mib': usage.get('rss_max_mib'),
            'wakeups_per_s': wakeups,
            'wakeups_per_gazebo_message': (round(wakeups / rate, 3)
                                           if wakeups is not None and rate else None),
            'gazebo_rate_hz': rate,
            'get_pose_rate_hz': entry.get('get_pose_rate_hz'),
            'set_rate_hz': entry.get('set_rate_hz'),
            'set_to_get_p50_ms': set_to_get.get('p50_ms'),
            'set_to_get_p99_ms': set_to_get.get('p99_ms'),
            'transport_floor_cpu_percent': process_cpu(entry, 'transport_floor'),
            'monitor_cpu_percent': process_cpu(entry, 'monitor'),
            # The server's wake-ups not due to messages: gz-transport's discovery thread.
            'gz_discovery_wakeups_per_s': thread_wakeups(usage, 'gz-discovery'),
            'gz_receive_wakeups_per_s': thread_wakeups(usage, 'gz-receive'),
        }
    ros, floor = entry.get('ros') or {}, entry.get('floor') or {}

    def pick(path, key, field):
        return (path.get(key) or {}).get(field)

    return {
        'start_to_clock_p50_ms': pick(ros, 'first_advanced_clock', 'p50_ms'),
        'start_to_clock_p99_ms': pick(ros, 'first_advanced_clock', 'p99_ms'),
        'start_to_clock_max_ms': pick(ros, 'first_advanced_clock', 'max_ms'),
        'trigger_response_p50_ms': pick(ros, 'response', 'p50_ms'),
        'trigger_response_p99_ms': pick(ros, 'response', 'p99_ms'),
        'floor_start_to_clock_p50_ms': pick(floor, 'first_advanced_clock', 'p50_ms'),
        'floor_start_to_clock_p99_ms': pick(floor, 'first_advanced_clock', 'p99_ms'),
        'floor_start_to_clock_max_ms': pick(floor, 'first_advanced_clock', 'max_ms'),
        'floor_response_p50_ms': pick(floor, 'response', 'p50_ms'),
        'floor_response_p99_ms': pick(floor, 'response', 'p99_ms'),
        'ratio_to_floor': entry.get('ratio_to_floor'),
        'failures': len(ros.get('failures') or []) + len(floor.get('failures') or []),
        'cpu_percent': usage.get('cpu_percent'),
        'rss_max_mib': usage.get('rss_max_mib'),
    }


def evaluate_targets(scenarios: dict) -> list[dict]:
    """Issue 20's targets (per-message cost at the floor, 16 robots, the composed robot), and
    the loaded-machine and Python ones of issue 14, each met / not met / not run with its
    value."""
    summary = {name: scenario_summary(entry) for name, entry in scenarios.items()}

    def not_run(name):
        entry = scenarios.get(name)
        if entry is None:
            return 'not selected in this run'
        return entry.get('reason', entry.get('status'))

    def value(name, key):
        return (summary.get(name) or {}).get(key)

    def limit(target, name, measured, bound, unit):
        if measured is None:
            return {'target': target, 'scenario': name, 'status': 'not run',
                    'reason': not_run(name.split(' ')[0]), 'limit': bound, 'unit': unit}
        return {'target': target, 'scenario': name, 'measured': round(measured, 4),
                'limit': bound, 'unit': unit, 'status': 'met' if measured <= bound else 'not met'}

    def ratio(a, b):
        return a / b if a is not None and b else None

    node_cpu = value('node_2ms', 'cpu_percent')

    def client_figure(kind, key, scenario='node_2ms_clients'):
        entry = scenarios.get(scenario) or {}
        return (entry.get('client_comparison') or {}).get(f'client_{kind}', {}).get(key)

    gil, node = value('python_2ms_gil', 'lag_p99_ms'), value('node_2ms', 'lag_p99_ms')
    return [
        limit('node_2ms: CPU ≤ 1.5× the bridge floor', 'node_2ms',
              ratio(node_cpu, value('node_2ms', 'bridge_floor_cpu_percent')), 1.5,
              '× bridge floor'),
        limit('node_2ms: CPU ≤ 2.5× the transport floor', 'node_2ms',
              ratio(node_cpu, value('node_2ms', 'transport_floor_cpu_percent')), 2.5,
              '× transport floor'),
        limit('node_2ms: wake-ups per Gazebo message ≤ 3', 'node_2ms',
              value('node_2ms', 'wakeups_per_gazebo_message'), 3.0, 'wake-ups'),
        limit('node_2ms: exact lag p99 ≤ 0.5 ms', 'node_2ms', node, 0.5, 'ms'),
        limit('robots_16: never reported ≤ 1 %', 'robots_16',
              value('robots_16', 'never_reported_share'), 0.01, 'share'),
        limit('robots_16: exact lag p99 ≤ 2 ms', 'robots_16',
              value('robots_16', 'lag_p99_ms'), 2.0, 'ms'),
        limit('robots_16: CPU ≤ 4× one robot\'s (robots_1)', 'robots_16 vs robots_1',
              ratio(value('robots_16', 'cpu_percent'), value('robots_1', 'cpu_percent')), 4.0,
              'ratio'),
        # References: the same bounds applied to the bridge floor over the 16 robots (decode and
        # publish each state, nothing else): what no bridge on this machine can do better than.
        limit('(reference) robots_16_floor: exact lag p99 ≤ 2 ms', 'robots_16_floor',
              value('robots_16_floor', 'lag_p99_ms'), 2.0, 'ms'),
        limit('(reference) robots_16_floor: CPU ≤ 4× the one-robot bridge floor beside it',
              'robots_16_floor', ratio(value('robots_16_floor', 'cpu_percent'),
                                       value('robots_16_floor', 'bridge_floor_cpu_percent')),
              4.0, 'ratio'),
        limit('composed (composer node): never reported ≤ 1 %', 'composed',
              value('composed', 'never_reported_share'), 0.01, 'share'),
        limit('composed (composer node): exact lag p99 ≤ 1 ms', 'composed',
              value('composed', 'lag_p99_ms'), 1.0, 'ms'),
        limit('composed (composer node): CPU of all processes ≤ 2× node_2ms\'s',
              'composed vs node_2ms', ratio(value('composed', 'cpu_percent'), node_cpu), 2.0,
              'ratio'),
        limit('composed_in_process: never reported ≤ 1 %', 'composed_in_process',
              value('composed_in_process', 'never_reported_share'), 0.01, 'share'),
        limit('composed_in_process: exact lag p99 ≤ 1 ms', 'composed_in_process',
              value('composed_in_process', 'lag_p99_ms'), 1.0, 'ms'),
        # Issue 14's, still promised.
        limit('(issue 14) loaded machine, realtime_priority: never reported ≤ 1 %',
              'node_2ms_loaded_rt', value('node_2ms_loaded_rt', 'never_reported_share'), 0.01,
              'share'),
        limit('(issue 14) loaded machine, realtime_priority: exact lag p99 ≤ one period (2 ms)',
              'node_2ms_loaded_rt', value('node_2ms_loaded_rt', 'lag_p99_ms'), 2.0, 'ms'),
        limit('(issue 14) Python path under GIL pressure within 10 % of the node (exact lag '
              'p99)', 'python_2ms_gil vs node_2ms', ratio(gil, node), 1.1, 'ratio'),
        # Issue 23's: the module's RobotDriverClient against an rclpy client, same run.
        limit('RobotDriverClient CPU ≤ 1/5 of the rclpy client\'s', 'node_2ms_clients',
              ratio(client_figure('module', 'cpu_percent'),
                    client_figure('rclpy', 'cpu_percent')), 0.2, 'ratio'),
        limit('RobotDriverClient reads: exact lag p99 ≤ the rclpy subscriber\'s',
              'node_2ms_clients', ratio(client_figure('module', 'lag_p99_ms'),
                                        client_figure('rclpy', 'lag_p99_ms')), 1.0, 'ratio'),
        # The same with the node at the controllers' priority: neither client then preempts
        # the node inside its write (README, "Controllers").
        limit('RobotDriverClient CPU ≤ 1/5 of the rclpy client\'s (node at the controllers\' '
              'priority)', 'node_2ms_clients_rt',
              ratio(client_figure('module', 'cpu_percent', 'node_2ms_clients_rt'),
                    client_figure('rclpy', 'cpu_percent', 'node_2ms_clients_rt')), 0.2, 'ratio'),
        limit('RobotDriverClient reads: exact lag p99 ≤ the rclpy subscriber\'s (node at the '
              'controllers\' priority)', 'node_2ms_clients_rt',
              ratio(client_figure('module', 'lag_p99_ms', 'node_2ms_clients_rt'),
                    client_figure('rclpy', 'lag_p99_ms', 'node_2ms_clients_rt')), 1.0, 'ratio'),
        # Issue 33's: the object server with two entities at 100 Hz poses costs a few % of a
        # core at most (3 % taken), publishing on change or every message. (Moving them with
        # 100 set/pose calls a second, object_server_2_moving, is beyond the figure.)
        *(limit(f'{name}: object server CPU ≤ 3 % of a core', name,
                value(name, 'cpu_percent'), 3.0, '% core')
          for name in ('object_server_2', 'object_server_2_unchanged')),
        # The world-control round trip has no bound in the issue (its p50/p99 are the
        # figure); this benchmark's: the ROS path's p99 within 2x the direct call's, same run.
        limit('world_control: start_simulation → first advanced clock p99 ≤ 2× the direct '
              'call\'s (floor)', 'world_control',
              ((value('world_control', 'ratio_to_floor') or {})
               .get('first_advanced_clock_p99')), 2.0, '× floor'),
    ]


def compact_json(value) -> str:
    """Indented JSON with each innermost list of numbers on one line (samples stay short)."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    numbers = re.compile(r'\[\s*(-?[\d.eE+-]+(?:,\s*-?[\d.eE+-]+)*)\s*\]')
    return numbers.sub(lambda m: '[' + ', '.join(x.strip() for x in m.group(1).split(','))
                       + ']', text) + '\n'


def fmt(value, digits=2):
    return '–' if value is None else f'{value:.{digits}f}'


def markdown(result: dict) -> str:
    """The results table, the targets, and the conditions, as Markdown."""
    lines = [
        '| Scenario | Exact lag p50 / p90 / p99 / max (ms) | Never reported | '
        'Target → cmd_pos p50 / p99 (ms) | Original method | Bridge CPU (% core) | '
        'Timer / transport / bridge floor (% core) | RSS (MiB) | Wake-ups/s (per Gazebo '
        'message) |',
        '|---|---|---|---|---|---|---|---|---|',
    ]
    for entry in result['scenarios']:
        if entry.get('kind') in SERVER_KINDS:
            continue
        if entry['status'] != 'run':
            lines.append(f"| {entry['title']} | {entry['status']}: {entry.get('reason', '')} "
                         '| | | | | | | |')
            continue
        robot = entry['robots'][0]
        state, command = state_of(entry), robot['command'] or {}
        lag, cmd = state['lag'] or {}, command.get('lag') or {}
        original = robot['original_method']
        usage = bridge_usage(entry) or {}
        per_message = (scenario_summary(entry) or {}).get('wakeups_per_gazebo_message')
        never = (f"{state['never_reported']} / {state['gazebo_messages']}"
                 + (' (by values)' if state['matched_by'] == 'values' else ''))
        lines.append(
            f"| {entry['title']} | {fmt(lag.get('p50_ms'))} / {fmt(lag.get('p90_ms'))} / "
            f"{fmt(lag.get('p99_ms'))} / {fmt(lag.get('max_ms'))} | {never} | "
            f"{fmt(cmd.get('p50_ms'))} / {fmt(cmd.get('p99_ms'))} | "
            f"{fmt(original and original['lag_ms'], 0)} ms, "
            f"{fmt(original and original['largest_gap_deg'])}° | "
            f"{fmt(usage.get('cpu_percent'), 1)} | "
            f"{fmt(process_cpu(entry, 'timer_floor'), 1)} / "
            f"{fmt(process_cpu(entry, 'transport_floor'), 1)} / "
            f"{fmt(process_cpu(entry, 'bridge_floor'), 1)} | "
            f"{fmt(usage.get('rss_max_mib'), 1)} | "
            f"{fmt(usage.get('wakeups_per_s'), 0)} ({fmt(per_message)}) |")
    lines += server_tables(result)
    lines += ['', '| Target | Measured | Status |', '|---|---|---|']
    for target in result['targets']:
        digits = {'ratio': 3, 'ms': 3, 'share': 4, 'wake-ups': 2, '× bridge floor': 2,
                  '× transport floor': 2, '× floor': 3, '% core': 2}.get(target['unit'], 1)
        measured = (f"{target['measured']:.{digits}f} {target['unit']} "
                    f"(limit {target['limit']} {target['unit']})" if 'measured' in target
                    else f"not run: {target.get('reason', '')}")
        lines.append(f"| {target['target']} | {measured} | {target['status']} |")
    machine = result['machine']
    realtime = ' with the bridge at real-time priority' if result['bridge_realtime'] else ''
    scheduling = ', '.join(f'{role} {policy}'
                           for role, policy in result['method']['scheduling'].items())
    lines += ['', f"Machine: {machine['cpus']} cores ({machine['cpu_model']}), "
                  f"load average {machine['load_average_before']} before, "
                  f"{machine['load_average_after']} after; {result['mode']} run{realtime}, "
                  f"{result['timing']['duration_s']:.0f} s per scenario, first "
                  f"{result['timing']['skip_s']:.0f} s skipped; scheduling: {scheduling}."]
    return '\n'.join(lines) + '\n'


def server_tables(result: dict) -> list[str]:
    """The servers' tables (issue 33), if any of their scenarios was selected."""
    entries = [e for e in result['scenarios'] if e.get('kind') in SERVER_KINDS]
    lines = []
    objects = [e for e in entries if e['kind'] == 'object_server']
    if objects:
        lines += ['', '| Object server scenario | Server CPU (% core) | Transport floor (% core) | '
                  'RSS (MiB) | Wake-ups/s (per Gazebo message) | Gazebo poses/s | get/pose/s '
                  '(both entities) | set/pose → get/pose p50 / p99 (ms) | Monitor CPU (% core) |',
                  '|---|---|---|---|---|---|---|---|---|']
        for entry in objects:
            if entry['status'] != 'run':
                lines.append(f"| {entry['title']} | {entry['status']}: "
                             f"{entry.get('reason', '')} | | | | | | | |")
                continue
            summary = server_summary(entry)
            moved = (f"{fmt(summary['set_to_get_p50_ms'])} / {fmt(summary['set_to_get_p99_ms'])}"
                     if entry.get('set_rate_hz') else '–')
            lines.append(
                f"| {entry['title']} | {fmt(summary['cpu_percent'])} | "
                f"{fmt(summary['transport_floor_cpu_percent'])} | "
                f"{fmt(summary['rss_max_mib'], 1)} | {fmt(summary['wakeups_per_s'], 0)} "
                f"({fmt(summary['wakeups_per_gazebo_message'])}) | "
                f"{fmt(summary['gazebo_rate_hz'], 1)} | {fmt(summary['get_pose_rate_hz'], 1)} | "
                f"{moved} | {fmt(summary['monitor_cpu_percent'])} |")
    for entry in (e for e in entries if e['kind'] == 'world_control'):
        if entry['status'] != 'run':
            lines += ['', f"World control: {entry['status']}: {entry.get('reason', '')}"]
            continue
        lines += ['', '| World control (' + str(entry.get('cycles')) + ' round trips each, '
                  'interleaved) | start → first advanced clock p50 / p99 / max (ms) | '
                  'response p50 / p99 / max (ms) | failures |', '|---|---|---|---|']
        for label, key in (('start_simulation (ROS Trigger → simulator server → Gazebo)', 'ros'),
                           ('floor: the same WorldControl called directly (gz-transport)',
                            'floor')):
            path = entry.get(key) or {}
            clock, response = path.get('first_advanced_clock') or {}, path.get('response') or {}
            lines.append(f"| {label} | {fmt(clock.get('p50_ms'))} / {fmt(clock.get('p99_ms'))} / "
                         f"{fmt(clock.get('max_ms'))} | {fmt(response.get('p50_ms'))} / "
                         f"{fmt(response.get('p99_ms'))} / {fmt(response.get('max_ms'))} | "
                         f"{len(path.get('failures') or [])} |")
        ratios = entry.get('ratio_to_floor') or {}
        lines += ['', f"World control, ROS path ÷ floor: first advanced clock p50 "
                      f"{fmt(ratios.get('first_advanced_clock_p50'))}×, p99 "
                      f"{fmt(ratios.get('first_advanced_clock_p99'))}×; response p50 "
                      f"{fmt(ratios.get('response_p50'))}×, p99 "
                      f"{fmt(ratios.get('response_p99'))}×. Gazebo's clock: "
                      f"{fmt(entry.get('clock_rate_hz'), 0)} messages/s."]
    return lines


def render(json_path: Path, plots: bool) -> str:
    """Writes <stem>.md (the table) and, with `plots`, <stem>-*.png next to a result; prints
    and returns the table."""
    result = json.loads(json_path.read_text())
    table = markdown(result)
    json_path.with_suffix('.md').write_text(table)
    if plots:
        sys.path.insert(0, str(Path(__file__).parent))
        import plot
        for path in plot.plot_all(result, json_path.with_suffix('')):
            print(f'plot: {path}')
    print(table)
    return table


def summary_line(entry: dict) -> str:
    if entry['status'] != 'run':
        return f"    {entry['status']}: {entry.get('reason', '')}"
    if entry.get('kind') == 'object_server':
        summary = server_summary(entry)
        return (f"    object server CPU {fmt(summary['cpu_percent'])} % "
                f"(transport floor {fmt(summary['transport_floor_cpu_percent'])} %), "
                f"{fmt(summary['wakeups_per_gazebo_message'])} wake-ups per Gazebo message, "
                f"get/pose {fmt(summary['get_pose_rate_hz'], 1)}/s of "
                f"{fmt(summary['gazebo_rate_hz'], 1)} Gazebo poses/s, RSS "
                f"{fmt(summary['rss_max_mib'], 1)} MiB, monitor CPU "
                f"{fmt(summary['monitor_cpu_percent'])} %")
    if entry.get('kind') == 'world_control':
        summary = server_summary(entry)
        return (f"    start → first advanced clock p50 {fmt(summary['start_to_clock_p50_ms'])} "
                f"p99 {fmt(summary['start_to_clock_p99_ms'])} max "
                f"{fmt(summary['start_to_clock_max_ms'])} ms; direct call (floor) p50 "
                f"{fmt(summary['floor_start_to_clock_p50_ms'])} p99 "
                f"{fmt(summary['floor_start_to_clock_p99_ms'])} ms; failures "
                f"{summary['failures']}")
    robot = entry['robots'][0]
    state = state_of(entry)
    lag = state['lag'] or {}
    usage = bridge_usage(entry) or {}
    clients = ''.join(
        f"\n    {label}: CPU {fmt(c['cpu_percent'], 1)} % ({fmt(c['cpu_us_per_read'], 0)} µs per "
        f"read, {fmt(c['reads_per_s'], 0)} reads/s), reads exact lag p50 "
        f"{fmt(c['lag_p50_ms'])} p99 {fmt(c['lag_p99_ms'])} ms, never seen "
        f"{c['never_seen']}/{c['gazebo_messages']}"
        for label, c in (entry.get('client_comparison') or {}).items())
    return (f"    exact lag p50 {fmt(lag.get('p50_ms'))} p99 {fmt(lag.get('p99_ms'))} ms, "
            f"never reported {state['never_reported']}/"
            f"{state['gazebo_messages']}, bridge CPU "
            f"{fmt(usage.get('cpu_percent'), 1)} %, original: "
            f"{(robot['original_method'] or {}).get('printed', '–')}{clients}")
