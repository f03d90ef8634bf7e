"""Summaries: what other modules see of a module's functions, methods and classes.

Answers "what does this function of another module do that a rule cares about?" without
parsing that module again: `summarize(tree)` turns one module into plain JSON data,
computed once per file content and cached (`torchlint.project` resolves imports to
modules and records which summary entries a check used); the queries at the end
(`call_effects`, `class_mode_free`, `modes_left`, ...) are what rules ask. The checked file's own
definitions are read from its own summary (`own_summary`, `local_entry`), so that one
definition (which layers make train/eval mode matter) decides for this file's classes and
for other modules' alike.

The summary walks Python's `ast`, not LibCST: it runs over every project module that a
checked file imports, and CPython's parser with a walk is about ten times cheaper than a
LibCST parse. Its vocabulary (what counts as a gradient clear, an optimizer, a
gradient-free context) is the analysis library's (`_analysis`), so that a helper in
another module means what the same code means in the checked file.

## The data
```
{"imports": {local name: written target},          # `from .x import f` -> {"f": ".x.f"}
 "defs": {name: function or class entry},
 "places_on_device": bool,  # `.cuda()`, a CUDA device string, NCCL or the name `device`
 "disables_grad": bool,     # a gradient-free context or decorator (`torch.no_grad()`) anywhere
 "sets_epoch": bool}        # calls a `set_epoch`, `accelerator.prepare`, or imports a framework that does
function: {"kind": "function", "params": [...], "effects": [...], "calls": [...],
           "passes": {called: [positions of the call's arguments that are own parameters]},
           "mode_params": {param: "eval" | "train" | "flag:<param>"},
           "runs": [params and `self.<attr>` it calls: `model(x)`, `self.net.forward(x)`, `self.log(x)`],
           "returns": [...],
           "returns_backpropagated": bool,  # every return hands back a loss it back-propagated
           "totals_params": [params it adds into an attribute of `self`: `self.sum[k] += loss[k]`],
           "mixes": [project functions whose results it computes with: `x + table(n)`],
           "clock_reads": number,  # wall-clock reads: a timing helper reads two or more
           "times_block": bool,  # a context manager reading the clock before and after its yield
           "returns_moved": bool,  # returns a model it moved to an accelerator
           "places_params": [params it moves to a device before reading anything but their
                             metadata: `ids = ids.to(device)`, `kernel[None].to(x.device)`]}
class:    {"kind": "class", "bases": [...], "methods": {name: function}, "attrs": {attr: [...]},
           "mode_words": bool, "dropout_params": {param: default}, "init_params": [...],
           "uses": [...]}
constant: {"kind": "constant", "value": number}            # `START = -1`
namespace: {"kind": "namespace", "attrs": {path: number}}  # `__C.TRAIN.START = -1`, `cfg = __C`
```
Names are written as the module sees them: `:f` for its own definitions (`:Trainer.step`
for `self.step()` in `Trainer`), `.x.f` for relative imports, `pkg.x.f` for absolute
ones; `ModuleRef.absolute` makes them absolute. `calls` lists only calls of the project's
own names (imports and definitions), which is what effects flow through.

Effects: `clears_grads` (`zero_grad()`, `p.grad = None`, `p.grad.zero_()`, a helper
named like `zero_grads`), `steps` (an optimizer's or a scaler's `step`), `schedules`
(`scheduler.step()` of a name that says learning-rate scheduler), `backward`,
`syncs` (`torch.cuda.synchronize()`, host reads `.item()`, `.cpu()`, `.tolist()`,
`.numpy()`), `queues_work` (a torch op, a tensor's compute method such as `matmul`, a
`forward` call, or running a network named like one: `model(x)`), `grad_free` (decorated with `no_grad` / `inference_mode`),
`enters_grad_free` (a `with` of one), `sets_eval` / `sets_train`, `moves_device`
(`.to()`, `.cuda()`), `selects_gpu` (`torch.cuda.set_device`, `torch.cuda.device(...)`,
`CUDA_VISIBLE_DEVICES`, `init_process_group(device_id=...)`), `inits_process_group`,
`distributed_sampler` (builds a `DistributedSampler` that shuffles), `freezes_self`
(`self.requires_grad_(False)`, or `p.requires_grad = False` over `self.parameters()`),
`copies_async` (a copy with `non_blocking=True`, which overlaps with compute only from
pinned memory), `steps_in_loop` (a step inside a loop of the function: it runs a training
loop of its own), `clips_grads` (`clip_grad_norm_` and friends), `unscales`
(`scaler.unscale_(...)`).
"""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, TypeVar

import libcst as cst

from torchlint.project import OWN_PACKAGE, Entry, ModuleRef
from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules._analysis.vocabulary import MODE_DEPENDENT, TORCH_MODULE_BASES

if TYPE_CHECKING:
    from torchlint.project import ProjectView

_DROPOUT_LAYER = re.compile(r"Dropout\d?d?$")
# Training frameworks whose loops give distributed samplers the epoch themselves.
EPOCH_FRAMEWORKS = frozenset(
    """lightning pytorch_lightning accelerate ignite transformers deepspeed composer mmengine mmcv
    detectron2 fairseq catalyst fastai torchtnt""".split()
)
# How many calls deep effects are followed through other functions.
MAX_DEPTH = 4

Summary = dict[str, Any]
T = TypeVar("T")


# ---------------------------------------------------------------------------
# Building a summary from one module's tree: the import statements first, then one
# walk over every node (a walk per function and class made summaries cost nearly as
# much as the LibCST parse they are meant to spare).

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def summarize(tree: ast.Module) -> Summary:
    """The summary of one module (see the module docstring for its shape)."""
    imports = _imports(tree)
    own = {node.name for node in tree.body if isinstance(node, (*_DEFS, ast.ClassDef))}
    walk = _Walk(_Names(imports, own))
    walk.run(tree)
    constants = {name: data for name, data in _constants(tree).items() if name not in walk.defs}
    return {
        "imports": imports,
        "defs": {**walk.defs, **constants},
        "places_on_device": walk.places_on_device,
        "disables_grad": walk.disables_grad,
        "sets_epoch": walk.sets_epoch or any(t.split(".")[0] in EPOCH_FRAMEWORKS for t in imports.values()),
    }


