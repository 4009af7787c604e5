"""rosidl_rust_gen: determinism, incremental runs, the ros-env contract, error reporting.

The compile and run checks of the generated code are the round-trip tests; these check the
generator's output as files.
"""

import os
import pathlib
import shutil
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VENV = ROOT / '.venv'
OVERLAY = ROOT / '.ros-overlay'
GEN_PATH = ROOT / 'tools' / 'rosidl_rust_gen'
sys.path.insert(0, str(GEN_PATH))

from rosidl_rust_gen import rust  # noqa: E402
from rosidl_parser import definition as d  # noqa: E402

REQUIRED = ['builtin_interfaces', 'rcl_interfaces', 'action_msgs', 'rosgraph_msgs',
            'unique_identifier_msgs', 'service_msgs', 'type_description_interfaces',
            'std_msgs', 'sensor_msgs', 'geometry_msgs', 'test_msgs']


def run_generator(out: pathlib.Path, *extra, prefix: pathlib.Path = VENV):
    env = dict(os.environ, PYTHONPATH=str(GEN_PATH))
    return subprocess.run([sys.executable, '-m', 'rosidl_rust_gen', '--out', str(out),
                           '--prefix', str(prefix), *extra],
                          env=env, capture_output=True, text=True, timeout=300)


def tree(root: pathlib.Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes()
            for p in sorted(root.rglob('*')) if p.is_file() and p.parent != root}


@pytest.fixture(scope='module')
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp('gen') / 'a'
    result = run_generator(out)
    assert result.returncode == 0, result.stderr
    return out


def test_same_input_same_bytes(generated):
    """Two runs in separate processes (this one and scripts/setup-ros's, which made the overlay
    cargo built against; scripts/test-ros runs it first) give byte-identical crates."""
    built = {k: v for k, v in tree(OVERLAY).items() if k.startswith('share/')}
    fresh = tree(generated)
    assert built.keys() == fresh.keys()
    assert [k for k in fresh if fresh[k] != built[k]] == []


def test_unchanged_inputs_rewrite_nothing(generated):
    before = {p: p.stat().st_mtime_ns for p in generated.rglob('*.rs')}
    result = run_generator(generated)
    assert result.returncode == 0 and 'up to date' in result.stdout, result.stdout
    forced = run_generator(generated, '--force')
    assert forced.returncode == 0 and '(0 changed)' in forced.stdout, forced.stdout
    assert {p: p.stat().st_mtime_ns for p in generated.rglob('*.rs')} == before


def test_covers_required_packages(generated):
    packages = {p.parent.parent.name for p in generated.glob('share/*/rust/Cargo.toml')}
    assert set(REQUIRED) <= packages


def test_ros_env_contract(generated):
    """§7.1-7.3 of the contract: nothing ros-env would silently drop or fail to include."""
    crates = {p.parent.parent.name: p.parent for p in generated.glob('share/*/rust/Cargo.toml')}
    for name, crate in crates.items():
        manifest = tomllib.loads((crate / 'Cargo.toml').read_text())
        assert manifest['package']['metadata']['ros-env']['include'] is True
        for dep, req in manifest['dependencies'].items():
            if req == '*':
                assert dep in crates, f'{name} depends on {dep}, which is not generated'
            else:
                version = req if isinstance(req, str) else req.get('version')
                assert version and version != '*', f'{name}: {dep} needs a concrete version'
        src = crate / 'src'
        kinds = {p.stem for p in src.glob('*.rs')} - {'lib'}
        assert kinds <= {'msg', 'srv', 'action'} and kinds, name
        for kind in kinds:
            assert (src / kind / 'rmw.rs').is_file(), f'{name}: {kind}.rs without {kind}/rmw.rs'
        for rs in src.rglob('*.rs'):
            text = rs.read_text()
            if rs.name != 'lib.rs':
                assert '#![' not in text and '//!' not in text, f'{rs}: inner attribute or doc'
            assert 'crate::' not in text, f'{rs}: crate:: path'


