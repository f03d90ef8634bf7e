from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Mapping

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an

# Networks that are deliberately kept in eval mode while another one trains.
FROZEN_WORDS = frozenset(
    """teacher target tgt ema shadow swa avg averaged momentum frozen fixed ref reference pretrained
    old prev vgg lpips inception clip perceptual""".split()
)
# Functions that put sub-modules in eval mode to freeze batch-norm during training.
FREEZER_WORDS = frozenset("freeze frozen bn batchnorm norm fix".split())
MAX_DEPTH = 5


@dataclass(frozen=True)
class _Context:
    """Code that one iteration of a loop runs: the loop body itself or a local function it calls."""

    root: cst.CSTNode
    # The calls that lead here from the loop body, outermost first (empty for the body).
    path: tuple[cst.Call, ...] = ()
    # Parameter name -> the loop function's expression bound to it (None: not known).
    binding: Mapping[str, cst.BaseExpression | None] = field(default_factory=dict)

    @property
    def params(self) -> set[str]:
        return an.parameter_names(self.root) if isinstance(self.root, cst.FunctionDef) else set()

    def translate(self, expr: cst.BaseExpression) -> cst.BaseExpression | None:
        """`expr` as the loop's own function spells it; None when a parameter is bound to nothing known."""
        plain = expr
        while isinstance(plain, cst.Attribute) and plain.attr.value in ("module", "_orig_mod"):
            plain = plain.value
        if isinstance(plain, cst.Name) and plain.value in self.params:
            return self.binding.get(plain.value)
        return expr


