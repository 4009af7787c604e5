"""What the end-to-end suites (tests/node, tests/multi, tests/python, tests/signals, tests/ros)
share: child processes in their own sessions whose output a thread collects, bounded condition
waits, the binaries under test, and a parser of the Ignition CLI's `gz.msgs.Model` text;
`support.world`: a test's partition, domain and processes (the `world` fixture's base);
`support.ros`: an rclpy client node, and a world with one.

Each suite's conftest puts `tests/` on `sys.path` and imports from here.
"""

import json
import os
import pathlib
import signal
import subprocess
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# The real Ignition transport CLI (Fortress, C++): an independent reader of Gazebo's side. It
# decodes `ignition.msgs.` types only: what it reads must run on that prefix.
IGN_TOPIC_CLI = '/usr/libexec/ignition/transport11/ign-transport-topic'

# Started in the background by a shell without job control (`cmd &`, a CI wrapper), the tests
# inherit SIGINT ignored, and an ignored signal stays ignored across exec: every child would
# ignore the Ctrl-C the tests send. Python's own handler here gives the children the default
# disposition, as a terminal's would (a handled signal is reset on exec).
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def binary(variable: str, name: str) -> pathlib.Path:
    """The binary `name` of target/release, or the path in environment variable `variable`
    (the suites' scripts/test-<suite> build them and set it)."""
    path = pathlib.Path(os.environ.get(variable, ROOT / 'target' / 'release' / name))
    if not path.is_file():
        pytest.fail(f'{path} is missing: build it with the suite\'s scripts/test-<suite> '
                    f'(or set {variable})')
    return path


def wait_for(condition, timeout: float, what: str, step=lambda: time.sleep(0.02)):
    """Call `step` until `condition()` holds; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f'timed out after {timeout} s waiting for {what}')
        step()


class Process:
    """A child process in its own session (so its process group is its own) whose output
    lines (stdout and stderr together) a thread collects."""

    def __init__(self, args, env, cwd=ROOT, new_session: bool = True):
        self.args = [str(a) for a in args]
        self.proc = subprocess.Popen(self.args, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, text=True,
                                     start_new_session=new_session)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.rstrip('\n'))

    def output(self) -> str:
        return '\n'.join(self.lines)

    def count(self, text: str) -> int:
        return sum(text in line for line in list(self.lines))

    def log_stamp(self, text: str) -> float:
        """When the process logged the first line holding `text`, by its own stamp: a ROS
        console line's `[INFO] [1796200601.635857592] [node]: …` (the system clock, as
        `time.time()`). Judges timing by the process itself, not by when this one looked."""
        line = next((line for line in list(self.lines) if text in line), None)
        if line is None:
            pytest.fail(f'{self.args[:2]} printed no line with {text!r}:\n{self.output()}')
        return float(line.split('] [', 2)[1])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_output(self, text: str, timeout: float, count: int = 1):
        """Wait until `text` appeared in `count` lines; fail if the process exits first."""
        wait_for(lambda: self.count(text) >= count or self.proc.poll() is not None,
                 timeout, f'{text!r} from {self.args[:2]}')
        if self.count(text) < count:
            self._reader.join(5)
            pytest.fail(f'{self.args} exited ({self.proc.returncode}) before printing '
                        f'{text!r}:\n{self.output()}')

    def wait_exit(self, timeout: float) -> int:
        try:
            code = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f'{self.args[:2]} still running after {timeout} s:\n{self.output()}')
        self._finish()
        return code

    def _finish(self):
        self._reader.join(5)
        if not self.proc.stdout.closed:
            self.proc.stdout.close()

    def json_line(self, key: str) -> dict:
        """The last output line that is a JSON object holding `key`."""
        for line in reversed(self.lines):
            if line.startswith('{') and f'"{key}"' in line:
                return json.loads(line)
        pytest.fail(f'no JSON line with {key!r} from {self.args[:2]}:\n{self.output()}')

    def signal(self, signum):
        self.proc.send_signal(signum)

    def group_alive(self) -> bool:
        """True while any process of this child's process group (its session) exists."""
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True

    def kill(self):
        """Ends the process and anything it started, whatever state it is in."""
        if self.proc.poll() is None or self.group_alive():
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(10)
        self._finish()


