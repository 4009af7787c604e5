"""The benchmark's scenarios and the conditions they run under: the files each uses, the
timings of full and quick runs, the priorities of the pieces around the process under test, and
one `Scenario` per row of the result table (bench/run.py runs them, bench/report.py reports
them).
"""

from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


PYTHON = ROOT / '.venv' / 'bin' / 'python'


CLIENT = ROOT / 'scripts' / 'joint_interface_example_rclpy.py'


# The two controllers compared in node_2ms_clients (rclpy vs the module's RobotDriverClient).
CLIENT_READER = ROOT / 'bench' / 'client_reader.py'


CLIENT_READERS = ['rclpy', 'module']


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


# Real-time priorities (when the system grants them): the monitor above everything, so that its
# timestamps stay accurate on a loaded machine; the simulator and the client above ordinary
# processes, so that the machine's load disturbs the process under test and not the conditions
# it is tested in. The bridge runs as users run it, unless --bridge-realtime.
MONITOR_PRIORITY = ['chrt', '--fifo', '20']


ENVIRONMENT_PRIORITY = ['chrt', '--fifo', '10']


STOP_GRACE_S = 5.0


# Gazebo's joint-state rate in every world here (2 ms steps): the timer floor wakes at it.
GAZEBO_RATE_HZ = 500


# Full-rate trajectory kept per scenario for the overlay plot.
TRAJECTORY_S = 0.2


# The name of the GIL-hogging thread (bench/gil_hog.py), excluded from the bridge's CPU.
GIL_HOG_THREAD = 'gil-hog'


# The original's contract: the target and the limits sent every period, Fast DDS at its
# defaults (the bridge's own settings switched off), for the before/after comparison.
ORIGINAL_CONTRACT = {'target_forwarding': 'periodic', 'joint_limits_publishing': 'periodic'}


NO_DDS_PROFILE = {'SAS_ROBOT_DRIVER_GAZEBO_FASTDDS_PROFILE': 'off'}


# Where the bridge floor republishes the Gazebo messages (the monitor subscribes to it).
FLOOR_TOPIC = '/bench_floor/joint_states'


@dataclass
class Scenario:
    name: str
    title: str
    period_s: float
    kind: str  # node | python_script | python_loop | multi_robot | composed[_in_process]
    gil_hog: str | None = None  # None | 'hold' (GIL held while sleeping) | 'busy' (+ a core)
    robots: int = 1
    parameters: dict | None = None  # bridge parameters beyond config/config.yaml's
    client: bool = False  # targets from joint_interface_example_rclpy.py (the seed's) instead of the monitor
    # Two controllers beside the node (bench/client_reader.py: rclpy, RobotDriverClient), each
    # reading every state and sending the targets: their CPU and the lag of their reads.
    client_readers: bool = False
    busy_threads: int = 0  # threads spinning beside the bridge (a loaded machine)
    targets: bool = True  # False: nobody sends targets (the receive path alone, as the floors)
    env: dict | None = None  # environment of the bridge process(es) beyond the scenario's
    # multi_robot: the process under test is the bridge floor over every robot (`bench-floor
    # bridge`: each state published from the receive thread, nothing else; no targets, limits).
    floor_as_bridge: bool = False
    # object_server: new poses sent to each entity per second on <entity>/set/pose (0: none).
    set_rate_hz: float = 0.0


