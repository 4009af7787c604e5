#!/usr/bin/env python3
"""Writes sdf/fortress/: the Harmonic worlds and models of sdf/ in Ignition Fortress spelling.

Fortress (ign-gazebo 6) loads its systems as `ignition-gazebo-<name>-system` /
`ignition::gazebo::systems::<Name>`, finds `model://` files through IGN_GAZEBO_RESOURCE_PATH
and is started with `ign gazebo`; Harmonic says `gz-sim-<name>-system` /
`gz::sim::systems::<Name>`, GZ_SIM_RESOURCE_PATH and `gz sim`. Everything else (models,
joints, controllers, topics) is the same, so the Fortress files are generated, never edited.

    tools/fortress_worlds.py           # rewrite sdf/fortress/ from sdf/*.sdf
    tools/fortress_worlds.py --check   # exit 1, naming the files, if sdf/fortress/ is stale
"""

import argparse
import re
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / 'sdf'
TARGET = SOURCE / 'fortress'

# Whole-token rewrites, in order. The command lines in the files' comments are rewritten too,
# so each file says how to run itself.
REWRITES = [
    (re.compile(r'\bgz-sim-([a-z0-9-]+)-system\b'), r'ignition-gazebo-\1-system'),
    (re.compile(r'\bgz::sim::systems::'), 'ignition::gazebo::systems::'),
    (re.compile(r'GZ_SIM_RESOURCE_PATH=\$PWD/sdf\b'), 'IGN_GAZEBO_RESOURCE_PATH=$PWD/sdf/fortress'),
    (re.compile(r'\bgz sim -s -r sdf/'), 'ign gazebo -s -r sdf/fortress/'),
    # (no option spelled out: an XML comment must not contain "--")
    (re.compile(r'\bgz-joint-sim sdf/(\S+)'), r'gz-joint-sim sdf/fortress/\1 with the ignition.msgs. prefix'),
]


def fortress(name: str, text: str) -> str:
    """The Fortress spelling of one Harmonic file, marked as generated."""
    for pattern, replacement in REWRITES:
        text = pattern.sub(replacement, text)
    marker = (f'<!-- Generated from sdf/{name} by tools/fortress_worlds.py for Ignition Fortress; '
              'do not edit. -->\n')
    declaration, sep, rest = text.partition('?>\n')
    if not sep:
        return marker + text
    return declaration + sep + marker + rest


def expected() -> dict:
    files = {p.name: fortress(p.name, p.read_text()) for p in sorted(SOURCE.glob('*.sdf'))}
    for name, text in files.items():
        try:
            ElementTree.fromstring(text)
        except ElementTree.ParseError as e:
            sys.exit(f'the Fortress spelling of sdf/{name} is not well-formed XML: {e}')
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--check', action='store_true',
                        help='only compare; exit 1 if sdf/fortress/ differs from what would be written')
    args = parser.parse_args()
    want = expected()
    have = {p.name: p.read_text() for p in sorted(TARGET.glob('*.sdf'))} if TARGET.is_dir() else {}
    stale = sorted(n for n in want if have.get(n) != want[n])
    extra = sorted(n for n in have if n not in want)
    if args.check:
        for n in stale:
            print(f'sdf/fortress/{n} is missing or differs from sdf/{n}', file=sys.stderr)
        for n in extra:
            print(f'sdf/fortress/{n} has no Harmonic original in sdf/', file=sys.stderr)
        if stale or extra:
            print('run tools/fortress_worlds.py to regenerate sdf/fortress/', file=sys.stderr)
            return 1
        return 0
    TARGET.mkdir(exist_ok=True)
    for n in stale:
        (TARGET / n).write_text(want[n])
        print(f'wrote sdf/fortress/{n}')
    for n in extra:
        (TARGET / n).unlink()
        print(f'removed sdf/fortress/{n}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
