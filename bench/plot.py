#!/usr/bin/env python3
"""Plots of a benchmark result (bench/run.py writes it): `plot.py RESULT.json` re-draws them.

- <stem>-trajectory.png: Gazebo vs reported position of the first joint, per scenario: the
  whole run as the original monitor sampled it (20 ms rows), and 100 ms at full rate;
- <stem>-lag-cdf.png: CDF of the exact Gazebo → report lag and of the target → cmd_pos lag;
- <stem>-cpu.png: bridge CPU per scenario (mean, per-second samples, split by thread kind).
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402

ZOOM_S = 0.1
THREAD_KINDS = [  # (label, predicate on the thread name), first match wins
    ('DDS (Fast DDS threads)', lambda name: name.startswith('dds.')),
    ('gz-transport (receive, discovery)', lambda name: name.startswith('gz-')),
    ('ROS executor', lambda name: name == 'ros-executor'),
    ('Python main thread (loop baseline: the loop)', lambda name: name == 'python (main)'),
    ('control loop (node main thread, loop-<robot>, sas-py-wait)',
     lambda name: name.endswith(' (main)') or name.startswith('loop-')
     or name == 'sas-py-wait'),
    ('other (ZeroMQ I/O, runtime, Python threads)', lambda name: True),
]


def ran(result: dict) -> list[dict]:
    """The bridge scenarios that ran (the servers' scenarios have no joint streams: their
    figures are in the table only)."""
    return [s for s in result['scenarios'] if s['status'] == 'run' and 'robots' in s]


def bridges(scenario: dict) -> list[dict]:
    """The processes under test (one, or several for the composer scenario)."""
    return [p for p in scenario['processes'] if p['label'] == 'bridge']


def bridge_cpu(scenario: dict):
    values = [p['cpu_percent'] for p in bridges(scenario)]
    return None if not values or None in values else sum(values)


def lag_of(scenario: dict, key: str):
    """A scenario's lag summary: `state` pooled over its robots, `command` of its first."""
    if key == 'state' and scenario.get('all_robots'):
        return scenario['all_robots']['lag']
    return (scenario['robots'][0][key] or {}).get('lag')


