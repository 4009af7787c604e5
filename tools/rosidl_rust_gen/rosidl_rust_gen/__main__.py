"""Command line: generate the Rust crates of every interface package into an overlay prefix.

    python -m rosidl_rust_gen --out .ros-overlay [--prefix <ament prefix>]... [--packages NAME...] [--force]

Without --prefix the prefixes come from AMENT_PREFIX_PATH. With --packages only those packages
and the interface packages they depend on are generated (a full ROS 2 installation has many
more than a build needs); a named package missing from the prefixes is an error. The overlay is
only rewritten when an input changed (IDL files, package versions, this
generator's own source); files whose text is unchanged keep their mtime, so
cargo does not rebuild what did not change.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import pathlib
import sys
import time

from .emit import Package
from .index import GeneratorError, InterfacePackage, find_packages, parse_package

STAMP = '.rosidl_rust_gen.json'


def generate(package: InterfacePackage) -> dict[str, str]:
    """Relative path under the overlay -> text, for one package."""
    files = Package(parse_package(package)).files()
    return {f'share/{package.name}/rust/{rel}': text for rel, text in files.items()}


def select(packages: dict[str, InterfacePackage], names: list[str]) -> dict[str, InterfacePackage]:
    """The named packages and every interface package they reference; raises naming the first
    that no prefix provides."""
    missing = sorted(set(names) - set(packages))
    if missing:
        raise GeneratorError(f'interface package {", ".join(missing)} not found in the ament '
                             f'prefixes (install it, or build it in the workspace)')
    selected = {n: packages[n] for n in names}
    pending = list(names)
    while pending:
        name = pending.pop()
        for dep in _references(packages[name]):
            if dep not in packages:
                raise GeneratorError(f'interface package {dep} (used by {name}) not found in '
                                     f'the ament prefixes')
            if dep not in selected:
                selected[dep] = packages[dep]
                pending.append(dep)
    return selected


def _references(package: InterfacePackage) -> list[str]:
    """The interface packages `package`'s IDL files include (cheap: no parse)."""
    refs = set()
    for rel in package.idl_files:
        for line in (package.share / rel).read_text().splitlines():
            line = line.strip()
            if line.startswith('#include "') and '/' in line:
                refs.add(line.split('"')[1].split('/')[0])
    # What the parser adds to services and actions: the service event's info, the goal id,
    # and action_msgs' CancelGoal service (named by the Action impl).
    if any(rel.startswith(('srv/', 'action/')) for rel in package.idl_files):
        refs.add('service_msgs')
    if any(rel.startswith('action/') for rel in package.idl_files):
        refs |= {'action_msgs', 'unique_identifier_msgs'}
    refs.discard(package.name)
    return sorted(refs)


def inputs_digest(packages: dict[str, InterfacePackage]) -> str:
    h = hashlib.sha256()
    for src in sorted(pathlib.Path(__file__).parent.glob('*.py')):
        h.update(src.name.encode() + b'\0' + src.read_bytes() + b'\0')
    for name, p in sorted(packages.items()):
        h.update(f'{name}\0{p.version}\0'.encode())
        for rel in p.idl_files:
            h.update(rel.encode() + b'\0' + (p.share / rel).read_bytes() + b'\0')
    return h.hexdigest()


def sync(out: pathlib.Path, files: dict[str, str], previous: list[str]) -> int:
    """Write changed files, delete ones no longer generated; return how many changed."""
    changed = 0
    for rel, text in sorted(files.items()):
        path = out / rel
        data = text.encode()
        if path.is_file() and path.read_bytes() == data:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + '.tmp')
        tmp.write_bytes(data)
        tmp.replace(path)
        changed += 1
    for rel in sorted(set(previous) - set(files)):
        path = out / rel
        if path.is_file():
            path.unlink()
            changed += 1
        for parent in path.parents:
            if parent == out or not parent.is_dir() or any(parent.iterdir()):
                break
            parent.rmdir()
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog='rosidl_rust_gen', description=__doc__.splitlines()[0])
    ap.add_argument('--out', required=True, type=pathlib.Path, help='overlay prefix to write')
    ap.add_argument('--prefix', action='append', type=pathlib.Path, default=[],
                    help='ament prefix to read (repeatable; default: AMENT_PREFIX_PATH)')
    ap.add_argument('--packages', nargs='+', metavar='NAME',
                    help='generate only these interface packages and their dependencies')
    ap.add_argument('--force', action='store_true', help='regenerate even if inputs are unchanged')
    ap.add_argument('--jobs', type=int, default=min(2, os.cpu_count() or 1))
    args = ap.parse_args(argv)

    out = args.out.resolve()
    prefixes = [p.resolve() for p in args.prefix] or [
        pathlib.Path(p).resolve() for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    prefixes = [p for p in prefixes if p != out]
    if not prefixes:
        print('rosidl_rust_gen: no ament prefix given (--prefix or AMENT_PREFIX_PATH)', file=sys.stderr)
        return 2
    started = time.monotonic()
    try:
        packages = find_packages(prefixes)
        if not packages:
            raise GeneratorError(f'no interface package in {", ".join(map(str, prefixes))}')
        if args.packages:
            packages = select(packages, args.packages)
        digest = inputs_digest(packages)
        stamp_path = out / STAMP
        stamp = json.loads(stamp_path.read_text()) if stamp_path.is_file() else {}
        if stamp.get('inputs') == digest and not args.force and all(
                (out / rel).is_file() for rel in stamp.get('files', [])):
            print(f'rosidl_rust_gen: {len(packages)} packages up to date in {out}')
            return 0
        files: dict[str, str] = {}
        with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for result in pool.map(generate, [packages[n] for n in sorted(packages)]):
                files.update(result)
        changed = sync(out, files, stamp.get('files', []))
        stamp_path.write_text(json.dumps({'inputs': digest, 'files': sorted(files)}, indent=1) + '\n')
    except GeneratorError as e:
        print(f'rosidl_rust_gen: error: {e}', file=sys.stderr)
        return 1
    print(f'rosidl_rust_gen: {len(packages)} packages, {len(files)} files ({changed} changed) '
          f'in {time.monotonic() - started:.1f} s -> {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
