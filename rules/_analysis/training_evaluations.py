"""Evaluations inside training: which functions and statements evaluate a model (named like
an evaluation, decorated or wrapped grad-free), whether an `eval()` call serves an
evaluation, whether it freezes layers on purpose instead (batch-norm frozen in a `train()`
override, a `freeze_bn` helper, an `apply()` callback, a loop over `model.modules()`); the
networks kept frozen while another one trains are `freezing`'s.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import callee_name, parameter_names, receiver
from torchlint.rules._analysis.flow import enclosing_loops
from torchlint.rules._analysis.freezing import freezing
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.iterations import iterations
from torchlint.rules._analysis.modes import grad_free_decorated, in_grad_free_block, is_grad_free_call
from torchlint.rules._analysis.names import dotted, imports
from torchlint.rules._analysis.training import training
from torchlint.rules._analysis.vocabulary import name_says_evaluation, name_tokens

# Functions that put sub-modules in eval mode to freeze batch-norm during training.
FREEZER_WORDS = frozenset("freeze frozen bn batchnorm norm fix".split())


class TrainingEvaluations:
    """Evaluation code and deliberate freezing in one module."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = index(ctx)
        self.imps = imports(ctx)
        self.funcs = functions(ctx)
        self.train = training(ctx)
        self.iterations = iterations(ctx)
        self.freezing = freezing(ctx)
        self._arguments: set[str] | None = None

    def is_evaluation_function(self, root: cst.CSTNode) -> bool:
        return isinstance(root, cst.FunctionDef) and (
            name_says_evaluation(root.name.value) or grad_free_decorated(root, self.imps)
        )

    def serves_evaluation(self, call: cst.Call, root: cst.CSTNode) -> bool:
        """The `eval()` call (in `root`, the code of one iteration that holds it) serves an
        evaluation: it sits in an evaluation function or a gradient-free block, or
        gradient-free code or an evaluation call follows it before any training."""
        if in_grad_free_block(self.idx, call, self.imps, stop_at_function=False):
            return True
        func = self.idx.enclosing(call, (cst.FunctionDef,))
        if func is not None and func is root and self.is_evaluation_function(func):
            return True
        for statement in self.iterations.following(call):
            if self.train.events_in(self.train.backward, statement, self.funcs):
                return False
            if self.evaluation_code(statement):
                return True
        return False

    def evaluation_code(self, statement: cst.CSTNode) -> bool:
        """`statement` holds a grad-free block or calls an evaluation (by name or definition)."""
        for with_ in self.idx.within(statement, cst.With):
            if any(is_grad_free_call(item.item, self.imps) for item in with_.items):
                return True
        for call in self.idx.within(statement, cst.Call):
            if name_says_evaluation(callee_name(call)) or any(
                self.is_evaluation_function(f) for f in self.funcs.resolve(call)
            ):
                return True
        return False

    def freezes_layers(self, call: cst.Call, loop: cst.For | cst.While) -> bool:
        """`m.eval()` on sub-modules in a `train()` override, a `freeze_bn` helper, an
        `apply()` callback or a loop over `model.modules()`. A function that runs the training
        `loop` itself is the training procedure, whoever calls it (`study.optimize(objective)`).
        A project helper that switches its argument (`freeze_bn(model)`) says so by name."""
        if any(t in FREEZER_WORDS for t in name_tokens(callee_name(call) or "")):
            return True
        func = self.idx.enclosing(call, (cst.FunctionDef,))
        if func is not None and (
            "mode" in parameter_names(func) or any(t in FREEZER_WORDS for t in name_tokens(func.name.value))
        ):
            return True
        target = receiver(call)
        name = dotted(target) if target is not None else None
        for outer in enclosing_loops(self.idx, call):
            if isinstance(outer, cst.For) and name and _binds(outer.target, name):
                return True
        return func is not None and not self.idx.contains(func, loop) and self._passed_as_callback(func)

    def _passed_as_callback(self, func: cst.FunctionDef) -> bool:
        """`func` is handed to a call (`model.apply(set_bn_eval)`) rather than called here."""
        if self._arguments is None:
            self._arguments = {
                arg.value.value for arg in self.idx.nodes(cst.Arg) if isinstance(arg.value, cst.Name)
            }
        return func.name.value in self._arguments


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return dotted(target) == name


def training_evaluations(ctx: FileContext) -> TrainingEvaluations:
    return ctx.analysis(TrainingEvaluations)
