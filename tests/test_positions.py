"""`node_positions` must give exactly what LibCST's PositionProvider gives, for any node."""

from __future__ import annotations

import importlib.util
import random
import sysconfig
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.positions import node_positions


def provider_positions(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {node: (r.start.line, r.start.column, r.end.line, r.end.column) for node, r in ranges.items()}


def real_files(count: int) -> list[Path]:
    """A fixed sample of real files: the standard library and, where installed, torch."""
    roots = [Path(sysconfig.get_paths()["stdlib"])]
    torch = importlib.util.find_spec("torch")  # located, never imported
    if torch is not None and torch.submodule_search_locations:
        roots.append(Path(list(torch.submodule_search_locations)[0]))
    files: list[Path] = []
    for root in roots:
        found = sorted(p for p in root.rglob("*.py") if "site-packages" not in p.relative_to(root).parts)
        files.extend(random.Random(4).sample(found, min(count, len(found))))
    return files


EDGE_CASES = [
    "",
    "x = 1",  # no trailing newline: the module drops its last newline token
    "\n\n# only comments\n",
    "x = 1\r\ny = (2,\r\n     3)\r\n",
    "x = 1\ry = 2\r",
    "def f():\n\tif x:\n\t\treturn 1\n\telse: pass",
    "@a\n@b.c(1)\nclass A(B, metaclass=M):\n    '''doc'''\n    def f(self): return [i for i in\n  range(3)]\n",
    "if a:\n    pass\nelif b:\n    pass\nelse:\n    pass\ntry:\n    x\nexcept* E as e:\n    y\nfinally:\n    z\n",
    "match p:\n    case [1, *rest] if rest:\n        pass\n    case {'k': v, **kw}:\n        pass\n",
    "async def f():\n    async with a as b, c:\n        async for x in y:\n            await z\n",
    "x = f'{a!r:>{w}} {b}' 'c' \\\n    \"d\"\n",
    "lambda: (yield)\nglobal g; nonlocal_ = 1; del a, b\n",
]


@pytest.mark.parametrize("source", EDGE_CASES, ids=range(len(EDGE_CASES)))
def test_every_node_of_edge_cases(source: str) -> None:
    module = cst.parse_module(source)
    expected = provider_positions(module)
    got = node_positions(module, expected)
    assert {id(node): pos for node, pos in expected.items()} == got


@pytest.mark.parametrize("path", real_files(12), ids=lambda p: p.name)
def test_real_files(path: Path) -> None:
    module = cst.parse_module(path.read_text(encoding="utf-8"))
    expected = provider_positions(module)
    assert node_positions(module, expected) == {id(node): pos for node, pos in expected.items()}
    # A few nodes, as the engine asks: generation stops after the last of them.
    nodes = list(expected)
    chosen = random.Random(path.name).sample(nodes, min(3, len(nodes)))
    assert node_positions(module, chosen) == {id(node): expected[node] for node in chosen}


def test_nodes_outside_the_tree_are_left_out() -> None:
    module = cst.parse_module("x = 1\n")
    stranger = cst.Name("y")
    inside = module.body[0]
    assert set(node_positions(module, [stranger, inside])) == {id(inside)}
