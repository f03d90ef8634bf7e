"""Dataflow of local names: which binding a use of a name reads (the latest one before it in
source order, or every one that may reach it along some path), what assignment targets
bind, and the module-wide table of values assigned to each dotted name.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import dotted


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class Binding:
    """One binding of a local name, in effect after source order `order`.

    `value` is the assigned expression when the target is the bare name (`y = expr`,
    `y: T = expr`, `a = y = expr`, `(y := expr)`); None when the bound value is not an
    expression of the code (unpacking, loop targets, `with ... as`, augmented assignment,
    parameters, imports, `except ... as`, `del`, nested `def`/`class`).
    """

    name: str
    order: int
    node: cst.CSTNode
    value: cst.BaseExpression | None


_BINDING_NODES: tuple[type[cst.CSTNode], ...] = (
    cst.Assign,
    cst.AnnAssign,
    cst.AugAssign,
    cst.NamedExpr,
    cst.For,
    cst.WithItem,
    cst.Param,
    cst.ExceptHandler,
    cst.Del,
    cst.Import,
    cst.ImportFrom,
    cst.FunctionDef,
    cst.ClassDef,
)


def target_elements(target: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What an assignment target assigns to: `a`, `x.a`, `x[i]`, each leaf of `a, (b, *c)`."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [leaf for element in target.elements for leaf in target_elements(element.value)]
    if isinstance(target, cst.StarredElement):
        return target_elements(target.value)
    return [target]


def target_names(target: cst.BaseExpression) -> list[cst.Name]:
    """Bare names bound by an assignment target (`a`, `a, (b, *c)`); not `x.a` or `x[i]`."""
    return [leaf for leaf in target_elements(target) if isinstance(leaf, cst.Name)]


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Dotted names that an assignment or augmented assignment binds: `a`, `self.total`, each
    element of a tuple target."""
    targets: list[cst.BaseExpression] = []
    if isinstance(node, cst.Assign):
        for target in node.targets:
            inner = target.target
            targets.extend(e.value for e in inner.elements) if isinstance(
                inner, (cst.Tuple, cst.List)
            ) else targets.append(inner)
    elif isinstance(node, cst.AugAssign):
        targets.append(node.target)
    return {name for t in targets if (name := dotted(t)) is not None}


def assigned_values(ctx: FileContext) -> dict[str, list[cst.BaseExpression]]:
    """Dotted name (`device`, `self.model`) -> every value assigned to it in the module by a
    plain `=` (the whole right-hand side for each name of a tuple target)."""
    return ctx.analysis(_build_assigned_values)


def _build_assigned_values(ctx: FileContext) -> dict[str, list[cst.BaseExpression]]:
    table: dict[str, list[cst.BaseExpression]] = defaultdict(list)
    for assign in index(ctx).nodes(cst.Assign):
        for target in assign.targets:
            for element in target_elements(target.target):
                name = dotted(element)
                if name:
                    table[name].append(assign.value)
    return table


class Bindings:
    """Bindings of local names per function (or module), built lazily per scope."""

    def __init__(self, idx: Index) -> None:
        self.idx = idx
        self._scopes: dict[int, dict[str, list[Binding]]] = {}

    def of(self, scope: cst.CSTNode) -> dict[str, list[Binding]]:
        """Name -> its bindings in `scope` (not in nested functions), in source order."""
        table = self._scopes.get(id(scope))
        if table is None:
            table = self._scopes[id(scope)] = self._build(scope)
        return table

    def before(self, scope: cst.CSTNode, name: str, order: int) -> Binding | None:
        """The latest binding of `name` in `scope` that ends before source order `order`."""
        found = self.of(scope).get(name)
        if not found:
            return None
        i = bisect_left([b.order for b in found], order)
        return found[i - 1] if i else None

    def seen_by(self, use: cst.Name) -> Binding | None:
        """The binding that the name `use` reads, or None (a global, a builtin, unbound)."""
        scope = self.idx.scope(use)
        comprehension = self._comprehension_binding(use, scope)
        if comprehension is not None:
            return comprehension
        return self.before(scope, use.value, self.idx.order(use))

    def _comprehension_binding(self, use: cst.Name, scope: cst.CSTNode) -> Binding | None:
        """The binding of a comprehension's own loop variable that `use` reads, if it does."""
        for ancestor in self.idx.ancestors(use):
            if ancestor is scope:
                break
            if isinstance(ancestor, _COMPREHENSIONS) and use.value in _comprehension_names(ancestor):
                return Binding(use.value, self.idx.order(ancestor), ancestor, None)
        return None

    def reaching(self, use: cst.Name) -> list[Binding]:
        """Every binding that `use` may read along some path through its function, in
        source order: both arms of an `if`, a loop body's bindings through the back edge,
        a `try` body's bindings in its handlers. Empty for a global, a builtin or an
        unbound name. Early exits (`return`, `break`) are not followed, so the answer may
        hold a binding that cannot reach in fact: callers that need every reaching value to
        agree stay on the safe side."""
        idx = self.idx
        scope = idx.scope(use)
        comprehension = self._comprehension_binding(use, scope)
        if comprehension is not None:
            return [comprehension]
        found = self.of(scope).get(use.value)
        if not found:
            return []
        if not isinstance(scope, cst.FunctionDef | cst.Module):
            return list(found)  # a lambda binds only its parameters
        return _Reaching(idx, found, scope).before(use)

    def _build(self, scope: cst.CSTNode) -> dict[str, list[Binding]]:
        idx = self.idx
        table: dict[str, list[Binding]] = defaultdict(list)
        for node in idx.within(scope, *_BINDING_NODES):
            if node is scope or idx.scope(node) is not scope:
                continue
            for name, order, value in _bound(idx, node):
                table[name].append(Binding(name, order, node, value))
        for found in table.values():
            found.sort(key=lambda b: b.order)
        return dict(table)


