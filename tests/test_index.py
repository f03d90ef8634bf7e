"""The tree index: source order, parents and nodes by type agree with LibCST's own walk."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rules._analysis import Index
from torchlint.rules._analysis.index import children

# Every construct whose fields LibCST declares in an order other than the source's,
# and the common ones around them.
SOURCES = {
    "keyword arguments": "f(1, key=g(x), *rest, other=y, **extra)\n",
    "positional-only parameters": "def f(a, b=1, /, c=2, *args, d, e=3, **kw) -> int:\n    pass\n",
    "lambda parameters": "h = lambda a, /, b=1, *c, d, **e: a + b\n",
    "decorated function with type parameters": textwrap.dedent(
        """
        @register(name="x")
        def f[T: int](value: T, /, *, scale: float = 1.0) -> T:
            return value
        """
    ),
    "class with type parameters and keywords": textwrap.dedent(
        """
        @dataclass(frozen=True)
        class Box[T](Base, Generic[T], metaclass=Meta):
            item: T = field(default=None)
        """
    ),
    "handlers, match and conditional expressions": textwrap.dedent(
        """
        try:
            run(a)
        except (KeyError, ValueError) as err:
            log(err)
        match point:
            case Point(x=0, y=yy) if yy > 0:
                pass
        value = left if test(c) else right
        pairs = {k: v for k, v in items if keep(k)}
        """
    ),
}


class _LibcstOrder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.seen: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        self.seen.append(node)
        return True


@pytest.mark.parametrize("source", SOURCES.values(), ids=list(SOURCES))
def test_index_order_is_libcst_visit_order(source: str) -> None:
    module = cst.parse_module(source)
    idx = Index(module)
    walk = _LibcstOrder()
    module.visit(walk)
    indexed = [node for node in walk.seen if node in idx.nodes(type(node))]
    orders = [idx.order(node) for node in indexed]
    assert orders == sorted(orders), [type(n).__name__ for n in indexed]


@pytest.mark.parametrize("source", SOURCES.values(), ids=list(SOURCES))
def test_index_holds_every_name(source: str) -> None:
    module = cst.parse_module(source)
    idx = Index(module)
    walk = _LibcstOrder()
    module.visit(walk)
    names = [node for node in walk.seen if isinstance(node, cst.Name)]
    assert len(idx.nodes(cst.Name)) == len(names)


def test_keyword_name_comes_before_its_value() -> None:
    module = cst.parse_module("f(key=value)\n")
    idx = Index(module)
    arg = idx.nodes(cst.Arg)[0]
    assert arg.keyword is not None
    assert idx.order(arg.keyword) < idx.order(arg.value)


class _LibcstParents(cst.CSTVisitor):
    def __init__(self) -> None:
        self.parent: dict[int, cst.CSTNode] = {}
        self.open: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.open:
            self.parent[id(node)] = self.open[-1]
        self.open.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.open.pop()


@pytest.mark.parametrize("source", SOURCES.values(), ids=list(SOURCES))
def test_index_parents_and_ends_agree_with_libcst(source: str) -> None:
    module = cst.parse_module(source)
    idx = Index(module)
    tree = _LibcstParents()
    module.visit(tree)
    indexed = {id(node): node for node in tree_nodes(idx, module)}
    ends = {key: idx.order(node) for key, node in indexed.items()}
    for node in indexed.values():
        # The index skips punctuation and whitespace: a node's parent there is its
        # nearest indexed ancestor, and a node ends at the last indexed node inside it.
        ancestors = []
        current = tree.parent.get(id(node))
        while current is not None:
            if id(current) in indexed:
                ancestors.append(current)
                ends[id(current)] = max(ends[id(current)], idx.order(node))
            current = tree.parent.get(id(current))
        assert idx.parent(node) is (ancestors[0] if ancestors else None)
        assert list(idx.ancestors(node)) == ancestors
    assert {key: idx.end(node) for key, node in indexed.items()} == ends


def tree_nodes(idx: Index, module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(children(node))
    assert sorted(idx.order(node) for node in found) == list(range(len(found)))
    return found


def test_leaves_have_no_children_and_end_where_they_start() -> None:
    module = cst.parse_module("value = f'{name}' + 'text' + 1 + 2.0 + 3j\n")
    idx = Index(module)
    leaves = [*idx.nodes(cst.Name), *idx.nodes(cst.SimpleString), *idx.nodes(cst.Integer)]
    leaves += [*idx.nodes(cst.Float), *idx.nodes(cst.Imaginary)]
    assert len(leaves) == 6
    for leaf in leaves:
        assert children(leaf) == []
        assert idx.end(leaf) == idx.order(leaf)
    assert [type(c) for c in children(idx.nodes(cst.FormattedString)[0])] == [cst.FormattedStringExpression]


def test_holds_any_says_whether_one_of_the_nodes_lies_inside() -> None:
    module = cst.parse_module("for a in b:\n    f(a)\ng(1)\nfor c in d:\n    pass\n")
    idx = Index(module)
    first, second = [n for n in module.body if isinstance(n, cst.For)]
    calls = idx.nodes(cst.Call)
    assert idx.holds_any(first.body, calls) and idx.holds_any(module, calls)
    assert not idx.holds_any(second.body, calls) and not idx.holds_any(first.body, [])
    many = calls * 20  # a list long enough for its orders to be kept
    assert idx.holds_any(first, many) and not idx.holds_any(second, many)