def _constants(tree: ast.Module) -> dict[str, Summary]:
    """Module-level numbers (`START = -1`) and the numbers set on a module-level config object
    (`__C.TRAIN.START = -1`, seen through `cfg = __C` too)."""
    found: dict[str, Summary] = {}
    spaces: dict[str, dict[str, float]] = {}
    aliases: dict[str, str] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target, value = node.targets[0], node.value
        number = _number_literal(value)
        if isinstance(target, ast.Name) and isinstance(value, ast.Name):
            aliases[target.id] = value.id
        elif number is not None and isinstance(target, ast.Name):
            found[target.id] = {"kind": "constant", "value": number}
        elif number is not None and isinstance(target, ast.Attribute):
            dotted = _dotted(target)
            if dotted is not None:
                base, _, path = dotted.partition(".")
                spaces.setdefault(base, {})[path] = number
    for alias, name in aliases.items():
        if name in spaces:
            spaces[alias] = spaces[name]
    for name, attrs in spaces.items():
        found[name] = {"kind": "namespace", "attrs": attrs}
    return found


def _number_literal(value: ast.expr) -> float | None:
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
        inner = _number_literal(value.operand)
        return -inner if inner is not None else None
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
        return float(value.value)
    return None


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> written target, for the import statements anywhere in the module."""
    imports: dict[str, str] = {}
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
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
        for name in _STATEMENT_LISTS:
            children = getattr(node, name, None)
            if children:
                stack.extend(reversed(children))
    return imports


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


def _steps_in_loop(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A `.step(...)` call inside a loop of the function: it runs its own training loop."""
    return any(
        isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "step"
        for loop in ast.walk(func)
        if isinstance(loop, (ast.For, ast.AsyncFor, ast.While))
        for call in ast.walk(loop)
    )


def _is_grad(expr: ast.expr) -> bool:
    while isinstance(expr, ast.Attribute):
        if expr.attr == "grad":
            return True
        expr = expr.value
    return False


def _moves_to_accelerator(value: ast.expr) -> bool:
    """`x.cuda()`, `x.to(device)`, `x.to("cuda")`, `x.to(torch.device(...))`: not a dtype cast."""
    if not isinstance(value, ast.Call) or not isinstance(value.func, ast.Attribute):
        return False
    if value.func.attr == "cuda":
        return True
    if value.func.attr != "to":
        return False
    target = next((k.value for k in value.keywords if k.arg == "device"), value.args[0] if value.args else None)
    if isinstance(target, ast.Constant):
        return isinstance(target.value, str) and bool(an.CUDA_TEXT.match(target.value))
    if isinstance(target, ast.Call):
        return _last(target.func) == "device"
    return isinstance(target, (ast.Name, ast.Attribute)) and bool(an.DEVICE_WORDS.intersection(an.name_tokens(_last(target))))


def _moved_name(call: ast.Call) -> str | None:
    """`x` for a move of `x` to a device: `x.to(device)`, `x.cuda()`, `x[:, None].to(x.device)`,
    `x.float().to(dev)` (through indexing and methods that keep it the same data)."""
    if not _moves_to_accelerator(call):
        return None
    assert isinstance(call.func, ast.Attribute)
    moved = call.func.value
    while True:
        if isinstance(moved, ast.Subscript):
            moved = moved.value
        elif (
            isinstance(moved, ast.Call)
            and isinstance(moved.func, ast.Attribute)
            and moved.func.attr in an.SCALAR_ARG_METHODS
        ):
            moved = moved.func.value
        else:
            break
    return moved.id if isinstance(moved, ast.Name) else None


def _placed_before_use(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> bool:
    """`func` moves its parameter `param` to a device before it reads anything of it but its
    metadata (`param.shape`, `param.size(0)`): every other read is a move (`param.to(device)`,
    `param[:, None].to(x.device)`), or follows `param = param.to(device)` as a statement of
    the body itself (not of a branch), after which the name holds the moved tensor. Any other
    binding of the name first leaves the answer to code this does not follow: False."""
    parents: dict[int, ast.AST] = {}
    reads: list[ast.Name] = []
    bindings: list[ast.Name] = []
    for node in ast.walk(func):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.Name) and node.id == param:
            (reads if isinstance(node.ctx, ast.Load) else bindings).append(node)
    rebound_at: tuple[int, int] | None = None
    if bindings:
        statement = parents.get(id(min(bindings, key=lambda n: (n.lineno, n.col_offset))))
        if not _rebinds_moved(func, param, statement):
            return False
        assert isinstance(statement, ast.Assign)  # what `_rebinds_moved` accepted
        rebound_at = (statement.end_lineno or 0, statement.end_col_offset or 0)
    moved = False
    for read in sorted(reads, key=lambda n: (n.lineno, n.col_offset)):
        if rebound_at is not None and (read.lineno, read.col_offset) > rebound_at:
            break
        parent = parents.get(id(read))
        if isinstance(parent, ast.Attribute) and (
            parent.attr in an.METADATA
            or (parent.attr in an.METADATA_CALLS and isinstance(parents.get(id(parent)), ast.Call))
        ):
            continue
        if _enclosing_move(parents, read) is None:
            return False
        moved = True
    return moved


def _rebinds_moved(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str, target_parent: ast.AST | None) -> bool:
    """`param = param.to(device)` as a statement of `func`'s own body."""
    return (
        isinstance(target_parent, ast.Assign)
        and target_parent in func.body
        and len(target_parent.targets) == 1
        and isinstance(target_parent.value, ast.Call)
        and _moved_name(target_parent.value) == param
    )


def _enclosing_move(parents: dict[int, ast.AST], read: ast.Name) -> ast.Call | None:
    """The move whose moved name `read` is (`read.to(device)`, `read[0].float().cuda()`)."""
    node: ast.AST = read
    while True:
        parent = parents.get(id(node))
        if isinstance(parent, ast.Subscript) and parent.value is node:
            node = parent
        elif isinstance(parent, ast.Attribute) and parent.value is node:
            call = parents.get(id(parent))
            if not isinstance(call, ast.Call):
                return None
            if _moved_name(call) == read.id:
                return call
            if parent.attr not in an.SCALAR_ARG_METHODS:
                return None
            node = call
        else:
            return None


def _added_into_self(node: ast.AugAssign) -> set[str]:
    """`p` for `self.total += p` or `self.totals[k] += p[k]`: a name added as it is (not its
    `.item()`, nor through any call) into an attribute of `self`."""
    target: ast.expr = node.target
    while isinstance(target, ast.Subscript):
        target = target.value
    if not isinstance(node.op, ast.Add) or not (_dotted(target) or "").startswith("self."):
        return set()
    value = node.value
    while isinstance(value, ast.Subscript):
        value = value.value
    return {value.id} if isinstance(value, ast.Name) else set()


