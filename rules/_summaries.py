"""Summaries: what other modules see of a module's functions, methods and classes.

Answers "what does this function of another module do that a rule cares about?" without
parsing that module again: `summarize(tree)` turns one module into plain JSON data,
computed once per file content and cached (`torchlint.project` resolves imports to
modules and records which summary entries a check used); the queries at the end
(`call_effects`, `class_mode_free`, ...) are what rules ask.

The summary walks Python's `ast`, not LibCST: it runs over every project module that a
checked file imports, and CPython's parser with a walk is about ten times cheaper than a
LibCST parse. Its vocabulary (what counts as a gradient clear, an optimizer, a
gradient-free context) is the analysis library's (`_analysis`), so that a helper in
another module means what the same code means in the checked file.

## The data
```
{"imports": {local name: written target},          # `from .x import f` -> {"f": ".x.f"}
 "defs": {name: function or class entry}}
function: {"kind": "function", "params": [...], "effects": [...], "calls": [...],
           "mode_params": {param: "eval" | "train" | "flag:<param>"}, "returns": [...]}
class:    {"kind": "class", "bases": [...], "methods": {name: function}, "attrs": {attr: [...]},
           "mode_words": bool, "dropout_params": {param: default}, "init_params": [...],
           "uses": [...]}
```
Names are written as the module sees them: `:f` for its own definitions (`:Trainer.step`
for `self.step()` in `Trainer`), `.x.f` for relative imports, `pkg.x.f` for absolute
ones; `ModuleRef.absolute` makes them absolute. `calls` lists only calls of the project's
own names (imports and definitions), which is what effects flow through.

Effects: `clears_grads` (`zero_grad()`, `p.grad = None`, `p.grad.zero_()`, a helper
named like `zero_grads`), `steps` (an optimizer's or a scaler's `step`), `backward`,
`syncs` (`torch.cuda.synchronize()`, host reads `.item()`, `.cpu()`, `.tolist()`,
`.numpy()`), `grad_free` (decorated with `no_grad` / `inference_mode`),
`enters_grad_free` (a `with` of one), `sets_eval` / `sets_train`, `moves_device`
(`.to()`, `.cuda()`), `selects_gpu` (`torch.cuda.set_device`, `torch.cuda.device(...)`,
`CUDA_VISIBLE_DEVICES`, `init_process_group(device_id=...)`), `inits_process_group`,
`distributed_sampler`.
"""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an

if TYPE_CHECKING:
    from torchlint.project import Entry, ProjectView

# Words in a network's code that mean eval mode changes what it computes.
MODE_DEPENDENT = re.compile(
    r"(?i)dropout|batch_?norm|instance_?norm|training|\beval\b|\btrain\b|lstm|gru|rnn|transformer|attention"
)
_DROPOUT_LAYER = re.compile(r"Dropout\d?d?$")
# Host reads wait for the GPU to finish the work queued so far.
HOST_READS = frozenset({"item", "cpu", "tolist", "numpy"})
TORCH_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "nn.Module"})
# How many calls deep effects are followed through other functions.
MAX_DEPTH = 4

Summary = dict[str, Any]


# ---------------------------------------------------------------------------
# Building a summary from one module's tree.


