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
from bisect import bisect_left, bisect_right
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Sequence, TypeVar

import libcst as cst
import libcst.matchers as m

from torchlint.rule import FileContext

N = TypeVar("N", bound=cst.CSTNode)

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

    def nodes(self, *types: type[N]) -> list[N]:
        """All nodes of the given types, in source order."""
        if len(types) == 1:
            return list(self._by_type.get(types[0], ()))  # type: ignore[arg-type]
        found = [n for t in types for n in self._by_type.get(t, ())]
        return sorted(found, key=self.order)  # type: ignore[arg-type]

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

    def within(self, scope: cst.CSTNode, *types: type[N]) -> list[N]:
        """Nodes of `types` inside `scope` (itself included), in source order."""
        lo, hi = self._enter[id(scope)], self._exit[id(scope)]
        found: list[N] = []
        for node_type in types:
            nodes = self._by_type.get(node_type)
            if not nodes:
                continue
            orders = self._orders_of(node_type)
            found.extend(nodes[bisect_left(orders, lo) : bisect_right(orders, hi)])  # type: ignore[arg-type]
        if len(types) > 1:
            found.sort(key=self.order)
        return found

    def sorted_orders(self, nodes: Sequence[cst.CSTNode]) -> tuple[list[int], list[int]]:
        """The source-order numbers of `nodes`, sorted, and each one's position in `nodes`;
        computed once per list (which must not change afterwards)."""
        cached = self._sorted_orders.get(id(nodes))
        if cached is None or cached[0] is not nodes:
            pairs = sorted((self._enter[id(node)], position) for position, node in enumerate(nodes))
            cached = self._sorted_orders[id(nodes)] = (nodes, [o for o, _ in pairs], [p for _, p in pairs])
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
        return found if found is not None else self.module

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
    for node in idx.nodes(cst.ImportFrom):
        if isinstance(node.names, cst.ImportStar):
            continue
        base = "." * len(node.relative) + _module_name(node.module)
        for alias in node.names:
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


def matches_any(node: cst.CSTNode, matchers: Sequence[m.BaseMatcherNode]) -> bool:
    return any(m.matches(node, matcher) for matcher in matchers)


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

    def optimizer_of(self, step: cst.Call) -> cst.BaseExpression:
        return self.stepped[id(step)]

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


def _bound_optimizers(idx: Index, imps: Imports) -> set[str]:
    """Dotted names assigned an optimizer: `torch.optim` (or other known) classes,
    optimizer factories, and `*.prepare(...)` / `deepspeed.initialize(...)` results."""
    bound: set[str] = set()
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
            (callee.startswith("torch.optim.") and "lr_scheduler" not in callee and short[:1].isupper())
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
                    bound.add(name)
    return bound


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
    return Training(idx, backward, steps, clears, stepped)


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