def _params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = func.args
    return [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]


class _Function:
    """What one function or method does, gathered during the walk."""

    def __init__(self, func: ast.FunctionDef | ast.AsyncFunctionDef, cls: str | None, names: _Names) -> None:
        self.node = func
        self.cls = cls
        self.params = _params(func)
        args = func.args
        positional = [*args.posonlyargs, *args.args]
        pairs = [*zip(positional[len(positional) - len(args.defaults) :], args.defaults), *zip(args.kwonlyargs, args.kw_defaults)]
        # Parameters that default to True (`shuffle=True`).
        self.true_defaults = {a.arg for a, d in pairs if isinstance(d, ast.Constant) and d.value is True}
        self.effects: set[str] = set()
        self.calls: dict[str, None] = {}
        # Per project function called: the positions at which the call passes one of this
        # function's own parameters (`encode(x, self.size)` in `forward(self, x)`: {0}).
        self.passes: dict[str, set[int]] = {}
        self.modes: dict[str, str] = {}
        self.runs: dict[str, None] = {}
        self.returns: list[ast.expr] = []
        # Operands of arithmetic (`x + table(n)`, `x * mask` after `mask = make_mask(x)`).
        self.operands: list[ast.expr] = []
        # Wall-clock reads (`time.perf_counter()`): two or more make a timing helper.
        self.clock_reads = 0
        self.clock_lines: list[int] = []
        # Names it moves to an accelerator (`net` in `net.cuda()`, `net = Net().to(device)`).
        self.moved: set[str] = set()
        # Parameters it moves to a device somewhere (`ids.to(device)`): those it may place.
        self.moved_params: set[str] = set()
        # Names this function back-propagates (`loss` in `loss.backward()`).
        self.backpropagated: set[str] = set()
        self.assigned: dict[str, ast.expr] = {}
        # Loop variables over `self.parameters()`: `p` in `for p in self.parameters():`.
        self.self_params: set[str] = set()
        # Parameters added as they are (or element by element) into an attribute of `self`.
        self.totals: set[str] = set()
        if any(_grad_free(d, names) for d in func.decorator_list):
            self.effects.add("grad_free")

    def data(self, names: _Names) -> Summary:
        returns: dict[str, None] = {}
        for value in self.returns:
            if isinstance(value, ast.Name) and value.id in self.assigned:
                value = self.assigned[value.id]
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in ("to", "cuda"):
                value = value.func.value
            if isinstance(value, ast.Call):
                target = names.written(value.func, self.cls) or names.qualified(value.func)
                if target:
                    returns[target] = None
        mixes: dict[str, None] = {}
        for value in self.operands:
            if isinstance(value, ast.Name) and value.id in self.assigned:
                value = self.assigned[value.id]
            mixed = names.written(value.func, self.cls) if isinstance(value, ast.Call) else None
            if mixed:
                mixes[mixed] = None
        return {
            "kind": "function",
            "params": self.params,
            "effects": sorted(self.effects | ({"steps_in_loop"} if "steps" in self.effects and _steps_in_loop(self.node) else set())),
            "calls": list(self.calls),
            "passes": {name: sorted(positions) for name, positions in self.passes.items() if positions},
            "mode_params": self.modes,
            "runs": list(self.runs),
            "returns": list(returns),
            "mixes": list(mixes),
            "clock_reads": self.clock_reads,
            "times_block": self._times_block(),
            # A `return` hands back a model it moved to an accelerator (`return net.cuda()`).
            "returns_moved": any(
                (isinstance(v, ast.Name) and v.id in self.moved) or _moves_to_accelerator(v) for v in self.returns
            ),
            # Every `return` hands back a loss it back-propagated: it still carries a graph.
            "returns_backpropagated": bool(self.returns)
            and all(isinstance(v, ast.Name) and v.id in self.backpropagated for v in self.returns),
            "totals_params": sorted(self.totals & set(self.params)),
            "places_params": sorted(p for p in self.moved_params if _placed_before_use(self.node, p)),
        }


    def _times_block(self) -> bool:
        """A context manager that reads the clock before its `yield` and after it: it times
        the body of the `with` statement that uses it."""
        if not any(_last(d.func if isinstance(d, ast.Call) else d).endswith("contextmanager") for d in self.node.decorator_list):
            return False
        yields = [n.lineno for n in ast.walk(self.node) if isinstance(n, (ast.Yield, ast.YieldFrom))]
        return any(a < y < b for y in yields for a in self.clock_lines for b in self.clock_lines)


class _Class:
    """What one class holds, gathered during the walk."""

    def __init__(self, node: ast.ClassDef) -> None:
        self.node = node
        self.methods: dict[str, _Function] = {}
        self.attrs: dict[str, dict[str, None]] = {}
        self.uses: dict[str, None] = {}
        self.dropout_rates: list[ast.expr] = []
        self.words: list[str] = []
        self.skipped: set[int] = set()
        self.init_params: list[str] = []
        self.defaults: dict[str, Any] = {}
        init = next((m for m in node.body if isinstance(m, _DEFS) and m.name == "__init__"), None)
        if init is not None:
            self.init_params = _params(init)[1:]
            args = init.args
            positional = [*args.posonlyargs, *args.args]
            pairs = [*zip(positional[len(positional) - len(args.defaults) :], args.defaults)]
            pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
            for arg, default in pairs:
                self.defaults[arg.arg] = default.value if isinstance(default, ast.Constant) else None

    def data(self, names: _Names) -> Summary:
        dropout_params = {
            rate.id: self.defaults.get(rate.id)
            for rate in self.dropout_rates
            if isinstance(rate, ast.Name) and rate.id in self.init_params
        }
        words = " ".join(w for w in self.words if w not in dropout_params)
        return {
            "kind": "class",
            "bases": [names.written(b, None) or names.qualified(b) for b in self.node.bases],
            "methods": {name: method.data(names) for name, method in self.methods.items()},
            "attrs": {attr: list(values) for attr, values in self.attrs.items()},
            "mode_words": bool(MODE_DEPENDENT.search(words)),
            "dropout_params": dropout_params,
            "init_params": self.init_params,
            "uses": list(self.uses),
        }


# Fields that hold only `Load()`, `Add()` and the like (a third of all nodes, were they
# walked: every name has a `ctx`), which no summary looks at.
_NOT_WALKED = frozenset({"ctx", "op", "ops"})
_WALKED_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _NOT_WALKED)
    for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST)
}


