"""No circle between the modules of any crate: each module depends on others only one way.

Reads every crate under crates/ and python/ as text: a module is a file reached from a crate
root (lib.rs, main.rs, bin/*.rs) by `mod name;`. A module depends on another when it names
one of that module's items (`use crate::a::b::Item`, `super::Item`, `crate::a::f()` in code);
a path through a re-export (`pub use`) is followed to where the item is defined, and a
parent's `mod child;` or `pub use child::Item` is not a use. Run by scripts/test-links; run
alone with `python3 tests/docs/test_module_cycles.py` (it prints each crate's circles).
"""

import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
IDENT = r'[A-Za-z_][A-Za-z0-9_]*'
DEFINITION = re.compile(
    r'^\s*(?:pub(?:\([^)]*\))?\s+)?(?:unsafe\s+|async\s+|const\s+|extern\s+"C"\s+)*'
    r'(?:fn|struct|enum|trait|type|const|static|union|macro_rules!)\s+(' + IDENT + ')', re.M)
MOD_DECL = re.compile(r'^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(' + IDENT + r')\s*;', re.M)
USE = re.compile(r'^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);', re.M)
INLINE_PATH = re.compile(r'(?<![\w:])((?:crate|super|self)(?:::' + IDENT + r')+)')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    return re.sub(r'//[^\n]*', '', text)


def split_inline_modules(text):
    """`text` without its inline `mod name { ... }` bodies, and those bodies by name: each is a
    module of its own (a `mod tests` depends on its parent, not the parent on it)."""
    outer, inline, at = [], [], 0
    for m in re.finditer(r'\bmod\s+(' + IDENT + r')\s*\{', text):
        if m.start() < at:
            continue
        depth, end = 1, m.end()
        while end < len(text) and depth:
            depth += {'{': 1, '}': -1}.get(text[end], 0)
            end += 1
        outer.append(text[at:m.start()])
        inline.append((m.group(1), text[m.end():end - 1]))
        at = end
    return ''.join(outer) + text[at:], inline


def expand_use(tree):
    """`a::{b, c::{d, e as f}}` -> [(['a','b'], 'b'), (['a','c','d'], 'd'), (['a','c','e'], 'f')]."""
    tree = re.sub(r'\s+', '', tree)

    def parse(text, prefix):
        out = []
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(text):
            if ch == '{':
                depth += 1
            elif ch == '}':
                depth -= 1
            elif ch == ',' and depth == 0:
                parts.append(text[start:i])
                start = i + 1
        parts.append(text[start:])
        for part in filter(None, parts):
            if '{' in part:
                head, inner = part.split('{', 1)
                head = [s for s in head.split('::') if s]
                out += parse(inner[:-1], prefix + head)
            else:
                alias = None
                if 'as' in part and re.search(r'as' + IDENT + '$', part):
                    m = re.match(r'(.*?)as(' + IDENT + ')$', part)
                    part, alias = m.group(1), m.group(2)
                segments = [s for s in part.split('::') if s]
                if segments == ['self']:
                    segments = []
                path = prefix + segments
                out.append((path, alias or (path[-1] if path else '')))
        return out

    return parse(tree, [])


