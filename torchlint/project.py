"""The project model: which files make up the checked project, which module name each
import means, and what every module defines, as summaries that other files can see.

Layer: between `api.py` (paths, cache, processes) and the engine. Pure standard library;
the summariser itself (`torchlint.rules._summarize`, the analysis library) is called
through `engine.summarize_source`, lazily, so that a fully cached run parses nothing.

## Roots and module names
Python finds a module through its search path; torchlint mirrors what that path would be
when the project is run, per file:
- the folder above the file's top package (the chain of folders with `__init__.py`);
  for a file in no package, its own folder: the siblings of a script run as
  `python train.py`;
- the project root, the nearest folder above the file that holds `pyproject.toml`,
  `setup.cfg`, `setup.py` or `.git`, and its `src/` folder (the `src` layout);
- the folder named on the command line that holds the file, and its `src/`, when no such
  marker lies between them (a checkout of the `.py` files alone): a script in a
  subfolder that is not a package (`recipes/generate.py`) sees the root-level packages
  (`from tune import utils`), as when the project runs from its root.
A module name resolves to the first `a/b.py` or `a/b/__init__.py` below those folders.
Nothing else is searched: installed packages stay unknown (a lookup answers None), and
where unknown could go either way, rules stay silent.

## Summaries and digests
A summary is plain JSON data per module (see `torchlint.rules._summarize`): its import
aliases and, per function, method and class, what rules care about. It depends only on
the module's bytes, so it is cached by their digest. What one file sees of another is
an *entry*: one top-level definition (or import alias) of a module, looked up by its
absolute dotted name (`pkg.helpers.clear`). Each lookup records the name and the digest
of the entry it found (or that there was none, or that the name is outside the project)
in the `ProjectView` of the file being checked: the file's *dependencies*. A file's
cached findings stay valid while its bytes and each recorded dependency's digest are
unchanged, so editing a helper re-checks exactly the files whose checks looked at it
(how mypy's fine-grained mode and Pyre stay incremental), and adding an unrelated
function re-checks nothing. A check that asks which functions of its file's package have
some effects (a data module asking whether a trainer beside it back-propagates and copies
batches asynchronously) records the answer (`PACKAGE` and the effects): a module added to,
removed from or edited in that package folder re-checks it only when the answer changes.
A check that asks which of its file's functions the methods of other modules of its folder
call (a layer's `forward` calling a function of a `functional` module beside it) records
the answer under `CALLERS` and the methods' names (and which of those functions' results
the methods compute with, under `MIXERS`). Likewise a check that asks whether any
module around its file says a module-level fact of its summary records the answer under
`PROJECT`, the fact and the scope asked: the whole project (the files below the file's
root, the deepest of the nearest folder with a root marker and the checked folder holding
the file), as for "does anything give distributed samplers the epoch", or the file's own
package and the scripts that run it, as for "does a module of this layer library's
package, or its training script, move the model to CUDA".
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from torchlint.cache import content_digest
from torchlint.digests import blake2b
from torchlint.sources import Unreadable, decode, read_bytes

ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", ".git")
# Re-exports followed from one package's `__init__` to the module that defines a name.
MAX_REEXPORTS = 5
# Digests recorded for lookups that found no entry.
MISSING = "missing"  # the module is in the project but defines no such name
OUTSIDE = "outside"  # no module of the project has this name (installed, or not there)
# The dependency key of a check that read the other modules of its file's package.
PACKAGE = "package:"
# The dependency key of a check that asked which of its functions the methods of other
# modules of its folder call (followed by the methods' names).
CALLERS = "callers:"
# The same for a check that asked which of its functions' results those methods compute with.
MIXERS = "mixers:"
# The dependency key of a check that asked whether some module of the project has a
# module-level fact of its summary (followed by the fact's name: `places_on_device`).
PROJECT = "project:"
# The modules a project fact is asked of: all of the project's, or the file's own package
# with the scripts that run it (see `Project.any_module`).
WHOLE_PROJECT = "project"
OWN_PACKAGE = "package"
# The most modules read to answer that; a larger project answers "unknown" (False).
MAX_PROJECT_MODULES = 5000
# Folders never read as part of a project.
_NOT_PROJECT = ("__pycache__", "node_modules", "site-packages", "build", "dist")

Summary = dict[str, Any]
Summarizer = Callable[[str], "Summary | None"]


def entry_digest(entry: Any) -> str:
    return blake2b(json.dumps(entry, sort_keys=True).encode(), digest_size=12).hexdigest()


@dataclass(frozen=True)
class ModuleRef:
    """A module of the project: its absolute name, its file and the search path that
    resolves the module's own imports."""

    name: str
    path: Path
    search: tuple[Path, ...]

    @property
    def package(self) -> str:
        """The package that relative imports start from."""
        return self.name if self.path.name == "__init__.py" else self.name.rpartition(".")[0]

    def absolute(self, written: str) -> str | None:
        """An absolute dotted name for a name as a summary writes it: `:f` (a definition of
        this module), `.x.f` / `..f` (relative imports) or `pkg.f` (absolute); None when
        a relative import climbs above the top package."""
        if written.startswith(":"):
            return f"{self.name}.{written[1:]}"
        if not written.startswith("."):
            return written
        dots = len(written) - len(written.lstrip("."))
        base = self.package.split(".") if self.package else []
        if dots - 1 >= len(base):
            return None  # above the top package (or a relative import outside any)
        base = base[: len(base) - (dots - 1)]
        rest = written[dots:]
        return ".".join([*base, rest] if rest else base) or None