class _Walk:
    """One walk over a module; effects of nested functions count for the functions
    around them (a closure passed to `optimizer.step(closure)` runs in its caller)."""

    def __init__(self, names: _Names) -> None:
        self.names = names
        self.defs: dict[str, Any] = {}
        self.docstrings: set[int] = set()
        # What `devices.mentions_device` asks of a checked file: a `.cuda()` call, a CUDA
        # device string, the NCCL backend or the name `device`.
        self.places_on_device = False
        self.sets_epoch = False
        # Some code of the module runs without gradients: what a caller of another
        # module's inference wrapper may do around it.
        self.disables_grad = False

    def run(self, tree: ast.Module) -> None:
        tops: list[tuple[str, _Function | _Class]] = []
        # (node, functions it runs in, the function whose own body it is, its class)
        stack: list[tuple[ast.AST, tuple[_Function, ...], _Function | None, _Class | None]] = []
        for top in reversed(tree.body):
            stack.append((top, (), None, None))
        while stack:
            node, active, own, cls = stack.pop()
            kind = type(node)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                assert isinstance(node, _DEFS)
                if not active and (cls is None or node in cls.node.body):
                    func = _Function(node, cls.node.name if cls is not None else None, self.names)
                    if cls is None:
                        tops.append((node.name, func))
                    else:
                        cls.methods[node.name] = func
                    active, own = (func,), func
                else:
                    own = None
                if cls is not None:
                    cls.words.append(node.name)
                if any(_grad_free(d, self.names) for d in node.decorator_list):
                    self.disables_grad = True
            elif kind is ast.ClassDef:
                assert isinstance(node, ast.ClassDef)
                if not active and cls is None:
                    cls = _Class(node)
                    tops.append((node.name, cls))
                elif cls is not None:
                    cls.words.append(node.name)
                own = None
            elif kind is ast.Lambda:
                own = None
            elif kind is ast.Call:
                assert isinstance(node, ast.Call)
                self._call(node, active, cls)
            elif kind is ast.Name:
                if node.id == "device":  # type: ignore[attr-defined]
                    self.places_on_device = True
                if cls is not None and id(node) not in cls.skipped:
                    cls.words.append(node.id)  # type: ignore[attr-defined]
            elif kind is ast.Attribute:
                if node.attr == "device":  # type: ignore[attr-defined]
                    self.places_on_device = True
                if cls is not None and id(node) not in cls.skipped:
                    cls.words.append(node.attr)  # type: ignore[attr-defined]
            elif kind is ast.arg or kind is ast.keyword:
                word = node.arg  # type: ignore[attr-defined]
                if word == "device":
                    self.places_on_device = True
                if cls is not None and word:
                    cls.words.append(word)
            elif kind is ast.Constant:
                value = node.value  # type: ignore[attr-defined]
                if value == an.VISIBLE_DEVICES:
                    for func in active:
                        func.effects.add("selects_gpu")
                if isinstance(value, str) and id(node) not in self.docstrings and an.CUDA_TEXT.match(value):
                    self.places_on_device = True
                if cls is not None and isinstance(value, str) and id(node) not in self.docstrings:
                    cls.words.append(value)
            elif kind is ast.Expr:
                if isinstance(node.value, ast.Constant):  # type: ignore[attr-defined]
                    self.docstrings.add(id(node.value))  # type: ignore[attr-defined]
            elif kind is ast.With or kind is ast.AsyncWith:
                if any(_grad_free(item.context_expr, self.names) for item in node.items):  # type: ignore[attr-defined]
                    for func in active:
                        func.effects.add("enters_grad_free")
            elif kind is ast.For or kind is ast.comprehension:
                for func in active:
                    func.self_params.update(_self_parameter_loop(node.target, node.iter))  # type: ignore[attr-defined]
            elif kind is ast.Assign:
                assert isinstance(node, ast.Assign)
                self._assign(node, active, cls)
            elif kind is ast.Delete:
                if any(_is_grad(t) for t in node.targets):  # type: ignore[attr-defined]
                    for func in active:
                        func.effects.add("clears_grads")
            elif kind is ast.AugAssign:
                if own is not None:
                    own.totals.update(_added_into_self(node))  # type: ignore[arg-type]
            elif kind is ast.BinOp:
                if own is not None:
                    own.operands.extend((node.left, node.right))  # type: ignore[attr-defined]
            elif kind is ast.Return:
                if own is not None and node.value is not None:  # type: ignore[attr-defined]
                    own.returns.append(node.value)  # type: ignore[attr-defined]
            for field in _WALKED_FIELDS.get(kind, node._fields):
                value = getattr(node, field, None)
                if type(value) is list:
                    for item in reversed(value):
                        if isinstance(item, ast.AST):
                            stack.append((item, active, own, cls))
                elif isinstance(value, ast.AST):
                    stack.append((value, active, own, cls))
        for name, found in tops:
            self.defs[name] = found.data(self.names)

    def _assign(self, node: ast.Assign, active: tuple[_Function, ...], cls: _Class | None) -> None:
        if active and _moves_to_accelerator(node.value):
            active[0].moved.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for target in node.targets:
            if _is_grad(target):
                for func in active:
                    func.effects.add("clears_grads")
            if isinstance(target, ast.Attribute) and target.attr == "requires_grad" and _is_false(node.value):
                for func in active:
                    if _dotted(target.value) in func.self_params:
                        func.effects.add("freezes_self")
            if isinstance(target, ast.Name):
                for func in active:
                    func.assigned[target.id] = node.value
            elif cls is not None and isinstance(target, ast.Attribute) and _dotted(target.value) == "self":
                values = cls.attrs.setdefault(target.attr, {})
                if isinstance(node.value, ast.Call):
                    written = self.names.written(node.value.func, cls.node.name) or self.names.qualified(node.value.func)
                    if written:
                        values[written] = None

    def _call(self, call: ast.Call, active: tuple[_Function, ...], cls: _Class | None) -> None:
        func = call.func
        if _grad_free(call, self.names):
            self.disables_grad = True
        if isinstance(func, ast.Attribute) and func.attr == "cuda":
            self.places_on_device = True
        if "set_epoch" in _last(func) or (isinstance(func, ast.Attribute) and func.attr == "prepare"):
            self.sets_epoch = True
        if cls is not None:
            written = self.names.written(func, cls.node.name)
            if written is not None and not written.startswith("torch.") and not written.startswith(f":{cls.node.name}."):
                cls.uses[written] = None
            if _DROPOUT_LAYER.search(_last(func)):
                rate = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "p"), None)
                if isinstance(rate, ast.Name):
                    cls.dropout_rates.append(rate)
                    cls.skipped.update(id(n) for n in ast.walk(func))
        if not active:
            return
        qualified = self.names.qualified(func)
        short = qualified.rpartition(".")[2]
        method = func.attr if isinstance(func, ast.Attribute) else None
        owner = func.value if isinstance(func, ast.Attribute) else None
        found: set[str] = set()
        if method == "zero_grad" or an.says_clear_helper(_last(func)):
            found.add("clears_grads")
        elif method in ("zero_", "fill_", "mul_", "detach_") and owner is not None and _is_grad(owner):
            found.add("clears_grads")
        elif method == "step" and owner is not None:
            owner_name = _last(owner)
            if ("scaler" in owner_name.lower() and call.args) or an.name_says_optimizer(owner_name):
                found.add("steps")
            elif not call.args and an.says_scheduler(owner_name):
                found.add("schedules")
        elif method in ("backward", "manual_backward") or qualified == "torch.autograd.backward":
            found.add("backward")
            if method == "backward" and isinstance(owner, ast.Name):
                active[0].backpropagated.add(owner.id)
        elif method == "requires_grad_" and owner is not None and call.args and _is_false(call.args[0]):
            frozen = _dotted(owner)
            for function in active:
                if frozen == "self" or frozen in function.self_params:
                    function.effects.add("freezes_self")
        if short in an.CLIP_NAMES:
            found.add("clips_grads")
        elif "unscale" in short:
            found.add("unscales")
        if qualified in an.WALL_CLOCKS:
            active[0].clock_reads += 1
            active[0].clock_lines.append(call.lineno)
        if _moves_to_accelerator(call) and isinstance(owner, ast.Name):
            active[0].moved.add(owner.id)
        moved_param = _moved_name(call) if method in ("to", "cuda") else None
        if moved_param in active[0].params and moved_param not in ("self", "cls"):
            active[0].moved_params.add(moved_param)
        if qualified.endswith("cuda.synchronize") or method in an.WAITING_METHODS:
            found.add("syncs")
        if (
            an.is_torch_op(qualified)
            or method in an.TENSOR_WORK
            or method == "forward"
            or an.name_says_model_run(_last(func))
        ):
            found.add("queues_work")
        if method in ("to", "cuda"):
            found.add("moves_device")
        if any(k.arg == "non_blocking" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in call.keywords):
            found.add("copies_async")
        if an.call_selects_gpu(qualified, (k.arg for k in call.keywords)):
            found.add("selects_gpu")
        if short == "init_process_group":
            found.add("inits_process_group")
        if short == "DistributedSampler" and _shuffles(call, active[0].true_defaults):
            found.add("distributed_sampler")
        for function in active:
            function.effects |= found
            written = self.names.written(func, function.cls)
            if written is not None:
                function.calls[written] = None
                function.passes.setdefault(written, set()).update(
                    i for i, arg in enumerate(call.args)
                    if isinstance(arg, ast.Name) and arg.id in function.params and arg.id not in ("self", "cls")
                )
        called = _dotted(owner) if method == "forward" and owner is not None else _dotted(func)
        target = active[0]
        if called is not None and (called in target.params or (called.startswith("self.") and called.count(".") == 1)):
            target.runs[called] = None
        if method in ("eval", "train") and owner is not None:
            mode = _mode(call, method, target.params)
            if mode is not None:
                for function in active:
                    function.effects.add("sets_train" if mode == "train" else "sets_eval")
                moved = _dotted(owner)
                if moved in target.params:
                    target.modes[moved] = mode


