"""Phase-selected steps: one function that trains or evaluates depending on an argument.

`def run_epoch(model, loader, phase)` (or `train=True`, `mode='train'`) runs the model for
every phase and back-propagates only under a test of that argument (`if phase ==
'train':`). Such a function is called for the other phases too (the test says so), so the
model runs there in whatever mode the function leaves it: `phase_steps` finds these
functions, with the parameter, the forward that runs for every phase, and the value of a
phase that does not train when a call site in the module shows one.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import bind_arguments, called_module, parameter_names
from torchlint.rules._analysis.flow import enclosing_loops, in_exclusive_branches, literal_truth
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.modes import mode_calls, model_key
from torchlint.rules._analysis.names import dotted, imports
from torchlint.rules._analysis.networks import looks_like_model
from torchlint.rules._analysis.training import training
from torchlint.rules._vocabulary import (
    PHASE_WORDS,
    TRAINING_FLAG_WORDS,
    TRAINING_PHASES,
    name_says_model_run,
    name_tokens,
)

@dataclass(frozen=True)
class PhaseStep:
    """`func` back-propagates only when `param` selects training, and runs `model` (at
    `forward`) for every phase."""

    func: cst.FunctionDef
    param: str
    forward: cst.Call
    model: cst.BaseExpression
    # A phase that does not train, as a call site passes it (`'valid'`, `False`); None when
    # no call site in the module shows one.
    other_phase: str | None


def phase_steps(ctx: FileContext) -> list[PhaseStep]:
    return ctx.analysis(_build_phase_steps)


def _build_phase_steps(ctx: FileContext) -> list[PhaseStep]:
    idx = index(ctx)
    funcs = functions(ctx)
    imps = imports(ctx)
    switched = {model_key(m.target) for m in mode_calls(ctx)}
    train = training(ctx)
    trains = {id(node) for node in (*train.backward, *train.steps)}
    found: list[PhaseStep] = []
    for func in funcs.all:
        params = parameter_names(func)
        training_tests = [
            stmt
            for stmt in idx.within(func, cst.If)
            if idx.scope(stmt) is func
            and (param := _trains_when(stmt.test)) is not None
            and param in params
            and any(id(c) in trains for c in idx.within(stmt.body, cst.Call))
        ]
        if not training_tests:
            continue
        param = _trains_when(training_tests[0].test)
        assert param is not None
        for call in idx.within(func, cst.Call):
            model = called_module(call)
            if model is None or idx.scope(call) is not func:
                continue
            key = model_key(model)
            if key is None or not looks_like_model(key):
                continue
            if funcs.resolve(call) or imps.is_imported(model):
                continue  # a helper or a library function, not a network
            if key not in switched and not name_says_model_run(key):
                continue  # nothing says it is a network: no mode switch, no network's name
            if any(idx.contains(stmt, call) for stmt in training_tests):
                continue
            found.append(PhaseStep(func, param, call, model, _other_phase(idx, funcs, func, param)))
            break
    return found


def runs_in_train_mode(ctx: FileContext, step: PhaseStep) -> bool:
    """The step runs its model in train mode for a phase that does not train: nothing in
    its function switches a module to eval mode (or by a flag) where the forward can
    follow, and either the call sites this module shows pass such a phase while their code
    switches nothing to eval mode, or (no call site in sight) the function itself puts the
    model in train mode for every phase."""
    idx = index(ctx)
    key = model_key(step.model)
    inside = [m for m in mode_calls(ctx) if idx.contains(step.func, m.call)]
    # Any module (the model's batch-norm layers for one phase, `module.eval()`) counts.
    if any(m.mode != "train" and not in_exclusive_branches(idx, m.call, step.forward) for m in inside):
        return False
    switches = [m for m in inside if model_key(m.target) == key]
    sites = functions(ctx).call_sites(step.func)
    if not sites:
        return any(m.mode == "train" for m in switches)
    callers = {id(idx.scope(site)) for site in sites}
    return step.other_phase is not None and not any(
        m.mode != "train" and id(idx.scope(m.call)) in callers for m in mode_calls(ctx)
    )


def _trains_when(test: cst.BaseExpression) -> str | None:
    """The parameter whose training value the test asks for: `phase == 'train'`, `mode in
    ('train', 'fit')`, `is_train`, `train and ...`."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _trains_when(test.left) or _trains_when(test.right)
    if isinstance(test, cst.Name) and test.value in TRAINING_FLAG_WORDS:
        return test.value
    if not (isinstance(test, cst.Comparison) and isinstance(test.left, cst.Name) and len(test.comparisons) == 1):
        return None
    if not PHASE_WORDS.intersection(name_tokens(test.left.value)):
        return None
    (comparison,) = test.comparisons
    values = _strings(comparison.comparator)
    if isinstance(comparison.operator, (cst.Equal, cst.In)) and values and values <= TRAINING_PHASES:
        return test.left.value
    return None


def _strings(expr: cst.BaseExpression) -> set[str]:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return {value.lower()} if isinstance(value, str) else set()
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        found: set[str] = set()
        for element in expr.elements:
            inner = _strings(element.value)
            if not inner:
                return set()
            found |= inner
        return found
    return set()


def _other_phase(idx: Index, funcs: Functions, func: cst.FunctionDef, param: str) -> str | None:
    """A value that a call site gives `param` and that does not train: a string literal, a
    false flag, or one of the strings a loop around the call iterates (`for phase in
    ['train', 'valid']:`)."""
    for site in funcs.call_sites(func):
        value = bind_arguments(funcs, func, site).get(param)
        if value is None:
            continue
        if literal_truth(value) is False and not isinstance(value, cst.SimpleString):
            return dotted(value) or "False"
        candidates = _strings(value)
        name = dotted(value)
        for loop in enclosing_loops(idx, site):
            if isinstance(loop, cst.For) and dotted(loop.target) == name:
                candidates |= _strings(loop.iter)
        other = sorted(candidates - TRAINING_PHASES)
        if other:
            return repr(other[0])
    return None
