"""Finding interface packages through the ament index and parsing their IDL."""

from __future__ import annotations

import dataclasses
import pathlib
import xml.etree.ElementTree as ET

from rosidl_parser import definition
from rosidl_parser.parser import parse_idl_file

RESOURCE_TYPE = 'rosidl_interfaces'


class GeneratorError(Exception):
    """An input the generator cannot turn into Rust; the message says which and why."""


@dataclasses.dataclass(frozen=True)
class InterfacePackage:
    """An interface package as registered in one ament prefix."""

    name: str
    share: pathlib.Path
    idl_files: tuple[str, ...]
    version: str


@dataclasses.dataclass
class ParsedPackage:
    """The interfaces of one package, each kind sorted by name."""

    package: InterfacePackage
    messages: list[definition.Message]
    services: list[definition.Service]
    actions: list[definition.Action]


def find_packages(prefixes: list[pathlib.Path]) -> dict[str, InterfacePackage]:
    """Map package name -> package for every interface package of the prefixes.

    Like every ament lookup, the first prefix that registers a package wins.
    """
    found: dict[str, InterfacePackage] = {}
    for prefix in prefixes:
        index = prefix / 'share' / 'ament_index' / 'resource_index' / RESOURCE_TYPE
        if not index.is_dir():
            continue
        for entry in sorted(index.iterdir()):
            if entry.name in found:
                continue
            share = prefix / 'share' / entry.name
            idl_files = tuple(sorted(
                line.strip() for line in entry.read_text().splitlines()
                if line.strip().endswith('.idl')))
            if not idl_files:
                continue
            found[entry.name] = InterfacePackage(
                name=entry.name, share=share, idl_files=idl_files,
                version=_package_version(share))
    return found


def _package_version(share: pathlib.Path) -> str:
    manifest = share / 'package.xml'
    try:
        version = ET.parse(manifest).getroot().findtext('version')
    except (OSError, ET.ParseError) as e:
        raise GeneratorError(f'{manifest}: cannot read the package version: {e}') from e
    if not version:
        raise GeneratorError(f'{manifest}: has no <version>')
    return version.strip()


def parse_package(package: InterfacePackage) -> ParsedPackage:
    """Parse every IDL file of the package."""
    messages, services, actions = [], [], []
    for rel in package.idl_files:
        path = package.share / rel
        try:
            content = parse_idl_file(definition.IdlLocator(package.share, rel)).content
        except Exception as e:  # the parser raises lark and assertion errors alike
            raise GeneratorError(f'{path}: cannot parse: {e}') from e
        messages += content.get_elements_of_type(definition.Message)
        services += content.get_elements_of_type(definition.Service)
        actions += content.get_elements_of_type(definition.Action)

    def by_name(x):
        return x.structure.namespaced_type.name if isinstance(x, definition.Message) \
            else x.namespaced_type.name
    return ParsedPackage(package, sorted(messages, key=by_name),
                         sorted(services, key=by_name), sorted(actions, key=by_name))
