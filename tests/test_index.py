"""The tree index: source order, parents and nodes by type agree with LibCST's own walk."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rules._analysis import Index

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