def _is_false(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is False


def _self_parameter_loop(target: ast.expr, iterated: ast.expr) -> list[str]:
    """`p` for `for p in self.parameters()` and `for name, p in self.named_parameters()`."""
    if not (
        isinstance(iterated, ast.Call)
        and isinstance(iterated.func, ast.Attribute)
        and iterated.func.attr in ("parameters", "named_parameters")
        and _dotted(iterated.func.value) == "self"
    ):
        return []
    if isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[-1]
    return [target.id] if isinstance(target, ast.Name) else []


def _shuffles(sampler: ast.Call, true_defaults: set[str]) -> bool:
    """A `DistributedSampler` that shuffles: no `shuffle=` other than True or a parameter
    that defaults to True (`true_defaults`), and not given `shuffle` positionally (its
    fourth argument) or through `*args` / `**kwargs`."""
    if len(sampler.args) >= 4 or any(isinstance(a, ast.Starred) for a in sampler.args):
        return False
    for keyword in sampler.keywords:
        if keyword.arg is None:
            return False
        value = keyword.value
        if keyword.arg == "shuffle" and not (
            (isinstance(value, ast.Constant) and value.value is True) or (isinstance(value, ast.Name) and value.id in true_defaults)
        ):
            return False
    return True


def _grad_free(expr: ast.expr, names: _Names) -> bool:
    target = expr.func if isinstance(expr, ast.Call) else expr
    short = names.qualified(target).rpartition(".")[2]
    if short == "set_grad_enabled":
        args = expr.args if isinstance(expr, ast.Call) else []
        return not (args and isinstance(args[0], ast.Constant) and args[0].value is True)
    return an.says_grad_free(short)


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


# ---------------------------------------------------------------------------
# Queries: what a checked file asks about the project's other modules.


def view(ctx: FileContext) -> ProjectView | None:
    return ctx.project


def own_summary(ctx: FileContext) -> Summary | None:
    """The summary of the checked file itself, so that its own classes are judged as other
    modules' are (None: Python cannot parse it)."""
    return ctx.analysis(_summarize_own)


def _summarize_own(ctx: FileContext) -> Summary | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like are the user's business
            return summarize(ast.parse(ctx.source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def own_module(ctx: FileContext) -> ModuleRef:
    project = view(ctx)
    return project.module if project is not None else ModuleRef("", Path(ctx.filename), ())


def local_entry(ctx: FileContext, name: str) -> Entry | None:
    """A top-level function or class of the checked file, by name."""
    data = (own_summary(ctx) or {}).get("defs", {}).get(name)
    return Entry(f":{name}", data, own_module(ctx)) if isinstance(data, dict) else None


def lookup(ctx: FileContext, written: str, where: ModuleRef) -> Entry | None:
    """The entry a name written in module `where` denotes: the checked file's own definitions
    from its own summary, other modules' through the project."""
    if written.startswith(":") and where == own_module(ctx) and "." not in written:
        return local_entry(ctx, written[1:])
    project = view(ctx)
    return project.lookup(written, where) if project is not None else None


def entry_for(ctx: FileContext, expr: cst.BaseExpression) -> Entry | None:
    """The project definition an imported name denotes (`helpers.clear` after `import
    helpers`, `clear` after `from .helpers import clear`), or a method of a project
    class that a `self.` attribute holds (`self.devices.pin`); None for local names,
    names of installed packages and anything unknown."""
    project = view(ctx)
    if project is None:
        return None
    imps = an.imports(ctx)
    if not imps.is_imported(expr):
        return _attribute_entry(ctx, project, expr)
    name = imps.qualify(expr)
    return project.lookup(name) if name else None


def _attribute_entry(ctx: FileContext, project: ProjectView, expr: cst.BaseExpression) -> Entry | None:
    """The method that `helper.method` or `self.helper.method` names when every value this
    file assigns to `helper` is an instance of one project class: built by the class
    (`self.helper = Helper()`) or returned by a project factory (`model = create_model(opt)`);
    a method that the class inherits from a project base class included."""
    name = an.dotted(expr)
    if name is None or name.count(".") < (2 if name.startswith("self.") else 1):
        return None
    head = 2 if name.startswith("self.") else 1
    parts = name.split(".")
    attribute, inner, method = ".".join(parts[:head]), parts[head:-1], parts[-1]
    values = an.assigned_values(ctx).get(attribute, [])
    imps = an.imports(ctx)
    owners = {}
    for value in values:
        owner = _instance_class(project, imps, value)
        if owner is None:
            return None
        owners[owner.name] = owner
    if len(owners) != 1:
        return None
    found: Entry | None = owners.popitem()[1]
    for attr in inner:  # `tracker.losses.update(...)`: an attribute its constructor builds
        held = found.data.get("attrs", {}).get(attr, []) if found is not None else []
        found = project.lookup(held[0], found.module) if found is not None and len(held) == 1 else None
        if found is None or found.kind != "class":
            return None
    return _method(ctx, found, method) if found is not None else None


def _instance_class(project: ProjectView, imps: an.Imports, value: cst.BaseExpression) -> Entry | None:
    """The project class whose instance `value` is: `Helper(...)`, or the call of a project
    function that returns one class (`def create_model(opt): return SRModel(opt)`)."""
    if not (isinstance(value, cst.Call) and imps.is_imported(value.func)):
        return None
    entry = project.lookup(imps.qualify(value.func) or "")
    if entry is not None and entry.kind == "function":
        returned = [project.lookup(r, entry.module) for r in entry.data.get("returns", ())]
        entry = returned[0] if len(returned) == 1 else None
    return entry if entry is not None and entry.kind == "class" else None


def _method(ctx: FileContext, owner: Entry, method: str, depth: int = 0) -> Entry | None:
    """`owner.method`, defined in the class or inherited from its project base classes (the
    checked file's own classes too, outside a project)."""
    data = owner.data.get("methods", {}).get(method)
    if data is not None:
        return Entry(f"{owner.name}.{method}", data, owner.module)
    if depth >= MAX_DEPTH:
        return None
    for base in owner.data.get("bases", ()):
        inner = lookup(ctx, base, owner.module)
        if inner is not None and inner.kind == "class":
            found = _method(ctx, inner, method, depth + 1)
            if found is not None:
                return found
    return None


def inherited_method(ctx: FileContext, expr: cst.BaseExpression) -> Entry | None:
    """The method that `self.method` names inside a class of the checked file that does not
    define it (nor any local base class) but inherits it from a base class of another
    project module (`self.evaluate()` in a trainer subclass); None otherwise."""
    name = an.dotted(expr)
    project = view(ctx)
    if project is None or name is None or not name.startswith("self.") or name.count(".") != 1:
        return None
    cls = an.index(ctx).enclosing(expr, (cst.ClassDef,))
    method = name[len("self.") :]
    if cls is None or an.functions(ctx).method(cls.name.value, method) is not None:
        return None
    return _inherited(ctx, cls, lambda base: _method(ctx, base, method))


def inherited_attribute_classes(ctx: FileContext, node: cst.CSTNode, attr: str) -> list[Entry] | None:
    """The project classes that the base classes (in other project modules) of the class
    around `node` build `self.<attr>` with: `self.net = TinyNet()`, or a method's result that
    returns one class (`self.net = self.build()`). None when the class, a base or a value is
    unknown, or when nothing builds the attribute."""
    cls = an.index(ctx).enclosing(node, (cst.ClassDef,))
    if cls is None or view(ctx) is None:
        return None
    return _inherited(ctx, cls, lambda base: _attribute_classes(ctx, base, attr))


def _inherited(ctx: FileContext, cls: cst.ClassDef, ask: Callable[[Entry], T | None]) -> T | None:
    """The first answer that `ask` gives for a project base class (in another module) of a
    top-level class `cls` of the checked file."""
    own = local_entry(ctx, cls.name.value)
    project = view(ctx)
    if own is None or own.kind != "class" or project is None:
        return None
    for base in own.data.get("bases", ()):
        inner = project.lookup(base, own.module)
        if inner is not None and inner.kind == "class":
            found = ask(inner)
            if found is not None:
                return found
    return None


def _attribute_classes(ctx: FileContext, owner: Entry, attr: str, depth: int = 0) -> list[Entry] | None:
    """The project classes that `owner` (or the base class that builds it) builds
    `self.<attr>` with: the checked file's own classes too, outside a project."""
    values = owner.data.get("attrs", {}).get(attr)
    if depth >= MAX_DEPTH:
        return None
    if values is None:
        for base in owner.data.get("bases", ()):
            inner = lookup(ctx, base, owner.module)
            if inner is not None and inner.kind == "class":
                return _attribute_classes(ctx, inner, attr, depth + 1)
        return None
    found: list[Entry] = []
    for written in values:
        entry = lookup(ctx, written, owner.module)
        if entry is not None and entry.kind == "function":
            returned = [lookup(ctx, r, entry.module) for r in entry.data.get("returns", ())]
            entry = returned[0] if len(returned) == 1 else None
        if entry is None or entry.kind != "class":
            return None
        found.append(entry)
    return found or None


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


def number(ctx: FileContext, expr: cst.BaseExpression) -> float | None:
    """The value of a number literal (`-1`), or of a project module's number that `expr`
    names: a module-level constant or an attribute of a config object (`cfg.LR_START` after
    `from config import cfg`); None when unknown."""
    literal = an.literal_number(expr)
    if literal is not None:
        return literal
    project = view(ctx)
    imps = an.imports(ctx)
    name = imps.qualify(expr) if project is not None and imps.is_imported(expr) else None
    if project is None or not name:
        return None
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        entry = project.lookup(".".join(parts[:cut]))
        if entry is not None and entry.kind == "constant" and cut == len(parts):
            return float(entry.data["value"])
        if entry is not None and entry.kind == "namespace":
            value = entry.data.get("attrs", {}).get(".".join(parts[cut:]))
            return float(value) if value is not None else None
    return None


def call_effects(ctx: FileContext, call: cst.Call) -> frozenset[str]:
    """The effects of a call of a project function or class; empty when unknown."""
    return callee_effects(ctx, call.func)


def callee_effects(ctx: FileContext, callee: cst.BaseExpression) -> frozenset[str]:
    """The effects of calling what `callee` names, a project function or class (also when
    it is passed on uncalled: `bench(run_forward, x)`); empty when unknown."""
    entry = entry_for(ctx, callee)
    return effects(ctx, entry) if entry is not None and entry.kind in ("function", "class") else frozenset()


def returns_moved_model(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project function that returns a model it moved to an accelerator (`model =
    build_model(cfg)` with `from .models import build_model`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "function" and bool(entry.data.get("returns_moved"))


def timed_parameters(ctx: FileContext, call: cst.Call) -> list[tuple[str, int]]:
    """For a call of a project timing helper (`def timeit(fn, *args)`: it reads a wall clock
    twice or more, calls a parameter, and never synchronizes, itself or through what it
    calls), the parameters it calls, each with its position."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or entry.data.get("clock_reads", 0) < 2:
        return []
    if "syncs" in effects(ctx, entry):
        return []
    params = entry.data.get("params", [])
    return [(param, params.index(param)) for param in entry.data.get("runs", ()) if param in params]


def times_block(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project context manager that times the body of its `with` statement
    (`with record_time("train"):`, a clock read before and after its `yield`) and never
    synchronizes, itself or through what it calls."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or not entry.data.get("times_block"):
        return False
    return "syncs" not in effects(ctx, entry)


def returns_backpropagated_loss(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project function that returns the loss it back-propagated (`loss =
    train_step(model, batch)` with `from engine import train_step`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "function" and bool(entry.data.get("returns_backpropagated"))


def totaled_arguments(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The arguments that a call of a project function or method adds as they are into an
    attribute of its object (`tracker.update(losses)` with `self.sums[k] += losses[k]`)."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return []
    params = entry.data.get("params", [])
    if params[:1] == ["self"]:
        params = params[1:]
    bound = _bound_arguments(params, call)
    return [bound[param] for param in entry.data.get("totals_params", ()) if param in bound]


def placed_arguments(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The arguments of `call` that what it runs moves to a device before it reads anything of
    them but their metadata (`def forward(self, ids, device): ids = ids.to(device)`): a
    function of the checked file or of another project module, a method of the class around
    the call or of a project object, or the module that a `self.` attribute holds
    (`self.rope(frame_indices=ids)` with `self.rope = RotaryEmbed(...)`, a project class
    whose `forward` moves `frame_indices`). The call's arguments are bound to parameters by
    position and by keyword; when it may run several functions, each must move the argument.
    Empty when what it runs is unknown (an installed package's function)."""
    found: list[cst.BaseExpression] | None = None
    for entry in _functions_run(ctx, call):
        params = entry.data.get("params", [])
        bound = _bound_arguments(params[1:] if params[:1] == ["self"] else params, call)
        moved = [bound[param] for param in entry.data.get("places_params", ()) if param in bound]
        found = moved if found is None else [arg for arg in found if any(arg is m for m in moved)]
    return found or []


def _functions_run(ctx: FileContext, call: cst.Call) -> list[Entry]:
    """The function entries that `call` may run (see `placed_arguments`); empty when any is
    unknown: a nested function, or an attribute that holds something else too."""
    func = call.func
    found = entry_for(ctx, func) or inherited_method(ctx, func)
    if found is not None:
        return [found] if found.kind == "function" else []
    local = an.functions(ctx).resolve(call)
    if local:
        entries = [_local_function(ctx, f) for f in local]
        return [e for e in entries if e is not None] if all(e is not None for e in entries) else []
    # `self.rope(...)` / `self.rope.forward(...)`: the module a `self.` attribute holds.
    parts = (an.dotted(func) or "").split(".")
    if parts[0] != "self" or len(parts) not in (2, 3) or parts[2:] not in ([], ["forward"]):
        return []
    cls = an.index(ctx).enclosing(call, (cst.ClassDef,))
    owner = local_entry(ctx, cls.name.value) if cls is not None else None
    held = _attribute_classes(ctx, owner, parts[1]) if owner is not None and owner.kind == "class" else None
    # Calling the object runs its `__call__`, which for a module is `forward`.
    names = ("__call__", "forward") if len(parts) == 2 else ("forward",)
    runs = [next(filter(None, (_method(ctx, c, name) for name in names)), None) for c in held or ()]
    return [r for r in runs if r is not None] if runs and all(r is not None for r in runs) else []


def _local_function(ctx: FileContext, func: cst.FunctionDef) -> Entry | None:
    """The entry of a top-level function of the checked file, or of a method of one of its
    top-level classes; None for a nested function, which no summary describes."""
    idx = an.index(ctx)
    cls = an.functions(ctx).enclosing_class(func)
    if cls is None:
        return local_entry(ctx, func.name.value) if idx.scope(func) is ctx.module else None
    owner = local_entry(ctx, cls.name.value) if idx.scope(cls) is ctx.module else None
    data = owner.data.get("methods", {}).get(func.name.value) if owner is not None else None
    return Entry(f"{owner.name}.{func.name.value}", data, owner.module) if owner is not None and data is not None else None


def is_module_class(ctx: FileContext, entry: Entry, depth: int = 0) -> bool:
    """A project class that subclasses `torch.nn.Module` (or a LightningModule), directly or
    through other project classes."""
    project = view(ctx)
    if entry.kind != "class" or project is None or depth >= MAX_DEPTH:
        return False
    for base in entry.data.get("bases", ()):
        if base in TORCH_MODULE_BASES or base.startswith("torch.nn.") or base.endswith("LightningModule"):
            return True
        inner = project.lookup(base, entry.module)
        if inner is not None and is_module_class(ctx, inner, depth + 1):
            return True
    return False


def builds_module(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project class that is a network (`nets.AANet(...)`)."""
    entry = entry_for(ctx, call.func)
    return entry is not None and is_module_class(ctx, entry)


def runs_with_gradients(ctx: FileContext, call: cst.Call, key: str) -> bool:
    """A call of a project function that runs the module `key` names (passed as an
    argument) with gradients: it calls the parameter bound to it, outside any grad-free
    context, and does not put it in train mode."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return False
    data = entry.data
    if {"grad_free", "enters_grad_free", "sets_train"} & effects(ctx, entry):
        return False
    bound = _bound_arguments(data.get("params", []), call)
    return any(an.dotted(bound[param]) == key for param in data.get("runs", ()) if param in bound)


def modes_left(ctx: FileContext, call: cst.Call) -> list[tuple[cst.BaseExpression, str]]:
    """The arguments that a call of a project function leaves in another mode, each with
    the mode its last switch in that function sets: "eval" (`evaluate(model, loader)` that
    calls `model.eval()`), "train", or "either" (`model.train(flag)`)."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function":
        return []
    bound = _bound_arguments(entry.data.get("params", []), call)
    return [
        (bound[param], mode if mode in ("eval", "train") else "either")
        for param, mode in entry.data.get("mode_params", {}).items()
        if param in bound
    ]


def evaluates_in_train_mode(ctx: FileContext, call: cst.Call) -> list[cst.BaseExpression]:
    """The networks that a call of a project evaluation function (named like one:
    `evaluate(model, loader)`) runs under `no_grad()` / `inference_mode()` without ever
    switching their mode (nor any mode, through the functions it calls): the arguments it
    runs, and for a method (`trainer.validate()`, or `self.validate()` inherited from a base
    class of another module) the attributes of its instance it runs (`trainer.net`)."""
    entry = entry_for(ctx, call.func) or inherited_method(ctx, call.func)
    if entry is None or entry.kind != "function" or not an.name_says_evaluation(entry.name.rpartition(".")[2].lstrip(":")):
        return []
    done = effects(ctx, entry)
    if not {"grad_free", "enters_grad_free"} & done or {"sets_eval", "sets_train", "backward"} & done:
        return []
    params = entry.data.get("params", [])
    instance = an.receiver(call) if params[:1] == ["self"] else None
    bound = _bound_arguments(params[1:] if instance is not None else params, call)
    found: list[cst.BaseExpression] = [bound[param] for param in entry.data.get("runs", ()) if param in bound]
    if instance is not None:
        found.extend(
            cst.Attribute(value=instance, attr=cst.Name(run[5:]))
            for run in entry.data.get("runs", ())
            if run.startswith("self.")
        )
    return found


def builds_frozen(ctx: FileContext, call: cst.Call) -> bool:
    """A call of a project class whose constructor freezes all its parameters
    (`self.requires_grad_(False)`, also through a method it calls): its instances build no
    autograd graph."""
    entry = entry_for(ctx, call.func)
    return entry is not None and entry.kind == "class" and "freezes_self" in effects(ctx, entry)


def distributed_sampler_factory(ctx: FileContext, call: cst.Call) -> str | None:
    """What a call of a project factory returns that needs `set_epoch`: "loader" for a
    `DataLoader` with a shuffling `DistributedSampler` that it builds (`make_loader(dataset)`
    in a data module), "sampler" for such a sampler itself; None otherwise."""
    entry = entry_for(ctx, call.func)
    if entry is None or entry.kind != "function" or "distributed_sampler" not in effects(ctx, entry):
        return None
    returns = entry.data.get("returns", ())
    if any(r.endswith("DataLoader") for r in returns):
        return "loader"
    return "sampler" if any(r.endswith("DistributedSampler") for r in returns) else None


def package_async_trainer(ctx: FileContext) -> str | None:
    """A function or method of another module of the file's package that back-propagates
    and copies with `non_blocking=True` (`pkg.fit.Trainer.epoch`): a trainer that feeds a
    GPU from host memory, such as the loaders of a data module beside it."""
    project = view(ctx)
    found = project.package_functions(("backward", "copies_async")) if project is not None else []
    return found[0] if found else None


def called_from_methods(ctx: FileContext, methods: Iterable[str]) -> dict[str, list[int]]:
    """The checked file's top-level functions that methods named in `methods` of classes in
    other modules of its folder call (`forward` of a layer calling `functional.encode`), with
    the positions at which those methods pass them their own parameters."""
    project = view(ctx)
    return project.called_from_methods(methods) if project is not None else {}


def mixed_by_methods(ctx: FileContext, methods: Iterable[str]) -> list[str]:
    """The checked file's top-level functions whose results methods named in `methods` of
    classes in other modules of its folder compute with as they got them (`x +
    functional.table(n)` in a layer's `forward`)."""
    project = view(ctx)
    return project.mixed_by_methods(methods) if project is not None else []


def project_places_on_device(ctx: FileContext) -> bool:
    """Some module of the checked file's package, or a script that runs it, places work on a
    device (a training script that moves the model of a layer library to CUDA); False
    outside a project."""
    project = view(ctx)
    return project is not None and project.any_module("places_on_device", OWN_PACKAGE)


def project_disables_grad(ctx: FileContext) -> bool:
    """Some module of the checked file's project (the file itself included) runs code
    without gradients, as a caller of the file's classes may around them; False outside a
    project, where the file's own code shows every caller."""
    project = view(ctx)
    return project is not None and project.any_module("disables_grad")


def project_sets_epoch(ctx: FileContext) -> bool:
    """Some module of the checked file's project calls a `set_epoch`, hands loaders to
    `accelerator.prepare`, or trains with a framework that sets samplers' epochs itself;
    True outside a project (unknown)."""
    project = view(ctx)
    return project is None or project.any_module("sets_epoch")


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
    for base in data.get("bases", ()):
        if base in TORCH_MODULE_BASES:
            continue
        inner = lookup(ctx, base, entry.module)
        if inner is None or not class_mode_free(ctx, inner, None, depth + 1):
            return False
    for written in data.get("uses", ()):
        inner = lookup(ctx, written, entry.module)
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