SCENARIOS = [
    Scenario('node_2ms', 'node, 2 ms (defaults: state on arrival, targets on arrival, limits '
             'on change)', 0.002, 'node'),
    Scenario('node_2ms_no_targets', 'node, 2 ms, no targets sent (the per-message path alone, '
             'as the floors)', 0.002, 'node', targets=False),
    Scenario('node_2ms_periodic', 'node, 2 ms, the original\'s contract (target and limits '
             'every period, Fast DDS defaults)', 0.002, 'node', parameters=ORIGINAL_CONTRACT,
             env=NO_DDS_PROFILE),
    Scenario('node_2ms_grid', 'node, 2 ms, state on the grid (the original\'s publishing)',
             0.002, 'node', parameters={'joint_states_publishing': 'grid'}),
    Scenario('node_2ms_seed', 'node, 2 ms, Python sinusoid client (the seed\'s setup)', 0.002,
             'node', client=True),
    Scenario('node_2ms_clients', 'node, 2 ms, rclpy client vs RobotDriverClient (each reads '
             'every state, sends 100 Hz targets)', 0.002, 'node', client_readers=True),
    Scenario('node_2ms_clients_rt', 'node, 2 ms, the two controllers, the node at the '
             'controllers\' real-time priority (realtime_priority 10)', 0.002, 'node',
             client_readers=True, parameters={'realtime_priority': 10}),
    Scenario('node_1ms', 'node, 1 ms', 0.001, 'node'),
    Scenario('node_2ms_loaded', 'node, 2 ms, two busy threads beside it', 0.002, 'node',
             busy_threads=2),
    Scenario('node_2ms_loaded_rt', 'node, 2 ms, two busy threads, realtime_priority 5', 0.002,
             'node', busy_threads=2, parameters={'realtime_priority': 5}),
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
    Scenario('robots_16_floor', '16 robots: the bridge floor over all of them in one process '
             '(the least any bridge does: decode and publish each state), 2 ms', 0.002,
             'multi_robot', robots=16, targets=False, floor_as_bridge=True),
    Scenario('robots_16_periodic', '16 robots in one process, 2 ms, the original\'s contract',
             0.002, 'multi_robot', robots=16, parameters=ORIGINAL_CONTRACT, env=NO_DDS_PROFILE),
    Scenario('composed', 'composed R820 + UR3e (13 joints): 2 nodes + composer node, 2 ms',
             0.002, 'composed'),
    Scenario('composed_periodic', 'composed R820 + UR3e: 2 nodes + composer node, 2 ms, the '
             'original\'s contract', 0.002, 'composed', parameters=ORIGINAL_CONTRACT,
             env=NO_DDS_PROFILE),
    Scenario('composed_in_process', 'composed R820 + UR3e (13 joints) in one process, 2 ms',
             0.002, 'composed_in_process'),
    # Issue 33's servers (run_server_scenario): the object server's cost with two entities at
    # 100 Hz poses, and the world-control round trip of the simulator server.
    Scenario('object_server_2', 'object server, 2 entities, 100 Hz poses (defaults: on change '
             '+ 1 s heartbeat)', 0.01, 'object_server'),
    Scenario('object_server_2_unchanged', 'object server, 2 entities, 100 Hz poses, '
             'publish_unchanged_poses (every message, as the original)', 0.01, 'object_server',
             parameters={'publish_unchanged_poses': True}),
    Scenario('object_server_2_moving', 'object server, 2 entities, 100 Hz poses, each moved '
             'by set/pose at 50 Hz (the on-change path)', 0.01, 'object_server',
             set_rate_hz=50.0),
    Scenario('world_control', 'simulator server: start_simulation → first advanced Gazebo '
             'clock, vs the direct gz-transport call', 0.01, 'world_control'),
]


BY_NAME = {s.name: s for s in SCENARIOS}


SERVER_KINDS = ('object_server', 'world_control')


# The servers' world: gz-joint-sim's pose/info at 100 Hz (issue 33's figure), the shipped
# config's blocks (config/config.yaml) for both servers.
POSE_RATE_HZ = 100


OBJECT_SERVER = 'sas_object_server_gazebo_node'


SIMULATOR_SERVER = 'sas_simulator_server_gazebo_node'


# Round trips of each path (through the simulator server, and the direct call) per run.
WORLD_CONTROL_CYCLES = {'full': 200, 'quick': 30}


def ur3e_parameters() -> dict:
    """The ur3e_1 block of config/config.yaml (the original's configuration)."""
    with open(CONFIG) as f:
        return dict(yaml.safe_load(f)['ur3e_1']['ros__parameters'])