def summarize(tree: ast.Module) -> Summary:
    """The summary of one module (see the module docstring for its shape)."""
    imports: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    imports[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    imports[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    sep = "" if base.endswith(".") else "."
                    imports[alias.asname or alias.name] = f"{base}{sep}{alias.name}"
    own = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    }
    names = _Names(imports, own)
    defs: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defs[node.name] = _function(node, names, None)
        elif isinstance(node, ast.ClassDef):
            defs[node.name] = _class(node, names)
    return {"imports": imports, "defs": defs}


class _Names:
    """Names as the module writes them (`:f`, `.x.f`, `pkg.f`), through its imports."""

    def __init__(self, imports: dict[str, str], own: set[str]) -> None:
        self.imports = imports
        self.own = own

    def written(self, expr: ast.expr, cls: str | None) -> str | None:
        """The written name of a call target or base class; None for anything local."""
        dotted = _dotted(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head == "self" and cls is not None and rest and "." not in rest:
            return f":{cls}.{rest}"
        target = self.imports.get(head)
        if target is not None:
            return f"{target}.{rest}" if rest else target
        if head in self.own:
            return f":{dotted}"
        return None

    def qualified(self, expr: ast.expr) -> str:
        """The dotted name through the imports, as written when nothing was imported."""
        dotted = _dotted(expr) or ""
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target


def _dotted(expr: ast.expr) -> str | None:
    parts: list[str] = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if isinstance(expr, ast.Name):
        parts.append(expr.id)
        return ".".join(reversed(parts))
    return None


def _last(expr: ast.expr) -> str:
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else ""


def _is_grad(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Attribute):
        if expr.attr == "grad":
            return True
        expr = expr.value
    return False


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


def _function(func: ast.FunctionDef | ast.AsyncFunctionDef, names: _Names, cls: str | None) -> Summary:
    params = _params(func)
    effects: set[str] = set()
    calls: dict[str, None] = {}
    modes: dict[str, str] = {}
    returns: dict[str, None] = {}
    if any(_grad_free(d, names) for d in func.decorator_list):
        effects.add("grad_free")
    assigned: dict[str, ast.expr] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Call):
            _call_effects(node, names, cls, params, effects, calls, modes)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            if any(_grad_free(item.context_expr, names) for item in node.items):
                effects.add("enters_grad_free")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if _is_grad(target):
                    effects.add("clears_grads")
                if isinstance(target, ast.Name):
                    assigned[target.id] = node.value
        elif isinstance(node, ast.Delete) and any(_is_grad(t) for t in node.targets):
            effects.add("clears_grads")
        elif isinstance(node, ast.Constant) and node.value == "CUDA_VISIBLE_DEVICES":
            effects.add("selects_gpu")
    for node in _own_nodes(func):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            if isinstance(value, ast.Name) and value.id in assigned:
                value = assigned[value.id]
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "cuda"):
                value = value.func.value
            if isinstance(value, ast.Call):
                target = names.written(value.func, cls) or names.qualified(value.func)
                if target:
                    returns[target] = None
    return {
        "kind": "function",
        "params": params,
        "effects": sorted(effects),
        "calls": list(calls),
        "mode_params": modes,
        "returns": list(returns),
    }


