"""Fixtures of the reliability suite: the node suite's (tests/node/conftest.py), imported
under another module name so both suites keep one copy of them."""

import importlib.util
import pathlib
import sys

_NODE_CONFTEST = pathlib.Path(__file__).resolve().parents[1] / 'node' / 'conftest.py'
_spec = importlib.util.spec_from_file_location('node_fixtures', _NODE_CONFTEST)
node_fixtures = importlib.util.module_from_spec(_spec)
sys.modules['node_fixtures'] = node_fixtures
_spec.loader.exec_module(node_fixtures)

world = node_fixtures.world