@dataclass(frozen=True)
class Entry:
    """One definition (function, class) or import alias of a project module, as a summary
    records it; `module` resolves the names the entry mentions."""

    name: str
    data: dict[str, Any]
    module: ModuleRef

    @property
    def kind(self) -> str:
        return str(self.data.get("kind", ""))


def search_path(path: Path, checked: Iterable[Path] = ()) -> tuple[Path, ...]:
    """The folders a file's imports are resolved in (see the module docstring); `checked`:
    the folders named on the command line (absolute)."""
    folder = path.parent
    top = folder
    while (top / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    found = [top]
    root: Path | None = folder
    while root is not None:
        if any((root / marker).exists() for marker in ROOT_MARKERS):
            found.extend([root, root / "src"])
            break
        root = root.parent if root.parent != root else None
    holding = [c for c in checked if c == folder or c in folder.parents]
    nearest = max(holding, key=lambda c: len(c.parts), default=None)
    if nearest is not None and (root is None or root in nearest.parents):
        found.extend([nearest, nearest / "src"])
    unique: list[Path] = []
    for candidate in found:
        if candidate not in unique and candidate.is_dir():
            unique.append(candidate)
    return tuple(unique)


def module_name(path: Path, top: Path) -> str:
    """`pkg.sub.mod` for `top/pkg/sub/mod.py`; the package's name for its `__init__.py`.
    (From the paths' parts: every file of a checked tree is named, and making the relative
    path and its suffix-less copy as `Path` objects was most of it.)"""
    above = len(top.parts)
    if path.parts[:above] != top.parts or len(path.parts) == above:
        raise ValueError(f"{path} is not below {top}")
    parts = list(path.parts[above:])
    dot = parts[-1].rfind(".")
    if 0 < dot < len(parts[-1]) - 1:  # the suffix as `Path.suffix` finds it
        parts[-1] = parts[-1][:dot]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class Project:
    """The checked project: module resolution by probing the search paths, and each
    module's summary, from the cache (`known`) or computed once per process.

    `known` maps absolute paths to (content digest, summary) pairs from earlier runs;
    `checked` are the folders named on the command line; `computed` collects the
    summaries this process made, for the caller to cache."""

    def __init__(
        self,
        summarize: Summarizer,
        known: dict[str, tuple[str, Summary | None]] | None = None,
        checked: Iterable[Path] = (),
        read: Callable[[Path], bytes | Unreadable] = read_bytes,
    ) -> None:
        self._summarize = summarize
        # How a module's content is read: the language server reads open documents' unsaved text.
        self._read = read
        # The folders named on the command line, absolute: roots of checkouts without markers.
        self.checked = tuple(Path(os.path.abspath(folder)) for folder in checked)
        self.known: dict[str, tuple[str, Summary | None]] = dict(known or {})
        self.computed: dict[str, tuple[str, Summary | None]] = {}
        # Digests of files the caller has read this run (absolute path -> digest): a summary
        # known for that digest is used without reading the file again.
        self.read_digests: dict[str, str] = {}
        self._summaries: dict[Path, Summary | None] = {}
        self._searches: dict[Path, tuple[Path, ...]] = {}
        # The same by file: a file's search path is asked for at every lookup it makes.
        self._file_searches: dict[Path, tuple[Path, ...]] = {}
        # Answers of `lookup`: a check, and the validation of every cached result, looks the
        # same names up from the same folders again and again (every layer module of a
        # package asks for its base class).
        self._lookups: dict[tuple[str, tuple[Path, ...]], tuple[Entry | None, str]] = {}
        self._probes: dict[tuple[Path, str], Path | None] = {}
        self._refs: dict[Path, ModuleRef] = {}
        self._digests: dict[tuple[Path, str], str] = {}
        self._modules: dict[tuple[Path, str], list[Path] | None] = {}
        self._method_calls: dict[tuple[Path, frozenset[str]], dict[str, list[tuple[Path, str, dict[str, Any], str]]]] = {}
        self._facts: dict[tuple[Path, str, str], bool] = {}
        self._roots: dict[Path, Path] = {}
        self._scopes: dict[tuple[Path, str], tuple[Path, list[Path] | None]] = {}

    # -- files and modules

    def search(self, path: Path) -> tuple[Path, ...]:
        """The search path of a file: the same for every file of a folder."""
        found = self._file_searches.get(path)
        if found is None:
            found = self._searches.get(path.parent)
            if found is None:
                found = self._searches[path.parent] = search_path(path, self.checked)
            self._file_searches[path] = found
        return found

    def module_of(self, path: Path) -> ModuleRef:
        """The module that `path` is, named from the first folder of its search path."""
        ref = self._refs.get(path)
        if ref is None:
            search = self.search(path)
            ref = self._refs[path] = ModuleRef(module_name(path, search[0]) if search else path.stem, path, search)
        return ref

    def find_module(self, name: str, search: Iterable[Path]) -> ModuleRef | None:
        for folder in search:
            key = (folder, name)
            if key not in self._probes:
                self._probes[key] = _probe(folder, name)
            found = self._probes[key]
            if found is not None:
                ref = self._refs.get(found)
                if ref is None:
                    ref = self._refs[found] = ModuleRef(name, found, self.search(found))
                return ref
        return None

    def summary(self, path: Path) -> Summary | None:
        """The summary of the module in `path` (None: unreadable or not Python)."""
        if path in self._summaries:
            return self._summaries[path]
        key = os.path.abspath(path)
        known = self.known.get(key) or self.computed.get(key)
        if known is not None and known[0] == self.read_digests.get(key):
            self._summaries[path] = known[1]
            return known[1]
        data = self._read(path)
        summary: Summary | None = None
        if isinstance(data, bytes):
            digest = content_digest(data)
            if known is not None and known[0] == digest:
                summary = known[1]
            else:
                source = decode(path, data)
                text = getattr(source, "text", None)
                summary = self._summarize(text) if text is not None and getattr(source, "notebook", None) is None else None
                self.computed[key] = (digest, summary)
        self._summaries[path] = summary
        return summary

    def _summary_spelling(self, path: Path, names: Iterable[str]) -> Summary | None:
        """The summary of `path`, or None, without summarising it, where its text spells none
        of `names`: a definition spells its name (an identifier that is not plain ASCII
        could spell an ASCII name in other letters, which the parser normalises)."""
        if path not in self._summaries:
            key = os.path.abspath(path)
            known = self.known.get(key) or self.computed.get(key)
            if known is None or known[0] != self.read_digests.get(key):
                data = self._read(path)
                if isinstance(data, bytes) and data.isascii() and not any(name.encode() in data for name in names):
                    return None
        return self.summary(path)

    def take_computed(self) -> dict[str, tuple[str, Summary | None]]:
        """The summaries computed since the last call (a worker hands them to the parent)."""
        taken, self.computed = self.computed, {}
        self.known.update(taken)
        return taken

    # -- lookups by absolute name

    def lookup(self, name: str, search: tuple[Path, ...], seen: int = 0) -> tuple[Entry | None, str]:
        """The entry an absolute dotted name denotes, and the digest that the answer depends
        on: the entry's, or through re-exports the chain of aliases and the final entry's.
        Answered once per name and search path: what it reads (the modules found, their
        summaries) is fixed for the life of the project model."""
        if seen:
            return self._lookup(name, search, seen)
        key = (name, search)
        found = self._lookups.get(key)
        if found is None:
            found = self._lookups[key] = self._lookup(name, search, 0)
        return found

    def _lookup(self, name: str, search: tuple[Path, ...], seen: int) -> tuple[Entry | None, str]:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            ref = self.find_module(".".join(parts[:cut]), search)
            if ref is None:
                continue
            summary = self.summary(ref.path)
            rest = parts[cut:]
            top = (summary or {}).get("defs", {}).get(rest[0])
            if top is None:
                alias = (summary or {}).get("imports", {}).get(rest[0])
                target = ref.absolute(alias) if isinstance(alias, str) else None
                if target is not None and seen < MAX_REEXPORTS and target != ".".join(parts[: cut + 1]):
                    entry, digest = self.lookup(".".join([target, *rest[1:]]), ref.search, seen + 1)
                    return entry, f"{target}>{digest}"
                return None, MISSING
            digest = self._digest(ref, rest[0], top)
            entry = Entry(".".join(parts[: cut + 1]), top, ref)
            for member in rest[1:]:  # a method of a class
                inner = entry.data.get("methods", {}).get(member)
                if inner is None:
                    return None, digest
                entry = Entry(f"{entry.name}.{member}", inner, ref)
            return entry, digest
        return None, OUTSIDE

    def _digest(self, ref: ModuleRef, name: str, data: Any) -> str:
        key = (ref.path, name)
        found = self._digests.get(key)
        if found is None:
            found = self._digests[key] = entry_digest(data)
        return found

    def package_functions(self, path: Path, effects: Iterable[str]) -> list[str]:
        """The functions and methods of the other modules of `path`'s package (the `.py`
        files of its folder, when that folder has an `__init__.py`) whose own effects
        include all of `effects`, as sorted absolute names (`pkg.fit.Trainer.epoch`)."""
        wanted = set(effects)
        folder = path.parent
        found: list[str] = []
        if not (folder / "__init__.py").is_file():
            return found
        for sibling in folder.glob("*.py"):
            if sibling == path or sibling.name == "__init__.py":
                continue
            module = self.module_of(sibling).name
            for name, entry in ((self.summary(sibling) or {}).get("defs", {})).items():
                members = {name: entry} if entry.get("kind") == "function" else {
                    f"{name}.{method}": data for method, data in entry.get("methods", {}).items()
                }
                found.extend(f"{module}.{member}" for member, data in members.items() if wanted <= set(data.get("effects", ())))
        return sorted(found)

    def called_from_methods(self, path: Path, methods: Iterable[str]) -> dict[str, list[int]]:
        """The top-level functions of `path`'s module that a method named in `methods`, of a
        class of another module of `path`'s folder, calls (`layers.Encoding.forward` calling
        `functional.encode`), each with the positions at which those calls pass the method's
        own parameters (`encode(x, self.size)` in `forward(self, x)`: [0])."""
        found: dict[str, set[int]] = {}
        for name, data, written in self._sibling_method_calls(path, methods):
            found.setdefault(name, set()).update(data.get("passes", {}).get(written, ()))
        return {name: sorted(positions) for name, positions in sorted(found.items())}

    def mixed_by_methods(self, path: Path, methods: Iterable[str]) -> list[str]:
        """The top-level functions of `path`'s module whose results a method named in
        `methods`, of a class of another module of `path`'s folder, computes with as it got
        them (`x + encode(n)` in `forward`; not `encode(n).to(x.device)`)."""
        return sorted({name for name, data, written in self._sibling_method_calls(path, methods) if written in data.get("mixes", ())})

    def _sibling_method_calls(self, path: Path, methods: Iterable[str]) -> Iterable[tuple[str, dict[str, Any], str]]:
        """(function of `path`'s module, the summary of a method named in `methods` of a class
        of another module of its folder that calls it, the name as that method writes it)."""
        own = self.module_of(Path(os.path.abspath(path)))
        for sibling, function, data, written in self._folder_method_calls(own.path.parent, frozenset(methods)).get(own.name, ()):
            if sibling != own.path:
                yield function, data, written

    def _folder_method_calls(self, folder: Path, wanted: frozenset[str]) -> dict[str, list[tuple[Path, str, dict[str, Any], str]]]:
        """Every call of a top-level function that a method named in `wanted` of a class of
        a module of `folder` makes, by the called function's module: (the calling module,
        the function's name, the method's summary, the name as written); read once per
        folder, as every module of a folder asks it of the others, each about its own."""
        key = (folder, wanted)
        found = self._method_calls.get(key)
        if found is None:
            found = self._method_calls[key] = {}
            for sibling in sorted(folder.glob("*.py")):
                ref = self.module_of(sibling)
                for entry in ((self._summary_spelling(sibling, wanted) or {}).get("defs", {})).values():
                    for method, data in entry.get("methods", {}).items() if entry.get("kind") == "class" else ():
                        if method in wanted:
                            for written in data.get("calls", ()):
                                module, dot, function = (ref.absolute(written) or "").rpartition(".")
                                if dot:
                                    found.setdefault(module, []).append((sibling, function, data, written))
        return found

    def root_of(self, path: Path) -> Path:
        """The folder that holds `path`'s project (see the module docstring); the same for
        every file of a folder."""
        folder = Path(os.path.abspath(path)).parent
        found = self._roots.get(folder)
        if found is None:
            marked = next((f for f in (folder, *folder.parents) if any((f / m).exists() for m in ROOT_MARKERS)), None)
            holding = [c for c in self.checked if c == folder or c in folder.parents]
            candidates = [f for f in (marked, max(holding, key=lambda c: len(c.parts), default=None)) if f is not None]
            found = self._roots[folder] = max(candidates, key=lambda f: len(f.parts), default=folder)
        return found

    def any_module(self, path: Path, fact: str, scope: str = WHOLE_PROJECT) -> bool:
        """Whether the summary of some module around `path` says `fact` (a module-level flag:
        `places_on_device`, `sets_epoch`): in `WHOLE_PROJECT`, every module below the
        project's root; in `OWN_PACKAGE`, the modules of the file's top package (for a file
        in no regular package, of the root's sub-folder that holds it, which imports as a
        namespace package) and the scripts beside that package and at the root, which run
        it. False when there are more than `MAX_PROJECT_MODULES` modules."""
        top, modules = self.scope_modules(path, scope)
        key = (top, scope, fact)
        found = self._facts.get(key)
        if found is None:
            found = self._facts[key] = modules is not None and any(
                (self.summary(module) or {}).get(fact, False) for module in modules
            )
        return found

    def scope_modules(self, path: Path, scope: str) -> tuple[Path, list[Path] | None]:
        """The folder that names the scope, and its modules (see `any_module`); the same for
        every file of a folder."""
        key = (Path(os.path.abspath(path)).parent, scope)
        found = self._scopes.get(key)
        if found is None:
            found = self._scopes[key] = self._scope_modules(path, scope)
        return found

    def _scope_modules(self, path: Path, scope: str) -> tuple[Path, list[Path] | None]:
        root = self.root_of(path)
        if scope == WHOLE_PROJECT:
            top, deep = root, [root]
            shallow: list[Path] = []
        else:
            folder = Path(os.path.abspath(path)).parent
            top = folder
            while (top / "__init__.py").is_file() and (top.parent / "__init__.py").is_file() and top != root:
                top = top.parent
            if not (top / "__init__.py").is_file() and folder != root and root in folder.parents:
                # Folders without `__init__.py` import as namespace packages from the root:
                # the package is the root's sub-folder that holds the file.
                top = root / folder.relative_to(root).parts[0]
            deep = [top] if top != root else []
            shallow = [*([top.parent] if top.parent != root else []), root]
        cache_key = (top, scope)
        if cache_key not in self._modules:
            walks = [_project_modules(folder) for folder in deep]
            found: list[Path] | None = None
            if all(walk is not None for walk in walks):
                modules = dict.fromkeys(path for walk in walks for path in walk or ())
                modules.update(dict.fromkeys(p for folder in shallow for p in sorted(folder.glob("*.py"))))
                found = list(modules)
            self._modules[cache_key] = found
        return top, self._modules[cache_key]

    def still_valid(self, path: Path, deps: dict[str, str]) -> bool:
        """Whether every dependency recorded for `path` would be recorded the same now.
        A key is an absolute name, looked up from `path`'s search path or, after `@`,
        from the search path of the module file named there; `PACKAGE` and a list of
        effects stand for the functions of `path`'s package that have them."""
        for key, digest in deps.items():
            if key.startswith(PROJECT):
                fact, _, scope = key[len(PROJECT) :].partition("@")
                if str(self.any_module(path, fact, scope)) != digest:
                    return False
                continue
            answers = ((CALLERS, self.called_from_methods), (MIXERS, self.mixed_by_methods), (PACKAGE, self.package_functions))
            asked = next(((prefix, answer) for prefix, answer in answers if key.startswith(prefix)), None)
            if asked is not None:
                prefix, answer = asked
                if entry_digest(answer(path, key[len(prefix) :].split(","))) != digest:
                    return False
                continue
            name, _, where = key.partition("@")
            search = self.search(Path(where)) if where else self.search(path)
            if self.lookup(name, search)[1] != digest:
                return False
        return True


@dataclass
class ProjectView:
    """What one checked file sees of the project: lookups resolve through the file's own
    module name and search path, and each records a dependency."""

    project: Project
    module: ModuleRef
    used: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, project: Project, path: Path) -> ProjectView:
        return cls(project, project.module_of(Path(os.path.abspath(path))))

    def lookup(self, written: str, where: ModuleRef | None = None) -> Entry | None:
        """The entry for a name as written in `where` (default: this file's module):
        `:f`, relative or absolute; None outside the project or when not found."""
        where = where or self.module
        name = where.absolute(written)
        if name is None or "." not in name:
            return None
        entry, digest = self.project.lookup(name, where.search)
        key = name if where.search == self.module.search else f"{name}@{where.path}"
        self.used[key] = digest
        return entry


    def called_from_methods(self, methods: Iterable[str]) -> dict[str, list[int]]:
        """This module's functions that methods named in `methods` of other modules of its
        folder call (see `Project.called_from_methods`); the answer is the dependency."""
        wanted = sorted(set(methods))
        found = self.project.called_from_methods(self.module.path, wanted)
        self.used[CALLERS + ",".join(wanted)] = entry_digest(found)
        return found

    def mixed_by_methods(self, methods: Iterable[str]) -> list[str]:
        """This module's functions whose results methods named in `methods` of other modules
        of its folder compute with (see `Project.mixed_by_methods`); the answer is the dependency."""
        wanted = sorted(set(methods))
        found = self.project.mixed_by_methods(self.module.path, wanted)
        self.used[MIXERS + ",".join(wanted)] = entry_digest(found)
        return found

    def any_module(self, fact: str, scope: str = WHOLE_PROJECT) -> bool:
        """Whether some module around this file says `fact` (see `Project.any_module`); the
        answer is the dependency."""
        found = self.project.any_module(self.module.path, fact, scope)
        self.used[f"{PROJECT}{fact}@{scope}"] = str(found)
        return found

    def package_functions(self, effects: Iterable[str]) -> list[str]:
        """The functions of the other modules of this file's package that have all of
        `effects` (see `Project.package_functions`); the answer is the dependency."""
        wanted = sorted(set(effects))
        found = self.project.package_functions(self.module.path, wanted)
        self.used[PACKAGE + ",".join(wanted)] = entry_digest(found)
        return found


def _project_modules(root: Path) -> list[Path] | None:
    """The `.py` files below `root`, outside hidden folders, virtual environments and build
    output; None when there are more than `MAX_PROJECT_MODULES`."""
    found: list[Path] = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            name for name in subfolders
            if not name.startswith(".") and name not in _NOT_PROJECT and not os.path.exists(os.path.join(folder, name, "pyvenv.cfg"))
        )
        found.extend(Path(folder, name) for name in sorted(files) if name.endswith(".py"))
        if len(found) > MAX_PROJECT_MODULES:
            return None
    return found


def _probe(folder: Path, name: str) -> Path | None:
    base = folder.joinpath(*name.split("."))
    for candidate in (base.with_name(base.name + ".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None