def _own_nodes(func: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function, without those of functions and classes nested in it."""
    stack = list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))


def _grad_free(expr: ast.expr, names: _Names) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    short = names.qualified(target).rpartition(".")[2]
    if short == "set_grad_enabled":
        args = expr.args if isinstance(expr, ast.Call) else []
        return not (args and isinstance(args[0], ast.Constant) and args[0].value is True)
    return an.says_grad_free(short)


def _call_effects(
    call: ast.Call,
    names: _Names,
    cls: str | None,
    params: list[str],
    effects: set[str],
    calls: dict[str, None],
    modes: dict[str, str],
) -> None:
    func = call.func
    qualified = names.qualified(func)
    short = qualified.rpartition(".")[2]
    method = func.attr if isinstance(func, ast.Attribute) else None
    owner = func.value if isinstance(func, ast.Attribute) else None
    if method == "zero_grad" or an.says_clear_helper(_last(func)):
        effects.add("clears_grads")
    elif method in ("zero_", "fill_", "mul_", "detach_") and owner is not None and _is_grad(owner):
        effects.add("clears_grads")
    elif method == "step" and owner is not None:
        owner_name = _last(owner)
        if ("scaler" in owner_name.lower() and call.args) or an.name_says_optimizer(owner_name):
            effects.add("steps")
    elif method in ("backward", "manual_backward") or qualified == "torch.autograd.backward":
        effects.add("backward")
    if qualified.endswith("cuda.synchronize") or (method in HOST_READS and not call.args):
        effects.add("syncs")
    if method in ("to", "cuda"):
        effects.add("moves_device")
    if short in ("set_device", "set_device_index") or qualified == "torch.cuda.device":
        effects.add("selects_gpu")
    if short == "init_process_group":
        effects.add("inits_process_group")
        if any(k.arg == "device_id" for k in call.keywords):
            effects.add("selects_gpu")
    if short == "DistributedSampler":
        effects.add("distributed_sampler")
    if method in ("eval", "train") and owner is not None:
        mode = _mode(call, method, params)
        if mode is not None:
            effects.add("sets_train" if mode == "train" else "sets_eval")
            owner_name = _dotted(owner)
            if owner_name in params:
                modes[owner_name] = mode
    written = names.written(func, cls)
    if written is not None:
        calls[written] = None


def _mode(call: ast.Call, method: str, params: list[str]) -> str | None:
    if method == "eval":
        return None if call.args else "eval"
    if not call.args:
        return "train"
    arg = call.args[0]
    if isinstance(arg, ast.Constant):
        return "train" if arg.value else "eval"
    if isinstance(arg, ast.Name) and arg.id in params:
        return f"flag:{arg.id}"
    return None


def _class(node: ast.ClassDef, names: _Names) -> Summary:
    methods: dict[str, Any] = {}
    attrs: dict[str, dict[str, None]] = {}
    init_params: list[str] = []
    defaults: dict[str, Any] = {}
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[item.name] = _function(item, names, node.name)
            if item.name == "__init__":
                init_params = _params(item)[1:]
                positional = [*item.args.posonlyargs, *item.args.args]
                for arg, default in zip(positional[len(positional) - len(item.args.defaults) :], item.args.defaults):
                    defaults[arg.arg] = default.value if isinstance(default, ast.Constant) else None
                for arg, default in zip(item.args.kwonlyargs, item.args.kw_defaults):
                    if default is not None:
                        defaults[arg.arg] = default.value if isinstance(default, ast.Constant) else None
    uses: dict[str, None] = {}
    dropout_params: dict[str, Any] = {}
    skipped: set[int] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Assign):
            for target in sub.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                    attrs.setdefault(target.attr, {})
                    value = sub.value
                    if isinstance(value, ast.Call):
                        written = names.written(value.func, node.name) or names.qualified(value.func)
                        if written:
                            attrs[target.attr][written] = None
        if not isinstance(sub, ast.Call):
            continue
        written = names.written(sub.func, node.name)
        if written is not None and not written.startswith("torch.") and not written.startswith(f":{node.name}."):
            uses[written] = None
        if _DROPOUT_LAYER.search(_last(sub.func)):
            rate = sub.args[0] if sub.args else next((k.value for k in sub.keywords if k.arg == "p"), None)
            if isinstance(rate, ast.Name) and rate.id in init_params:
                dropout_params[rate.id] = defaults.get(rate.id)
                skipped.add(id(sub.func))
                skipped.update(id(n) for n in ast.walk(sub.func))
    words = [
        word
        for word in _identifiers_and_strings(node, skipped)
        if word not in dropout_params
    ]
    return {
        "kind": "class",
        "bases": [names.written(b, None) or names.qualified(b) for b in node.bases],
        "methods": methods,
        "attrs": {attr: list(values) for attr, values in attrs.items()},
        "mode_words": bool(MODE_DEPENDENT.search(" ".join(words))),
        "dropout_params": dropout_params,
        "init_params": init_params,
        "uses": list(uses),
    }


def _identifiers_and_strings(node: ast.ClassDef, skipped: set[int]) -> Iterator[str]:
    """Names, attributes and string literals of a class, without docstrings (a docstring
    saying "no dropout here" is not a dropout layer), nor the nodes in `skipped`."""
    docstrings = {
        id(stmt.value)
        for sub in ast.walk(node)
        if isinstance(sub, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        for stmt in sub.body
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
    }
    for sub in ast.walk(node):
        if id(sub) in skipped:
            continue
        if isinstance(sub, ast.Name):
            yield sub.id
        elif isinstance(sub, ast.Attribute):
            yield sub.attr
        elif isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield sub.name
        elif isinstance(sub, ast.arg):
            yield sub.arg
        elif isinstance(sub, ast.keyword) and sub.arg:
            yield sub.arg
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str) and id(sub) not in docstrings:
            yield sub.value


# ---------------------------------------------------------------------------
# Queries: what a checked file asks about the project's other modules.


def view(ctx: FileContext) -> ProjectView | None:
    return ctx.project  # type: ignore[no-any-return]


def entry_for(ctx: FileContext, expr: cst.BaseExpression) -> Entry | None:
    """The project definition an imported name denotes (`helpers.clear` after `import
    helpers`, `clear` after `from .helpers import clear`); None for local names, names
    of installed packages and anything unknown."""
    project = view(ctx)
    if project is None:
        return None
    imps = an.imports(ctx)
    if not imps.is_imported(expr):
        return None
    name = imps.qualify(expr)
    return project.lookup(name) if name else None


def effects(ctx: FileContext, entry: Entry, depth: int = 0) -> frozenset[str]:
    """What running `entry` does, through the project functions it calls (a class: its
    `__init__`)."""
    data = entry.data
    if entry.kind == "class":
        data = data.get("methods", {}).get("__init__", {})
    found = set(data.get("effects", ()))
    project = view(ctx)
    if project is None or depth >= MAX_DEPTH:
        return frozenset(found)
    for written in data.get("calls", ()):
        callee = project.lookup(written, entry.module)
        if callee is not None and callee.kind in ("function", "class"):
            found |= effects(ctx, callee, depth + 1)
    return frozenset(found)


def call_effects(ctx: FileContext, call: cst.Call) -> frozenset[str]:
    """The effects of a call of a project function or class; empty when unknown."""
    entry = entry_for(ctx, call.func)
    return effects(ctx, entry) if entry is not None and entry.kind in ("function", "class") else frozenset()


def any_call_has(ctx: FileContext, calls: Iterable[cst.Call], effect: str) -> cst.Call | None:
    """The first of `calls` that runs a project function with `effect`."""
    for call in calls:
        if effect in call_effects(ctx, call):
            return call
    return None


def class_mode_free(ctx: FileContext, entry: Entry, call: cst.Call | None = None, depth: int = 0) -> bool:
    """Whether a network class of the project computes the same in train and eval mode:
    no mode-dependent layer in its code, its bases or the project classes it builds, and
    every dropout whose rate is an `__init__` parameter built with rate 0 (by `call`'s
    arguments, else the parameter's default). Unknown parts answer False."""
    data = entry.data
    if entry.kind != "class" or data.get("mode_words", True) or depth >= MAX_DEPTH:
        return False
    bound = _bound_arguments(data.get("init_params", []), call)
    for param, default in data.get("dropout_params", {}).items():
        rate = _number(bound[param]) if param in bound else default
        if isinstance(rate, bool) or rate != 0:
            return False
    project = view(ctx)
    if project is None:
        return False
    for base in data.get("bases", ()):
        if base in TORCH_MODULE_BASES:
            continue
        inner = project.lookup(base, entry.module)
        if inner is None or not class_mode_free(ctx, inner, None, depth + 1):
            return False
    for written in data.get("uses", ()):
        inner = project.lookup(written, entry.module)
        if inner is None or not class_mode_free(ctx, inner, None, depth + 1):
            return False  # unknown, or a function that may build any layer
    return True


def _number(expr: cst.BaseExpression) -> float | None:
    if isinstance(expr, (cst.Integer, cst.Float)):
        return float(expr.evaluated_value)
    return None


def _bound_arguments(params: list[str], call: cst.Call | None) -> dict[str, cst.BaseExpression]:
    if call is None:
        return {}
    bound: dict[str, cst.BaseExpression] = {}
    for param, arg in zip(params, an.positional(call)):
        bound[param] = arg.value
    for arg in call.args:
        if arg.keyword is not None:
            bound[arg.keyword.value] = arg.value
    return bound
