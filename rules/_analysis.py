"""Analyses that several rules share, each computed at most once per file.

- `index(ctx)`: one fast walk over the tree: parents, source order, nodes by type.
  (LibCST's own visitor and metadata providers cost several times more; rules that
  need a node kind look it up here instead of walking the tree again.)
- `imports(ctx)`: the import-alias map, so that `import torch as T`, `from torch import
  optim` and `from time import perf_counter` resolve to qualified names.
- `functions(ctx)`: functions and methods of the module and a conservative call graph.
- Small helpers about calls, names, loops and gradient-free contexts.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence, TypeVar, cast, overload

import libcst as cst

from torchlint.rule import FileContext

N = TypeVar("N", bound=cst.CSTNode)
M = TypeVar("M", bound=cst.CSTNode)
O = TypeVar("O", bound=cst.CSTNode)
P = TypeVar("P", bound=cst.CSTNode)

# ---------------------------------------------------------------------------
# The index: one walk over the tree.

# Fields that hold only whitespace, punctuation or operators: never code to analyse.
_SKIPPED_FIELDS = frozenset(
    {
        "lpar",
        "rpar",
        "comma",
        "semicolon",
        "dot",
        "equal",
        "colon",
        "leading_lines",
        "lines_after_decorators",
        "trailing_whitespace",
        "leading_whitespace",
        "header",
        "footer",
        "indent",
        "newline",
        "lbracket",
        "rbracket",
        "lbrace",
        "rbrace",
        "asynchronous",
        "operator",
        "first_colon",
        "second_colon",
        "separator",
        "relative",
        "empty_lines",
        "first_line",
        "last_line",
        "comment",
    }
)
# Source order where it differs from the dataclass field order.
_FIELD_ORDER_OVERRIDES: dict[type[cst.CSTNode], tuple[str, ...]] = {
    cst.FunctionDef: ("decorators", "name", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "bases", "keywords", "body"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
_field_cache: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _field_cache.get(node_type)
    if fields is None:
        fields = _FIELD_ORDER_OVERRIDES.get(node_type) or tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace")
        )
        _field_cache[node_type] = fields
    return fields


# LibCST's node classes are ABCs: `isinstance(value, cst.CSTNode)` goes through
# `ABCMeta.__instancecheck__`, ten times the cost of this dict lookup, and the walks
# below make it for every field of every node.
_is_node_type: dict[type, bool] = {}


def _node_type(kind: type) -> bool:
    known = _is_node_type.get(kind)
    if known is None:
        known = _is_node_type[kind] = issubclass(kind, cst.CSTNode)
    return known


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Code-bearing children in source order (cheaper than `node.children`)."""
    out: list[cst.CSTNode] = []
    for name in _child_fields(type(node)):
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend([v for v in value if _node_type(type(v))])
        elif _node_type(kind):
            out.append(value)
    return out


# Lists up to this long are sorted on each `Index.sorted_orders` call, not cached.
UNCACHED_ORDERS = 16


