"""Modes and gradient-free regions: `torch.no_grad()` and its spellings, the `train()` /
`eval()` calls on modules, what the code calls a network (through DataParallel and
`torch.compile` wrappers), the objects a scope runs with gradients enabled, and where the
code switches networks to eval mode before a call (`eval_switches`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import called_module, callee_name, method_name, positional, receiver
from torchlint.rules._analysis.flow import enclosing_loops
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import Imports, dotted, last_name
from torchlint.rules._vocabulary import (
    GRAD_FREE_NAME,
    MODEL_WRAPPERS,
    MODULE_UTILITY_METHODS,
    name_tokens,
    RUNNER_WORDS,
)

# How many local calls deep an eval switch is looked for, and how many callers up.
MAX_SWITCH_DEPTH = 4
MAX_CALLER_DEPTH = 3


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
    return bool(GRAD_FREE_NAME.search(short))


def grad_free_decorated(func: cst.FunctionDef, imps: Imports) -> bool:
    return any(is_grad_free_call(d.decorator, imps) for d in func.decorators)


def in_grad_free_block(idx: Index, node: cst.CSTNode, imps: Imports, stop_at_function: bool = True) -> bool:
    """`node` runs inside a gradient-free `with` (or a decorated function) in its own scope."""
    return next(grad_free_blocks(idx, node, imps, stop_at_function), None) is not None


def grad_free_blocks(
    idx: Index, node: cst.CSTNode, imps: Imports, stop_at_function: bool = True
) -> Iterator[cst.With | cst.FunctionDef]:
    """The gradient-free `with` statements and decorated functions around `node`, innermost
    first (within its own scope when `stop_at_function`)."""
    for ancestor in idx.ancestors(node):
        if isinstance(ancestor, cst.With) and idx.contains(ancestor.body, node):
            if any(is_grad_free_call(item.item, imps) for item in ancestor.items) or _stacks_grad_free(idx, ancestor, imps):
                yield ancestor
        if isinstance(ancestor, cst.FunctionDef):
            if grad_free_decorated(ancestor, imps):
                yield ancestor
            if stop_at_function:
                return


def _stacks_grad_free(idx: Index, block: cst.With, imps: Imports) -> bool:
    """`with ExitStack() as stack:` whose body enters a gradient-free context:
    `stack.enter_context(torch.no_grad())`, or each of a list that holds one
    (`for m in [torch.no_grad(), *observers]: stack.enter_context(m)`)."""
    stacks = {
        item.asname.name.value
        for item in block.items
        if isinstance(item.item, cst.Call) and last_name(item.item.func) == "ExitStack"
        and item.asname is not None and isinstance(item.asname.name, cst.Name)
    }
    if not stacks:
        return False
    scope = idx.scope(block)
    for call in idx.within(block.body, cst.Call):
        owner = receiver(call)
        if method_name(call) != "enter_context" or owner is None or dotted(owner) not in stacks or not call.args:
            continue
        entered = call.args[0].value
        if is_grad_free_call(entered, imps):
            return True
        loop = next((a for a in idx.ancestors(call) if isinstance(a, cst.For)), None)
        if isinstance(entered, cst.Name) and loop is not None and dotted(loop.target) == entered.value:
            held = [loop.iter, *(
                assign.value for assign in idx.within(scope, cst.Assign)
                if any(dotted(t.target) == dotted(loop.iter) for t in assign.targets)
            )]
            if any(is_grad_free_call(c, imps) for value in held for c in idx.within(value, cst.Call)):
                return True
    return False


def grad_mode_flag(block: cst.CSTNode, imps: Imports) -> bool:
    """`with torch.set_grad_enabled(flag):` with a flag chosen at run time (and no other
    gradient-free context): the block runs without gradients only where the flag is false
    (a shared `run_epoch(train=...)`)."""
    if not isinstance(block, cst.With):
        return False
    flags = [_sets_grad_by_flag(item.item, imps) for item in block.items if is_grad_free_call(item.item, imps)]
    return bool(flags) and all(flags)


def _sets_grad_by_flag(expr: cst.BaseExpression, imps: Imports) -> bool:
    if not isinstance(expr, cst.Call) or (imps.qualify(expr.func) or "").rsplit(".", 1)[-1] != "set_grad_enabled":
        return False
    first = positional(expr)[:1] or [a for a in expr.args if a.keyword is not None and a.keyword.value == "mode"]
    return bool(first) and not (isinstance(first[0].value, cst.Name) and first[0].value.value in ("True", "False"))


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


# Module methods that return the module itself: `Net().to(device).eval()` is still `Net()`.
SELF_RETURNING = frozenset({"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "eval", "train", "type"})


def strip_self_returning(expr: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """`model` for `model.to(device).eval()`."""
    while isinstance(expr, cst.Call) and method_name(expr) in SELF_RETURNING:
        expr = receiver(expr)
    return expr


def assigned_chain_target(idx: Index, call: cst.Call) -> str | None:
    """The dotted name that a chain of self-returning calls holding `call` is assigned to:
    `model` for `model = Net().to(device).eval()` (the `eval()` call); None for other shapes."""
    top: cst.CSTNode = call
    parent = idx.parent(top)
    while isinstance(parent, (cst.Attribute, cst.Call)):
        if isinstance(parent, cst.Call) and method_name(parent) not in SELF_RETURNING:
            return None
        top, parent = parent, idx.parent(parent)
    if isinstance(parent, cst.Assign) and parent.value is top and len(parent.targets) == 1:
        return dotted(parent.targets[0].target)
    return None


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
        if any(t in RUNNER_WORDS for t in name_tokens(last_name(target) or "")):
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


class EvalSwitches:
    """Where a module's code switches networks to eval mode: in a scope's own code or the
    local functions it calls, before a call site, and whether every caller of a function
    leaves the networks in train mode."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.funcs = functions(ctx)
        self.calls = [m.call for m in mode_calls(ctx) if m.mode in ("eval", "either")]
        self._reaches: dict[int, bool] = {}

    def reaches_eval(self, scope: cst.CSTNode, depth: int = 0) -> bool:
        """`scope`'s own code, or a local function it calls, switches some module to eval mode."""
        key = id(scope)
        if key in self._reaches:
            return self._reaches[key]
        self._reaches[key] = False  # recursion guard
        own = scope if isinstance(scope, (cst.FunctionDef, cst.Module)) else self.idx.scope(scope)
        found = any(self.idx.contains(scope, c) and self.idx.scope(c) is own for c in self.calls)
        if not found and depth < MAX_SWITCH_DEPTH:
            found = any(
                self.idx.scope(call) is own and any(self.reaches_eval(f, depth + 1) for f in self.funcs.resolve(call))
                for call in self.idx.within(scope, cst.Call)
            )
        self._reaches[key] = found
        return found

    def eval_before(self, site: cst.Call, caller: cst.CSTNode) -> bool:
        """The caller switches some module to eval mode before `site`: earlier in its code, or
        anywhere in a loop that also runs `site` (a previous iteration)."""
        loops = {id(loop) for loop in enclosing_loops(self.idx, site)}
        for call in self.idx.within(caller, cst.Call):
            if self.idx.scope(call) is not caller or call is site:
                continue
            switches = any(call is c for c in self.calls) or any(self.reaches_eval(f) for f in self.funcs.resolve(call))
            if switches and (
                self.idx.order(call) < self.idx.order(site)
                or any(id(loop) in loops for loop in enclosing_loops(self.idx, call))
            ):
                return True
        return False

    def callers_leave_train_mode(self, func: cst.FunctionDef, depth: int = 0) -> bool:
        """Every caller (and, for evaluation helpers, their callers) runs `func` without an eval
        call. A function that nothing in the module calls has an unknown caller: False."""
        sites = self.funcs.call_sites(func)
        if not sites:
            return depth > 0
        for site in sites:
            caller = self.idx.scope(site)
            if self.eval_before(site, caller):
                return False
            if isinstance(caller, cst.FunctionDef) and depth < MAX_CALLER_DEPTH and caller is not func:
                if not self.callers_leave_train_mode(caller, depth + 1):
                    return False
        return True


def eval_switches(ctx: FileContext) -> EvalSwitches:
    return ctx.analysis(EvalSwitches)


def grad_free_statement(idx: Index, imps: Imports, node: cst.CSTNode) -> cst.CSTNode:
    """The statement that runs `node` without gradients, within its loop or function: the
    outermost `with torch.no_grad():` around it there, else `node` itself."""
    statement: cst.CSTNode = node
    for ancestor in idx.ancestors(node):
        if isinstance(ancestor, (cst.For, cst.While, cst.FunctionDef)):
            break
        if isinstance(ancestor, cst.With) and any(is_grad_free_call(i.item, imps) for i in ancestor.items):
            statement = ancestor
    return statement