_BLOCKS = (cst.IndentedBlock, cst.SimpleStatementSuite, cst.SimpleStatementLine, cst.Module)


class _Reaching:
    """A backward walk over the statements of one function for one name's bindings."""

    def __init__(self, idx: Index, found: list[Binding], scope: cst.FunctionDef | cst.Module) -> None:
        self.idx = idx
        self.found = found
        self.orders = [b.order for b in found]
        self.scope = scope

    def inside(self, node: cst.CSTNode) -> list[Binding]:
        lo, hi = self.idx.order(node), self.idx.end(node)
        return self.found[bisect_left(self.orders, lo) : bisect_right(self.orders, hi)]

    def before(self, use: cst.Name) -> list[Binding]:
        idx = self.idx
        out: list[Binding] = []
        current: cst.CSTNode = idx.statement(use)
        if isinstance(current, cst.While) and idx.contains(current.test, use):
            out.extend(self.inside(current.body))
        while current is not self.scope:
            parent = idx.parent(current)
            if parent is None:
                break
            if isinstance(parent, _BLOCKS):
                body = list(parent.body)
                position = next(i for i, node in enumerate(body) if node is current)
                for previous in reversed(body[:position]):
                    defs, must = self.exit(previous)
                    out.extend(defs)
                    if must:
                        return sorted(out, key=lambda b: b.order)
            else:
                defs, must = self.entering(parent, current)
                out.extend(defs)
                if must:
                    return sorted(out, key=lambda b: b.order)
            current = parent
        if isinstance(self.scope, cst.FunctionDef):
            out.extend(b for b in self.found if isinstance(b.node, cst.Param))
        return sorted(out, key=lambda b: b.order)

    def entering(self, owner: cst.CSTNode, part: cst.CSTNode) -> tuple[list[Binding], bool]:
        """Bindings that reach the start of `part`, a block or clause of `owner`, from
        inside `owner` itself; and whether one of them surely does."""
        if isinstance(owner, (cst.For, cst.While)) and (part is owner.body or part is owner.orelse):
            target = self.bound_by(owner)
            if target and part is owner.body:
                return target, True
            return self.inside(owner.body) + target, False
        if isinstance(owner, (cst.Try, cst.TryStar)) and part is not owner.body:
            defs = self.inside(owner.body)
            if part is owner.finalbody:
                defs += [b for h in owner.handlers for b in self.inside(h)]
                defs += self.inside(owner.orelse) if owner.orelse is not None else []
            return defs, False
        if isinstance(owner, (cst.ExceptHandler, cst.ExceptStarHandler, cst.With)) and part is owner.body:
            bound = self.bound_by(owner)
            return bound[-1:], bool(bound)
        return [], False

    def bound_by(self, owner: cst.CSTNode) -> list[Binding]:
        """Bindings made by the header of `owner`: a loop target, `except ... as`, `with ... as`."""
        heads = [owner, *owner.items] if isinstance(owner, cst.With) else [owner]
        return [b for b in self.found if any(b.node is head for head in heads)]

    def exit(self, statement: cst.CSTNode) -> tuple[list[Binding], bool]:
        """Bindings made inside `statement` that may still hold after it, and whether
        `statement` surely binds the name."""
        defs = self.inside(statement)
        if not defs:
            return [], False
        if isinstance(statement, cst.If):
            body, must_body = self.block_exit(statement.body)
            orelse, must_else = self.block_exit(statement.orelse) if statement.orelse is not None else ([], False)
            return body + orelse, must_body and must_else
        if isinstance(statement, cst.Else):
            return self.block_exit(statement.body)
        if isinstance(statement, cst.With):
            body, must = self.block_exit(statement.body)
            items = self.bound_by(statement)
            return (body, True) if must else (body + items[-1:], bool(items))
        if isinstance(statement, cst.BaseCompoundStatement) and not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return defs, False  # loops, try, match: may bind or not
        return [defs[-1]], True

    def block_exit(self, block: cst.CSTNode) -> tuple[list[Binding], bool]:
        if isinstance(block, (cst.If, cst.Else)):
            return self.exit(block)
        out: list[Binding] = []
        for statement in reversed(list(getattr(block, "body", ()))):
            defs, must = self.exit(statement)
            out.extend(defs)
            if must:
                return out, True
        return out, False