def double_values(lines: list[str]) -> list[float]:
    """The values of the `gz.msgs.Double` messages in a CLI's echo output (protobuf text
    format, `data: 0.5`). proto3 omits a 0, so a test reading commands sends no 0."""
    return [float(line.split(':', 1)[1]) for line in lines if line.startswith('data:')]


def parse_model_text(text: str) -> dict[str, float]:
    """Joint positions by name from a `gz.msgs.Model` printed in protobuf text format (a
    position of 0 is omitted by proto3, hence the default)."""
    positions: dict[str, float] = {}
    depth, joint, in_axis1 = 0, None, False
    for raw in text.splitlines():
        line = raw.strip()
        if line.endswith('{'):
            depth += 1
            if depth == 1 and line.startswith('joint'):
                joint = ''
            elif depth == 2 and joint is not None and line.startswith('axis1'):
                in_axis1 = True
        elif line == '}':
            if depth == 2:
                in_axis1 = False
            elif depth == 1 and joint is not None:
                positions.setdefault(joint, 0.0)
                joint = None
            depth -= 1
        elif joint is not None and depth == 1 and line.startswith('name:'):
            joint = line.split(':', 1)[1].strip().strip('"')
        elif joint is not None and in_axis1 and depth == 2 and line.startswith('position:'):
            positions[joint] = float(line.split(':', 1)[1])
    return positions


def _help_value(python) -> str:
    """A parameter's value (as rclpy gives it) printed as --help prints a default: doubles
    with their point, an empty string as "", arrays as [a, b]."""
    if isinstance(python, bool):
        return str(python).lower()
    if isinstance(python, float):
        return repr(python)
    if isinstance(python, str):
        return python or '""'
    if isinstance(python, (list, tuple)):
        return '[' + ', '.join(_help_value(item) for item in python) + ']'
    return str(python)


def check_help_against_node(world, program, node: str, mandatory: set[str], exact=False):
    """Compares `program --help`'s parameter table with what the running `node` (started
    with only its `mandatory` parameters set) declared, read through its parameter services:
    every declared parameter has a row, every other row's default is its declared value,
    and the mandatory ones are marked so. With `exact`, every row is a declared parameter
    too (a node that declares a parameter only under a condition is not exact)."""
    import re
    from rcl_interfaces.srv import GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python

    text = subprocess.run([program, '--help'], env=world.env(), capture_output=True,
                          text=True, timeout=30, check=True).stdout
    kinds = r'(?:string|double|int|bool)(?:\[\])?'
    rows = {m[1]: m[2] for m in re.finditer(rf'^  (\S+)\s+{kinds}\s+(\S.*)$', text, re.M)}

    def call(srv_type, name, request):
        client = world.node.create_client(srv_type, name)
        world.wait_for(client.service_is_ready, 30, f'the service {name}')
        future = client.call_async(request)
        world.wait_for(future.done, 10, f'the response of {name}')
        world.node.destroy_client(client)
        return future.result()

    names = sorted(call(ListParameters, f'{node}/list_parameters',
                        ListParameters.Request()).result.names)
    values = call(GetParameters, f'{node}/get_parameters',
                  GetParameters.Request(names=names)).values
    shown = {name: _help_value(parameter_value_to_python(value))
             for name, value in zip(names, values)}
    missing = sorted(set(shown) - set(rows))
    assert not missing, f'declared by {node}, absent from --help: {missing}\n{text}'
    extra = sorted(set(rows) - set(shown)) if exact else []
    assert not extra, f'in --help, not declared by {node}: {extra}\n{text}'
    wrong = {name: (rows[name], shown[name]) for name in shown
             if name not in mandatory and rows[name] != shown[name]}
    assert not wrong, f'--help default vs the default {node} declared: {wrong}'
    assert all(rows[name] == 'mandatory' for name in mandatory), rows
