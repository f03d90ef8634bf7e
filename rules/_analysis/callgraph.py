"""The module's functions and methods, the classes that hold them, and a conservative call
graph: which local functions a call may run (`f()`, `self.f()`, `Class.f()`, each name looked
up where Python would), which local functions a scope reaches (also through a
`functools.partial(f, ...)` or a closure that a local factory returns, called or passed on),
and where a function is called from.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import dotted, imports, last_name


@dataclass
class Functions:
    """The module's functions, their classes, and which local functions a call may reach."""

    idx: Index
    all: list[cst.FunctionDef]
    by_name: dict[str, list[cst.FunctionDef]]
    class_of: dict[int, cst.ClassDef]
    methods: dict[str, dict[str, cst.FunctionDef]]
    bases: dict[str, list[str]]
    # Name -> the `functools.partial(f, ...)` calls assigned to it (`fn = partial(fn_base, opt)`).
    partials: dict[str, list[cst.Call]] = field(default_factory=dict)
    # Name -> the calls of a plain name assigned to it (`step = make_step(model, opt)`).
    factory_calls: dict[str, list[cst.Call]] = field(default_factory=dict)
    _callees: dict[int, list[cst.FunctionDef]] = field(default_factory=dict)
    _sites: dict[int, list[cst.Call]] | None = None

    def enclosing_class(self, func: cst.FunctionDef) -> cst.ClassDef | None:
        return self.class_of.get(id(func))

    def method(self, class_name: str, name: str, _seen: frozenset[str] = frozenset()) -> cst.FunctionDef | None:
        found = self.methods.get(class_name, {}).get(name)
        if found is not None or class_name in _seen:
            return found
        for base in self.bases.get(class_name, ()):
            found = self.method(base, name, _seen | {class_name})
            if found is not None:
                return found
        return None

    def visible(self, name: str, at: cst.CSTNode) -> list[cst.FunctionDef]:
        """Local functions (not methods) called `name` that code at `at` can see: those of the
        module's top level and those nested in a function that holds `at` (a same-named
        nested function of another function is not)."""
        return [
            f
            for f in self.by_name.get(name, [])
            if id(f) not in self.class_of
            and (isinstance(home := self.idx.scope(f), cst.Module) or self.idx.contains(home, at))
        ]

    def partial_of(self, name: cst.Name) -> list[tuple[cst.FunctionDef, cst.Call]]:
        """The local functions that `name` holds through `functools.partial(f, ...)` assigned to
        it in a scope that holds the use, each with that `partial(...)` call."""
        found: list[tuple[cst.FunctionDef, cst.Call]] = []
        for partial in self.partials.get(name.value, []):
            if not self.idx.contains(self.idx.scope(partial), name) or not partial.args:
                continue
            target = partial.args[0].value
            if isinstance(target, cst.Name):
                found.extend((f, partial) for f in self.visible(target.value, partial))
        return found

    def made_by_factory(self, name: cst.Name) -> list[cst.FunctionDef]:
        """The nested functions that `name` holds as what a local factory returned
        (`train_batch = make_trainer(model, opt)`, where `make_trainer` defines and returns
        `train_batch`), assigned in a scope that holds the use."""
        found: list[cst.FunctionDef] = []
        for made in self.factory_calls.get(name.value, []):
            if not self.idx.contains(self.idx.scope(made), name):
                continue
            for factory in self.resolve(made):
                nested = {f.name.value: f for f in self.idx.within(factory, cst.FunctionDef) if f is not factory}
                for ret in self.idx.within(factory, cst.Return):
                    if isinstance(ret.value, cst.Name) and ret.value.value in nested and self.idx.scope(ret) is factory:
                        found.append(nested[ret.value.value])
        return found

    def held_by(self, name: cst.Name) -> list[cst.FunctionDef]:
        """Local functions that a use of `name` may run though no `def` has that name: a
        `functools.partial(f, ...)` of one, or a closure a local factory returned."""
        return [*(f for f, _ in self.partial_of(name)), *self.made_by_factory(name)]

    def resolve(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Local functions that `call` may run: `f()`, `self.f()`, `cls.f()`, `Class.f()`."""
        return self.referenced(call.func)

    def referenced(self, func: cst.BaseExpression) -> list[cst.FunctionDef]:
        """Local functions that the expression `func` (of this module's tree) names, called
        or not: `f`, `self.f`, `cls.f`, `Class.f`."""
        if isinstance(func, cst.Name):
            return self.visible(func.value, func)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = func.value.value
            if owner in ("self", "cls"):
                current = self.idx.enclosing(func, (cst.FunctionDef,))
                while current is not None and id(current) not in self.class_of:
                    current = self.idx.enclosing(current, (cst.FunctionDef,))
                if current is not None:
                    found = self.method(self.class_of[id(current)].name.value, func.attr.value)
                    return [found] if found is not None else []
                return []
            if owner in self.methods:
                found = self.method(owner, func.attr.value)
                return [found] if found is not None else []
        return []

    def passed_functions(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Local functions (not methods) that `call` receives by name as arguments, and so may
        run: the closure of `optimizer.step(closure)`, a callback."""
        return [func for func, _ in self.passed_closures(call)]

    def passed_closures(self, call: cst.Call) -> list[tuple[cst.FunctionDef, cst.Call | None]]:
        """`passed_functions`, each with the `functools.partial(f, ...)` call that binds its
        leading parameters when the argument is such a partial (None: passed by name)."""
        found: list[tuple[cst.FunctionDef, cst.Call | None]] = []
        for arg in call.args:
            if isinstance(arg.value, cst.Name):
                found.extend((f, None) for f in self.visible(arg.value.value, call))
                found.extend(self.partial_of(arg.value))
        return found

    def references(self, scope: cst.CSTNode) -> list[cst.FunctionDef]:
        """Local functions that `scope` calls or names (a callback or closure passed on)."""
        key = id(scope)
        cached = self._callees.get(key)
        if cached is not None:
            return cached
        found: dict[int, cst.FunctionDef] = {}
        for call in self.idx.within(scope, cst.Call):
            for f in self.resolve(call):
                found[id(f)] = f
            if isinstance(call.func, cst.Name) and not self.visible(call.func.value, call):
                for f in self.held_by(call.func):
                    found[id(f)] = f
        for name in self.idx.within(scope, cst.Name):
            parent = self.idx.parent(name)
            if isinstance(parent, (cst.Call, cst.FunctionDef)) or (
                isinstance(parent, cst.Attribute) and parent.attr is name
            ):
                continue
            for f in [*self.visible(name.value, name), *self.held_by(name)]:
                found[id(f)] = f
        for nested in self.idx.within(scope, cst.FunctionDef):
            if nested is not scope:
                found[id(nested)] = nested
        result = self._callees[key] = [f for f in found.values() if f is not scope]
        return result

    def reachable(self, scope: cst.CSTNode) -> list[cst.CSTNode]:
        """`scope` and every local function it may run, transitively."""
        seen: dict[int, cst.CSTNode] = {id(scope): scope}
        stack: list[cst.CSTNode] = [scope]
        while stack:
            current = stack.pop()
            for f in self.references(current):
                if id(f) not in seen:
                    seen[id(f)] = f
                    stack.append(f)
        return list(seen.values())

    def call_sites(self, func: cst.FunctionDef) -> list[cst.Call]:
        """Calls in the module that may run `func` (methods also through `obj.name(...)`)."""
        if self._sites is None:
            sites: dict[int, list[cst.Call]] = defaultdict(list)
            method_names = {name for methods in self.methods.values() for name in methods}
            for call in self.idx.nodes(cst.Call):
                targets = {id(f): f for f in self.resolve(call)}
                func_expr = call.func
                if (
                    isinstance(func_expr, cst.Attribute)
                    and func_expr.attr.value in method_names
                    and dotted(func_expr.value) not in ("self", "cls")
                ):
                    for methods in self.methods.values():
                        found = methods.get(func_expr.attr.value)
                        if found is not None:
                            targets[id(found)] = found
                for key in targets:
                    sites[key].append(call)
            self._sites = sites
        return self._sites.get(id(func), [])


def functions(ctx: FileContext) -> Functions:
    return ctx.analysis(_build_functions)


def _build_functions(ctx: FileContext) -> Functions:
    idx = index(ctx)
    all_funcs = idx.nodes(cst.FunctionDef)
    by_name: dict[str, list[cst.FunctionDef]] = defaultdict(list)
    class_of: dict[int, cst.ClassDef] = {}
    methods: dict[str, dict[str, cst.FunctionDef]] = defaultdict(dict)
    for func in all_funcs:
        by_name[func.name.value].append(func)
        block = idx.parent(func)
        owner = idx.parent(block) if block is not None else None
        if isinstance(owner, cst.ClassDef):
            class_of[id(func)] = owner
            methods[owner.name.value][func.name.value] = func
    bases = {
        cls.name.value: [b for b in (last_name(arg.value) for arg in cls.bases) if b]
        for cls in idx.nodes(cst.ClassDef)
    }
    imps = imports(ctx)
    partials: dict[str, list[cst.Call]] = defaultdict(list)
    factory_calls: dict[str, list[cst.Call]] = defaultdict(list)
    for assign in idx.nodes(cst.Assign):
        value = assign.value
        if not isinstance(value, cst.Call):
            continue
        held = partials if imps.callee(value) == "functools.partial" else factory_calls
        if held is factory_calls and not (isinstance(value.func, cst.Name) and value.func.value in by_name):
            continue
        for target in assign.targets:
            if isinstance(target.target, cst.Name):
                held[target.target.value].append(value)
    return Functions(idx, all_funcs, by_name, class_of, methods, bases, partials, factory_calls)
