"""Deterministic, non-default test values for rclpy messages, by introspection.

The same rule as crates/ros-interop/src/pattern.rs, which builds the same values for the
generated Rust types field by field: field i (1-based, IDL order) of a message with seed s
gets seed mix(s, i), or mix(s, i) + 1 if that value equals the field's default; collections
take element seeds mix(s, j); sequences have 1 + s % 3 elements, capped at their bound.
"""

import array
import importlib

import numpy
from rosidl_parser import definition as d


def mix(seed: int, index: int) -> int:
    return (seed * 31 + index) % 1_000_003


def _int(seed: int) -> int:
    return seed * 37 + 11


_BITS = {'int8': 8, 'int16': 16, 'int32': 32, 'int64': 64,
         'uint8': 8, 'uint16': 16, 'uint32': 32, 'uint64': 64,
         'char': 8, 'octet': 8, 'wchar': 16}


def message_class(t: d.NamespacedType):
    module = importlib.import_module('.'.join(t.namespaces))
    return getattr(module, t.name)


def type_by_name(name: str):
    """`pkg/msg/Name` -> the rclpy class."""
    pkg, kind, cls = name.split('/')
    return message_class(d.NamespacedType([pkg, kind], cls))


def _basic(typename: str, seed: int):
    if typename == 'boolean':
        return seed % 2 == 1
    if typename in ('float', 'double'):
        return (seed % 1000) * 0.25 + 0.5
    bits = _BITS[typename]
    value = _int(seed) % (1 << bits)
    if typename.startswith('int'):
        return value - (1 << (bits - 1))
    if typename == 'octet':
        return bytes([value])
    return value


def value(t: d.AbstractType, seed: int):
    """The pattern value of IDL type `t` for `seed`."""
    if isinstance(t, d.BasicType):
        return _basic(t.typename, seed)
    if isinstance(t, (d.UnboundedString, d.UnboundedWString)):
        return f's{seed}-\u00fc\U0001f600'
    if isinstance(t, (d.BoundedString, d.BoundedWString)):
        return f'b{seed}'[:t.maximum_size]
    if isinstance(t, d.NamespacedType):
        return message(message_class(t), seed)
    if isinstance(t, d.Array):
        return [value(t.value_type, mix(seed, j + 1)) for j in range(t.size)]
    if isinstance(t, d.AbstractSequence):
        n = 1 + seed % 3
        if isinstance(t, d.BoundedSequence):
            n = min(n, t.maximum_size)
        return [value(t.value_type, mix(seed, j + 1)) for j in range(n)]
    raise TypeError(f'no pattern for {t!r}')


def message(cls, seed: int):
    """An instance of `cls` whose every field is set from `seed` and differs from its default."""
    msg = cls()
    for i, (name, t) in enumerate(zip(cls.get_fields_and_field_types(), cls.SLOT_TYPES)):
        default = plain(getattr(msg, name))
        v = value(t, mix(seed, i + 1))
        if plain(v) == default:
            v = value(t, mix(seed, i + 1) + 1)
        setattr(msg, name, v)
    return msg


def plain(v):
    """A message or field value as nested dicts/lists of Python scalars, for comparison."""
    if hasattr(v, 'get_fields_and_field_types'):
        return {name: plain(getattr(v, name)) for name in v.get_fields_and_field_types()}
    if isinstance(v, (list, tuple, array.array, numpy.ndarray)):
        return [plain(x) for x in v]
    if isinstance(v, numpy.generic):
        return v.item()
    if isinstance(v, bytes) and len(v) == 1:
        return v[0]
    return v


def differences(got, expected, path='msg'):
    """Paths where two plain values differ (empty when equal)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        out = []
        for k in expected.keys() | got.keys():
            out += differences(got.get(k), expected.get(k), f'{path}.{k}')
        return out
    if isinstance(expected, list) and isinstance(got, list) and len(got) == len(expected):
        out = []
        for i, (g, e) in enumerate(zip(got, expected)):
            out += differences(g, e, f'{path}[{i}]')
        return out
    return [] if got == expected else [f'{path}: got {got!r}, expected {expected!r}']
