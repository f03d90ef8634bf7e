"""`Bindings.reaching`: which assignments of a name may reach a use of it.

Each case marks the use with `# use` and the assignments that must reach it with
`# reaches`; no other assignment of the name may be reported.
"""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchlint.rule import FileContext
from torchlint.rules._analysis import bindings, index

CASES = {
    "straight": """
        def f(a):
            y = a
            y = a + 1  # reaches
            return y  # use
    """,
    "both arms of an if": """
        def f(a, c):
            y = a
            if c:
                y = 1  # reaches
            else:
                y = 2  # reaches
            return y  # use
    """,
    "an if without else keeps the earlier one": """
        def f(a, c):
            y = a  # reaches
            if c:
                y = 1  # reaches
            return y  # use
    """,
    "the other arm does not reach": """
        def f(a, c):
            y = a  # reaches
            if c:
                y = 1
            else:
                z = y  # use
            return z
    """,
    "elif chain": """
        def f(c, d):
            if c:
                y = 1  # reaches
            elif d:
                y = 2  # reaches
            else:
                y = 3  # reaches
            return y  # use
    """,
    "loop back edge": """
        def f(a, n):
            y = a  # reaches
            for _ in range(n):
                z = y.view(-1)  # use
                y = a.t()  # reaches
            return z
    """,
    "loop target": """
        def f(items):
            y = None
            for y in items:  # reaches
                print(y)  # use
    """,
    "try body reaches its handler": """
        def f(a):
            y = a  # reaches
            try:
                y = a.t()  # reaches
            except ValueError:
                return y  # use
    """,
    "with ... as": """
        def f(path):
            y = None
            with open(path) as y:  # reaches
                return y  # use
    """,
    "parameter": """
        def f(y, c):  # reaches
            if c:
                y = 1  # reaches
            return y  # use
    """,
    "module level": """
        y = 1
        y = 2  # reaches
        print(y)  # use
    """,
}


def _marked(source: str, mark: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), start=1) if line.rstrip().endswith(mark)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reaching(name: str) -> None:
    source = textwrap.dedent(CASES[name]).lstrip()
    module = cst.parse_module(source)
    ctx = FileContext("example.py", source, module)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    positions = wrapper.resolve(PositionProvider)
    (use_line,) = _marked(source, "# use")
    uses = [
        n
        for n in index(ctx).nodes(cst.Name)
        if n.value == "y" and n in positions and positions[n].start.line == use_line
    ]
    assert uses, "the case marks a use of `y`"
    found = bindings(ctx).reaching(uses[-1])
    assert {positions[b.node].start.line for b in found} == _marked(source, "# reaches")
