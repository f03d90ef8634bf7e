"""Evaluations inside training: which functions and statements evaluate a model (named like
an evaluation, decorated or wrapped grad-free), whether an `eval()` call serves an
evaluation, whether it freezes layers on purpose instead (batch-norm frozen in a `train()`
override, a `freeze_bn` helper, an `apply()` callback, a loop over `model.modules()`); the
networks kept frozen while another one trains are `freezing`'s.

And evaluation passes written in the training code that run a trained network still in
training mode (`unmoded_evaluations`): a gradient-free loop over validation or test data
inside a training loop, or beside one in the same code, that never switches to eval mode;
and a batch drawn from such data inside a training loop (`next(iter(test_loader))` every N
steps) that the network runs without back-propagating it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import functions
from torchlint.rules._analysis.calls import called_module, callee_name, parameter_names, receiver
from torchlint.rules._analysis.flow import enclosing_loops
from torchlint.rules._analysis.freezing import freezing
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.iterations import iterations
from torchlint.rules._analysis.modes import (
    eval_switches,
    grad_free_decorated,
    in_grad_free_block,
    is_grad_free_call,
    model_key,
)
from torchlint.rules._analysis.names import dotted, imports, last_name
from torchlint.rules._analysis.networks import looks_like_model, trained_models
from torchlint.rules._analysis.training import training, unwrap_iterable
from torchlint.rules._vocabulary import name_says_evaluation, name_tokens, says_evaluation_data

# Functions that put sub-modules in eval mode to freeze batch-norm during training.
FREEZER_WORDS = frozenset("freeze frozen bn batchnorm norm fix".split())


@dataclass(frozen=True)
class UnmodedEvaluation:
    """An evaluation pass of the training code that runs a trained network in training mode.

    `node` is the loop over the evaluation data (`for x, y in val_loader:`) or the statement
    that draws one batch of it (`x, y = next(iter(test_loader))`); `data` the data as
    written; `call` the network's call; `in_training` whether the pass sits inside the
    training loop (else beside it, in the same code); `grad_free` whether the call runs
    without gradients (a drawn batch may not: nothing back-propagates it either)."""

    node: cst.CSTNode
    data: cst.BaseExpression
    call: cst.Call
    in_training: bool
    grad_free: bool = True


class TrainingEvaluations:
    """Evaluation code and deliberate freezing in one module."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx
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

    # -- evaluation passes in training mode ------------------------------------------------

    def unmoded_evaluations(self) -> list[UnmodedEvaluation]:
        """The evaluation passes inside training loops that never switch to eval mode (loops
        over evaluation data, batches drawn from it), then those beside training loops."""
        return [*self._inside_training(), *self._beside_training()]

    def _inside_training(self) -> Iterator[UnmodedEvaluation]:
        """A gradient-free loop over validation or test data inside a training loop that never
        switches to eval mode (`for x, y in val_loader: model(x)` under `torch.no_grad()`), and
        a batch drawn from such data there that the network runs (`if i % 10 == 0: x, y =
        next(iter(test_loader)); model(x)`), without gradients or in a block that runs no
        backward pass."""
        switches = eval_switches(self.ctx)
        for loop in self.train.training_loops(self.funcs):
            if switches.reaches_eval(loop.body):
                continue
            scope = self.idx.scope(loop)
            for inner in self.idx.within(loop.body, cst.For):
                if self.idx.scope(inner) is not scope:
                    continue
                data = unwrap_iterable(inner.iter)
                if not says_evaluation_data(last_name(data)):
                    continue
                call = self._unmoded_call_in(inner.body, scope, grad_free_only=self._trains(inner.body))
                if call is not None:
                    yield UnmodedEvaluation(inner, data, call, in_training=True, grad_free=self._grad_free(call))
            for assign in self.idx.within(loop.body, cst.Assign):
                drawn = drawn_batch(assign.value)
                if drawn is None or self.idx.scope(assign) is not scope or not says_evaluation_data(last_name(drawn)):
                    continue
                block = self.idx.enclosing(assign, (cst.IndentedBlock,))
                if block is None:
                    continue
                trains = self._trains(block)
                # Run with gradients only here, a callee (`log(net(x))`) is no trained network.
                elsewhere = {
                    model_key(called_module(c))
                    for c in self.idx.within(loop.body, cst.Call)
                    if not (self.idx.contains(block, c) and self.idx.order(c) > self.idx.order(assign))
                }
                call = self._unmoded_call_in(block, scope, grad_free_only=trains, after=assign, among=elsewhere)
                if call is not None:
                    yield UnmodedEvaluation(assign, drawn, call, in_training=True, grad_free=self._grad_free(call))

    def _beside_training(self) -> Iterator[UnmodedEvaluation]:
        """A gradient-free loop over validation or test data beside a training loop in the
        same code (a final test after training, an `if args.eval_only:` branch), where that
        code never switches to eval mode: the model is in train mode there."""
        switches = eval_switches(self.ctx)
        loops = self.train.training_loops(self.funcs)
        scopes = {id(self.idx.scope(loop)): self.idx.scope(loop) for loop in loops}
        for scope in scopes.values():
            if switches.reaches_eval(scope):
                continue
            if isinstance(scope, cst.FunctionDef) and name_says_evaluation(scope.name.value):
                continue
            for loop in self.idx.within(scope, cst.For):
                if self.idx.scope(loop) is not scope or any(self.idx.contains(t, loop) for t in loops):
                    continue
                data = unwrap_iterable(loop.iter)
                if not says_evaluation_data(last_name(data)):
                    continue
                call = self._unmoded_call_in(loop.body, scope, grad_free_only=self._trains(loop.body))
                if call is not None:
                    yield UnmodedEvaluation(loop, data, call, in_training=False, grad_free=self._grad_free(call))

    def _trains(self, block: cst.CSTNode) -> bool:
        return bool(self.train.events_in(self.train.backward, block, self.funcs))

    def _grad_free(self, call: cst.Call) -> bool:
        return in_grad_free_block(self.idx, call, self.imps)

    def _unmoded_call_in(
        self,
        block: cst.CSTNode,
        scope: cst.CSTNode,
        grad_free_only: bool,
        after: cst.CSTNode | None = None,
        among: set[str | None] | None = None,
    ) -> cst.Call | None:
        """The first call in `block` (after `after`) of a network that training runs (and
        that is one of `among`), in `scope`'s own code (under a gradient-free block when
        `grad_free_only`); not a local function or an imported object."""
        trained = trained_models(self.ctx) if among is None else trained_models(self.ctx) & among
        start = self.idx.end(after) if after is not None else -1
        for call in self.idx.within(block, cst.Call):
            if self.idx.scope(call) is not scope or self.idx.order(call) <= start:
                continue
            if grad_free_only and not in_grad_free_block(self.idx, call, self.imps):
                continue
            model = called_module(call)
            key = model_key(model)
            if model is None or key is None or self.funcs.resolve(call) or self.imps.is_imported(model):
                continue
            if looks_like_model(key) and key in trained:
                return call
        return None


def drawn_batch(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The data that `next(...)` draws one batch from: `loader` for `next(iter(loader))`,
    `next(enumerate(loader, 0))` and `next(loader_iter)`; None for other values."""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next" and value.args):
        return None
    return unwrap_iterable(value.args[0].value)


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return dotted(target) == name


def training_evaluations(ctx: FileContext) -> TrainingEvaluations:
    return ctx.analysis(TrainingEvaluations)
