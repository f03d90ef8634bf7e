"""Control flow and execution order: loops and what runs once per iteration, the order in
which one run of a scope executes chosen nodes (through local helper calls), the branches
that guard them, the exits that leave before later ones, and the scopes that may run a
node, the guards that the arguments on a path make false, and whether two events share
an iteration. Path-aware only as far as branches, early exits and the literal arguments of
calls; values are `dataflow`'s.
"""

from __future__ import annotations

import sys
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import bind_arguments, parameter_names, same_expr
from torchlint.rules._analysis.index import Index, children, index


LOOP_TYPES = (cst.For, cst.While)

# Exact types, compared with `type(node) in ...`: cheaper than `isinstance` on LibCST's
# ABC classes, and LibCST's concrete node classes have no subclasses.
_NOT_INLINE_TYPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_NOT_INLINE = frozenset(_NOT_INLINE_TYPES)


def loop_body_contains(idx: Index, loop: cst.For | cst.While, node: cst.CSTNode) -> bool:
    """True when `node` runs once per iteration: in the body, not the iterable or `else`."""
    return idx.contains(loop.body, node)


def enclosing_loops(idx: Index, node: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops of the same function whose body holds `node`, innermost first."""
    loops: list[cst.For | cst.While] = []
    for ancestor in idx.ancestors(node):
        kind = type(ancestor)
        if kind in _NOT_INLINE:
            break
        if (kind is cst.For or kind is cst.While) and idx.contains(ancestor.body, node):  # type: ignore[attr-defined]
            loops.append(ancestor)  # type: ignore[arg-type]
    return loops


def loops_run_by(idx: Index, funcs: Functions, scope: cst.CSTNode) -> list[cst.For | cst.While]:
    """Loops inside `scope` or in local functions it reaches."""
    found: dict[int, cst.For | cst.While] = {}
    for root in funcs.reachable(scope):
        for loop in idx.within(root, cst.For, cst.While):
            if loop is not scope:
                found[id(loop)] = loop
    return list(found.values())


def loops_around_callers(
    idx: Index, funcs: Functions, node: cst.CSTNode, max_depth: int, depth: int = 0
) -> list[list[cst.For | cst.While]]:
    """The loops around `node` in its function, innermost first, each list continued by the
    loops around one call site of that function (up to `max_depth` callers up)."""
    loops: list[cst.For | cst.While] = enclosing_loops(idx, node)
    scope = idx.scope(node)
    if not isinstance(scope, cst.FunctionDef) or depth >= max_depth:
        return [loops]
    outer = [
        chain for site in funcs.call_sites(scope) for chain in loops_around_callers(idx, funcs, site, max_depth, depth + 1)
    ]
    return [loops + chain for chain in outer] or [loops]


def runs_once(idx: Index, funcs: Functions, scope: cst.CSTNode, depth: int = 0) -> bool:
    """One run of the program (or of a test) runs `scope` at most once: it is the module, a
    test function (`test_*`), or a function that the module calls, every call outside any
    loop and in a scope that runs once. A function no call here reaches (a step function
    that a training loop elsewhere calls) may run once per iteration."""
    if isinstance(scope, cst.Module):
        return True
    if not isinstance(scope, cst.FunctionDef) or depth >= MAX_INLINE_DEPTH:
        return False
    if scope.name.value.startswith("test"):
        return True
    sites = funcs.call_sites(scope)
    return bool(sites) and all(
        not enclosing_loops(idx, site) and runs_once(idx, funcs, idx.scope(site), depth + 1) for site in sites
    )


@dataclass(frozen=True)
class Step:
    """A call (or `a @ b`) in the order it executes, with the loops it runs in."""

    node: cst.CSTNode
    loops: tuple[cst.For | cst.While, ...]




def execution_order(scope: cst.CSTNode) -> list[Step]:
    """Calls and matrix products of `scope`, each loop body taken once, in execution order:
    operands before operations (`model(x).sum().item()` yields `model(x)`, `.sum()`, `.item()`),
    both branches of an `if` in turn. Nested functions and classes are not inlined."""
    out: list[Step] = []
    roots: Sequence[cst.CSTNode]
    if isinstance(scope, cst.Module):
        roots = [statement for statement in scope.body if type(statement) not in _NOT_INLINE]
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


def execution_home(idx: Index, node: cst.CSTNode) -> cst.FunctionDef | cst.Module | None:
    """The scope whose `execution_order` lists `node`: the function whose body holds it, or
    the module; None inside a class body, a lambda, or a function's decorators or defaults
    outside any function (code that `execution_order` does not inline anywhere)."""
    home = idx.enclosing(node, _NOT_INLINE_TYPES)
    if home is None:
        return idx.module
    if type(home) is cst.FunctionDef and idx.contains(home.body, node):
        return home
    return None


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


def chain_blocks(stmt: cst.If) -> list[cst.BaseSuite | None]:
    """The blocks of an `if`/`elif`/`else` chain, one of which a run takes: None stands for
    a missing `else`."""
    blocks: list[cst.BaseSuite | None] = [stmt.body]
    orelse = stmt.orelse
    while isinstance(orelse, cst.If):
        blocks.append(orelse.body)
        orelse = orelse.orelse
    blocks.append(orelse.body if orelse is not None else None)
    return blocks


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


def never_runs(funcs: Functions, event: Event) -> bool:
    """An `if` around `event` tests a parameter of its function (`if zero_grad:`, `if not
    eval_only:`) that is false on the event's path: the call on the path into that function
    passes a false literal or leaves a false default (`def optimizer_step(self, zero_grad=False)`
    called as `self.optimizer_step()`). Reached without such a call, every call site of the
    function must make it false."""
    for stmt, branch in event.guards:
        func = funcs.idx.scope(stmt)
        tested = _tested_parameter(stmt.test, branch)
        if not isinstance(func, cst.FunctionDef) or tested is None or tested[0] not in parameter_names(func):
            continue
        name, runs_when = tested
        calls = [c for c in event.path[:-1] if isinstance(c, cst.Call)]
        entry = next((c for c in calls if any(t is func for t in funcs.resolve(c))), None)
        sites = [entry] if entry is not None else funcs.call_sites(func)
        if sites and all(_argument_truth(funcs, func, site, name) is (not runs_when) for site in sites):
            return True
    return False


def skipped_by(funcs: Functions, func: cst.FunctionDef, call: cst.Call, node: cst.CSTNode) -> bool:
    """An `if` of `func` around `node` tests a parameter that `call` makes false for the
    branch that holds `node`: `if optimizer is not None: loss.backward()` in `run_epoch(loader,
    model)`, whose `optimizer` defaults to None, or `if train:` given `train=False`."""
    for ancestor in funcs.idx.ancestors(node):
        if ancestor is func:
            return False
        if not isinstance(ancestor, cst.If):
            continue
        branch = _branch_of(funcs.idx, ancestor, node)
        tested = _tested_parameter(ancestor.test, branch) if branch is not None else None
        if tested is not None and tested[0] in parameter_names(func):
            if _argument_truth(funcs, func, call, tested[0]) is (not tested[1]):
                return True
        present = _tested_presence(ancestor.test, branch) if branch is not None else None
        if present is not None and present[0] in parameter_names(func):
            if _argument_present(funcs, func, call, present[0]) is (not present[1]):
                return True
    return False


def _tested_presence(test: cst.BaseExpression, branch: bool) -> tuple[str, bool] | None:
    """(`x`, whether `x` is not None where the branch runs) for `if x is not None:` and
    `if x is None:`."""
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1):
        return None
    (comparison,) = test.comparisons
    if not (isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"):
        return None
    if isinstance(comparison.operator, cst.IsNot):
        return test.left.value, branch
    if isinstance(comparison.operator, cst.Is):
        return test.left.value, not branch
    return None


def _argument_present(funcs: Functions, func: cst.FunctionDef, call: cst.Call, name: str) -> bool | None:
    """Whether parameter `name` is not None when `call` runs `func`: known for a literal
    argument or a literal default; None when unknown."""
    value = _argument_value(funcs, func, call, name)
    if value is None:
        return None
    if isinstance(value, cst.Name) and value.value == "None":
        return False
    return True if literal_truth(value) is not None else None


def _tested_parameter(test: cst.BaseExpression, branch: bool) -> tuple[str, bool] | None:
    """(`flag`, the truth of `flag` under which the branch runs) for `if flag:` / `if not flag:`."""
    if isinstance(test, cst.Name):
        return test.value, branch
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not) and isinstance(test.expression, cst.Name):
        return test.expression.value, not branch
    return None


def _argument_truth(funcs: Functions, func: cst.FunctionDef, call: cst.Call, name: str) -> bool | None:
    """The truth of parameter `name` when `call` runs `func`: of a literal argument or of the
    parameter's literal default; None when unknown (a variable, `*args`, `**kwargs`)."""
    value = _argument_value(funcs, func, call, name)
    return literal_truth(value) if value is not None else None


def _argument_value(funcs: Functions, func: cst.FunctionDef, call: cst.Call, name: str) -> cst.BaseExpression | None:
    """What parameter `name` holds when `call` runs `func`: the argument bound to it, else its
    default; None when neither is known (`*args` may hold it)."""
    bound = bind_arguments(funcs, func, call)
    if name in bound:
        return bound[name]
    if any(arg.star for arg in call.args):
        return None
    p = func.params
    param = next((q for q in (*p.posonly_params, *p.params, *p.kwonly_params) if q.name.value == name), None)
    return param.default if param is not None else None


def runs_forever(loop: cst.For | cst.While) -> bool:
    """`while True:` (or `while 1:`): only a `break`, `return` or the end of a generator ends it."""
    return isinstance(loop, cst.While) and literal_truth(loop.test) is True


def literal_truth(expr: cst.BaseExpression) -> bool | None:
    """The truth of `True`, `False`, `None` and number and string literals; None otherwise."""
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return expr.value == "True"
    if isinstance(expr, (cst.Integer, cst.Float)):
        return bool(expr.evaluated_value)
    if isinstance(expr, cst.SimpleString):
        return bool(expr.evaluated_value)
    return None


def shared_iteration(a: Event, b: Event) -> tuple[bool, cst.For | cst.While | None]:
    """Whether `a` and `b` run in one iteration, and the innermost loop whose iteration that
    is: (True, None) when neither runs in a loop of the scope (a step function), (False, None)
    when they share no iteration (a schedule fast-forwarded before the training loop)."""
    shared = [loop for loop, other in zip(a.loops, b.loops) if loop is other]
    if shared:
        return True, shared[-1]
    return not a.loops and not b.loops, None


def skips_first_iteration(
    a: Event, b: Event, loop: cst.For | cst.While, number: Callable[[cst.BaseExpression], float | None] | None = None
) -> bool:
    """`a` runs under a guard on `loop`'s own variable that `b` does not share (`if epoch >
    start_epoch: scheduler.step()`): taken as a guard that skips the first iteration, unless
    it holds for every count from 0 on (`if epoch > -1:`, the bound's value given by
    `number`). An accumulation period `if (i + 1) % n == 0:` around both skips nothing
    between them."""
    if not isinstance(loop, cst.For):
        return False
    variables = _name_values(loop.target)
    shared = {(id(stmt), branch) for stmt, branch in b.guards}
    return any(
        variables & _name_values(stmt.test) and not (branch and _holds_from_zero(stmt.test, variables, loop, number))
        for stmt, branch in a.guards
        if (id(stmt), branch) not in shared
    )


def _holds_from_zero(
    test: cst.BaseExpression,
    variables: set[str],
    loop: cst.For,
    number: Callable[[cst.BaseExpression], float | None] | None,
) -> bool:
    """`epoch > -1`, `epoch >= 0`, `-1 < epoch` for a count of `range(...)` or `enumerate(...)`."""
    if not (isinstance(loop.iter, cst.Call) and isinstance(loop.iter.func, cst.Name)):
        return False
    if loop.iter.func.value not in ("range", "enumerate") or not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    op, right = test.comparisons[0].operator, test.comparisons[0].comparator
    left = test.left
    if isinstance(right, cst.Name) and right.value in variables:
        left, right = right, left
        op = {cst.LessThan: cst.GreaterThan(), cst.LessThanEqual: cst.GreaterThanEqual()}.get(type(op), op)
    if not (isinstance(left, cst.Name) and left.value in variables):
        return False
    bound = (number or literal_number)(right)
    if bound is None:
        return False
    return (isinstance(op, cst.GreaterThan) and bound < 0) or (isinstance(op, cst.GreaterThanEqual) and bound <= 0)


def literal_number(expr: cst.BaseExpression) -> float | None:
    """The value of a number literal: `3`, `-1`, `0.5`; None otherwise."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        inner = literal_number(expr.expression)
        return -inner if inner is not None else None
    return float(expr.evaluated_value) if isinstance(expr, (cst.Integer, cst.Float)) else None


def _name_values(node: cst.CSTNode) -> set[str]:
    """Every `Name` in `node`, attribute names included (`epoch` in `self.epoch`)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.add(current.value)
        stack.extend(children(current))
    return found