def test_crates_compile_standalone_without_warnings(generated, tmp_path):
    """Each crate also builds on its own (its lib.rs), with rustc warnings as errors.

    Inside ros-env, a registry dependency, warnings are capped and never seen; here they are.
    """
    shutil.copytree(generated / 'share', tmp_path / 'share')
    names = sorted(p.parent.parent.name for p in (tmp_path / 'share').glob('*/rust/Cargo.toml'))
    members = ', '.join(f'"share/{n}/rust"' for n in names)
    patches = '\n'.join(f'{n} = {{ path = "share/{n}/rust" }}' for n in names)
    (tmp_path / 'Cargo.toml').write_text(
        f'[workspace]\nresolver = "2"\nmembers = [{members}]\n\n[patch.crates-io]\n{patches}\n')
    shutil.copy(ROOT / 'Cargo.lock', tmp_path / 'Cargo.lock')  # the workspace's versions
    env = dict(os.environ, RUSTFLAGS='-D warnings', CARGO_TARGET_DIR=str(tmp_path / 'target'))
    result = subprocess.run(['cargo', 'check', '--workspace', '--quiet'], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-5000:]


def test_ros_env_included_every_package():
    """The generated crates all compiled: ros-env included each one in the peer's build."""
    binary = pathlib.Path(os.environ.get('ROS_INTEROP_BIN', ROOT / 'target/release/ros-interop'))
    outputs = sorted(binary.parent.glob('build/ros-env-*/out/interfaces.rs'),
                     key=lambda p: p.stat().st_mtime)
    assert outputs, f'no ros-env build output next to {binary}'
    text = outputs[-1].read_text()
    packages = [p.parent.parent.name for p in OVERLAY.glob('share/*/rust/Cargo.toml')]
    missing = [p for p in packages if f'pub mod {p} ' not in text and f'pub mod {p}{{' not in text]
    assert packages and not missing


def test_field_names_and_literals():
    assert rust.field_name('type') == 'type_'
    assert rust.field_name('yield') == 'yield_'
    assert rust.field_name('position') == 'position'
    byte = d.BasicType('octet')
    assert rust.constant_literal(d.BasicType('double'), 1) == '1.0'
    assert rust.constant_literal(d.BasicType('float'), 1.125) == '1.125'
    assert rust.constant_literal(d.BasicType('double'), 1e-20) == '1e-20'
    assert rust.constant_literal(d.BasicType('boolean'), True) == 'true'
    assert rust.constant_literal(byte, 255) == '255'
    assert rust.constant_literal(d.UnboundedString(), 'a"b\\c\n') == '"a\\"b\\\\c\\n"'


def test_unsupported_type_is_named(tmp_path):
    """`long double` has no Rust runtime type: the error names the type and member."""
    prefix = tmp_path / 'prefix'
    share = prefix / 'share' / 'bad_msgs'
    (share / 'msg').mkdir(parents=True)
    (share / 'package.xml').write_text('<package><name>bad_msgs</name><version>1.0.0</version></package>')
    (share / 'msg' / 'Wide.idl').write_text(
        'module bad_msgs { module msg { struct Wide { long double value; }; }; };\n')
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'rosidl_interfaces'
    index.mkdir(parents=True)
    (index / 'bad_msgs').write_text('msg/Wide.idl\n')
    result = run_generator(tmp_path / 'out', prefix=prefix)
    assert result.returncode == 1
    assert "bad_msgs/msg/Wide member 'value'" in result.stderr
    assert 'long double' in result.stderr


def test_packages_selects_the_named_ones_and_what_they_use(tmp_path, generated):
    """--packages (the colcon build's): the named packages and the closure of their
    references, each crate as the full run writes it; a missing package is named."""
    out = tmp_path / 'selected'
    result = run_generator(out, '--packages', 'sensor_msgs', 'rosgraph_msgs')
    assert result.returncode == 0, result.stderr
    crates = sorted(p.name for p in (out / 'share').iterdir())
    assert crates == ['builtin_interfaces', 'geometry_msgs', 'rosgraph_msgs', 'sensor_msgs',
                      'service_msgs', 'std_msgs']
    selected, full = tree(out), tree(generated)
    assert [k for k in selected if selected[k] != full[k]] == []

    result = run_generator(tmp_path / 'missing', '--packages', 'sensor_msgs', 'no_such_msgs')
    assert result.returncode == 1
    assert 'interface package no_such_msgs not found' in result.stderr, result.stderr