class EvalModeNeverReset(Rule):
    """
    ## What it does
    Finds training loops (epoch loops, or batch loops with periodic validation) that put the
    model in evaluation mode with `model.eval()`, directly or through a local `evaluate()` /
    `validate()` helper, but never call `model.train()` (or `model.train(True)`) again before
    the next training step of the same model. The finding points at the loop, where
    `model.train()` belongs.

    ## Why is this bad?
    `model.eval()` is a switch, not a scope: it stays on until `model.train()` is called. Every
    iteration after the first evaluation then trains with dropout disabled and with batch-norm
    layers using (and no longer updating) their running statistics. Nothing fails: the loss
    just stops improving the way it should, and the model overfits or diverges silently.

    ## Example
    ```python
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_loss = sum(loss_fn(model(x), y).item() for x, y in val_loader)
    ```

    ## Use instead
    ```python
    for epoch in range(epochs):
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            val_loss = sum(loss_fn(model(x), y).item() for x, y in val_loader)
    ```
    A `model.train()` at the start of the train-epoch helper, or at the end of the evaluation
    helper, works as well.

    Networks deliberately kept in eval mode (a frozen teacher, a target or EMA network, a
    perceptual-loss VGG, batch-norm layers frozen by a `train()` override) are not reported.

    ## Fix safety
    The fix inserts `model.train()` at the start of the loop body (or right before the training
    step when the evaluation comes first in the iteration). It is safe: it restores the mode the
    first iteration trained in.

    ## Runtime confirmation
    `torchlint probe` confirms it when an optimizer step trains a model with dropout or
    batch-norm layers in eval mode after earlier steps trained it in train mode, naming the
    steps and the `.eval()` call that switched it.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.train
    - https://pytorch.org/tutorials/beginner/basics/optimization_tutorial.html
    """

    CODE = "TL008"
    NAME = "eval-mode-never-reset"
    SUMMARY = "Model put in eval mode inside the training loop and never switched back to train mode"
    TRIGGERS = ((".eval(", ".train("), ("backward",), (".step(",))
    CONFIRMED_BY = ("TL008",)

    VALID = [
        # train mode comes back in the closure that `optimizer.step(closure)` runs (skorch)
        """
        import torch


        class NeuralNet:
            def initialize(self):
                self.module_ = self.module().to(self.device)
                self.optimizer_ = torch.optim.SGD(self.module_.parameters(), lr=0.1)

            def validation_step(self, x, y):
                self.module_.eval()
                with torch.no_grad():
                    return self.criterion_(self.infer(x), y)

            def train_single(self, x, y):
                self.module_.train()
                self.optimizer_.zero_grad()
                loss = self.criterion_(self.infer(x), y)
                loss.backward()
                return loss

            def train_step(self, x, y):
                def closure():
                    return self.train_single(x, y)

                self.optimizer_.step(closure)

            def fit(self, train_loader, val_loader, epochs):
                for _ in range(epochs):
                    for x, y in train_loader:
                        self.train_step(x, y)
                    for x, y in val_loader:
                        self.validation_step(x, y)

            def infer(self, x):
                return self.module_(x)
        """,
        # train() at the top of the epoch loop.
        """
        for epoch in range(10):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                evaluate(model, val_loader)
        """,
        # The train-epoch helper switches to train mode itself.
        """
        def train_one_epoch(model, loader, optimizer):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                model(x, y).backward()
                optimizer.step()

        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                return sum(model(x, y).item() for x, y in loader)

        for epoch in range(epochs):
            train_one_epoch(model, train_loader, optimizer)
            evaluate(model, val_loader)
        """,
        # The evaluation helper restores the previous mode.
        """
        @torch.no_grad()
        def estimate_loss():
            model.eval()
            out = sum(model(x, y).item() for x, y in val_batches)
            model.train()
            return out

        while iter_num < max_iters:
            if iter_num % eval_interval == 0:
                losses = estimate_loss()
            loss = model(X, Y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            iter_num += 1
        """,
        # train(mode) with a saved flag restores whatever mode was on.
        """
        for i, (x, y) in enumerate(loader):
            optimizer.zero_grad()
            criterion(net(x), y).backward()
            optimizer.step()
            if i % 100 == 0:
                was_training = net.training
                net.eval()
                with torch.no_grad():
                    sample = net(fixed_x)
                net.train(was_training)
        """,
        # A frozen teacher kept in eval mode while the student trains.
        """
        for epoch in range(epochs):
            student.train()
            for x, y in loader:
                self.teacher.eval()
                with torch.no_grad():
                    soft = self.teacher(x)
                loss = kd_loss(student(x), soft, y)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
        # Batch-norm freezing inside a train() override and through model.apply.
        """
        def set_bn_eval(m):
            if isinstance(m, nn.BatchNorm2d):
                m.eval()

        for epoch in range(epochs):
            model.train()
            model.apply(set_bn_eval)
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
        """,
        # The evaluated network is not the one this loop trains (an EMA copy).
        """
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                ema.update(model)
            ema_model.eval()
            with torch.no_grad():
                validate(ema_model, val_loader)
        """,
        # A fresh model per fold starts in train mode.
        """
        for fold in range(5):
            model = Net()
            optimizer = torch.optim.Adam(model.parameters())
            for x, y in loaders[fold]:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                scores.append(evaluate(model, val_loaders[fold]))
        """,
        # The evaluation builds its own network from the weights (mcan-vqa #26).
        """
        class Execution:
            def eval(self, dataset, state_dict):
                net = Net(self.cfg)
                net.load_state_dict(state_dict)
                net.eval()
                with torch.no_grad():
                    return [net(x) for x in dataset]

            def train(self, dataset, dataset_eval):
                net = Net(self.cfg)
                net.train()
                for epoch in range(self.epochs):
                    for x, y in dataset:
                        optim.zero_grad()
                        loss_fn(net(x), y).backward()
                        optim.step()
                    self.eval(dataset_eval, state_dict=net.state_dict())
        """,
        # Evaluation only after the last epoch (outside the loop).
        """
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
        model.eval()
        with torch.no_grad():
            test(model, test_loader)
        """,
        # The loop stops right after evaluating.
        """
        for epoch in range(epochs):
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            if epoch == epochs - 1 or early_stop:
                model.eval()
                with torch.no_grad():
                    test(model, test_loader)
                break
        """,
        # A Trainer whose own train()/eval() methods are procedures, not mode switches.
        """
        class Trainer:
            def train(self):
                self.model.train()
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    self.model(x, y).backward()
                    self.optimizer.step()

            def eval(self):
                self.model.eval()
                with torch.no_grad():
                    return [self.model(x) for x in self.val_loader]

            def fit(self):
                for epoch in range(self.epochs):
                    self.train()
                    self.eval()
        """,
        # eval() used deliberately for the whole training (frozen batch-norm fine-tuning).
        """
        for epoch in range(epochs):
            model.eval()  # keep batch-norm statistics frozen while fine-tuning
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
        """,
        # Lightning: the framework switches modes; no explicit loop.
        """
        import lightning as L
        class Model(L.LightningModule):
            def validation_step(self, batch, batch_idx):
                self.eval()
                return self.loss(batch)

            def training_step(self, batch, batch_idx):
                loss = self.loss(batch)
                self.manual_backward(loss)
                self.optimizers().step()
                return loss
        """,
    ]

    INVALID = [
        # a training procedure handed to a tuner (`study.optimize(objective)`) is no
        # batch-norm-freezing callback
        Example(
            """
            def objective(trial):
                model = Net(trial).to(device)
                optimizer = torch.optim.Adam(model.parameters())
                model.train()
                for epoch in range(10):  # expect: TL008
                    for x, y in train_loader:
                        optimizer.zero_grad()
                        loss = criterion(model(x), y)
                        loss.backward()
                        optimizer.step()
                    model.eval()
                    with torch.no_grad():
                        accuracy = evaluate(model, val_loader)
                return accuracy
            study.optimize(objective, n_trials=100)
            """
        ),
        Example(
            """
            for epoch in range(epochs):  # expect: TL008
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                model.eval()
                with torch.no_grad():
                    val_loss = sum(loss_fn(model(x), y).item() for x, y in val_loader)
            """,
            fixed="""
            for epoch in range(epochs):  # expect: TL008
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                model.eval()
                with torch.no_grad():
                    val_loss = sum(loss_fn(model(x), y).item() for x, y in val_loader)
            """,
        ),
        # model.train() only once, before the loop.
        Example(
            """
            model.train()
            for epoch in range(epochs):  # expect: TL008
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                model.eval()
                correct = 0
                with torch.no_grad():
                    for x, y in test_loader:
                        correct += (model(x).argmax(1) == y).sum().item()
            """,
            fixed="""
            model.train()
            for epoch in range(epochs):  # expect: TL008
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                model.eval()
                correct = 0
                with torch.no_grad():
                    for x, y in test_loader:
                        correct += (model(x).argmax(1) == y).sum().item()
            """,
        ),
        # Through an evaluate() helper that takes the model as a parameter.
        Example(
            """
            def evaluate(model, loader):
                model.eval()
                with torch.no_grad():
                    return sum(model(x, y).item() for x, y in loader)

            for epoch in range(epochs):  # expect: TL008
                for x, y in train_loader:
                    optimizer.zero_grad()
                    net(x, y).backward()
                    optimizer.step()
                val = evaluate(net, val_loader)
            """,
            fixed="""
            def evaluate(model, loader):
                model.eval()
                with torch.no_grad():
                    return sum(model(x, y).item() for x, y in loader)

            for epoch in range(epochs):  # expect: TL008
                net.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    net(x, y).backward()
                    optimizer.step()
                val = evaluate(net, val_loader)
            """,
        ),
        # Periodic validation inside the batch loop.
        Example(
            """
            model.train()
            for step, (x, y) in enumerate(loader):  # expect: TL008
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                if step % 500 == 0:
                    model.eval()
                    with torch.no_grad():
                        print(loss_fn(model(x_val), y_val).item())
            """,
            fixed="""
            model.train()
            for step, (x, y) in enumerate(loader):  # expect: TL008
                model.train()
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
                if step % 500 == 0:
                    model.eval()
                    with torch.no_grad():
                        print(loss_fn(model(x_val), y_val).item())
            """,
        ),
        # Validation first in the iteration: every epoch trains in eval mode.
        Example(
            """
            for epoch in range(epochs):  # expect: TL008
                model.eval()
                with torch.no_grad():
                    val_acc = accuracy(model, val_loader)
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
            """,
            fixed="""
            for epoch in range(epochs):  # expect: TL008
                model.eval()
                with torch.no_grad():
                    val_acc = accuracy(model, val_loader)
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
            """,
        ),
        # train(False) is eval() too; a class-based trainer with helpers reached through self.
        Example(
            """
            class Trainer:
                def train_epoch(self):
                    for x, y in self.loader:
                        self.opt.zero_grad()
                        self.model(x, y).backward()
                        self.opt.step()

                def validate(self):
                    self.model.train(False)
                    with torch.no_grad():
                        return [self.model(x) for x in self.val_loader]

                def fit(self):
                    for epoch in range(self.epochs):  # expect: TL008
                        self.train_epoch()
                        self.validate()
            """,
            fixed="""
            class Trainer:
                def train_epoch(self):
                    for x, y in self.loader:
                        self.opt.zero_grad()
                        self.model(x, y).backward()
                        self.opt.step()

                def validate(self):
                    self.model.train(False)
                    with torch.no_grad():
                        return [self.model(x) for x in self.val_loader]

                def fit(self):
                    for epoch in range(self.epochs):  # expect: TL008
                        self.model.train()
                        self.train_epoch()
                        self.validate()
            """,
        ),
        # Inside a training function that returns the model after the loop.
        """
        def fit(model, train_loader, val_loader, optimizer, epochs):
            history = []
            for epoch in range(epochs):  # expect: TL008
                for x, y in train_loader:
                    optimizer.zero_grad()
                    F.cross_entropy(model(x), y).backward()
                    optimizer.step()
                model.eval()
                with torch.no_grad():
                    history.append(sum(F.cross_entropy(model(x), y).item() for x, y in val_loader))
            return model, history
        """,
        # A train step helper, eval for sampling in a while loop.
        """
        def train_step(model, batch, optimizer):
            optimizer.zero_grad()
            loss = model(batch)
            loss.backward()
            optimizer.step()
            return loss

        step = 0
        while step < total_steps:  # expect: TL008
            batch = next(data_iter)
            train_step(model, batch, optimizer)
            if step % 1000 == 0:
                model.eval()
                with torch.no_grad():
                    samples = model.sample(16)
            step += 1
        """,
        # Aliased imports and a helper with a decorated no_grad evaluation.
        """
        import torch as T

        @T.no_grad()
        def run_validation(network, loader):
            network.eval()
            return [network(x) for x, _ in loader]

        for epoch in range(n_epochs):  # expect: TL008
            for x, y in loader:
                opt.zero_grad()
                T.nn.functional.cross_entropy(classifier(x), y).backward()
                opt.step()
            run_validation(classifier, val_loader)
        """,
        # A GAN: the generator is switched to eval to draw samples, never back.
        """
        for epoch in range(epochs):  # expect: TL008
            for real in loader:
                opt_d.zero_grad()
                d_loss = criterion(disc(real), ones) + criterion(disc(gen(z).detach()), zeros)
                d_loss.backward()
                opt_d.step()
                opt_g.zero_grad()
                g_loss = criterion(disc(gen(z)), ones)
                g_loss.backward()
                opt_g.step()
            gen.eval()
            with torch.no_grad():
                grid = gen(fixed_noise)
        """,
        # The accelerate loop of a Hugging Face script.
        """
        for epoch in range(num_train_epochs):  # expect: TL008
            for step, batch in enumerate(train_dataloader):
                outputs = model(**batch)
                accelerator.backward(outputs.loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
            model.eval()
            for step, batch in enumerate(eval_dataloader):
                with torch.no_grad():
                    outputs = model(**batch)
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        evals = [m for m in an.mode_calls(ctx) if m.mode == "eval"]
        if not evals or not train.backward or not train.steps:
            return
        checker = _Checker(ctx, train)
        reported: set[int] = set()
        # Innermost loops first: an eval inside a batch loop is fixed in that loop, not the epoch loop.
        for loop in reversed(an.index(ctx).nodes(cst.For, cst.While)):
            for switch, message, fix in checker.check_loop(loop):
                if id(switch) not in reported:
                    reported.add(id(switch))
                    yield self.report(loop, message, fix)


class _Checker:
    def __init__(self, ctx: FileContext, train: an.Training) -> None:
        self.ctx = ctx
        self.idx = an.index(ctx)
        self.imps = an.imports(ctx)
        self.funcs = an.functions(ctx)
        self.train = train
        modes = an.mode_calls(ctx)
        self.evals = {id(m.call): m for m in modes if m.mode == "eval"}
        self.resets = {id(m.call) for m in modes if m.mode in ("train", "either")}
        self.frozen = _frozen_keys(self.idx)
        self._arguments: set[str] | None = None

    def check_loop(self, loop: cst.For | cst.While) -> Iterator[tuple[cst.CSTNode, str, FixSpec | None]]:
        body = loop.body
        if not self.train.events_in(self.train.backward, body, self.funcs):
            return
        if not self.train.events_in(self.train.steps, body, self.funcs):
            return
        contexts = self._contexts(body)
        calls = [(c, call) for c in contexts for call in self._own_calls(c)]
        if any(id(call) in self.resets for _, call in calls):
            return
        evals = [(c, call) for c, call in calls if id(call) in self.evals]
        if not evals:
            return
        used = {
            an.model_key(c.translate(expr) or expr)
            for c in contexts
            if not self._evaluation_function(c.root)
            for expr in an.runs_with_gradients(self.idx, self.imps, c.root)
        }
        fresh = {an.model_key(t) for c in contexts for t in self._call_assigned(c.root)}
        backwards = [(c, b) for c in contexts for b in self.train.backward if self._owned_by(c, b)]
        for context, call in evals:
            reported = context.path[0] if context.path else call
            target = context.translate(self.evals[id(call)].target)
            key = an.model_key(target)
            if key is None or key not in used or key in fresh or _frozen(key, self.frozen):
                continue
            if self._freezes_batchnorm(call, loop) or self._stops_after(reported, loop):
                continue
            after = any(_before(self.idx, (*bc.path, b), (*context.path, call)) for bc, b in backwards)
            if not (after or self._evaluates(call, context)):
                continue
            yield call, self._message(call, reported, target), self._fix(loop, target, after, reported)

    # -- what one iteration runs ------------------------------------------------------

    def _contexts(self, body: cst.CSTNode) -> list[_Context]:
        start = _Context(body)
        found = [start]
        seen = {id(body)}
        stack = [start]
        while stack:
            context = stack.pop()
            if len(context.path) >= MAX_DEPTH:
                continue
            for call in self._own_calls(context):
                # `optimizer.step(closure)` runs the closure, which may run the training step.
                closures = self.funcs.passed_functions(call) if id(call) in self.train.stepped else []
                for func in [*self.funcs.resolve(call), *closures]:
                    if id(func) in seen:
                        continue
                    seen.add(id(func))
                    binding = {
                        name: context.translate(arg) for name, arg in an.bind_arguments(self.funcs, func, call).items()
                    }
                    inner = _Context(func, (*context.path, call), binding)
                    found.append(inner)
                    stack.append(inner)
        return found

    def _own_calls(self, context: _Context) -> list[cst.Call]:
        home = context.root if isinstance(context.root, cst.FunctionDef) else self.idx.scope(context.root)
        return [c for c in self.idx.within(context.root, cst.Call) if self.idx.scope(c) is home]

    def _owned_by(self, context: _Context, node: cst.CSTNode) -> bool:
        home = context.root if isinstance(context.root, cst.FunctionDef) else self.idx.scope(context.root)
        return self.idx.contains(context.root, node) and self.idx.scope(node) is home

    def _call_assigned(self, root: cst.CSTNode) -> list[cst.BaseExpression]:
        """Targets given a new object (`model = Net()`) in `root`: a fresh module starts in train mode."""
        return [
            target.target
            for assign in self.idx.within(root, cst.Assign)
            if isinstance(assign.value, cst.Call)
            for target in assign.targets
        ]

    def _evaluation_function(self, root: cst.CSTNode) -> bool:
        return isinstance(root, cst.FunctionDef) and (
            an.name_says_evaluation(root.name.value) or an.grad_free_decorated(root, self.imps)
        )

    # -- the eval call -------------------------------------------------------------------

    def _freezes_batchnorm(self, call: cst.Call, loop: cst.For | cst.While) -> bool:
        """`m.eval()` on sub-modules in a `train()` override, a `freeze_bn` helper, an
        `apply()` callback or a loop over `model.modules()`. A function that runs the training
        loop itself is the training procedure, whoever calls it (`study.optimize(objective)`)."""
        func = self.idx.enclosing(call, (cst.FunctionDef,))
        if func is not None and (
            "mode" in an.parameter_names(func) or any(t in FREEZER_WORDS for t in an.name_tokens(func.name.value))
        ):
            return True
        target = an.receiver(call)
        name = an.dotted(target) if target is not None else None
        for loop in an.enclosing_loops(self.idx, call):
            if isinstance(loop, cst.For) and name and _binds(loop.target, name):
                return True
        return func is not None and not self.idx.contains(func, loop) and self._passed_as_callback(func)

    def _passed_as_callback(self, func: cst.FunctionDef) -> bool:
        """`func` is handed to a call (`model.apply(set_bn_eval)`) rather than called here."""
        if self._arguments is None:
            self._arguments = {
                arg.value.value for arg in self.idx.nodes(cst.Arg) if isinstance(arg.value, cst.Name)
            }
        return func.name.value in self._arguments

    def _stops_after(self, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        """A `break` of this loop or a `return` follows `node` in its block: no next iteration."""
        current: cst.CSTNode = node
        while current is not loop.body:
            later = [s for s in _following(self.idx, current) if self.idx.contains(loop.body, s)]
            if any(self._exits(s, loop) for s in later):
                return True
            parent = self.idx.parent(current)
            if parent is None or isinstance(parent, cst.FunctionDef):
                return False
            current = parent
        return False

    def _exits(self, statement: cst.CSTNode, loop: cst.For | cst.While) -> bool:
        for exit_ in self.idx.within(statement, cst.Break, cst.Return):
            if self.idx.scope(exit_) is not self.idx.scope(loop):
                continue
            if isinstance(exit_, cst.Return) or next(iter(an.enclosing_loops(self.idx, exit_)), None) is loop:
                return True
        return False

    def _evaluates(self, call: cst.Call, context: _Context) -> bool:
        """The eval call serves an evaluation: it sits in an evaluation function or a
        gradient-free block, or gradient-free code or an evaluation call follows it before
        any training."""
        if an.in_grad_free_block(self.idx, call, self.imps, stop_at_function=False):
            return True
        func = self.idx.enclosing(call, (cst.FunctionDef,))
        if func is not None and func is context.root and self._evaluation_function(func):
            return True
        for statement in _following(self.idx, call):
            if self.train.events_in(self.train.backward, statement, self.funcs):
                return False
            if self._evaluation_code(statement):
                return True
        return False

    def _evaluation_code(self, statement: cst.CSTNode) -> bool:
        for with_ in self.idx.within(statement, cst.With):
            if any(an.is_grad_free_call(item.item, self.imps) for item in with_.items):
                return True
        for call in self.idx.within(statement, cst.Call):
            if an.name_says_evaluation(an.callee_name(call)) or any(
                self._evaluation_function(f) for f in self.funcs.resolve(call)
            ):
                return True
        return False

    # -- reporting -----------------------------------------------------------------------

    def _message(self, call: cst.Call, reported: cst.CSTNode, target: cst.BaseExpression | None) -> str:
        code = self.ctx.module.code_for_node
        model = code(target) if target is not None else code(call.func.value)  # type: ignore[attr-defined]
        switch = f"`{_short(code(call))}`"
        if reported is not call:
            switch = f"`{_short(code(reported))}` calls {switch}, which"
        return (
            f"{switch} puts `{model}` in eval mode inside this training loop and nothing in the loop calls "
            f"`{model}.train()` again: every later iteration trains with dropout off and batch-norm "
            f"statistics frozen; call `{model}.train()` in this loop before the training step"
        )

    def _fix(
        self, loop: cst.For | cst.While, target: cst.BaseExpression | None, after: bool, reported: cst.CSTNode
    ) -> FixSpec | None:
        if target is None or an.dotted(target) is None or not isinstance(loop.body, cst.IndentedBlock):
            return None
        statements = list(loop.body.body)
        if after:
            position = 0
        else:
            top = _top_statement(self.idx, statements, reported)
            trains = [
                i for i, s in enumerate(statements) if self.train.events_in(self.train.backward, s, self.funcs)
            ]
            if top is None or not trains or trains[0] <= top:
                return None
            position = trains[0]
        replacement = an.insert_statement(loop.body, position, f"{an.dotted(target)}.train()")
        if replacement is None:
            return None
        return FixSpec(f"call `{an.dotted(target)}.train()` before the training step", (replacement,))


def _before(idx: an.Index, first: tuple[cst.CSTNode, ...], second: tuple[cst.CSTNode, ...]) -> bool:
    """`first` runs before `second` in one iteration: compare where their call paths part."""
    for a, b in zip(first, second):
        if a is b:
            continue
        return idx.order(a) < idx.order(b) and not idx.contains(a, b)
    return False


def _following(idx: an.Index, node: cst.CSTNode) -> list[cst.BaseStatement]:
    """The statements after the one holding `node`, in the block that holds it."""
    current: cst.CSTNode = node
    for parent in idx.ancestors(node):
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            body = list(parent.body)
            return body[body.index(current) + 1 :]  # type: ignore[arg-type]
        current = parent
    return []


def _top_statement(idx: an.Index, statements: list[cst.BaseStatement], node: cst.CSTNode) -> int | None:
    for i, statement in enumerate(statements):
        if idx.contains(statement, node):
            return i
    return None


def _binds(target: cst.BaseExpression, name: str) -> bool:
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(_binds(e.value, name) for e in target.elements)
    return an.dotted(target) == name


def _short(code: str, limit: int = 40) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."


def _frozen(key: str, frozen: set[str]) -> bool:
    return key in frozen or any(t in FROZEN_WORDS for t in an.name_tokens(key))


def _frozen_keys(idx: an.Index) -> set[str]:
    """Networks frozen in this file: `net.requires_grad_(False)`, or `p.requires_grad = False`
    in a loop over `net.parameters()`."""
    frozen: set[str] = set()
    for call in idx.nodes(cst.Call):
        if an.method_name(call) == "requires_grad_" and call.args and an.is_false(call.args[0].value):
            key = an.model_key(an.receiver(call))
            if key:
                frozen.add(key)
    for assign in idx.nodes(cst.Assign):
        if not (an.is_false(assign.value) and any(an.last_name(t.target) == "requires_grad" for t in assign.targets)):
            continue
        for loop in an.enclosing_loops(idx, assign):
            if isinstance(loop, cst.For) and isinstance(loop.iter, cst.Call):
                key = an.model_key(an.receiver(loop.iter))
                if key:
                    frozen.add(key)
    return frozen
