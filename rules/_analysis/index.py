"""The tree index: one fast walk over a module that answers *where am I?*: each node's
parent, its source order (the order LibCST's own visitor enters nodes), and the nodes of
each type. LibCST's visitors and metadata providers cost several times more; rules that
need a node kind look it up here instead of walking the tree again.
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_left, bisect_right
from collections import defaultdict
from operator import attrgetter
from typing import Callable, Iterable, Iterator, Sequence, TypeVar, cast, overload

import libcst as cst

from torchlint.rule import FileContext


N = TypeVar("N", bound=cst.CSTNode)
M = TypeVar("M", bound=cst.CSTNode)
O = TypeVar("O", bound=cst.CSTNode)
P = TypeVar("P", bound=cst.CSTNode)
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
    cst.FunctionDef: ("decorators", "name", "type_parameters", "params", "returns", "body"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.Arg: ("keyword", "value"),
    cst.Parameters: ("posonly_params", "posonly_ind", "params", "star_arg", "kwonly_params", "star_kwarg"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.IfExp: ("body", "test", "orelse"),
}
# Field types that never hold a node (`Name.value`): a node with only such fields is a leaf.
_TEXT_TYPES = (str, bool, "str", "bool")
_field_cache: dict[type, tuple[str, ...]] = {}


def _child_fields(node_type: type) -> tuple[str, ...]:
    fields = _field_cache.get(node_type)
    if fields is None:
        fields = _FIELD_ORDER_OVERRIDES.get(node_type) or tuple(
            f.name
            for f in dataclasses.fields(node_type)
            if f.name not in _SKIPPED_FIELDS and not f.name.startswith("whitespace") and f.type not in _TEXT_TYPES
        )
        _field_cache[node_type] = fields
    return fields


class _NodeTypes(dict[type, bool]):
    """Whether a type is a LibCST node type, by type: `is_node[kind]`.

    LibCST's node classes are ABCs: `isinstance(value, cst.CSTNode)` goes through
    `ABCMeta.__instancecheck__`, ten times the cost of this dict lookup, and the walks
    below make it for every field of every node (a third of the values are None:
    an argument's absent keyword, a parameter's absent default)."""

    def __missing__(self, kind: type) -> bool:
        known = self[kind] = issubclass(kind, cst.CSTNode)
        return known


_is_node_type = _NodeTypes()


# Per node type, one call that reads all its code-bearing fields, as a tuple (the walks
# read every field of every node: one `attrgetter` call costs less than a `getattr` each).
_field_readers: dict[type, Callable[[cst.CSTNode], tuple[object, ...]]] = {}


def _no_fields(node: cst.CSTNode) -> tuple[object, ...]:
    return ()


def _field_reader(node_type: type) -> Callable[[cst.CSTNode], tuple[object, ...]]:
    reader = _field_readers.get(node_type)
    if reader is None:
        fields = _child_fields(node_type)
        if not fields:
            reader = _no_fields
        elif len(fields) == 1:
            one = attrgetter(fields[0])
            reader = lambda node: (one(node),)  # noqa: E731
        else:
            reader = cast("Callable[[cst.CSTNode], tuple[object, ...]]", attrgetter(*fields))
        _field_readers[node_type] = reader
    return reader


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """Code-bearing children in source order (cheaper than `node.children`)."""
    out: list[cst.CSTNode] = []
    is_node = _is_node_type
    for value in (_field_readers.get(type(node)) or _field_reader(type(node)))(node):
        kind = type(value)
        if kind is tuple or kind is list:
            out.extend([v for v in value if is_node[type(v)]])  # type: ignore[attr-defined]
        elif is_node[kind]:
            out.append(value)  # type: ignore[arg-type]
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
        # Scopes asked for, by node id: rules ask again and again for the same nodes'.
        self._scopes: dict[int, cst.FunctionDef | cst.Lambda | cst.Module] = {}
        parent, enter, exit_, by_type = self._parent, self._enter, self._exit, self._by_type
        readers, is_node = _field_readers, _is_node_type
        counter = 0
        # A node, or (after its subtree) the id of a node whose subtree ends here: an
        # `int` on the stack, never a node.
        stack: list[cst.CSTNode | int] = [module]
        pop, push, extend = stack.pop, stack.append, stack.extend
        while stack:
            node = pop()
            if type(node) is int:
                exit_[node] = counter - 1
                continue
            key = id(node)
            enter[key] = counter
            counter += 1
            kind = type(node)
            by_type[kind].append(node)  # type: ignore[arg-type]
            read = readers.get(kind) or _field_reader(kind)
            if read is _no_fields:  # a leaf (a third of all nodes are `Name`s)
                exit_[key] = counter - 1
                continue
            push(key)
            kids: list[cst.CSTNode] = []
            for value in read(node):  # type: ignore[arg-type]
                value_kind = type(value)
                if value_kind is tuple or value_kind is list:
                    kids.extend([v for v in value if is_node[type(v)]])  # type: ignore[attr-defined]
                elif is_node[value_kind]:
                    kids.append(value)  # type: ignore[arg-type]
            for child in kids:
                parent[id(child)] = node  # type: ignore[assignment]
            kids.reverse()
            extend(kids)

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

    def holds_any(self, outer: cst.CSTNode, nodes: Sequence[cst.CSTNode]) -> bool:
        """Whether any of `nodes` lies inside `outer` (a search of their sorted orders)."""
        orders, _ = self.sorted_orders(nodes)
        return bisect_left(orders, self._enter[id(outer)]) < bisect_right(orders, self._exit[id(outer)])

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
        known = self._scopes.get(id(node))
        if known is None:
            found = self.enclosing(node, (cst.FunctionDef, cst.Lambda))
            known = self._scopes[id(node)] = cast("cst.FunctionDef | cst.Lambda", found) if found is not None else self.module
        return known

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


def first(items: Iterable[N], predicate: Callable[[N], bool]) -> N | None:
    for item in items:
        if predicate(item):
            return item
    return None
