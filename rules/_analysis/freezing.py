"""Frozen networks: which networks of a module build no autograd graph, or are kept out of
training on purpose, so that running them with gradients or in eval mode is no mistake.

- Frozen parameters: `net.requires_grad_(False)` (also on `Net().requires_grad_(False)`
  assigned to a name), `p.requires_grad = False` in a loop or comprehension over
  `net.parameters()`, a freeze helper (`freeze(net)`, `freeze([a, b])`, `net.freeze()`,
  Lightning's `model.freeze()`; not `unfreeze`, not `freeze(net, True)`).
- Instances of a class whose constructor freezes its own parameters
  (`self.requires_grad_(False)` in `__init__`, in this module or, through the project
  summaries, in another module).
- Instances built with a keyword that says their parameters are not trained
  (`Encoder(trainable=False)`, `requires_grad=False`, `freeze=True`, `frozen=True`), for
  classes whose constructor the module cannot see.
- Networks kept frozen by what they are called: a teacher, an EMA, target or reference
  copy, a pretrained perceptual network (`vocabulary.FROZEN_WORDS`).

Networks are matched by their last name (`self.teacher` and `teacher` are one network),
as `modes.model_key` names them.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _summaries as sm
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import first_argument, is_false, method_name, receiver
from torchlint.rules._analysis.dataflow import assigned_values
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.modes import assigned_chain_target, model_key, strip_self_returning
from torchlint.rules._analysis.names import dotted, last_name
from torchlint.rules._vocabulary import FROZEN_WORDS, name_tokens

_FREEZE_NAME = re.compile(r"freeze|requires_grad", re.IGNORECASE)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
# Constructor keywords that freeze the built network when False, and when True.
_TRAINED_KEYWORDS = frozenset({"trainable", "requires_grad", "train_weights"})
_FROZEN_KEYWORDS = frozenset({"freeze", "frozen", "freeze_weights", "freeze_all"})


class Freezing:
    """The networks of one module whose parameters are frozen, and the classes that freeze
    their own."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
        self.idx = index(ctx)
        self.funcs = functions(ctx)
        # Last names of frozen networks, and the module's classes that freeze themselves.
        self.names: set[str] = set()
        self.self_freezing: set[str] = set()
        self._instances: dict[str, bool] = {}
        self._collect()

    def is_frozen(self, key: str) -> bool:
        """The network's parameters are frozen somewhere in the module, or it is an instance
        of a class that freezes its own (matched by last name)."""
        last = key.rpartition(".")[2]
        if last in self.names:
            return True
        found = self._instances.get(last)
        if found is None:
            found = self._instances[last] = any(
                self._builds_frozen(value)
                for name, values in assigned_values(self.ctx).items()
                if name.rpartition(".")[2] == last
                for value in values
            )
        return found

    def kept_frozen(self, key: str) -> bool:
        """`is_frozen`, or the name says the network stays out of training (`teacher`, `ema`)."""
        return self.is_frozen(key) or any(token in FROZEN_WORDS for token in name_tokens(key))

    def _collect(self) -> None:
        for call in self.idx.nodes(cst.Call):
            method = method_name(call)
            if method == "requires_grad_":
                flag = first_argument(call, "requires_grad")
                if flag is not None and is_false(flag):
                    self._freeze(call, self._parameter_owners(call) or self._subject_names(call))
                continue
            callee = last_name(call.func) or ""
            if not _FREEZE_NAME.search(callee) or "unfreeze" in callee.lower():
                continue
            if any(isinstance(a.value, cst.Name) and a.value.value == "True" for a in call.args):
                continue
            if not call.args and method is not None:
                self._freeze(call, {name for name in (model_key(receiver(call)),) if name})
            for arg in call.args:
                value = arg.value
                values = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
                self._freeze(call, {n for n in (last_name(v) for v in values if dotted(v)) if n})
        for assign in self.idx.nodes(cst.Assign):
            if is_false(assign.value) and any(
                isinstance(t.target, cst.Attribute) and t.target.attr.value == "requires_grad" for t in assign.targets
            ):
                self._freeze(assign, self._parameter_owners(assign) or set())

    def _subject_names(self, call: cst.Call) -> set[str]:
        """`model` for `model.requires_grad_(False)` (also `model.module.` and `self.model.`);
        the assigned name for `net = Net().requires_grad_(False)`."""
        subject = strip_self_returning(receiver(call))
        if subject is not None and not isinstance(subject, cst.Call):
            names = {name for name in (last_name(subject), model_key(subject)) if name}
            if names:
                return names
        target = assigned_chain_target(self.idx, call)
        return {target.rpartition(".")[2]} if target else set()

    def _freeze(self, node: cst.CSTNode, names: set[str]) -> None:
        self.names.update(names)
        if "self" not in names:
            return
        func = self.idx.enclosing(node, (cst.FunctionDef,))
        owner = self.funcs.enclosing_class(func) if func is not None and func.name.value == "__init__" else None
        if owner is not None:
            self.self_freezing.add(owner.name.value)

    def _parameter_owners(self, node: cst.CSTNode) -> set[str] | None:
        """`teacher` for code inside `for p in teacher.parameters():` (or a comprehension)."""
        for ancestor in self.idx.ancestors(node):
            iters: list[cst.BaseExpression] = []
            if isinstance(ancestor, cst.For):
                iters = [ancestor.iter]
            elif isinstance(ancestor, _COMPREHENSIONS):
                for_in = getattr(ancestor, "for_in", None)
                while isinstance(for_in, cst.CompFor):
                    iters.append(for_in.iter)
                    for_in = for_in.inner_for_in
            owners = {
                name
                for it in iters
                if isinstance(it, cst.Call) and method_name(it) in ("parameters", "named_parameters")
                for name in (model_key(receiver(it)),)
                if name
            }
            if owners:
                return owners
        return None

    def _builds_frozen(self, value: cst.BaseExpression) -> bool:
        built = strip_self_returning(value)
        if not isinstance(built, cst.Call):
            return False
        if isinstance(built.func, cst.Name) and built.func.value in self.self_freezing:
            return True
        return sm.builds_frozen(self.ctx, built) or built_with_frozen_keyword(built)


def built_with_frozen_keyword(call: cst.Call) -> bool:
    """`Encoder(pretrained=True, trainable=False)`, `Backbone(freeze=True)`: the constructor is
    told to freeze what it builds."""
    for arg in call.args:
        if arg.keyword is None:
            continue
        word = arg.keyword.value
        if word in _TRAINED_KEYWORDS and is_false(arg.value):
            return True
        if word in _FROZEN_KEYWORDS and isinstance(arg.value, cst.Name) and arg.value.value == "True":
            return True
    return False


def freezing(ctx: FileContext) -> Freezing:
    return ctx.analysis(Freezing)
