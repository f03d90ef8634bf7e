"""Networks by dataflow: which classes of the module are `nn.Module`s (through local base
classes too), and which names hold a network whatever they are called (`aanet`, `enc`,
`self.backbone`): every value assigned to the name builds one with such a class (or with a
class of another project module, as the caller's `project_class` says), wraps one
(DataParallel, `torch.compile`, `torch.jit.trace`), or moves one with `.to(device)` /
`.cuda()`. Name-based guesses about networks are `vocabulary`'s.
"""

from __future__ import annotations

from typing import Callable

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.calls import callee_name, keyword, method_name, positional, receiver
from torchlint.rules._analysis.dataflow import assigned_values
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import Imports, dotted, imports, last_name, string_text
from torchlint.rules._analysis.vocabulary import MODEL_WRAPPERS

# Methods that return the module they are called on (so a chain of them still holds it).
MODULE_CHAIN_METHODS = frozenset("eval train half float double bfloat16 requires_grad_ share_memory".split())
# Calls that build a module from the module they are given.
TRACERS = frozenset({"torch.jit.trace", "torch.jit.script", "torch.compile"})
MAX_DEPTH = 3


def is_cpu_literal(expr: cst.BaseExpression) -> bool:
    """`"cpu"`, `"cpu:0"`."""
    return (string_text(expr) or "").startswith("cpu")


class Networks:
    """The module's network classes and the names that hold a network."""

    def __init__(self, ctx: FileContext, project_class: Callable[[cst.Call], bool] | None = None) -> None:
        self.imps: Imports = imports(ctx)
        self.assigned = assigned_values(ctx)
        self.classes = {cls.name.value: cls for cls in index(ctx).nodes(cst.ClassDef)}
        self.project_class = project_class or (lambda call: False)
        self._module_classes: dict[str, bool] = {}

    def is_module_class(self, name: str, _seen: frozenset[str] = frozenset()) -> bool:
        """A class of this module that subclasses `torch.nn.Module` (or a LightningModule),
        directly or through other classes of the module."""
        known = self._module_classes.get(name)
        if known is not None:
            return known
        cls = self.classes.get(name)
        result = cls is not None and name not in _seen and any(
            (self.imps.qualify(base.value) or "").startswith(("torch.nn.", "nn."))
            or (self.imps.qualify(base.value) or "").endswith("LightningModule")
            or self.is_module_class(last_name(base.value) or "", _seen | {name})
            for base in cls.bases
        )
        self._module_classes[name] = result
        return result

    def holds_module(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """Every value assigned to the name `expr` (`aanet`, `self.net`) is a network."""
        name = dotted(expr)
        values = self.assigned.get(name, []) if name else []
        return bool(values) and depth < MAX_DEPTH and all(self.builds_module(v, depth + 1) for v in values)

    def builds_module(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """`Net(...)`, `Net().to(device).eval()`, `model.cuda()`, `nn.DataParallel(net)`,
        `torch.jit.trace(net, x)`, or a name that holds a network."""
        while isinstance(expr, cst.Call):
            method = method_name(expr)
            if method == "cuda" or (method == "to" and self._moves_off_host(expr)):
                return True
            if method in MODULE_CHAIN_METHODS and receiver(expr) is not None:
                expr = receiver(expr)  # type: ignore[assignment]
                continue
            # `compile` only as `torch.compile`: `re.compile(...)` builds no network.
            if callee_name(expr) in MODEL_WRAPPERS - {"compile"} or self.imps.callee(expr) in TRACERS:
                return True
            return self.project_class(expr) or (
                not self.imps.is_imported(expr.func) and self.is_module_class(callee_name(expr) or "")
            )
        return isinstance(expr, (cst.Name, cst.Attribute)) and self.holds_module(expr, depth)

    def _moves_off_host(self, call: cst.Call) -> bool:
        """`.to(device)`, `.to("cuda")`: a move with a device argument that is not the CPU."""
        target = keyword(call, "device") or next(iter(positional(call)), None)
        return target is not None and not is_cpu_literal(target.value)


def networks(ctx: FileContext) -> Networks:
    return ctx.analysis(Networks)
