"""Building a summary: what other modules see of a module's functions, methods and classes.

`summarize(tree)` turns one module into plain JSON data, computed once per file content
and cached (`torchlint.project` resolves imports to modules and records which summary
entries a check used); `torchlint.rules._summaries` holds the queries that rules ask of
summaries.

The summary walks Python's `ast`, not LibCST: it runs over every project module that a
checked file imports, and CPython's parser with a walk is about ten times cheaper than a
LibCST parse. Its vocabulary (what counts as a gradient clear, an optimizer, a
gradient-free context) is the analysis library's (`torchlint.rules._vocabulary`), so that
a helper in another module means what the same code means in the checked file. This module
imports neither LibCST nor the analysis package: a run that summarises an edited module
and parses nothing (a re-run after editing a helper) never pays LibCST's import.

## The data
```
{"imports": {local name: written target},          # `from .x import f` -> {"f": ".x.f"}
 "defs": {name: function or class entry},
 "places_on_device": bool,  # `.cuda()`, a CUDA device string, NCCL or the name `device`
 "disables_grad": bool,     # a gradient-free context or decorator (`torch.no_grad()`) anywhere
 "sets_epoch": bool}        # calls a `set_epoch`, `accelerator.prepare`, or imports a framework that does
function: {"kind": "function", "params": [...], "effects": [...], "calls": [...],
           "passes": {called: [positions of the call's arguments that are own parameters]},
           "mode_params": {param: "eval" | "train" | "flag:<param>" | "method:<name>"},
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
from typing import Any

from torchlint.rules import _vocabulary as vocabulary
from torchlint.rules._vocabulary import MODE_DEPENDENT

_DROPOUT_LAYER = re.compile(r"Dropout\d?d?$")
# Training frameworks whose loops give distributed samplers the epoch themselves.
EPOCH_FRAMEWORKS = frozenset(
    """lightning pytorch_lightning accelerate ignite transformers deepspeed composer mmengine mmcv
    detectron2 fairseq catalyst fastai torchtnt""".split()
)

Summary = dict[str, Any]


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
        return isinstance(target.value, str) and bool(vocabulary.CUDA_TEXT.match(target.value))
    if isinstance(target, ast.Call):
        return _last(target.func) == "device"
    return isinstance(target, (ast.Name, ast.Attribute)) and bool(vocabulary.DEVICE_WORDS.intersection(vocabulary.name_tokens(_last(target))))


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
            and moved.func.attr in vocabulary.SCALAR_ARG_METHODS
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
            parent.attr in vocabulary.METADATA
            or (parent.attr in vocabulary.METADATA_CALLS and isinstance(parents.get(id(parent)), ast.Call))
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
            if parent.attr not in vocabulary.SCALAR_ARG_METHODS:
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
                if value == vocabulary.VISIBLE_DEVICES:
                    for func in active:
                        func.effects.add("selects_gpu")
                if isinstance(value, str) and id(node) not in self.docstrings and vocabulary.CUDA_TEXT.match(value):
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
        if method == "zero_grad" or vocabulary.says_clear_helper(_last(func)):
            found.add("clears_grads")
        elif method in ("zero_", "fill_", "mul_", "detach_") and owner is not None and _is_grad(owner):
            found.add("clears_grads")
        elif method == "step" and owner is not None:
            owner_name = _last(owner)
            if ("scaler" in owner_name.lower() and call.args) or vocabulary.name_says_optimizer(owner_name):
                found.add("steps")
            elif not call.args and vocabulary.says_scheduler(owner_name):
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
        if short in vocabulary.CLIP_NAMES:
            found.add("clips_grads")
        elif "unscale" in short:
            found.add("unscales")
        if qualified in vocabulary.WALL_CLOCKS:
            active[0].clock_reads += 1
            active[0].clock_lines.append(call.lineno)
        if _moves_to_accelerator(call) and isinstance(owner, ast.Name):
            active[0].moved.add(owner.id)
        moved_param = _moved_name(call) if method in ("to", "cuda") else None
        if moved_param in active[0].params and moved_param not in ("self", "cls"):
            active[0].moved_params.add(moved_param)
        if qualified.endswith("cuda.synchronize") or method in vocabulary.WAITING_METHODS:
            found.add("syncs")
        if (
            vocabulary.is_torch_op(qualified)
            or method in vocabulary.TENSOR_WORK
            or method == "forward"
            or vocabulary.name_says_model_run(_last(func))
        ):
            found.add("queues_work")
        if method in ("to", "cuda"):
            found.add("moves_device")
        if any(k.arg == "non_blocking" and not (isinstance(k.value, ast.Constant) and not k.value.value) for k in call.keywords):
            found.add("copies_async")
        if vocabulary.call_selects_gpu(qualified, (k.arg for k in call.keywords)):
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
        elif owner is not None and not call.args and not call.keywords and vocabulary.name_says_mode_method(method):
            # `model.val_start()` on a parameter: its class, known at the call site, says the mode.
            switched = _dotted(owner)
            if switched in target.params and switched not in ("self", "cls"):
                target.modes[switched] = f"method:{method}"


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
    return vocabulary.says_grad_free(short)


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
