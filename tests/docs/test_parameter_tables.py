"""Every parameter table of docs/ against the `--help` of the program it documents.

A table is marked by a comment line `<!-- parameters: <program> -->` before it (header
`| parameter | type | default | … |`, one parameter per row: `` `name` | type | `default` ``).
The program's `--help` lists `  <name>  <type>  <default>…` under "Parameters": for every
program it is made from the declarations that read the parameters, so this ties the docs to
the code. Names, types and defaults must agree both ways: a parameter in one and not
the other, or a default that differs, fails with both sides named.
"""
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get('DOCS_BIN_DIR', ROOT / 'target' / 'release'))
MARKER = re.compile(r'^<!-- parameters: (\S+) -->\s*$')
TYPES = ('string[]', 'double[]', 'int[]', 'bool[]', 'string', 'double', 'int', 'bool')
HELP_ROW = re.compile(r'^  (\S+)\s+(' + '|'.join(re.escape(t) for t in TYPES) + r')\s+(.*)$')


def doc_tables():
    """(page, line, program, {name: (type, default)}) for every marked table of docs/."""
    found = []
    for page in sorted((ROOT / 'docs').glob('*.md')):
        lines = page.read_text(encoding='utf-8').splitlines()
        for n, line in enumerate(lines):
            m = MARKER.match(line)
            if not m:
                continue
            rows, i = {}, n + 1
            while i < len(lines) and not lines[i].startswith('|'):
                i += 1
            assert lines[i].startswith('| parameter | type | default |'), (
                f'{page.name}:{i + 1}: the table after the marker has no parameter header')
            for row in lines[i + 2:]:
                if not row.startswith('|'):
                    break
                cells = [c.strip() for c in row.strip('|').split('|')]
                name, kind, default = cells[0], cells[1], cells[2]
                assert re.fullmatch(r'`[^`]+`', name), (
                    f'{page.name}: one parameter per row, as `name`: {row!r}')
                rows[name.strip('`')] = (kind, default.strip('`'))
            found.append((page.name, n + 1, m.group(1), rows))
    return found


def help_default(rest):
    """The default at the start of a help row's text: `[…]`, or its first word."""
    if rest.startswith('['):
        return rest[:rest.index(']') + 1]
    return rest.split()[0].rstrip(',')


def help_parameters(program):
    """{name: (type, default)} from `<program> --help`'s parameter list."""
    out = subprocess.run([str(BIN / program), '--help'], capture_output=True, text=True,
                         timeout=30, check=True).stdout
    params, inside = {}, False
    for line in out.splitlines():
        if line.startswith('Parameters'):
            inside = True
            continue
        if inside and line and not line.startswith(' '):
            break
        m = HELP_ROW.match(line) if inside else None
        if m:
            params[m.group(1)] = (m.group(2), help_default(m.group(3)))
    assert params, f'{program} --help lists no parameters:\n{out}'
    return params


TABLES = doc_tables()


def test_every_program_has_a_table():
    programs = {program for _, _, program, _ in TABLES}
    assert programs >= {'sas_robot_driver_ros_gazebo_node', 'sas_robot_driver_ros_composer_node',
                        'sas_simulator_server_gazebo_node', 'sas_object_server_gazebo_node'}


@pytest.mark.parametrize('page,line,program,documented', TABLES,
                         ids=[f'{page}:{program}' for page, _, program, _ in TABLES])
def test_table_matches_help(page, line, program, documented):
    helped = help_parameters(program)
    problems = [f'{name}: in {page} (line {line}), not in --help'
                for name in documented if name not in helped]
    problems += [f'{name}: in --help ({kind} {default}), not in {page}'
                 for name, (kind, default) in helped.items() if name not in documented]
    problems += [f'{name}: {page} says {documented[name]}, --help says {helped[name]}'
                 for name in documented if name in helped and documented[name] != helped[name]]
    assert not problems, f'{program}: ' + '; '.join(problems)
