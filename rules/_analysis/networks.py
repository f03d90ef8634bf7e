"""Networks: which objects the code runs as networks, which of them training runs with
gradients, what a call runs through a local helper, who owns a method's mode, and whether
a network's train/eval mode matters at all (its layers).

"Which layer types make train/eval mode matter" has one definition: the project summaries'
(`_summaries.class_mode_free`, with the words of `vocabulary.MODE_DEPENDENT`), for the
classes of the checked file as for those of the project's other modules; a dropout whose
rate is an `__init__` parameter counts only when it is built with a rate other than 0.
"""

from __future__ import annotations

import builtins

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import Functions, functions
from torchlint.rules._analysis.calls import (
    bind_arguments,
    called_module,
    callee_name,
    method_name,
    parameter_names,
    receiver,
)
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.modes import grad_free_decorated, model_key, runs_with_gradients, wrapped_model
from torchlint.rules._analysis.names import Imports, imports
from torchlint.rules._analysis.training import training
from torchlint.rules._analysis.vocabulary import (
    MODE_FRAMEWORKS,
    name_says_evaluation,
    name_tokens,
    NOT_MODEL_WORDS,
)

_BUILTINS = frozenset(dir(builtins))
# Methods that move or cast a network and return it.
_PLACEMENT = frozenset({"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train"})


def looks_like_model(key: str) -> bool:
    """A called object that may be a network: not `self`, a builtin, a loss or a metric."""
    return key != "self" and key not in _BUILTINS and not NOT_MODEL_WORDS.intersection(name_tokens(key))


def trained_models(ctx: FileContext) -> frozenset[str]:
    """The networks (as `model_key` names them) that training loops run with gradients, in
    their own body or in the local helpers they call (not evaluation helpers)."""
    return ctx.analysis(_build_trained_models)


def _build_trained_models(ctx: FileContext) -> frozenset[str]:
    idx, imps, funcs = index(ctx), imports(ctx), functions(ctx)
    keys: set[str | None] = set()
    for loop in training(ctx).training_loops(funcs):
        roots: list[cst.CSTNode] = [loop.body]
        roots.extend(
            f
            for f in funcs.reachable(loop.body)
            if isinstance(f, cst.FunctionDef)
            and not name_says_evaluation(f.name.value)
            and not grad_free_decorated(f, imps)
        )
        for root in roots:
            keys.update(model_key(e) for e in runs_with_gradients(idx, imps, root))
    return frozenset(k for k in keys if k is not None and k != "self")


def models_run_by(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The networks a call runs, spelled as the caller spells them: `model` for `model(x)`;
    for a local helper `forward_step(model, x)`, the modules the helper runs (its parameters
    bound to the call's arguments, and attributes such as `self.model`). Evaluation helpers
    are left out (they are judged on their own), and so are imported objects."""
    idx, imps, funcs = index(ctx), imports(ctx), functions(ctx)
    helpers = funcs.resolve(call)
    if not helpers:
        model = called_module(call)
        return [] if model is None or imps.is_imported(model) else [model]
    found: list[cst.BaseExpression] = []
    for helper in helpers:
        if name_says_evaluation(helper.name.value):
            continue
        params = parameter_names(helper)
        assigned = {
            t.target.value for a in idx.within(helper, cst.Assign) for t in a.targets if isinstance(t.target, cst.Name)
        }
        bound = bind_arguments(funcs, helper, call)
        for inner in idx.within(helper, cst.Call):
            model = called_module(inner) if idx.scope(inner) is helper else None
            if model is None or funcs.resolve(inner) or imps.is_imported(model):
                continue
            if isinstance(model, cst.Name) and model.value in params:
                if model.value in bound:
                    found.append(bound[model.value])
            elif not isinstance(model, cst.Name) or model.value not in assigned:
                found.append(model)
    return found


def mode_owned_elsewhere(funcs: Functions, imps: Imports, func: cst.FunctionDef) -> bool:
    """A method of a framework class (Lightning, HF Trainer, ...) or of a network itself: the
    framework, or the code that owns the network, decides its mode."""
    cls = funcs.enclosing_class(func)
    if cls is None:
        return False
    for base in cls.bases:
        qualified = imps.qualify(base.value) or ""
        short = qualified.rsplit(".", 1)[-1]
        if qualified.split(".")[0] in MODE_FRAMEWORKS or "Lightning" in short:
            return True
        if short == "Module" and (qualified.startswith("torch") or qualified == "nn.Module"):
            return True
    return False


def mode_free(ctx: FileContext, key: str | None) -> bool:
    """Every network that `key` is built as (`model = Net(...)`, through `.to(device)` and
    DataParallel wrappers) is a class of this file or of the project with no layer that
    behaves differently in eval mode: `eval()` would change nothing. Unknown: False."""
    if key is None:
        return False
    built = [a.value for a in index(ctx).nodes(cst.Assign) if any(model_key(t.target) == key for t in a.targets)]
    if not built:
        return False
    for value in built:
        while isinstance(value, cst.Call) and method_name(value) in _PLACEMENT:
            value = receiver(value)  # type: ignore[assignment]
        if wrapped_model(value) == key:
            continue  # `net = nn.DataParallel(net)`: the same layers
        if not isinstance(value, cst.Call):
            return False
        entry = sm.local_entry(ctx, callee_name(value) or "") or sm.entry_for(ctx, value.func)
        if entry is None or not sm.class_mode_free(ctx, entry, value):
            return False
    return True