class Index:
    """Parents, source order and nodes by type for one module."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._parent: dict[int, cst.CSTNode] = {}
        self._enter: dict[int, int] = {}
        self._exit: dict[int, int] = {}
        self._by_type: dict[type, list[cst.CSTNode]] = defaultdict(list)
        self._orders: dict[type, list[int]] = {}
        self._sorted_orders: dict[int, tuple[Sequence[cst.CSTNode], list[int], list[int]]] = {}
        parent, enter, exit_, by_type = self._parent, self._enter, self._exit, self._by_type
        counter = 0
        stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
        while stack:
            node, done = stack.pop()
            if done:
                exit_[id(node)] = counter - 1
                continue
            enter[id(node)] = counter
            counter += 1
            by_type[type(node)].append(node)
            stack.append((node, True))
            kids = children(node)
            for child in reversed(kids):
                parent[id(child)] = node
                stack.append((child, False))

    @overload
    def nodes(self, first: type[N], /) -> list[N]: ...
    @overload
    def nodes(self, first: type[N], second: type[M], /) -> list[N | M]: ...
    @overload
    def nodes(self, first: type[N], second: type[M], third: type[O], /) -> list[N | M | O]: ...

    def nodes(self, *types: type[cst.CSTNode]) -> list[cst.CSTNode]:  # type: ignore[misc]
        """All nodes of the given types, in source order."""
        if len(types) == 1:
            return list(self._by_type.get(types[0], ()))
        found = [n for t in types for n in self._by_type.get(t, ())]
        return sorted(found, key=self.order)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parent.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parent.get(id(node))
        while current is not None:
            yield current
            current = self._parent.get(id(current))

    def order(self, node: cst.CSTNode) -> int:
        """Position of `node` in source order (pre-order number)."""
        return self._enter[id(node)]

    def end(self, node: cst.CSTNode) -> int:
        """The largest source-order number inside `node`."""
        return self._exit[id(node)]

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return self._enter[id(outer)] <= self._enter[id(inner)] <= self._exit[id(outer)]

    @overload
    def within(self, scope: cst.CSTNode, first: type[N], /) -> list[N]: ...
    @overload
    def within(self, scope: cst.CSTNode, first: type[N], second: type[M], /) -> list[N | M]: ...
    @overload
    def within(
        self, scope: cst.CSTNode, first: type[N], second: type[M], third: type[O], /
    ) -> list[N | M | O]: ...
    @overload
    def within(
        self, scope: cst.CSTNode, first: type[N], second: type[M], third: type[O], fourth: type[P], /
    ) -> list[N | M | O | P]: ...

    def within(self, scope: cst.CSTNode, *types: type[cst.CSTNode]) -> list[cst.CSTNode]:  # type: ignore[misc]
        """Nodes of `types` inside `scope` (itself included), in source order."""
        lo, hi = self._enter[id(scope)], self._exit[id(scope)]
        found: list[cst.CSTNode] = []
        for node_type in types:
            nodes = self._by_type.get(node_type)
            if not nodes:
                continue
            orders = self._orders_of(node_type)
            found.extend(nodes[bisect_left(orders, lo) : bisect_right(orders, hi)])
        if len(types) > 1:
            found.sort(key=self.order)
        return found

    def sorted_orders(self, nodes: Sequence[cst.CSTNode]) -> tuple[list[int], list[int]]:
        """The source-order numbers of `nodes`, sorted, and each one's position in `nodes`;
        computed once per long list (which must not change afterwards). Short lists, often
        built afresh for each call, are sorted each time rather than kept."""
        cached = self._sorted_orders.get(id(nodes))
        if cached is None or cached[0] is not nodes:
            pairs = sorted((self._enter[id(node)], position) for position, node in enumerate(nodes))
            cached = (nodes, [o for o, _ in pairs], [p for _, p in pairs])
            if len(nodes) > UNCACHED_ORDERS:
                self._sorted_orders[id(nodes)] = cached
        return cached[1], cached[2]

    def _orders_of(self, node_type: type) -> list[int]:
        orders = self._orders.get(node_type)
        if orders is None:
            orders = self._orders[node_type] = [self._enter[id(n)] for n in self._by_type[node_type]]
        return orders

    def enclosing(self, node: cst.CSTNode, types: tuple[type[N], ...]) -> N | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, types):
                return ancestor
        return None

    def scope(self, node: cst.CSTNode) -> cst.FunctionDef | cst.Lambda | cst.Module:
        """The function (or lambda, or module) whose code `node` belongs to."""
        found = self.enclosing(node, (cst.FunctionDef, cst.Lambda))
        return cast("cst.FunctionDef | cst.Lambda", found) if found is not None else self.module

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost statement (simple or compound) that holds `node`."""
        if isinstance(node, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return node
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return ancestor
        return node


def index(ctx: FileContext) -> Index:
    return ctx.analysis(_build_index)


def _build_index(ctx: FileContext) -> Index:
    return Index(ctx.module)


# ---------------------------------------------------------------------------
# Names and imports.


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes; None for anything else."""
    parts: list[str] = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if isinstance(expr, cst.Name):
        parts.append(expr.value)
        return ".".join(reversed(parts))
    return None


def last_name(expr: cst.BaseExpression) -> str | None:
    """The final name of `x`, `a.b.x`, `x[0]` or `self.xs[i]`: what the code calls the object."""
    while isinstance(expr, cst.Subscript):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted(node) or "" if node is not None else ""


@dataclass(frozen=True)
class Imports:
    """Local name -> qualified name, for every import anywhere in the module."""

    aliases: dict[str, str]

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of a name/attribute chain, through the import aliases.

        Names that were not imported are returned as written (`model.eval`).
        """
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return name
        return f"{target}.{rest}" if rest else target

    def is_imported(self, expr: cst.BaseExpression) -> bool:
        name = dotted(expr)
        return name is not None and name.partition(".")[0] in self.aliases

    def callee(self, call: cst.Call) -> str | None:
        return self.qualify(call.func)

    def mentions(self, module_prefix: str) -> bool:
        return any(t == module_prefix or t.startswith(module_prefix + ".") for t in self.aliases.values())


def imports(ctx: FileContext) -> Imports:
    return ctx.analysis(_build_imports)


def _build_imports(ctx: FileContext) -> Imports:
    idx = index(ctx)
    aliases: dict[str, str] = {}
    for node in idx.nodes(cst.Import):
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                aliases[alias.asname.name.value] = full
            else:
                head = full.partition(".")[0]
                aliases[head] = head
    for from_node in idx.nodes(cst.ImportFrom):
        if isinstance(from_node.names, cst.ImportStar):
            continue
        base = "." * len(from_node.relative) + _module_name(from_node.module)
        for alias in from_node.names:
            imported = _module_name(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            aliases[local] = f"{base}.{imported}" if not base.endswith(".") else f"{base}{imported}"
    return Imports(aliases)


# ---------------------------------------------------------------------------
# Calls.


def method_name(call: cst.Call) -> str | None:
    """`step` for `x.step(...)`; None when the callee is not an attribute."""
    return call.func.attr.value if isinstance(call.func, cst.Attribute) else None


def receiver(call: cst.Call) -> cst.BaseExpression | None:
    """`a.b` for `a.b.step(...)`."""
    return call.func.value if isinstance(call.func, cst.Attribute) else None


def callee_name(call: cst.Call) -> str | None:
    """The last name of the callee: `step` for `opt.step()`, `train` for `train(x)`."""
    return last_name(call.func)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call) -> list[cst.Arg]:
    return [arg for arg in call.args if arg.keyword is None and not arg.star]


def is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def same_expr(a: cst.BaseExpression | None, b: cst.BaseExpression | None) -> bool:
    """Two name/attribute chains that spell the same object (`self.model`, `model`)."""
    if a is None or b is None:
        return False
    da, db = dotted(a), dotted(b)
    return da is not None and da == db


# ---------------------------------------------------------------------------
# Functions and the call graph.


@dataclass
class Functions:
    """The module's functions, their classes, and which local functions a call may reach."""

    idx: Index
    all: list[cst.FunctionDef]
    by_name: dict[str, list[cst.FunctionDef]]
    class_of: dict[int, cst.ClassDef]
    methods: dict[str, dict[str, cst.FunctionDef]]
    bases: dict[str, list[str]]
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

    def resolve(self, call: cst.Call) -> list[cst.FunctionDef]:
        """Local functions that `call` may run: `f()`, `self.f()`, `cls.f()`, `Class.f()`."""
        func = call.func
        if isinstance(func, cst.Name):
            return [f for f in self.by_name.get(func.value, []) if id(f) not in self.class_of]
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            owner = func.value.value
            if owner in ("self", "cls"):
                current = self.idx.enclosing(call, (cst.FunctionDef,))
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
        for name in self.idx.within(scope, cst.Name):
            parent = self.idx.parent(name)
            if isinstance(parent, (cst.Call, cst.FunctionDef)) or (
                isinstance(parent, cst.Attribute) and parent.attr is name
            ):
                continue
            for f in self.by_name.get(name.value, []):
                if id(f) not in self.class_of:
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
    return Functions(idx, all_funcs, by_name, class_of, methods, bases)


# ---------------------------------------------------------------------------
# Loops.

LOOP_TYPES = (cst.For, cst.While)


def loop_body_contains(idx: Index, loop: cst.For | cst.While, node: cst.CSTNode) -> bool:
    """True when `node` runs once per iteration: in the body, not the iterable or `else`."""
    return idx.contains(loop.body, node)


def enclosing_loops(idx: Index, node: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops of the same function whose body holds `node`, innermost first."""
    loops: list[cst.For | cst.While] = []
    for ancestor in idx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, LOOP_TYPES) and loop_body_contains(idx, ancestor, node):
            loops.append(ancestor)
    return loops


# ---------------------------------------------------------------------------
# Gradient-free code: `with torch.no_grad():` and its many spellings.

_GRAD_FREE_NAME = re.compile(r"no_?grad|inference|nograd", re.IGNORECASE)


def is_grad_free_call(expr: cst.BaseExpression, imps: Imports) -> bool:
    """`torch.no_grad()`, `torch.inference_mode()`, `torch.set_grad_enabled(False or flag)`,
    or anything whose name says no_grad/inference (a project's own wrapper)."""
    target = expr.func if isinstance(expr, cst.Call) else expr
    name = imps.qualify(target) or ""
    short = name.rsplit(".", 1)[-1]
    if short == "set_grad_enabled":
        # Only a literal True re-enables gradients; a flag usually means "training or not".
        args = expr.args if isinstance(expr, cst.Call) else ()
        return not (args and isinstance(args[0].value, cst.Name) and args[0].value.value == "True")
    if short in ("enable_grad",):
        return False
    return bool(_GRAD_FREE_NAME.search(short))


def says_grad_free(short_name: str) -> bool:
    """A context manager's or decorator's own name says it turns gradients off."""
    return short_name != "enable_grad" and bool(_GRAD_FREE_NAME.search(short_name))


def grad_free_decorated(func: cst.FunctionDef, imps: Imports) -> bool:
    return any(is_grad_free_call(d.decorator, imps) for d in func.decorators)


def in_grad_free_block(idx: Index, node: cst.CSTNode, imps: Imports, stop_at_function: bool = True) -> bool:
    """`node` runs inside a gradient-free `with` (or a decorated function) in its own scope."""
    for ancestor in idx.ancestors(node):
        if isinstance(ancestor, cst.With) and idx.contains(ancestor.body, node):
            if any(is_grad_free_call(item.item, imps) for item in ancestor.items):
                return True
        if isinstance(ancestor, cst.FunctionDef):
            if grad_free_decorated(ancestor, imps):
                return True
            if stop_at_function:
                return False
    return False


# ---------------------------------------------------------------------------
# Small shared predicates.


def first(items: Iterable[N], predicate: Callable[[N], bool]) -> N | None:
    for item in items:
        if predicate(item):
            return item
    return None


# ---------------------------------------------------------------------------
# Training-loop events: backward passes, optimizer steps and gradient clears.

_OPTIMIZER_WORDS = frozenset(
    "sgd adam adamw adamax nadam radam lbfgs rmsprop rprop adagrad adadelta asgd lion lamb lars "
    "adafactor sophia sophiag muon shampoo novograd adabelief prodigy optimizer optimiser".split()
)
_OPTIMIZER_FACTORY = re.compile(r"(?i)^(create|build|get|make|init|configure|setup)_?optimi[sz]ers?\w*$")
# Objects with a `.step()` that is not an optimizer step.
_NOT_OPTIMIZER_WORDS = frozenset(
    "scaler lr warmup env envs sampler engine policy trainer model loader ema swa".split()
)
_CLEAR_HELPER = re.compile(r"(?i)(zero_?grads?|clear_?grads?|reset_?grads?|grads?_to_none|set_grads?_none)")
_NAME_TOKENS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def says_clear_helper(name: str | None) -> bool:
    """A helper named like `zero_grads`, `clear_grad`, `set_grads_none`."""
    return bool(name) and _CLEAR_HELPER.search(name or "") is not None


def name_tokens(name: str) -> list[str]:
    """`optimizerG` -> [optimizer, g]; `d_opt2` -> [d, opt, 2]; `FusedAdam` -> [fused, adam]."""
    return [t.lower() for part in name.split("_") for t in _NAME_TOKENS.findall(part)]


def _says_not_optimizer(tokens: list[str]) -> bool:
    return any(t.startswith("sched") or t in _NOT_OPTIMIZER_WORDS for t in tokens)


def name_says_optimizer(name: str | None) -> bool:
    if not name:
        return False
    tokens = name_tokens(name)
    if _says_not_optimizer(tokens):
        return False
    return any(t.startswith("optim") or t in ("opt", "opts") for t in tokens)


def is_optimizer_class(name: str) -> bool:
    tokens = name_tokens(name)
    return name[:1].isupper() and not _says_not_optimizer(tokens) and any(t in _OPTIMIZER_WORDS for t in tokens)


@dataclass
class Training:
    """Where a module runs backward passes, optimizer steps and gradient clears."""

    idx: Index
    backward: list[cst.Call]
    steps: list[cst.Call]
    clears: list[cst.CSTNode]
    # For each step call: the expression of the optimizer it steps.
    stepped: dict[int, cst.BaseExpression]
    # Optimizer name -> the model whose parameters it was built from, where known.
    models: dict[str, str | None]

    def optimizer_of(self, step: cst.Call) -> cst.BaseExpression:
        return self.stepped[id(step)]

    def clears_gradients_of(self, clear: cst.CSTNode, step: cst.Call) -> bool:
        """Whether `clear` may clear the gradients that `step` applies.

        Only `X.zero_grad()` of something that is plainly another network's optimizer, or
        another optimizer's model, is ruled out (a GAN clearing one side only)."""
        if not (isinstance(clear, cst.Call) and method_name(clear) == "zero_grad"):
            return True
        cleared = dotted(receiver(clear)) if receiver(clear) is not None else None  # type: ignore[arg-type]
        stepped = dotted(self.optimizer_of(step))
        if cleared is None or stepped is None or cleared == stepped:
            return True
        others = {dotted(e) for e in self.stepped.values()} - {stepped}
        if cleared in others:
            return False
        own_model = self.models.get(stepped)
        other_models = {self.models.get(o) for o in others if o is not None} - {None}
        return not (own_model is not None and cleared != own_model and cleared in other_models)

    def loops_running(self, kind: list[N], funcs: Functions) -> dict[int, list[cst.For | cst.While]]:
        """Each event of `kind`, by id, to the loops whose body runs it (inside the body or
        in local functions it reaches), in source order: one pass over the loops."""
        running: dict[int, list[cst.For | cst.While]] = defaultdict(list)
        for loop in self.idx.nodes(cst.For, cst.While):
            for event in self.events_in(kind, loop.body, funcs):
                running[id(event)].append(loop)
        return running

    def events_in(self, kind: list[N], scope: cst.CSTNode, funcs: Functions) -> list[N]:
        """Events of `kind` that run when `scope` runs: inside it or in local functions it reaches."""
        # The events inside a root are found by bisection over their source order (a scan
        # of all events per root made large modules quadratic).
        orders, positions = self.idx.sorted_orders(kind)
        found: dict[int, N] = {}
        for root in (scope, *(f for f in funcs.reachable(scope) if f is not scope)):
            lo, hi = self.idx.order(root), self.idx.end(root)
            for position in sorted(positions[bisect_left(orders, lo) : bisect_right(orders, hi)]):
                event = kind[position]
                found[id(event)] = event
        return list(found.values())


def training(ctx: FileContext) -> Training:
    return ctx.analysis(_build_training)


def _bound_optimizers(idx: Index, imps: Imports) -> dict[str, str | None]:
    """Dotted names assigned an optimizer: `torch.optim` (or other known) classes,
    optimizer factories, and `*.prepare(...)` / `deepspeed.initialize(...)` results; each
    mapped to the model whose `.parameters()` it optimizes, when the code shows it."""
    bound: dict[str, str | None] = {}
    for assign in idx.nodes(cst.Assign):
        value = assign.value
        if not isinstance(value, cst.Call):
            continue
        callee = imps.callee(value) or ""
        short = callee.rsplit(".", 1)[-1]
        unpacked = short in ("prepare", "initialize") and (
            short == "prepare" or callee.startswith("deepspeed")
        )
        is_optimizer = (
            (
                callee.startswith("torch.optim.")
                and "lr_scheduler" not in callee
                and "swa_utils" not in callee  # SWALR is a schedule, AveragedModel a model
                and short[:1].isupper()
            )
            or is_optimizer_class(short)
            or _OPTIMIZER_FACTORY.match(short) is not None
        )
        if not (is_optimizer or unpacked):
            continue
        for target in assign.targets:
            elements = (
                [e.value for e in target.target.elements]
                if isinstance(target.target, (cst.Tuple, cst.List))
                else [target.target]
            )
            for element in elements:
                name = dotted(element)
                if name and (is_optimizer or not _says_not_optimizer(name_tokens(last_name(element) or ""))):
                    bound[name] = _parameters_owner(value) if is_optimizer else None
    return bound


def _parameters_owner(call: cst.Call) -> str | None:
    """`model` for `Adam(model.parameters(), ...)`."""
    args = positional(call)
    first_arg = args[0].value if args else None
    if isinstance(first_arg, cst.Call) and method_name(first_arg) in ("parameters", "named_parameters"):
        owner = receiver(first_arg)
        return dotted(owner) if owner is not None else None
    return None


def _is_scaler(expr: cst.BaseExpression, scalers: set[str]) -> bool:
    name = last_name(expr) or ""
    return "scaler" in name.lower() or dotted(expr) in scalers


def _build_training(ctx: FileContext) -> Training:
    idx = index(ctx)
    imps = imports(ctx)
    optimizers = _bound_optimizers(idx, imps)
    scalers = {
        name
        for assign in idx.nodes(cst.Assign)
        if isinstance(assign.value, cst.Call) and (imps.callee(assign.value) or "").endswith("GradScaler")
        for target in assign.targets
        if (name := dotted(target.target))
    }
    calls = idx.nodes(cst.Call)
    backward: list[cst.Call] = []
    engines: set[str] = set()
    for call in calls:
        name = method_name(call) or callee_name(call)
        if name in ("backward", "manual_backward"):
            backward.append(call)
            owner = receiver(call)
            if owner is not None and call.args and name == "backward":
                # `engine.backward(loss)`: DeepSpeed-style engines clear gradients in `step()`.
                owner_name = dotted(owner)
                if owner_name:
                    engines.add(owner_name)
    steps: list[cst.Call] = []
    stepped: dict[int, cst.BaseExpression] = {}
    clears: list[cst.CSTNode] = []
    for call in calls:
        name = method_name(call)
        owner = receiver(call)
        if name == "step" and owner is not None:
            owner_name = dotted(owner)
            if _is_scaler(owner, scalers):
                args = positional(call)
                if args:
                    steps.append(call)
                    stepped[id(call)] = args[0].value
            elif owner_name not in engines and (
                name_says_optimizer(last_name(owner)) or (owner_name is not None and owner_name in optimizers)
            ):
                steps.append(call)
                stepped[id(call)] = owner
        elif name == "zero_grad" or _CLEAR_HELPER.search(callee_name(call) or ""):
            clears.append(call)
        elif name in ("zero_", "fill_", "mul_", "detach_") and owner is not None and _is_grad_attr(owner):
            clears.append(call)
    for assign in idx.nodes(cst.Assign):
        if any(_is_grad_attr(t.target) for t in assign.targets):
            clears.append(assign)
    for delete in idx.nodes(cst.Del):
        if _is_grad_attr(delete.target):
            clears.append(delete)
    clears.sort(key=idx.order)
    return Training(idx, backward, steps, clears, stepped, optimizers)


def _is_grad_attr(expr: cst.BaseExpression) -> bool:
    """`p.grad`, `p.grad.data`: the gradient of a tensor."""
    while isinstance(expr, cst.Attribute):
        if expr.attr.value == "grad":
            return True
        expr = expr.value
    return False


def loops_run_by(idx: Index, funcs: Functions, scope: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops inside `scope` or in local functions it reaches."""
    found: dict[int, cst.For | cst.While] = {}
    for root in funcs.reachable(scope):
        for loop in idx.within(root, cst.For, cst.While):
            if loop is not scope:
                found[id(loop)] = loop
    return list(found.values())


# ---------------------------------------------------------------------------
# Execution order within one function.


@dataclass(frozen=True)
class Step:
    """A call (or `a @ b`) in the order it executes, with the loops it runs in."""

    node: cst.CSTNode
    loops: tuple[cst.For | cst.While, ...]


# Exact types, compared with `type(node) in ...`: cheaper than `isinstance` on LibCST's
# ABC classes, and LibCST's concrete node classes have no subclasses.
_NOT_INLINE = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def execution_order(scope: cst.CSTNode) -> list[Step]:
    """Calls and matrix products of `scope`, each loop body taken once, in execution order:
    operands before operations (`model(x).sum().item()` yields `model(x)`, `.sum()`, `.item()`),
    both branches of an `if` in turn. Nested functions and classes are not inlined."""
    out: list[Step] = []
    roots: Sequence[cst.CSTNode]
    if isinstance(scope, cst.Module):
        roots = scope.body
    elif isinstance(scope, cst.FunctionDef):
        roots = [scope.body]
    else:
        roots = [scope]
    stack: list[tuple[cst.CSTNode, tuple[cst.For | cst.While, ...], bool]] = [(r, (), False) for r in reversed(roots)]
    while stack:
        node, loops, expanded = stack.pop()
        kind = type(node)
        if expanded:
            if kind is cst.Call or (kind is cst.BinaryOperation and type(node.operator) is cst.MatrixMultiply):  # type: ignore[attr-defined]
                out.append(Step(node, loops))
            continue
        stack.append((node, loops, True))
        for child in reversed(children(node)):
            if type(child) in _NOT_INLINE:
                continue
            inner = loops
            if (kind is cst.For and child is node.body) or (  # type: ignore[attr-defined]
                kind is cst.While and child in (node.body, node.test)  # type: ignore[attr-defined]
            ):
                inner = (*loops, node)  # type: ignore[arg-type]
            stack.append((child, inner, False))
    return out


# Local dataflow: which binding a name refers to, in source order.
#
# Flow-insensitive on purpose: the binding a use sees is the latest one of the same
# function that ends before the use in source order (branches and loops are not
# followed). Cheap, and right for the straight-line code where tensors are built.

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
        idx = self.idx
        scope = idx.scope(use)
        for ancestor in idx.ancestors(use):
            if ancestor is scope:
                break
            if isinstance(ancestor, _COMPREHENSIONS) and use.value in _comprehension_names(ancestor):
                return Binding(use.value, idx.order(ancestor), ancestor, None)
        return self.before(scope, use.value, idx.order(use))

    def reaching(self, use: cst.Name) -> list[Binding]:
        """Every binding that `use` may read along some path through its function, in
        source order: both arms of an `if`, a loop body's bindings through the back edge,
        a `try` body's bindings in its handlers. Empty for a global, a builtin or an
        unbound name. Early exits (`return`, `break`) are not followed, so the answer may
        hold a binding that cannot reach in fact: callers that need every reaching value to
        agree stay on the safe side."""
        idx = self.idx
        scope = idx.scope(use)
        for ancestor in idx.ancestors(use):
            if ancestor is scope:
                break
            if isinstance(ancestor, _COMPREHENSIONS) and use.value in _comprehension_names(ancestor):
                return [Binding(use.value, idx.order(ancestor), ancestor, None)]
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


# ---------------------------------------------------------------------------
# Pack 2 (modes): model modes, arguments bound to parameters, evaluation-like names,
# objects a scope runs with gradients, and statement insertion for fixes.

# Methods of an `nn.Module` that neither run nor train it.
MODULE_UTILITY_METHODS = frozenset(
    """eval train parameters named_parameters buffers named_buffers modules named_modules children
    named_children state_dict load_state_dict to cuda cpu half float double bfloat16 zero_grad apply
    requires_grad_ register_buffer register_parameter register_forward_hook register_forward_pre_hook
    register_full_backward_hook save_pretrained get_submodule share_memory""".split()
)
_EVALUATION_WORDS = frozenset("eval evaluate evaluation validate validation valid val test testing inference".split())
# Objects whose `.train()` / `.eval()` run a whole procedure rather than switch a module's mode.
_RUNNER_WORDS = frozenset("trainer runner engine solver agent experiment learner evaluator tester validator".split())


def name_says_evaluation(name: str | None) -> bool:
    """`evaluate`, `validate_epoch`, `run_val`, `test`, `eval_model`, `inference`."""
    return bool(name) and any(t in _EVALUATION_WORDS for t in name_tokens(name or ""))


def model_key(expr: cst.BaseExpression | None) -> str | None:
    """What the code calls a network, seen through wrappers: `model` for `model`, `self.model`,
    `model.module` (DataParallel) or `model._orig_mod` (torch.compile); None for other shapes."""
    while isinstance(expr, cst.Attribute) and expr.attr.value in ("module", "_orig_mod"):
        expr = expr.value
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute) and dotted(expr) is not None:
        return expr.attr.value
    return None


# Calls that wrap a network and run its layers as they are.
MODEL_WRAPPERS = frozenset(
    {"DataParallel", "DistributedDataParallel", "DDP", "FullyShardedDataParallel", "FSDP", "compile"}
)


def wrapped_model(expr: cst.BaseExpression) -> str | None:
    """The network a wrapper call runs, as `model_key` names it: `net` for
    `nn.DataParallel(net)`, `DDP(net, device_ids=...)`, `torch.compile(net)`."""
    if not isinstance(expr, cst.Call) or callee_name(expr) not in MODEL_WRAPPERS:
        return None
    args = positional(expr)
    return model_key(args[0].value) if args else None


@dataclass(frozen=True)
class ModeCall:
    """`x.eval()`, `x.train()`, `x.train(False)` or `x.train(flag)` on a module."""

    call: cst.Call
    target: cst.BaseExpression
    mode: str  # "eval", "train", or "either" when a flag decides


def mode_calls(ctx: FileContext) -> list[ModeCall]:
    return ctx.analysis(_build_mode_calls)


def _build_mode_calls(ctx: FileContext) -> list[ModeCall]:
    idx = index(ctx)
    funcs = functions(ctx)
    found: list[ModeCall] = []
    for call in idx.nodes(cst.Call):
        name = method_name(call)
        target = receiver(call)
        if name not in ("eval", "train") or target is None:
            continue
        if any(t in _RUNNER_WORDS for t in name_tokens(last_name(target) or "")):
            continue
        local = funcs.resolve(call)
        if local and not any(_overrides_mode(f) for f in local):
            continue  # a local `train()` / `eval()` procedure, not the module's mode switch
        mode = _mode_of(call, name)
        if mode is not None:
            found.append(ModeCall(call, target, mode))
    return found


def _mode_of(call: cst.Call, name: str) -> str | None:
    if name == "eval":
        return None if call.args else "eval"
    if not call.args:
        return "train"
    if len(call.args) > 1 or call.args[0].star or (call.args[0].keyword and call.args[0].keyword.value != "mode"):
        return None
    value = call.args[0].value
    if isinstance(value, cst.Name) and value.value in ("True", "False"):
        return "train" if value.value == "True" else "eval"
    return "either"


def _overrides_mode(func: cst.FunctionDef) -> bool:
    """`def train(self, mode=True): super().train(mode) ...`: still the module's mode switch."""
    names = {p.name.value for p in (*func.params.posonly_params, *func.params.params)}
    return "mode" in names


def bind_arguments(funcs: Functions, func: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """Parameter name -> argument expression, for the parameters `call` binds plainly."""
    params = [*func.params.posonly_params, *func.params.params]
    is_static = any(last_name(d.decorator) == "staticmethod" for d in func.decorators)
    if params and id(func) in funcs.class_of and not is_static and isinstance(call.func, cst.Attribute):
        params = params[1:]  # `self`, bound by the attribute access
    bound: dict[str, cst.BaseExpression] = {}
    keyword_params = {p.name.value for p in (*params, *func.params.kwonly_params)}
    for position, arg in enumerate(call.args):
        if arg.star:
            break
        if arg.keyword is None and position < len(params):
            bound[params[position].name.value] = arg.value
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keyword_params:
            bound[arg.keyword.value] = arg.value
    return bound


def parameter_names(func: cst.FunctionDef) -> set[str]:
    p = func.params
    names = {q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)}
    for star in (p.star_arg, p.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def called_module(call: cst.Call) -> cst.BaseExpression | None:
    """What a call runs as a module: `model` in `model(x)` and `model.forward(x)`, `self.encoder`
    in `self.encoder(x)`. None for method calls such as `batch.values()`."""
    func = call.func
    if isinstance(func, cst.Name):
        return func
    if isinstance(func, cst.Attribute):
        if func.attr.value == "forward" and dotted(func.value):
            return func.value
        if isinstance(func.value, cst.Name) and func.value.value == "self":
            return func
    return None


def runs_with_gradients(idx: Index, imps: Imports, scope: cst.CSTNode) -> list[cst.BaseExpression]:
    """Objects that the code of `scope` (not its nested functions) runs, calls a method of, or
    passes to a call, outside gradient-free blocks: `model(x)`, `model.loss(x)`, `step(model)`."""
    home = scope if isinstance(scope, (cst.FunctionDef, cst.Module)) else idx.scope(scope)
    found: list[cst.BaseExpression] = []
    for call in idx.within(scope, cst.Call):
        if idx.scope(call) is not home or in_grad_free_block(idx, call, imps):
            continue
        module = called_module(call)
        if module is not None:
            found.append(module)
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value not in MODULE_UTILITY_METHODS:
            found.append(call.func.value)
        found.extend(arg.value for arg in call.args if isinstance(arg.value, (cst.Name, cst.Attribute)))
    return found


# Functions that wrap an iterable without changing what it yields.
ITERABLE_WRAPPERS = frozenset("enumerate tqdm iter islice zip progress_bar track cycle".split())


def unwrap_iterable(expr: cst.BaseExpression, depth: int = 0) -> cst.BaseExpression:
    """`loader` for `enumerate(tqdm(loader))`."""
    while isinstance(expr, cst.Call) and callee_name(expr) in ITERABLE_WRAPPERS and expr.args and depth < 4:
        expr = expr.args[0].value
        depth += 1
    return expr


def insert_statement(body: cst.BaseSuite, position: int, code: str) -> tuple[cst.CSTNode, cst.CSTNode] | None:
    """A replacement that inserts the statement `code` before `body.body[position]` (at the end
    when `position` is the length). None for one-line suites, which a fix leaves alone."""
    if not isinstance(body, cst.IndentedBlock):
        return None
    statements = list(body.body)
    statements.insert(position, cst.parse_statement(code))
    return body, body.with_changes(body=statements)


# Pack 2, devices (TL011, TL014, TL016, TL017): CUDA use, calls of known classes, and the
# mentions of a named object.


def calls_to(ctx: FileContext, qualified: frozenset[str], bare: frozenset[str] = frozenset()) -> list[cst.Call]:
    """Calls whose callee resolves through the imports to one of `qualified`, or is spelled as
    one of `bare` with no import behind it (a snippet that leaves its imports out)."""
    imps = imports(ctx)
    found: list[cst.Call] = []
    for call in index(ctx).nodes(cst.Call):
        name = imps.callee(call)
        if name is not None and (name in qualified or (name in bare and not imps.is_imported(call.func))):
            found.append(call)
    return found


_CUDA_TEXT = re.compile(r"^(cuda|nccl)\b")


def string_text(node: cst.CSTNode) -> str | None:
    """The text of a string literal; for an f-string, its literal parts with `{}` for each field."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts
        )
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_text(node.left), string_text(node.right)
        return None if left is None or right is None else left + right
    return None


def uses_cuda(ctx: FileContext) -> bool:
    """The module places work on a CUDA device: a `.cuda()` call, a `"cuda..."` device string,
    or the NCCL backend. (`torch.cuda.is_available()` alone is not placement.)"""
    return ctx.analysis(_build_uses_cuda)


def _build_uses_cuda(ctx: FileContext) -> bool:
    if "cuda" not in ctx.source and "nccl" not in ctx.source:
        return False
    idx = index(ctx)
    if any(method_name(call) == "cuda" for call in idx.nodes(cst.Call)):
        return True
    for node in idx.nodes(cst.SimpleString, cst.FormattedString):
        text = string_text(node)
        # A device string, not an item of a list of names (`["cuda", "cpu"]`) or a docstring.
        if text is not None and _CUDA_TEXT.match(text) and not isinstance(idx.parent(node), (cst.Element, cst.Expr)):
            return True
    return False


def mentions(idx: Index, scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Names and attribute chains in `scope` that spell `name` (`loader`, `self.loader`),
    including as the receiver of an attribute (`loader.sampler`)."""
    found: list[cst.BaseExpression] = []
    last = name.rpartition(".")[2]
    for node in idx.within(scope, cst.Name, cst.Attribute):
        if isinstance(node, cst.Name):
            parent = idx.parent(node)
            if node.value != last or (isinstance(parent, cst.Attribute) and parent.attr is node):
                continue
        elif not isinstance(node, cst.Attribute) or node.attr.value != last:
            continue
        if dotted(node) == name:
            found.append(node)
    return found


# ---------------------------------------------------------------------------
# Pack 2 (loop order): the events one run of a scope executes, in execution order,
# through local helper calls, with the branches that guard them and the jumps that
# leave before others.

MAX_INLINE_DEPTH = 4
_AFTER_ITS_CALLEES = (sys.maxsize, 0)


@dataclass(frozen=True)
class Event:
    """A node that one run of a scope executes.

    `path` holds the calls of local helpers that lead to it, outermost first, then the
    node itself; `loops` the loops it runs in below the scope (each taken once), outermost
    first; `guards` the `if` branches it runs under below the scope, as (statement, in_body)."""

    path: tuple[cst.CSTNode, ...]
    loops: tuple[cst.For | cst.While, ...]
    guards: tuple[tuple[cst.If, bool], ...]

    @property
    def node(self) -> cst.CSTNode:
        return self.path[-1]


class Flow:
    """Execution order, branches and early exits of chosen nodes, for one module."""

    def __init__(self, idx: Index, funcs: Functions) -> None:
        self.idx = idx
        self.funcs = funcs

    def events(self, scope: cst.CSTNode, nodes: Sequence[cst.CSTNode]) -> list[Event]:
        """Those of `nodes` that one run of `scope` (a module, a function, a loop body)
        executes, in execution order: operands before operations, each loop body once,
        a local helper's events at its call. Nested functions run only where called.
        Pass the same unchanged list of `nodes` for every scope: it is sorted only once,
        and each scope then costs the events it runs, not all of them."""
        frames: dict[int, list[Event]] = {}
        root = scope.body if isinstance(scope, cst.FunctionDef) else scope
        found = self._frame(root, self._owner(scope), nodes, frames, (id(scope),))
        return sorted(found, key=self._key)

    def _owner(self, scope: cst.CSTNode) -> cst.CSTNode:
        if isinstance(scope, (cst.FunctionDef, cst.Module)):
            return scope
        return self.idx.scope(scope)

    def _frame(
        self,
        root: cst.CSTNode,
        owner: cst.CSTNode,
        wanted: Sequence[cst.CSTNode],
        frames: dict[int, list[Event]],
        stack: tuple[int, ...],
    ) -> list[Event]:
        idx = self.idx
        lo, hi = idx.order(root), idx.end(root)
        orders, positions = idx.sorted_orders(wanted)
        out = [
            self._event(root, (wanted[position],))
            for position in positions[bisect_left(orders, lo) : bisect_right(orders, hi)]
            if idx.scope(wanted[position]) is owner
        ]
        if len(stack) > MAX_INLINE_DEPTH:
            return out
        for call in idx.within(root, cst.Call):
            targets = self.funcs.resolve(call)
            if len(targets) != 1 or id(targets[0]) in stack or idx.scope(call) is not owner:
                continue
            helper = targets[0]
            inner = frames.get(id(helper))
            if inner is None:
                inner = frames[id(helper)] = self._frame(helper.body, helper, wanted, frames, (*stack, id(helper)))
            outer = self._event(root, (call,))
            out.extend(
                Event((call, *e.path), outer.loops + e.loops, outer.guards + e.guards) for e in inner
            )
        return out

    def _event(self, root: cst.CSTNode, path: tuple[cst.CSTNode, ...]) -> Event:
        node = path[-1]
        loops: list[cst.For | cst.While] = []
        guards: list[tuple[cst.If, bool]] = []
        for ancestor in self.idx.ancestors(node):
            if ancestor is root or type(ancestor) in _NOT_INLINE:
                break
            if isinstance(ancestor, LOOP_TYPES) and loop_body_contains(self.idx, ancestor, node):
                loops.append(ancestor)
            elif isinstance(ancestor, cst.If):
                branch = _branch_of(self.idx, ancestor, node)
                if branch is not None:
                    guards.append((ancestor, branch))
        return Event(path, tuple(reversed(loops)), tuple(reversed(guards)))

    def _key(self, event: Event) -> tuple[tuple[int, int], ...]:
        # A call completes after its operands and after the events of the helper it runs.
        keys = tuple((self.idx.end(n), -self.idx.order(n)) for n in event.path)
        return (*keys, _AFTER_ITS_CALLEES)

    def _diverge(self, a: Event, b: Event) -> tuple[cst.CSTNode, cst.CSTNode] | None:
        """The nodes of the first frame where the paths of `a` and `b` part."""
        for na, nb in zip(a.path, b.path):
            if na is not nb:
                return na, nb
        return None

    def exclusive(self, a: Event, b: Event) -> bool:
        """`a` and `b` sit in different branches of one `if`, `match` or `try`: one run
        executes at most one of them."""
        parted = self._diverge(a, b)
        if parted is None:
            return False
        na, nb = parted
        for ancestor in self.idx.ancestors(na):
            if self.idx.contains(ancestor, nb):
                pa, pb = _part_of(self.idx, ancestor, na), _part_of(self.idx, ancestor, nb)
                return pa is not None and pb is not None and pa != pb and (
                    not isinstance(ancestor, cst.Try) or "body" not in (pa, pb)
                )
        return False

    def exits_between(self, a: Event, b: Event) -> bool:
        """After `a`, a `continue`, `return` or `raise` at its level (or at an enclosing level
        that `b` is not part of), or a `break` out of a loop that holds `b`, ends the run or
        the iteration before `b` is reached."""
        parted = self._diverge(a, b)
        if parted is None:
            return False
        na, nb = parted
        node = self.idx.statement(na)
        for parent in self.idx.ancestors(node):
            if self.idx.contains(parent, nb) or type(parent) in _NOT_INLINE:
                return False
            if isinstance(parent, (cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.IndentedBlock)):
                body = list(parent.body)
                later = body[next(i for i, s in enumerate(body) if s is node) + 1 :]
                if any(self._leaves(s, nb) for s in later):
                    return True
            node = parent
        return False

    def _leaves(self, stmt: cst.CSTNode, target: cst.CSTNode) -> bool:
        if isinstance(stmt, cst.SimpleStatementLine):
            return any(self._leaves(s, target) for s in stmt.body)
        if isinstance(stmt, cst.Break):
            loop = enclosing_loops(self.idx, stmt)[:1]
            return bool(loop) and self.idx.contains(loop[0], target)
        return isinstance(stmt, (cst.Continue, cst.Return, cst.Raise))

    def reaches(self, a: Event, b: Event) -> bool:
        """`b` can run after `a` in the same run: not in another branch, not after an exit."""
        return not self.exclusive(a, b) and not self.exits_between(a, b)


def flow(ctx: FileContext) -> Flow:
    return ctx.analysis(_build_flow)


def _build_flow(ctx: FileContext) -> Flow:
    return Flow(index(ctx), functions(ctx))


def _branch_of(idx: Index, stmt: cst.If, node: cst.CSTNode) -> bool | None:
    """True in the body, False in the `else`/`elif` part, None in the test."""
    if idx.contains(stmt.body, node):
        return True
    if stmt.orelse is not None and idx.contains(stmt.orelse, node):
        return False
    return None


def _part_of(idx: Index, ancestor: cst.CSTNode, node: cst.CSTNode) -> str | None:
    """Which alternative of a branching statement holds `node`: None for a part that always runs."""
    if isinstance(ancestor, (cst.If, cst.IfExp)):
        if idx.contains(ancestor.body, node):
            return "body"
        return "orelse" if ancestor.orelse is not None and idx.contains(ancestor.orelse, node) else None
    if isinstance(ancestor, cst.Match):
        return next((f"case{i}" for i, case in enumerate(ancestor.cases) if idx.contains(case, node)), None)
    if isinstance(ancestor, (cst.Try, cst.TryStar)):
        if idx.contains(ancestor.body, node):
            return "body"
        if ancestor.orelse is not None and idx.contains(ancestor.orelse, node):
            return "orelse"
        return next(
            (f"handler{i}" for i, handler in enumerate(ancestor.handlers) if idx.contains(handler, node)), None
        )
    return None


def running_scopes(idx: Index, funcs: Functions, nodes: Iterable[cst.CSTNode]) -> list[cst.CSTNode]:
    """The module, the functions holding `nodes`, and the local functions that call those
    (up to `MAX_INLINE_DEPTH` calls away): every scope whose run may execute one of them."""
    found: dict[int, cst.CSTNode] = {}
    frontier: list[cst.CSTNode] = [idx.scope(n) for n in nodes]
    for _ in range(MAX_INLINE_DEPTH + 1):
        next_frontier: list[cst.CSTNode] = []
        for scope in frontier:
            if isinstance(scope, cst.Lambda) or id(scope) in found:
                continue
            found[id(scope)] = scope
            if isinstance(scope, cst.FunctionDef):
                next_frontier.extend(idx.scope(site) for site in funcs.call_sites(scope))
        frontier = next_frontier
    found.setdefault(id(idx.module), idx.module)
    return sorted(found.values(), key=idx.order)


# Objects whose `backward(loss)` takes the loss as its argument.
_FRAMEWORK_BACKWARD_WORDS = frozenset(
    {"accelerator", "accelerate", "engine", "fabric", "trainer", "strategy", "deepspeed", "self", "model", "wrapper"}
)


def backpropagated(call: cst.Call, imps: Imports) -> cst.BaseExpression | None:
    """The tensor a backward call back-propagates: `loss` in `loss.backward()`,
    `loss.backward(retain_graph=True)`, `scaler.scale(loss).backward()`,
    `accelerator.backward(loss)`, `model_engine.backward(loss)`, `optimizer.backward(loss)`
    (fairseq), `self.manual_backward(loss)`, `torch.autograd.backward(loss)`; `t` (not the
    gradient) in `t.backward(grad)`."""
    owner = receiver(call)
    args = positional(call)
    framework = (imps.callee(call) or "") == "torch.autograd.backward" or method_name(call) == "manual_backward"
    if owner is not None and not framework:
        owner_name = last_name(owner) or ""
        framework = name_says_optimizer(owner_name) or any(
            t in _FRAMEWORK_BACKWARD_WORDS for t in name_tokens(owner_name)
        )
    if framework or owner is None:
        return args[0].value if args else None
    if isinstance(owner, cst.Call) and method_name(owner) == "scale" and positional(owner):
        return positional(owner)[0].value
    return owner


# ---------------------------------------------------------------------------
# Pack 2 precision: test files, mutually exclusive branches, and names that say where a
# value lives.

_TEST_PATH = re.compile(r"(^|[/\\])(test_[^/\\]*|[^/\\]*_test|conftest)\.py$|(^|[/\\])(tests?|testing)[/\\]")
_HOST_WORDS = frozenset({"cpu", "host"})


def is_test_file(ctx: FileContext) -> bool:
    """`test_*.py`, `*_test.py`, `conftest.py` or a file under `tests/`: code that a test suite
    runs on whatever device it picks, and that a failing test would already expose."""
    return _TEST_PATH.search(ctx.filename) is not None


def in_exclusive_branches(idx: Index, a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """`a` and `b` sit in different branches of one `if`/`elif`/`else`, or in opposite
    branches of two `if`s on the same condition (`if essential: ... ` twice): one run of
    the enclosing code never executes both."""
    sides_a = _if_sides(idx, a)
    for stmt, side_b in _if_sides(idx, b):
        for other, side_a in sides_a:
            if side_a != side_b and (other is stmt or same_expr(other.test, stmt.test)):
                return True
    return False


def _if_sides(idx: Index, node: cst.CSTNode) -> list[tuple[cst.If | cst.IfExp, str]]:
    """The `if`s of the enclosing function around `node`, with the branch it sits in."""
    found: list[tuple[cst.If | cst.IfExp, str]] = []
    for ancestor in idx.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef, cst.Module)):
            break
        if isinstance(ancestor, (cst.If, cst.IfExp)):
            side = _if_side(idx, ancestor, node)
            if side is not None:
                found.append((ancestor, side))
    return found


def _if_side(idx: Index, stmt: cst.If | cst.IfExp, node: cst.CSTNode) -> str | None:
    if idx.contains(stmt.body, node):
        return "body"
    if stmt.orelse is not None and idx.contains(stmt.orelse, node):
        return "orelse"
    return None


def says_host(name: str | None) -> bool:
    """`x_host`, `cpu_mask`, `hostBuffer`: a name that says its value lives on the host."""
    return bool(name) and any(t in _HOST_WORDS for t in name_tokens((name or "").rpartition(".")[2]))
