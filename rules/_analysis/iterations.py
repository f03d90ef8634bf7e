"""Iterations: the code that one iteration of a loop runs. The loop body and the local
functions it calls, transitively (and the closures that chosen calls run, such as the one
`optimizer.step(closure)` runs), each with the caller's expressions bound to its
parameters as the loop's own function spells them; the order of two nodes within one
iteration; and whether the iteration is the last (a `break` of the loop or a `return`
follows a node: there is no next iteration).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Mapping

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import bind_arguments, parameter_names
from torchlint.rules._analysis.flow import enclosing_loops
from torchlint.rules._analysis.index import index

# How many calls deep an iteration's code is followed.
MAX_DEPTH = 5


@dataclass(frozen=True)
class Part:
    """Code that one iteration runs: the loop body itself or a local function it calls."""

    root: cst.CSTNode
    # The calls that lead here from the loop body, outermost first (empty for the body).
    path: tuple[cst.Call, ...] = ()
    # Parameter name -> the loop function's expression bound to it (None: not known).
    binding: Mapping[str, cst.BaseExpression | None] = field(default_factory=dict)

    @property
    def params(self) -> set[str]:
        return parameter_names(self.root) if isinstance(self.root, cst.FunctionDef) else set()

    def translate(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`expr` as the loop's own function spells it; None when a parameter is bound to nothing known."""
        plain = expr
        while isinstance(plain, cst.Attribute) and plain.attr.value in ("module", "_orig_mod"):
            plain = plain.value
        if isinstance(plain, cst.Name) and plain.value in self.params:
            return self.binding.get(plain.value)
        return expr


class Iterations:
    """What an iteration of each loop of one module runs, and in which order."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.funcs = functions(ctx)

    def parts(self, body: cst.CSTNode, running_closures: Collection[int] = ()) -> list[Part]:
        """The loop body and every local function one iteration may call; the ids in
        `running_closures` name calls that run the local functions passed to them."""
        start = Part(body)
        found = [start]
        seen = {id(body)}
        stack = [start]
        while stack:
            part = stack.pop()
            if len(part.path) >= MAX_DEPTH:
                continue
            for call in self.own_calls(part):
                closures = self.funcs.passed_functions(call) if id(call) in running_closures else []
                for func in [*self.funcs.resolve(call), *closures]:
                    if id(func) in seen:
                        continue
                    seen.add(id(func))
                    binding = {name: part.translate(arg) for name, arg in bind_arguments(self.funcs, func, call).items()}
                    inner = Part(func, (*part.path, call), binding)
                    found.append(inner)
                    stack.append(inner)
        return found

    def _home(self, part: Part) -> cst.CSTNode:
        return part.root if isinstance(part.root, cst.FunctionDef) else self.idx.scope(part.root)

    def own_calls(self, part: Part) -> list[cst.Call]:
        """The calls of `part` itself (not of functions nested in it)."""
        home = self._home(part)
        return [c for c in self.idx.within(part.root, cst.Call) if self.idx.scope(c) is home]

    def owns(self, part: Part, node: cst.CSTNode) -> bool:
        return self.idx.contains(part.root, node) and self.idx.scope(node) is self._home(part)

    def before(self, first: tuple[cst.CSTNode, ...], second: tuple[cst.CSTNode, ...]) -> bool:
        """`first` runs before `second` in one iteration (each a call path ending at a node):
        compare where the paths part."""
        for a, b in zip(first, second):
            if a is b:
                continue
            return self.idx.order(a) < self.idx.order(b) and not self.idx.contains(a, b)
        return False

    def following(self, node: cst.CSTNode) -> list[cst.BaseStatement]:
        """The statements after the one holding `node`, in the block that holds it."""
        current: cst.CSTNode = node
        for parent in self.idx.ancestors(node):
            if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                body = list(parent.body)
                return body[body.index(current) + 1 :]  # type: ignore[arg-type]
            current = parent
        return []

    def stops_after(self, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        """A `break` of `loop` or a `return` follows `node` in its block: no next iteration."""
        current: cst.CSTNode = node
        while current is not loop.body:
            later = [s for s in self.following(current) if self.idx.contains(loop.body, s)]
            if any(self._exits(s, loop) for s in later):
                return True
            parent = self.idx.parent(current)
            if parent is None or isinstance(parent, cst.FunctionDef):
                return False
            current = parent
        return False

    def _exits(self, statement: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        for exit_ in self.idx.within(statement, cst.Break, cst.Return):
            if self.idx.scope(exit_) is not self.idx.scope(loop):
                continue
            if isinstance(exit_, cst.Return) or next(iter(enclosing_loops(self.idx, exit_)), None) is loop:
                return True
        return False


def iterations(ctx: FileContext) -> Iterations:
    return ctx.analysis(Iterations)
