from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm


class EvalModeNeverReset(Rule):
    """
    ## What it does
    Finds training loops (epoch loops, or batch loops with periodic validation) that put the
    model in evaluation mode with `model.eval()`, directly, through a local `evaluate()` /
    `validate()` helper, or through a function of another module of the project that is
    given the model and leaves it in eval mode, but never call `model.train()` (or `model.train(True)`) again before
    the next training step of the same model. A model wrapper of the project (a plain class
    holding the networks) counts with its own switches and steps: `model.val_start()` whose
    definition calls `self.encoder.eval()`, `model.train_emb(x)` that back-propagates and
    steps; the message and the fix then name its train switch (`model.train_start()`). The
    finding points at the loop, where `model.train()` belongs.

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
    # Or a word of an evaluation helper's name: another module's `evaluate(model)` may switch.
    # Or "train" for "backward" and ".step(": a training step of another module (`model.train_step(x)`).
    TRIGGERS = (("eval", ".train(", "valid", "test"), ("backward", "train"), (".step(", "train"))
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
        if not (train.backward and train.steps) and sm.any_call_has(ctx, an.index(ctx).nodes(cst.Call), "steps") is None:
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
        self.iterations = an.iterations(ctx)
        self.evaluations = an.training_evaluations(ctx)
        modes = an.mode_calls(ctx)
        self.evals = {id(m.call): m for m in modes if m.mode == "eval"}
        self.resets = {id(m.call) for m in modes if m.mode in ("train", "either")}

    def check_loop(self, loop: cst.For | cst.While) -> Iterator[tuple[cst.CSTNode, str, FixSpec | None]]:
        body = loop.body
        parts = self.iterations.parts(body, self.train.stepped)
        # A training step in another module: `model.train_emb(x)` of a wrapper class.
        project_steps = [(p, step) for p in parts for step in self.iterations.project_steps(p)]
        trains_here = self.train.events_in(self.train.backward, body, self.funcs) and self.train.events_in(
            self.train.steps, body, self.funcs
        )
        if not (trains_here or project_steps):
            return
        calls = [(p, call) for p in parts for call in self.iterations.own_calls(p)]
        if any(id(call) in self.resets for _, call in calls):
            return
        # Calls of project functions (another module's `evaluate(model, loader)`) switch
        # the models passed to them as their summaries say.
        left = [(p, call, m) for p, call in calls for m in sm.modes_left(self.ctx, call)]
        if any(m.mode != "eval" for *_, m in left) or sm.any_call_has(self.ctx, (c for _, c in calls), "sets_train"):
            return
        evals = [(p, call, self.evals[id(call)].target, "eval") for p, call in calls if id(call) in self.evals]
        evals += [(p, call, m.argument, m.switch) for p, call, m in left]
        # A wrapper's own switch called in the loop: `model.val_start()`.
        evals += [
            (p, call, call.func.value, call.func.attr.value)
            for p, call in calls
            if isinstance(call.func, cst.Attribute) and sm.object_mode_left(self.ctx, call) == "eval"
        ]
        if not evals:
            return
        used = {
            an.model_key(p.translate(expr) or expr)
            for p in parts
            if not self.evaluations.is_evaluation_function(p.root)
            for expr in an.runs_with_gradients(self.idx, self.imps, p.root)
        }
        used |= {
            an.model_key(p.translate(expr) or expr) for p, step in project_steps for expr in sm.trained_by(self.ctx, step)
        }
        fresh = {an.model_key(t) for p in parts for t in self._call_assigned(p.root)}
        backwards = [(p, b) for p in parts for b in self.train.backward if self.iterations.owns(p, b)]
        backwards += project_steps
        for part, call, switched, switch in evals:
            reported = part.path[0] if part.path else call
            target = part.translate(switched)
            key = an.model_key(target)
            if key is None or key not in used or key in fresh or self.evaluations.freezing.kept_frozen(key):
                continue
            if self.evaluations.freezes_layers(call, loop) or self.iterations.stops_after(reported, loop):
                continue
            after = any(self.iterations.before((*bp.path, b), (*part.path, call)) for bp, b in backwards)
            if not (after or self.evaluations.serves_evaluation(call, part.root)):
                continue
            resume = sm.train_switch(self.ctx, target) if target is not None else "train"
            yield call, self._message(call, reported, target, switch, resume), self._fix(loop, target, after, reported, resume)

    def _call_assigned(self, root: cst.CSTNode) -> list[cst.BaseExpression]:
        """Targets given a new object (`model = Net()`) in `root`: a fresh module starts in train mode."""
        return [
            target.target
            for assign in self.idx.within(root, cst.Assign)
            if isinstance(assign.value, cst.Call)
            for target in assign.targets
        ]

    def _message(
        self, call: cst.Call, reported: cst.CSTNode, target: cst.BaseExpression | None, switch: str, resume: str | None
    ) -> str:
        code = self.ctx.module.code_for_node
        model = code(target) if target is not None else code(call.func.value)  # type: ignore[attr-defined]
        switched = f"`{_short(code(call))}`"
        if code(call) != f"{model}.{switch}()":
            switched = f"`{_short(code(call))}` calls `{model}.{switch}()`, which"
        elif reported is not call:
            switched = f"`{_short(code(reported))}` calls {switched}, which"
        again = f"calls `{model}.{resume}()` again" if resume else "puts it back in train mode"
        fix = f"call `{model}.{resume}()`" if resume else "switch it back to train mode"
        return (
            f"{switched} puts `{model}` in eval mode inside this training loop and nothing in the loop {again}: "
            f"every later iteration trains with dropout off and batch-norm statistics frozen; "
            f"{fix} in this loop before the training step"
        )

    def _fix(
        self, loop: cst.For | cst.While, target: cst.BaseExpression | None, after: bool, reported: cst.CSTNode,
        resume: str | None,
    ) -> FixSpec | None:
        if target is None or an.dotted(target) is None or resume is None or not isinstance(loop.body, cst.IndentedBlock):
            return None
        statements = list(loop.body.body)
        if after:
            position = 0
        else:
            top = next((i for i, s in enumerate(statements) if self.idx.contains(s, reported)), None)
            trains = [
                i for i, s in enumerate(statements) if self.train.events_in(self.train.backward, s, self.funcs)
            ]
            if top is None or not trains or trains[0] <= top:
                return None
            position = trains[0]
        replacement = an.insert_statement(loop.body, position, f"{an.dotted(target)}.{resume}()")
        if replacement is None:
            return None
        return FixSpec(f"call `{an.dotted(target)}.{resume}()` before the training step", (replacement,))


def _short(code: str, limit: int = 40) -> str:
    code = " ".join(code.split())
    return code if len(code) <= limit else code[: limit - 3] + "..."