class Crate:
    def __init__(self, src):
        self.src = src
        self.modules = {}  # module path (tuple) -> text
        self.defs = {}  # module -> set of names
        self.reexports = {}  # module -> {name: absolute path list}
        self.globs = {}  # module -> [absolute module paths]
        self.macros = {}  # #[macro_export] macro name -> the module that defines it
        for root in ['lib.rs', 'main.rs'] + [f'bin/{p.name}' for p in sorted((src / 'bin').glob('*.rs'))]:
            if (src / root).exists():
                self.load(root, src / root, root_file=True)

    def load(self, key, path, root_file=False, module=()):
        module = (key,) if root_file else module
        text = self.add(module, strip_comments(path.read_text(encoding='utf-8')))
        base = path.parent if root_file or path.name == 'mod.rs' else path.with_suffix('')
        for name in MOD_DECL.findall(text):
            for candidate in (base / f'{name}.rs', base / name / 'mod.rs'):
                if candidate.exists():
                    self.load(key, candidate, module=module + (name,))
                    break

    def add(self, module, text):
        """Registers `module` and its inline modules; returns its own text."""
        text, inline = split_inline_modules(text)
        self.modules[module] = text
        self.defs[module] = (set(DEFINITION.findall(text)) | set(MOD_DECL.findall(text))
                             | {name for name, _ in inline})
        for name in re.findall(r'#\[macro_export\]\s*macro_rules!\s*(' + IDENT + ')', text):
            self.macros[name] = module
        for name, body in inline:
            self.add(module + (name,), body)
        return text

    def absolute(self, module, path):
        """A use path from `module` as an absolute module path list, or None (another crate)."""
        if not path:
            return None
        head, rest = path[0], path[1:]
        if head == 'crate':
            base = list(module[:1])
        elif head in ('super', 'self'):
            base = list(module)
            while path and path[0] in ('super', 'self'):
                if path[0] == 'super':
                    base = base[:-1]
                path = path[1:]
            return base + path
        else:
            child = tuple(module) + (head,)
            if child in self.modules:
                return list(child) + rest
            return None
        return base + rest

    def collect_reexports(self):
        for module, text in self.modules.items():
            names, globs = {}, []
            for m in USE.finditer(text):
                if not m.group(1):
                    continue
                for path, alias in expand_use(m.group(2)):
                    full = self.absolute(module, path)
                    if full is None:
                        continue
                    if alias == '*':
                        globs.append(full[:-1])
                    else:
                        names[alias] = full
            self.reexports[module], self.globs[module] = names, globs

    def resolve(self, full, seen=None):
        """The module that defines the item `full` names (following re-exports), or None."""
        seen = seen or set()
        key = tuple(full)
        if key in seen:
            return None
        seen.add(key)
        # Longest module prefix.
        for cut in range(len(full), 0, -1):
            module = tuple(full[:cut])
            if module in self.modules:
                rest = full[cut:]
                if not rest:
                    return module
                name = rest[0]
                if name in self.reexports.get(module, {}):
                    target = self.reexports[module][name] + rest[1:]
                    return self.resolve(target, seen)
                if name in self.defs.get(module, set()):
                    return module
                for glob in self.globs.get(module, []):
                    found = self.resolve(glob + rest, seen)
                    if found:
                        return found
                if cut == 1 and name in self.macros:
                    return self.macros[name]  # exported at the root, defined there
                return module
        return None

    def edges(self):
        self.collect_reexports()
        graph = {module: set() for module in self.modules}
        for module, text in self.modules.items():
            paths = []
            for m in USE.finditer(text):
                if m.group(1):
                    continue  # a re-export is resolution, not a use
                paths += [p for p, _ in expand_use(m.group(2))]
            paths += [p.split('::') for p in INLINE_PATH.findall(text)]
            for path in paths:
                full = self.absolute(module, path)
                if full is None:
                    continue
                target = self.resolve(full)
                if target is None or target == module:
                    continue
                graph[module].add(target)
        return graph


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def crate_sources():
    for cargo in sorted(ROOT.glob('crates/*/Cargo.toml')) + [ROOT / 'python' / 'Cargo.toml']:
        if (cargo.parent / 'src').is_dir():
            yield cargo.parent


def name(module):
    root, *rest = module
    return '::'.join(rest) or root


def find_all():
    found = {}
    for crate_dir in crate_sources():
        crate = Crate(crate_dir / 'src')
        for component in cycles(crate.edges()):
            found.setdefault(crate_dir.relative_to(ROOT).as_posix(), []).append(
                [name(m) for m in component])
    return found


def test_no_module_circle_in_any_crate():
    found = find_all()
    assert not found, 'module circles: ' + '; '.join(
        f'{crate}: {" <-> ".join(c)}' for crate, cs in found.items() for c in cs)


def test_the_checker_sees_a_circle(tmp_path):
    src = tmp_path / 'src'
    (src / 'a').mkdir(parents=True)
    (src / 'lib.rs').write_text('mod a;\nmod b;\npub use b::Thing;\n')
    (src / 'a' / 'mod.rs').write_text('use crate::Thing;\npub struct Other;\n')
    (src / 'b.rs').write_text('pub struct Thing;\nfn f() { let _ = crate::a::Other; }\n')
    assert cycles(Crate(src).edges()) == [[('lib.rs', 'a'), ('lib.rs', 'b')]]
    (src / 'b.rs').write_text('pub struct Thing;\n')
    assert cycles(Crate(src).edges()) == []


if __name__ == '__main__':
    for crate, components in find_all().items():
        for component in components:
            print(f'{crate}: {" <-> ".join(component)}')