def _comprehension_names(comp: cst.CSTNode) -> set[str]:
    names: set[str] = set()
    for_in = getattr(comp, "for_in", None)
    while isinstance(for_in, cst.CompFor):
        names.update(n.value for n in target_names(for_in.target))
        for_in = for_in.inner_for_in
    return names


def _bound(idx: Index, node: cst.CSTNode) -> list[tuple[str, int, cst.BaseExpression | None]]:
    """(name, order after which it is bound, assigned expression or None) for one node."""
    end = idx.end(node)
    if isinstance(node, cst.Assign):
        out: list[tuple[str, int, cst.BaseExpression | None]] = []
        for t in node.targets:
            plain = isinstance(t.target, cst.Name)
            out.extend((n.value, end, node.value if plain else None) for n in target_names(t.target))
        return out
    if isinstance(node, cst.AnnAssign):
        if node.value is None:
            return []
        plain = isinstance(node.target, cst.Name)
        return [(n.value, end, node.value if plain else None) for n in target_names(node.target)]
    if isinstance(node, cst.AugAssign):
        return [(n.value, end, None) for n in target_names(node.target)]
    if isinstance(node, cst.NamedExpr):
        return [(n.value, end, node.value) for n in target_names(node.target)]
    if isinstance(node, cst.For):
        return [(n.value, idx.end(node.iter), None) for n in target_names(node.target)]
    if isinstance(node, cst.WithItem):
        if node.asname is None:
            return []
        return [(n.value, end, None) for n in target_names(node.asname.name)]
    if isinstance(node, cst.Param):
        return [(node.name.value, end, None)]
    if isinstance(node, cst.ExceptHandler):
        if node.name is None or not isinstance(node.name.name, cst.Name):
            return []
        return [(node.name.name.value, idx.order(node.body), None)]
    if isinstance(node, cst.Del):
        return [(n.value, end, None) for n in target_names(node.target)]
    if isinstance(node, (cst.Import, cst.ImportFrom)):
        if isinstance(node.names, cst.ImportStar):
            return []
        out = []
        for alias in node.names:
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                out.append((alias.asname.name.value, end, None))
            else:
                out.append(((dotted(alias.name) or "").partition(".")[0], end, None))
        return out
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return [(node.name.value, end, None)]
    return []


def bindings(ctx: FileContext) -> Bindings:
    return ctx.analysis(_build_bindings)


def _build_bindings(ctx: FileContext) -> Bindings:
    return Bindings(index(ctx))


def bound_target(idx: Index, value: cst.CSTNode) -> cst.BaseExpression | None:
    """What `value` is assigned to: `x = value`, `x: T = value`, `x = value if c else None`,
    `(x := value)`. With several targets (`a = b = value`), the first."""
    current = value
    parent = idx.parent(current)
    while isinstance(parent, cst.IfExp) and current is not parent.test:
        current, parent = parent, idx.parent(parent)
    if isinstance(parent, cst.Assign) and parent.value is current:
        return parent.targets[0].target
    if isinstance(parent, (cst.AnnAssign, cst.NamedExpr)) and parent.value is current:
        return parent.target
    return None
