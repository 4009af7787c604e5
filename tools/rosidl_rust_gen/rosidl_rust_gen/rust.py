"""IDL types -> Rust types, names, literals and the idiomatic <-> rmw conversions.

The rmw layer mirrors the C structs of rosidl_generator_c member by member, so
its types are fixed by the C ABI. The idiomatic layer uses owned Rust types
where a conversion is cheap and unambiguous (strings, unbounded sequences,
nested messages) and keeps the runtime's checked bounded types otherwise, so a
value that would not fit the bound can never be built.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from rosidl_parser import definition as d

from .index import GeneratorError

RT = 'rosidl_runtime_rs'

# C type of rosidl_generator_c -> Rust type with the same size and alignment.
PRIMITIVES = {
    'boolean': 'bool',
    'octet': 'u8',
    'char': 'u8',
    'wchar': 'u16',
    'float': 'f32',
    'double': 'f64',
    'int8': 'i8', 'uint8': 'u8',
    'int16': 'i16', 'uint16': 'u16',
    'int32': 'i32', 'uint32': 'u32',
    'int64': 'i64', 'uint64': 'u64',
    'short': 'i16', 'unsigned short': 'u16',
    'long': 'i32', 'unsigned long': 'u32',
    'long long': 'i64', 'unsigned long long': 'u64',
}

# Strict, reserved and weak keywords of every edition: a field with one of
# these names gets a trailing underscore (`type` -> `type_`, as rclrs expects).
KEYWORDS = frozenset('''
    abstract as async await become box break const continue crate do dyn else enum extern
    false final fn for gen if impl in let loop macro match mod move mut override priv pub ref
    return self Self static struct super trait true try type typeof union unsafe unsized use
    virtual where while yield
'''.split())

# serde implements (De)Serialize for arrays up to this length; longer ones
# go through serde_big_array.
SERDE_MAX_ARRAY = 32


def field_name(name: str) -> str:
    return f'{name}_' if name in KEYWORDS else name


@dataclasses.dataclass(frozen=True)
class Scope:
    """Where code is emitted: package, interface kind and layer."""

    package: str
    kind: str  # 'msg' | 'srv' | 'action'
    rmw: bool

    def path(self, t: d.NamespacedType, rmw: bool) -> str:
        """Path to the struct for `t` in the requested layer, as seen from this scope.

        Other packages are reached through the `use crate::<pkg>;` ros-env
        puts in every module (an extern crate when built on its own); the own
        package relatively, since it has no name in its own scope.
        """
        pkg, kind = t.namespaces[0], t.namespaces[-1]
        layer = 'rmw::' if rmw else ''
        if pkg != self.package:
            return f'{pkg}::{kind}::{layer}{t.name}'
        if kind == self.kind:
            if self.rmw == rmw:
                return t.name
            return f'rmw::{t.name}' if rmw else f'super::{t.name}'
        up = 'super::super::' if self.rmw else 'super::'
        return f'{up}{kind}::{layer}{t.name}'


def _element(t: d.AbstractType) -> d.AbstractNestableType:
    return t.value_type if isinstance(t, d.AbstractNestedType) else t


def element_kind(t: d.AbstractNestableType) -> str:
    """How an element converts between the layers.

    'copy'   - a primitive, identical in both layers
    'string' - rmw String/WString <-> std String
    'same'   - a bounded string, identical (and owned) in both layers
    'nested' - a message, converted through its `Message` impl
    """
    if isinstance(t, d.BasicType):
        if t.typename not in PRIMITIVES:
            raise GeneratorError(f'IDL type {t.typename!r} has no Rust equivalent in rosidl_runtime_rs')
        return 'copy'
    if isinstance(t, (d.UnboundedString, d.UnboundedWString)):
        return 'string'
    if isinstance(t, (d.BoundedString, d.BoundedWString)):
        return 'same'
    if isinstance(t, d.NamespacedType):
        return 'nested'
    raise GeneratorError(f'unsupported IDL element type {type(t).__name__}')


def rmw_element(t: d.AbstractNestableType, scope: Scope) -> str:
    element_kind(t)
    if isinstance(t, d.BasicType):
        return PRIMITIVES[t.typename]
    if isinstance(t, d.AbstractGenericString):
        # String, WString, BoundedString<N> or BoundedWString<N>.
        name = 'WString' if isinstance(t, d.AbstractWString) else 'String'
        if t.has_maximum_size():
            return f'{RT}::Bounded{name}<{t.maximum_size}>'
        return f'{RT}::{name}'
    return scope.path(t, rmw=True)


def idiomatic_element(t: d.AbstractNestableType, scope: Scope) -> str:
    kind = element_kind(t)
    if kind == 'string':
        return '::std::string::String'
    if kind == 'nested':
        return scope.path(t, rmw=False)
    return rmw_element(t, scope)


def rmw_type(t: d.AbstractType, scope: Scope) -> str:
    if isinstance(t, d.Array):
        return f'[{rmw_element(t.value_type, scope)}; {t.size}]'
    if isinstance(t, d.BoundedSequence):
        return f'{RT}::BoundedSequence<{rmw_element(t.value_type, scope)}, {t.maximum_size}>'
    if isinstance(t, d.UnboundedSequence):
        return f'{RT}::Sequence<{rmw_element(t.value_type, scope)}>'
    return rmw_element(t, scope)


def idiomatic_type(t: d.AbstractType, scope: Scope) -> str:
    if isinstance(t, d.Array):
        return f'[{idiomatic_element(t.value_type, scope)}; {t.size}]'
    if isinstance(t, d.BoundedSequence):
        # A bounded sequence keeps the checked runtime type (rmw elements).
        return rmw_type(t, scope)
    if isinstance(t, d.UnboundedSequence):
        return f'::std::vec::Vec<{idiomatic_element(t.value_type, scope)}>'
    return idiomatic_element(t, scope)


def needs_big_array(t: d.AbstractType) -> bool:
    return isinstance(t, d.Array) and t.size > SERDE_MAX_ARRAY


def referenced_packages(t: d.AbstractType) -> set[str]:
    e = _element(t)
    return {e.namespaces[0]} if isinstance(e, d.NamespacedType) else set()


# --- conversions -------------------------------------------------------------
# Each function returns a Rust expression. `owned` converts a value it may move
# out of; `borrowed` converts from a place reached through a shared reference
# (`is_ref` says the expression itself is a reference, as closure arguments are).

def _to_rmw_element_owned(x: str, t, scope: Scope) -> str:
    kind = element_kind(t)
    if kind == 'string':
        return f'{rmw_element(t, scope)}::from({x}.as_str())'
    if kind == 'nested':
        return (f'<{scope.path(t, rmw=False)} as {RT}::Message>::into_rmw_message('
                f'::std::borrow::Cow::Owned({x})).into_owned()')
    return x


def _to_rmw_element_borrowed(x: str, t, scope: Scope, is_ref: bool) -> str:
    kind = element_kind(t)
    if kind == 'copy':
        return f'*{x}' if is_ref else x
    if kind == 'string':
        return f'{rmw_element(t, scope)}::from({x}.as_str())'
    if kind == 'same':
        return f'{x}.clone()'
    ref = x if is_ref else f'&{x}'
    return (f'<{scope.path(t, rmw=False)} as {RT}::Message>::into_rmw_message('
            f'::std::borrow::Cow::Borrowed({ref})).into_owned()')


def _from_rmw_element(x: str, t, scope: Scope) -> str:
    kind = element_kind(t)
    if kind == 'string':
        return f'{x}.to_string()'
    if kind == 'nested':
        return f'<{scope.path(t, rmw=False)} as {RT}::Message>::from_rmw_message({x})'
    return x


def to_rmw_borrowed(x: str, t: d.AbstractType, scope: Scope) -> str:
    if isinstance(t, d.BoundedSequence):
        return f'{x}.clone()'
    if isinstance(t, d.Array):
        kind = element_kind(t.value_type)
        if kind == 'copy':
            return x
        if kind == 'same':
            return f'{x}.clone()'
        conv = _to_rmw_element_borrowed('e', t.value_type, scope, is_ref=True)
        return f'{x}.each_ref().map(|e| {conv})'
    if isinstance(t, d.UnboundedSequence):
        kind = element_kind(t.value_type)
        if kind in ('copy', 'same'):
            return f'{RT}::Sequence::from({x}.as_slice())'
        conv = _to_rmw_element_borrowed('e', t.value_type, scope, is_ref=True)
        return f'{x}.iter().map(|e| {conv}).collect()'
    return _to_rmw_element_borrowed(x, t, scope, is_ref=False)


def _to_rmw_fn(t, scope: Scope) -> str:
    """The owned element conversion as a closure to map over a collection."""
    return f'|e| {_to_rmw_element_owned("e", t, scope)}'


def _from_rmw_fn(t, scope: Scope) -> str:
    """The element conversion as a function (or closure) to map over a collection."""
    if element_kind(t) == 'nested':
        return f'<{scope.path(t, rmw=False)} as {RT}::Message>::from_rmw_message'
    return f'|e| {_from_rmw_element("e", t, scope)}'


@dataclasses.dataclass(frozen=True)
class _OwnedConversion:
    """One direction of moving a value across: `element(x, t, scope)` converts one element,
    `mapper(t, scope)` is that conversion as a function to map; `sequence` has, by element
    kind, the whole conversion of an unbounded sequence of plain elements ('{}' stands for
    the sequence)."""
    element: Callable[[str, d.AbstractType, Scope], str]
    mapper: Callable[[d.AbstractType, Scope], str]
    sequence: dict[str, str]

    def __call__(self, x: str, t: d.AbstractType, scope: Scope) -> str:
        # A bounded sequence, and an array of plain elements, are one type on both sides.
        if isinstance(t, d.BoundedSequence):
            return x
        if isinstance(t, d.Array):
            if element_kind(t.value_type) in ('copy', 'same'):
                return x
            return f'{x}.map({self.mapper(t.value_type, scope)})'
        if isinstance(t, d.UnboundedSequence):
            whole = self.sequence.get(element_kind(t.value_type))
            if whole is not None:
                return whole.format(x)
            return f'{x}.into_iter().map({self.mapper(t.value_type, scope)}).collect()'
        return self.element(x, t, scope)


to_rmw_owned = _OwnedConversion(
    element=_to_rmw_element_owned,
    mapper=_to_rmw_fn,
    sequence={'copy': f'{RT}::Sequence::from({{}}.as_slice())',
              'same': f'{RT}::Sequence::from({{}})'},
)

from_rmw = _OwnedConversion(
    element=_from_rmw_element,
    mapper=_from_rmw_fn,
    sequence={'copy': '::std::vec::Vec::from({})', 'same': '{}.into_iter().collect()'},
)


# --- constants ---------------------------------------------------------------

def constant_type(t: d.AbstractType) -> str:
    if isinstance(t, d.BasicType):
        element_kind(t)
        return PRIMITIVES[t.typename]
    if isinstance(t, d.AbstractGenericString):
        return "&'static str"
    raise GeneratorError(f'constants of type {type(t).__name__} are not supported')


def constant_literal(t: d.AbstractType, value) -> str:
    if isinstance(t, d.AbstractGenericString):
        return rust_str(str(value))
    rust = constant_type(t)
    if rust == 'bool':
        return 'true' if value else 'false'
    if rust in ('f32', 'f64'):
        v = float(value)
        if not math.isfinite(v):
            raise GeneratorError(f'non-finite constant {value!r}')
        text = repr(v)
        return text if any(c in text for c in '.e') else f'{text}.0'
    if isinstance(value, bool) or not isinstance(value, int):
        raise GeneratorError(f'constant {value!r} is not an integer of type {rust}')
    return str(value)


def rust_str(s: str) -> str:
    """A Rust string literal with the same characters as `s`."""
    out = []
    for c in s:
        if c in '"\\':
            out.append('\\' + c)
        elif c == '\n':
            out.append('\\n')
        elif c == '\t':
            out.append('\\t')
        elif c == '\r':
            out.append('\\r')
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append(f'\\u{{{ord(c):x}}}')
        else:
            out.append(c)
    return '"' + ''.join(out) + '"'