def plot_trajectories(result: dict, path: Path) -> Path | None:
    scenarios = [s for s in ran(result) if s.get('trajectory')]
    if not scenarios:
        return None
    fig, axes = plt.subplots(len(scenarios), 2, figsize=(12, 2.6 * len(scenarios)),
                             squeeze=False, gridspec_kw={'width_ratios': [2, 1]})
    for row, scenario in zip(axes, scenarios):
        trajectory = scenario['trajectory']
        rows = trajectory['original_rows']
        overview, zoom = row
        overview.plot([r[0] for r in rows], [r[1] for r in rows], lw=1.2, label='Gazebo')
        overview.plot([r[0] for r in rows], [r[2] for r in rows], lw=0.8, ls='--',
                      label='reported (get/joint_states)')
        overview.axvspan(0, scenario['skip_s'], color='0.9', lw=0)
        overview.set_title(f"{scenario['title']}: {trajectory['joint']} (20 ms rows)",
                           fontsize=9)
        overview.set_ylabel('deg')
        gazebo, reported = trajectory['gazebo'], trajectory['reported']
        if gazebo:
            start = gazebo[0][0]
            end = start + ZOOM_S
            window = [g for g in gazebo if g[0] <= end]
            zoom.step([(g[0] - start) * 1e3 for g in window], [g[1] for g in window],
                      where='post', label='Gazebo (arrival)')
            window = [r for r in reported if start <= r[0] <= end]
            zoom.step([(r[0] - start) * 1e3 for r in window], [r[1] for r in window],
                      where='post', ls='--', label='reported (arrival)')
        zoom.set_title(f'{ZOOM_S * 1e3:.0f} ms at full rate', fontsize=9)
        zoom.set_xlabel('ms')
    axes[0][0].legend(fontsize=8, loc='upper right')
    axes[0][1].legend(fontsize=8, loc='best')
    axes[-1][0].set_xlabel('s since the start of the recording (grey: warm-up, skipped)')
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def style(index: int) -> dict:
    """A colour and dash pattern per scenario, distinct for up to 20 scenarios."""
    return {'color': plt.get_cmap('tab10')(index % 10),
            'linestyle': ['-', '--'][index // 10 % 2]}


def cdf_plot(ax, scenarios: list[dict], key: str, title: str):
    limit = 0.0
    for index, scenario in enumerate(scenarios):
        lag = lag_of(scenario, key)
        if not lag:
            continue
        xs = [point[0] for point in lag['cdf']]
        ys = [point[1] for point in lag['cdf']]
        ax.plot(xs, ys, label=f"{scenario['name']} (p99 {lag['p99_ms']:.2f} ms)",
                **style(index))
        limit = max(limit, lag['p99_ms'])
    # The rare negative lag (the monitor's own Gazebo thread late) is off the left edge.
    ax.set_xlim(left=-0.25, right=max(limit * 1.4, 2.5))
    ax.set_ylim(0, 1.0)
    ax.axhline(0.99, color='0.6', lw=0.6, ls=':')
    ax.set_xlabel('ms')
    ax.set_ylabel('fraction ≤ x')
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6.5, loc='lower right')


def plot_lag_cdf(result: dict, path: Path) -> Path | None:
    scenarios = ran(result)
    if not scenarios:
        return None
    fig, (state, command) = plt.subplots(1, 2, figsize=(12, 4.6))
    cdf_plot(state, scenarios, 'state', 'Gazebo message → first report carrying it')
    cdf_plot(command, scenarios, 'command', 'target published → last changed cmd_pos')
    command.set_ylabel('')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_cpu(result: dict, path: Path) -> Path | None:
    scenarios = [s for s in ran(result) if bridge_cpu(s) is not None]
    if not scenarios:
        return None
    fig, ax = plt.subplots(figsize=(max(7.0, 0.85 * len(scenarios) + 3), 5.0))
    positions = range(len(scenarios))
    bottoms = [0.0] * len(scenarios)
    for label, matches in THREAD_KINDS:
        heights = []
        for scenario in scenarios:
            threads = [t for process in bridges(scenario) for t in process['by_thread']
                       if kind_of(t['name']) == label]
            heights.append(sum(t['cpu_percent'] for t in threads))
        ax.bar(positions, heights, bottom=bottoms, width=0.6, label=label)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    for x, scenario in zip(positions, scenarios):
        processes = bridges(scenario)
        if len(processes) == 1:
            samples = [sample[1] for sample in processes[0]['cpu_series']]
            ax.plot([x] * len(samples), samples, 'k.', ms=3, alpha=0.5)
        total = bridge_cpu(scenario)
        ax.annotate(f'{total:.1f} %', (x, total), textcoords='offset points', xytext=(0, 6),
                    ha='center', fontsize=8)
    for bound, text in ((2.0, 'target at 2 ms'), (4.0, 'target at 1 ms')):
        ax.axhline(bound, color='r', lw=0.7, ls='--')
        ax.annotate(text, (-0.45, bound), fontsize=6, color='r', va='bottom', ha='left')
    ax.set_xticks(list(positions), [s['name'] for s in scenarios], fontsize=8, rotation=30,
                  ha='right')
    ax.set_ylabel('bridge CPU, % of one core')
    ax.set_title('Bridge CPU after warm-up (bars: by thread kind, summed over the processes '
                 'under test; dots: each second)', fontsize=9)
    ax.legend(fontsize=7, loc='upper left', bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis='y', alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def kind_of(thread_name: str) -> str:
    return next(label for label, matches in THREAD_KINDS if matches(thread_name))


def plot_all(result: dict, stem: Path) -> list[Path]:
    """Draws every plot next to `stem` (a path without suffix); returns the files written."""
    drawn = [
        plot_trajectories(result, stem.with_name(stem.name + '-trajectory.png')),
        plot_lag_cdf(result, stem.with_name(stem.name + '-lag-cdf.png')),
        plot_cpu(result, stem.with_name(stem.name + '-cpu.png')),
    ]
    return [path for path in drawn if path is not None]


def main() -> int:
    if len(sys.argv) != 2:
        print('usage: plot.py RESULT.json', file=sys.stderr)
        return 2
    source = Path(sys.argv[1])
    result = json.loads(source.read_text())
    for path in plot_all(result, source.with_suffix('')):
        print(path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
