"""The generated #[repr(C)] rmw structs have the C layout (contract §7.5).

The rclrs peer prints size, alignment and member offsets of a set of rmw structs (every
test_msgs message, service and action type, and the sensor_msgs, std_msgs, rcl_interfaces,
action_msgs, geometry_msgs and type_description_interfaces types rclrs and the bridge use);
a C program asks gcc the same questions about the installed rosidl_generator_c headers.
"""

import pathlib
import subprocess

from conftest import ROOT, peer_binary

VENV = ROOT / '.venv'
RUST_KEYWORD_SUFFIXED = {'type_': 'type'}


def rust_layout():
    out = subprocess.run([peer_binary(), 'layout'], env={}, capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return [line.split() for line in out.splitlines()]


def c_probe(rows, workdir: pathlib.Path):
    headers = sorted({row[1] for row in rows if row[0] == 'struct'})
    lines = ['#include <stdalign.h>', '#include <stddef.h>', '#include <stdio.h>']
    lines += [f'#include <{h}>' for h in headers]
    lines.append('int main(void) {')
    for row in rows:
        if row[0] == 'struct':
            c_type = row[2]
            lines.append(f'  printf("struct {row[1]} {c_type} %zu %zu\\n", sizeof({c_type}), '
                         f'alignof({c_type}));')
        else:
            c_type, member = row[1], row[2]
            c_member = RUST_KEYWORD_SUFFIXED.get(member, member)
            lines.append(f'  printf("member {c_type} {member} %zu\\n", offsetof({c_type}, {c_member}));')
    lines += ['  return 0;', '}']
    source = workdir / 'probe.c'
    source.write_text('\n'.join(lines) + '\n')
    includes = [f'-I{d}' for d in sorted((VENV / 'include').iterdir()) if d.is_dir()]
    binary = workdir / 'probe'
    subprocess.run(['gcc', '-std=c11', '-o', binary, source, *includes], check=True,
                   capture_output=True, text=True, timeout=120)
    out = subprocess.run([binary], capture_output=True, text=True, check=True, timeout=30).stdout
    return [line.split() for line in out.splitlines()]


def test_rmw_structs_match_c(tmp_path):
    rust = rust_layout()
    structs = [row for row in rust if row[0] == 'struct']
    assert len(structs) >= 50 and len(rust) > 400
    c = c_probe(rust, tmp_path)
    mismatches = [f'rust {r} != c {k}' for r, k in zip(rust, c) if r != k]
    assert len(c) == len(rust) and not mismatches, '\n'.join(mismatches[:20])
