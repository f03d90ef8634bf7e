from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.finding import Severity
from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules import _analysis as an
from torchlint.rules import _summaries as sm

class MissingEvalMode(Rule):
    """
    ## What it does
    Finds evaluation functions (named like `evaluate`, `validate`, `val_epoch`, `test`,
    `eval_*` or `inference`, or of any name whose own loop iterates validation or test data:
    `for sample in test_loader:`) that run a model under `torch.no_grad()` /
    `torch.inference_mode()` (or are decorated with them) without ever putting it in
    evaluation mode, while the same file trains that model and no caller of the function
    calls `model.eval()` before it. Also finds the same evaluation written inline: a
    gradient-free loop over validation or test data inside a training loop that never calls
    `model.eval()`, or beside one in the same code (a final test after training, an
    `if args.eval_only:` branch) that never calls it; and a batch drawn from validation or
    test data inside such a training loop (`xb, yb = next(iter(val_loader))` every N steps)
    that the model runs without gradients or without back-propagating it. And a call of
    another module's evaluation function (or of an evaluation method that the class
    inherits from a base class of another module, `self.validate()`) that runs the model
    without gradients and never switches its mode, where the calling code trains the model
    and has not called `model.eval()` before it. The finding points at the function (the
    evaluation block or drawn batch, or the call of the other module's function), where
    `model.eval()` belongs. And a function that runs the model for every phase but trains
    only for one (`if phase == "train": loss.backward()`, or a `train` flag), which leaves
    the model in train mode for the others: it calls `model.train()` itself, or the calls
    in sight pass another phase (`for phase in ["train", "valid"]: run(model, batch,
    phase)`) and switch nothing to eval mode.

    ## Why is this bad?
    `no_grad()` only turns off gradient tracking; it does not change how layers behave.
    Without `model.eval()`, dropout still drops activations at random and batch-norm
    normalizes with the statistics of the evaluation batch (and updates its running
    statistics with evaluation data). Validation scores come out noisy and too low, depend
    on the batch size, and the model selected on them is not the best one.

    ## Example
    ```python
    def evaluate(model, loader):
        correct = 0
        with torch.no_grad():
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
        return correct / len(loader.dataset)
    ```

    ## Use instead
    ```python
    def evaluate(model, loader):
        model.eval()
        correct = 0
        with torch.no_grad():
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
        return correct / len(loader.dataset)
    ```
    and call `model.train()` again before the next training step.

    Not reported: a caller that calls `model.eval()` before calling the function, methods
    of Lightning modules and Hugging Face trainers (the framework switches modes), and
    models the function builds or loads itself.

    ## Fix safety
    The fix inserts `model.eval()` at the start of the function. It is unsafe: if the
    training loop relies on the model still being in train mode after the evaluation (it
    never calls `model.train()`), the fix makes the training run in eval mode; check that
    the loop calls `model.train()` before training resumes.

    ## Runtime confirmation
    `torchlint probe` confirms it when a model with dropout or batch-norm layers that an
    optimizer has trained runs forward with gradients disabled while in training mode.

    ## References
    - https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval
    - https://pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation
    """

    CODE = "TL009"
    NAME = "missing-eval-mode"
    SUMMARY = "Evaluation under no_grad runs a trained model that is never put in eval mode"
    SEVERITY = Severity.WARNING
    TRIGGERS = (
        ("grad", "Grad", "GRAD", "nference", "NFERENCE"),
        ("backward",),
        (".step(",),
        ("val", "Val", "VAL", "test", "Test", "TEST", "nference", "NFERENCE"),
    )
    CONFIRMED_BY = ("TL009",)

    VALID = [
        # One step function for both phases that sets the mode from the phase.
        """
        def run(model, batch, phase):
            model.train(phase == "train")
            loss = criterion(model(batch.x), batch.y)
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return loss.item()

        for epoch in range(10):
            for phase in ["train", "valid"]:
                for batch in loaders[phase]:
                    run(model, batch, phase)
        """,
        # A function of any name whose loop runs the network over training data.
        """
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(16, 32), nn.Dropout(0.5), nn.Linear(32, 4))

        def sample_output():
            for i, sample in enumerate(train_loader):
                return sample["image"], net(sample["image"])

        for epoch in range(5):
            for batch in train_loader:
                optimizer.zero_grad()
                criterion(net(batch["image"]), batch["keypoints"]).backward()
                optimizer.step()
        images, outputs = sample_output()
        """,
        # a torch.nn model without dropout or normalization: eval mode changes nothing
        """
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        for epoch in range(5):
            for x, y in loader:
                optimizer.zero_grad()
                nn.functional.cross_entropy(model(x), y).backward()
                optimizer.step()
        with torch.no_grad():
            for x, y in test_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        """,
        """
        import torch

        for epoch in range(10):
            model.train()
            for x, y in loader:
                opt.zero_grad()
                model(x, y).backward()
                opt.step()
        model.eval()
        with torch.no_grad():
            for x, y in test_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        """,
        # An inline evaluation loop after model.eval().
        """
        for epoch in range(epochs):
            model.train()
            for x, y in train_loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for x, y in val_loader:
                    val_loss += loss_fn(model(x), y).item()
        """,
        # Training-set statistics under no_grad, over training data: not an evaluation pass.
        """
        for epoch in range(epochs):
            for x, y in train_loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            with torch.no_grad():
                for v in values:
                    stats.append(model(v))
        """,
        # The function puts the model in eval mode.
        """
        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                return [model(x) for x in loader]

        for epoch in range(epochs):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            evaluate(model, val_loader)
        """,
        # The caller puts the model in eval mode before calling it.
        """
        @torch.no_grad()
        def validate(model, loader):
            return sum(loss_fn(model(x), y).item() for x, y in loader)

        def main():
            for epoch in range(epochs):
                model.train()
                for x, y in loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                model.eval()
                validate(model, val_loader)
        """,
        # train(False) in the function, through a helper of the same module.
        """
        def set_mode(model, training):
            model.train(training)

        def test(model, loader):
            set_mode(model, False)
            with torch.inference_mode():
                return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        test(model, test_loader)
        """,
        # Not under no_grad: not the evaluation pass this rule is about.
        """
        def validate(model, loader):
            return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        validate(model, val_loader)
        """,
        # The file never trains the model (an inference script).
        """
        model = load_model("ckpt.pt")

        def inference(model, images):
            with torch.no_grad():
                return model(images)

        print(inference(model, batch))
        """,
        # Lightning runs validation hooks in eval mode.
        """
        import lightning as L

        class LitModel(L.LightningModule):
            def validation_step(self, batch, batch_idx):
                with torch.no_grad():
                    return self.net(batch)

            def training_step(self, batch, batch_idx):
                loss = self.net(batch).mean()
                loss.backward()
                self.optimizers().step()
                return loss
        """,
        # The function builds its own fresh model to check shapes.
        """
        def test_forward():
            model = Net()
            with torch.no_grad():
                assert model(torch.zeros(1, 3)).shape == (1, 10)

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        test_forward()
        """,
        # An evaluation function nobody in this file calls: its caller decides the mode.
        """
        def evaluate(model, loader):
            with torch.no_grad():
                return [model(x) for x in loader]

        def train(model, loader, optimizer):
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
        """,
        # A metric helper under no_grad is not a model.
        """
        def val_accuracy(logits, labels):
            with torch.no_grad():
                return (logits.argmax(-1) == labels).float().mean()

        for x, y in loader:
            optimizer.zero_grad()
            out = model(x)
            loss_fn(out, y).backward()
            optimizer.step()
            acc = val_accuracy(out, y)
        """,
        # The caller of the caller puts the model in eval mode.
        """
        @torch.no_grad()
        def evaluate_batch(model, batch):
            return model(batch)

        def run_eval(model, loader):
            return [evaluate_batch(model, b) for b in loader]

        def main():
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            model.eval()
            run_eval(model, val_loader)
        """,
        # The caller puts the model in eval mode right before the call, at module level.
        """
        def test(model, loader):
            with torch.no_grad():
                return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        model.eval()
        print(test(model, test_loader))
        """,
        # A method of the model itself (the caller owns the mode).
        """
        class Net(nn.Module):
            def inference(self, x):
                with torch.no_grad():
                    return self(x)

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(net(x), y).backward()
            optimizer.step()
        """,
        # A network of this file with no layer that eval mode changes (a sub-pixel
        # super-resolution net): `eval()` would change nothing.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, upscale):
                super().__init__()
                self.conv1 = nn.Conv2d(1, 64, 5, padding=2)
                self.conv2 = nn.Conv2d(64, upscale ** 2, 3, padding=1)
                self.shuffle = nn.PixelShuffle(upscale)

            def forward(self, x):
                return self.shuffle(self.conv2(torch.relu(self.conv1(x))))

        model = Net(3).to(device)
        def test():
            with torch.no_grad():
                for x, y in test_loader:
                    psnr(model(x.to(device)), y)

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x.to(device)), y.to(device)).backward()
                optimizer.step()
            test()
        """,
        # A network of this file without mode-dependent layers (a comment that names
        # dropout is not a layer), wrapped in DataParallel: eval() would change nothing.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            # No dropout or batch norm: train() and eval() compute the same.
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 128)
                self.fc2 = nn.Linear(128, 10)

            def forward(self, x):
                return self.fc2(torch.relu(self.fc1(x)))

        def test_accuracy(net, loader):
            with torch.no_grad():
                return sum((net(x).argmax(1) == y).sum().item() for x, y in loader)

        def train(loader, val_loader):
            net = Net()
            net = nn.DataParallel(net)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for epoch in range(3):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(net(x), y).backward()
                    opt.step()
                print(test_accuracy(net, val_loader))
        """,
        # A network of this file built with dropout 0: eval() would change nothing.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self, p_drop=0.5):
                super().__init__()
                self.fc = nn.Linear(16, 4)
                self.drop = nn.Dropout(p_drop)

            def forward(self, x):
                return self.drop(self.fc(x))

        model = Net(p_drop=0.0)
        def test():
            with torch.no_grad():
                return [model(x) for x in test_loader]

        for epoch in range(3):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            test()
        """,
        # A periodic validation batch between model.eval() and model.train().
        """
        import torch
        for step, (x, y) in enumerate(train_loader):
            net.train()
            optimizer.zero_grad()
            criterion(net(x), y).backward()
            optimizer.step()
            if step % 50 == 0:
                net.eval()
                xb, yb = next(iter(valid_loader))
                print(criterion(net(xb), yb).item())
        """,
        # A periodic validation batch through a network that eval mode does not change.
        """
        import torch
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 2))
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            criterion(net(x), y).backward()
            optimizer.step()
            if step % 50 == 0:
                xb, yb = next(iter(valid_loader))
                print(criterion(net(xb), yb).item())
        """,
        # A batch drawn from a held-out set that the loop back-propagates (meta-learning on
        # it, not an evaluation), and one drawn from the training data.
        """
        import torch
        heldout_iter = iter(dev_loader)
        for x, y in train_loader:
            optimizer.zero_grad()
            criterion(net(x), y).backward()
            optimizer.step()
            if use_meta:
                xm, ym = next(heldout_iter)
                xd, yd = next(iter(dev_loader))
                meta_opt.zero_grad()
                criterion(net(xd), yd).backward()
                meta_opt.step()
            extra_x, _ = next(iter(train_loader))
            stats.update(net(extra_x))
        """,
    ]

    INVALID = [
        # One step function for both phases: it trains only for "train", but the model
        # stays in train mode for "valid" too.
        """
        def run(model, batch, phase):
            model.train()
            loss = criterion(model(batch.x), batch.y)  # expect: TL009
            if phase == "train":
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            return loss.item()

        for epoch in range(10):
            for phase in ["train", "valid"]:
                for batch in loaders[phase]:
                    run(model, batch, phase)
        """,
        # A function of any name whose loop runs the trained network over test data.
        """
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(16, 32), nn.Dropout(0.5), nn.Linear(32, 4))

        def sample_output():  # expect: TL009
            for i, sample in enumerate(test_loader):
                out = net(sample["image"])
                if i == 0:
                    return sample["image"], out

        for epoch in range(5):
            for batch in train_loader:
                optimizer.zero_grad()
                criterion(net(batch["image"]), batch["keypoints"]).backward()
                optimizer.step()
        images, outputs = sample_output()
        """,
        # Code from before `torch.no_grad()`: the test pass back-propagates nothing, in train mode.
        """
        import torch
        for epoch in range(10):
            model.train()
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            for x, y in test_loader:  # expect: TL009
                print(model(x).argmax(1))
        """,
        # Every N steps a validation batch goes through the network still in training mode.
        """
        import torch
        for step, (x, y) in enumerate(train_loader):
            optimizer.zero_grad()
            criterion(net(x), y).backward()
            optimizer.step()
            if step % 50 == 0:
                xb, yb = next(iter(valid_loader))  # expect: TL009
                print(criterion(net(xb), yb).item())
        """,
        # The final test after training, and an evaluation-only branch, in train mode.
        """
        import torch

        def main(args, model, loader, test_loader, opt):
            if args.eval_only:
                with torch.no_grad():  # expect: TL009
                    for x, y in test_loader:
                        print(model(x))
                return
            for epoch in range(10):
                for x, y in loader:
                    opt.zero_grad()
                    model(x, y).backward()
                    opt.step()
        """,
        """
        import torch

        for epoch in range(10):
            for x, y in loader:
                opt.zero_grad()
                model(x, y).backward()
                opt.step()
        with torch.no_grad():  # expect: TL009
            for x, y in test_loader:
                correct += (model(x).argmax(1) == y).sum().item()
        """,
        # An evaluation loop written inside the epoch loop.
        Example(
            """
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                val_loss = 0.0
                with torch.no_grad():  # expect: TL009
                    for x, y in val_loader:
                        val_loss += loss_fn(model(x), y).item()
            """,
            fixed="""
            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                val_loss = 0.0
                model.eval()
                with torch.no_grad():  # expect: TL009
                    for x, y in val_loader:
                        val_loss += loss_fn(model(x), y).item()
            """,
        ),
        Example(
            """
            def evaluate(model, loader):  # expect: TL009
                correct = 0
                with torch.no_grad():
                    for x, y in loader:
                        correct += (model(x).argmax(1) == y).sum().item()
                return correct / len(loader.dataset)

            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                acc = evaluate(model, val_loader)
            """,
            fixed="""
            def evaluate(model, loader):  # expect: TL009
                model.eval()
                correct = 0
                with torch.no_grad():
                    for x, y in loader:
                        correct += (model(x).argmax(1) == y).sum().item()
                return correct / len(loader.dataset)

            for epoch in range(epochs):
                model.train()
                for x, y in train_loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                acc = evaluate(model, val_loader)
            """,
        ),
        # Decorated with no_grad, with a docstring; the fix goes after it.
        Example(
            '''
            @torch.no_grad()
            def validate(net, loader):  # expect: TL009
                """Mean validation loss."""
                losses = [criterion(net(x), y).item() for x, y in loader]
                return sum(losses) / len(losses)

            def main():
                for epoch in range(10):
                    net.train()
                    for x, y in loader:
                        opt.zero_grad()
                        criterion(net(x), y).backward()
                        opt.step()
                    print(validate(net, val_loader))
            ''',
            fixed='''
            @torch.no_grad()
            def validate(net, loader):  # expect: TL009
                """Mean validation loss."""
                net.eval()
                losses = [criterion(net(x), y).item() for x, y in loader]
                return sum(losses) / len(losses)

            def main():
                for epoch in range(10):
                    net.train()
                    for x, y in loader:
                        opt.zero_grad()
                        criterion(net(x), y).backward()
                        opt.step()
                    print(validate(net, val_loader))
            ''',
        ),
        # inference_mode and an aliased import.
        """
        import torch as T

        def test(model, loader):  # expect: TL009
            with T.inference_mode():
                return [model(x) for x, _ in loader]

        for x, y in train_loader:
            optimizer.zero_grad()
            T.nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
        test(model, test_loader)
        """,
        # from torch import no_grad; the model under another name at the call site.
        """
        from torch import no_grad

        def run_validation(model, batches):  # expect: TL009
            with no_grad():
                outs = [model(b) for b in batches]
            return outs

        for epoch in range(3):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(classifier(x), y).backward()
                optimizer.step()
            run_validation(classifier, val_batches)
        """,
        # A method of a trainer class; model reached through self.
        """
        class Trainer:
            def train_epoch(self):
                self.model.train()
                for x, y in self.loader:
                    self.optimizer.zero_grad()
                    self.loss_fn(self.model(x), y).backward()
                    self.optimizer.step()

            @torch.no_grad()
            def validate(self):  # expect: TL009
                return [self.model(x) for x, _ in self.val_loader]

            def fit(self):
                for epoch in range(self.epochs):
                    self.train_epoch()
                    self.validate()
        """,
        # The caller does not put the model in eval mode either (it only calls train()).
        """
        def eval_epoch(model, loader, device):  # expect: TL009
            total = 0.0
            with torch.no_grad():
                for batch in loader:
                    batch = {k: v.to(device) for k, v in batch.items()}
                    total += model(**batch).loss.item()
            return total

        def main():
            for epoch in range(epochs):
                model.train()
                for batch in train_loader:
                    loss = model(**batch).loss
                    loss.backward()
                    optimizer.step()
                    optimizer.zero_grad()
                eval_epoch(model, val_loader, device)
        """,
        # The model runs through a forward helper shared with training (pytorch-3dunet #53).
        """
        class UNet3DTrainer:
            def train(self, train_loader):
                self.model.train()
                for i, (input, target) in enumerate(train_loader):
                    output, loss = self._forward_pass(input, target)
                    self.optimizer.zero_grad()
                    loss.backward()
                    self.optimizer.step()
                    if i % self.validate_after_iters == 0:
                        self.validate(self.loaders["val"])

            def validate(self, val_loader):  # expect: TL009
                try:
                    with torch.no_grad():
                        for input, target in val_loader:
                            output, loss = self._forward_pass(input, target)
                finally:
                    self.model.train()

            def _forward_pass(self, input, target):
                output = self.model(input)
                return output, self.loss_criterion(output, target)
        """,
        # An eval() only after the call (for saving) does not help the evaluation before it.
        """
        def test(model, loader):  # expect: TL009
            with torch.no_grad():
                return [model(x) for x in loader]

        for x, y in loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        print(test(model, test_loader))
        model.eval()
        torch.jit.script(model).save("model.pt")
        """,
        # The forward method spelled out.
        """
        def inference(model, images):  # expect: TL009
            with torch.no_grad():
                return model.forward(images).softmax(-1)

        for images, labels in loader:
            optimizer.zero_grad()
            loss_fn(model(images), labels).backward()
            optimizer.step()
        predictions = inference(model, test_images)
        """,
        # set_grad_enabled(False) as the gradient-free block.
        """
        def valid(model, loader):  # expect: TL009
            with torch.set_grad_enabled(False):
                return [model(x) for x in loader]

        for epoch in range(epochs):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                loss_fn(model(x), y).backward()
                optimizer.step()
            valid(model, val_loader)
        """,
        # A nested evaluation closure inside the training function.
        """
        def train(model, loader, val_loader, optimizer):
            @torch.no_grad()
            def evaluate():  # expect: TL009
                return sum(loss_fn(model(x), y).item() for x, y in val_loader)

            for epoch in range(10):
                model.train()
                for x, y in loader:
                    optimizer.zero_grad()
                    loss_fn(model(x), y).backward()
                    optimizer.step()
                print(evaluate())
        """,
        # The same loop with a network of this file that has dropout.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(784, 128)
                self.drop = nn.Dropout(0.5)
                self.fc2 = nn.Linear(128, 10)

            def forward(self, x):
                return self.fc2(self.drop(torch.relu(self.fc1(x))))

        model = Net().cuda()
        def test():  # expect: TL009
            with torch.no_grad():
                for x, y in test_loader:
                    accuracy(model(x.cuda()), y)

        for epoch in range(10):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x.cuda()), y.cuda()).backward()
                optimizer.step()
            test()
        """,
        # DataParallel does not hide the dropout of the network it wraps.
        """
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Sequential(nn.Linear(784, 128), nn.Dropout(0.2), nn.Linear(128, 10))

            def forward(self, x):
                return self.fc(x)

        def test_accuracy(net, loader):  # expect: TL009
            with torch.no_grad():
                return sum((net(x).argmax(1) == y).sum().item() for x, y in loader)

        def train(loader, val_loader):
            net = Net()
            net = nn.DataParallel(net)
            opt = torch.optim.SGD(net.parameters(), lr=0.1)
            for epoch in range(3):
                for x, y in loader:
                    opt.zero_grad()
                    torch.nn.functional.cross_entropy(net(x), y).backward()
                    opt.step()
                print(test_accuracy(net, val_loader))
        """,
    ]

    def check(self, ctx: FileContext) -> Iterator[Report]:
        train = an.training(ctx)
        if not train.backward or not train.steps:
            return
        yield from self._phase_steps(ctx)
        if not an.trained_models(ctx):
            return
        finder = _Finder(ctx, train)
        test_file = an.is_test_file(ctx)
        for func in finder.funcs.all:
            if not (_evaluation_name(func.name.value, test_file) or finder.loops_over_evaluation_data(func)):
                continue
            found = finder.unmoded_model_call(func)
            if found is None or not finder.switches.callers_leave_train_mode(func):
                continue
            call, model = found
            if an.mode_free(ctx, an.model_key(model)):
                continue
            # Reported on the function's name: the function is what needs `model.eval()`.
            yield self.report(func.name, finder.message(func, call, model), finder.fix(func, model))
        reported: set[int] = set()
        for unmoded in an.training_evaluations(ctx).unmoded_evaluations():
            if an.mode_free(ctx, an.model_key(an.called_module(unmoded.call))):
                continue
            evaluation = an.grad_free_statement(finder.idx, finder.imps, unmoded.node)
            if id(evaluation) not in reported:  # a validation loop inside nested training loops
                reported.add(id(evaluation))
                fix = finder.inline_fix(evaluation, unmoded.call) if isinstance(unmoded.node, cst.For) else None
                yield self.report(evaluation, finder.inline_message(unmoded), fix)
        for call, model in finder.project_evaluations():
            inherited_at = call if (an.dotted(model) or "").startswith("self.") else None
            if not an.mode_free(ctx, an.model_key(model), inherited_at):
                yield self.report(call, finder.project_message(call, model))


    def _phase_steps(self, ctx: FileContext) -> Iterator[Report]:
        """A function that back-propagates only for the training phase and runs the model in
        train mode for the others too."""
        funcs = an.functions(ctx)
        imps = an.imports(ctx)
        for step in an.phase_steps(ctx):
            key = an.model_key(step.model)
            if an.mode_owned_elsewhere(funcs, imps, step.func) or an.mode_free(ctx, key):
                continue
            if not an.runs_in_train_mode(ctx, step):
                continue
            code = ctx.module.code_for_node
            model, name, param = code(step.model), step.func.name.value, step.param
            phase = f"`{param}` = {step.other_phase}" if step.other_phase else "its other phases"
            yield self.report(
                step.forward,
                f"`{name}()` back-propagates only when `{param}` selects training but runs `{model}` in train mode "
                f"for {phase} too: dropout stays active and batch-norm uses batch statistics and updates its "
                f"running averages with that data; call `{model}.eval()` when the phase does not train (or "
                f"`{model}.train({param} == 'train')`)",
            )


def _evaluation_name(name: str, test_file: bool) -> bool:
    """Named like an evaluation; in test files `test_*` names are tests, not test passes."""
    tokens = set(an.name_tokens(name))
    if test_file:
        tokens -= {"test", "testing"}
    return an.name_says_evaluation("_".join(tokens))


class _Finder:
    def __init__(self, ctx: FileContext, train: an.Training) -> None:
        self.ctx = ctx
        self.idx = an.index(ctx)
        self.imps = an.imports(ctx)
        self.funcs = an.functions(ctx)
        self.train = train
        self.switches = an.eval_switches(ctx)
        self.trained = an.trained_models(ctx)

    # -- the evaluation function ------------------------------------------------------------

    def unmoded_model_call(self, func: cst.FunctionDef) -> tuple[cst.Call, cst.BaseExpression] | None:
        """The first trained model that `func` runs without gradients (itself, or through a local
        helper such as `self._forward_pass(x)`) and never puts in eval mode: the call in `func`
        and the model as `func` spells it."""
        if an.mode_owned_elsewhere(self.funcs, self.imps, func) or self.train.events_in(self.train.backward, func, self.funcs):
            return None
        if self.switches.reaches_eval(func):
            return None
        local = {an.model_key(t.target) for a in self.idx.within(func, cst.Assign) for t in a.targets}
        for call in self.idx.within(func, cst.Call):
            scope = self.idx.scope(call)
            if scope is not func and not (isinstance(scope, cst.Lambda) and self.idx.scope(scope) is func):
                continue
            # With gradients on, a pass over data that back-propagates nothing evaluates too.
            if not (self._grad_free(func, call) or self._in_own_loop(call, func)):
                continue
            for model in an.models_run_by(self.ctx, call):
                key = an.model_key(model)
                if key is None or not an.looks_like_model(key) or key in local:
                    continue
                if self._is_trained(key, model, func):
                    return call, model
        return None

    def loops_over_evaluation_data(self, func: cst.FunctionDef) -> bool:
        """A loop of `func` itself iterates validation or test data (`for sample in
        test_loader:` in `net_sample_output()`): an evaluation whatever its name."""
        return any(
            self.idx.scope(loop) is func and an.says_evaluation_data(an.last_name(an.unwrap_iterable(loop.iter)))
            for loop in self.idx.within(func, cst.For)
        )

    def _in_own_loop(self, call: cst.Call, func: cst.FunctionDef) -> bool:
        return any(self.idx.contains(func, loop) for loop in an.enclosing_loops(self.idx, call))

    def _is_trained(self, key: str, model: cst.BaseExpression, func: cst.FunctionDef) -> bool:
        if key in self.trained:
            return True
        if not (isinstance(model, cst.Name) and model.value in an.parameter_names(func)):
            return False
        for site in self.funcs.call_sites(func):
            bound = an.bind_arguments(self.funcs, func, site).get(model.value)
            if bound is not None and an.model_key(bound) in self.trained:
                return True
        return False

    # -- an evaluation function of another module ----------------------------------------

    def project_evaluations(self) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
        """Calls of another module's evaluation function that runs a model trained here without
        gradients and never switches its mode, where the calling code has not switched it."""
        for call in self.idx.nodes(cst.Call):
            caller = self.idx.scope(call)
            if isinstance(caller, cst.FunctionDef) and _evaluation_name(caller.name.value, False):
                continue  # its own callers may switch
            for model in sm.evaluates_in_train_mode(self.ctx, call):
                key = an.model_key(model)
                if key in self.trained and an.looks_like_model(key) and not self.switches.eval_before(call, caller):
                    yield call, model
                    break

    def project_message(self, call: cst.Call, model_expr: cst.BaseExpression) -> str:
        code = self.ctx.module.code_for_node
        model, helper = code(model_expr), code(call.func)
        return (
            f"`{helper}()` runs `{model}` without gradients but never calls `{model}.eval()`, and neither "
            f"does this code before calling it: dropout stays active and batch-norm uses batch statistics "
            f"during evaluation; call `{model}.eval()` before `{helper}()` (or at its start) and "
            f"`{model}.train()` before training resumes"
        )

    # -- reporting ---------------------------------------------------------------------------

    def inline_message(self, found: an.UnmodedEvaluation) -> str:
        model = self.ctx.module.code_for_node(an.called_module(found.call))  # type: ignore[arg-type]
        data = self.ctx.module.code_for_node(found.data)
        where = "in this training loop" if found.in_training else "in this code, which trains it"
        if not found.grad_free and isinstance(found.node, cst.For):
            return (
                f"the evaluation over `{data}` runs `{model}` (and back-propagates nothing) but `{model}` is never "
                f"put in eval mode {where}: dropout stays active and batch-norm uses batch statistics and moves its "
                f"running averages with this data; call `{model}.eval()` before the evaluation and `{model}.train()` "
                f"before training resumes"
            )
        if not found.grad_free:
            return (
                f"the batch drawn from `{data}` runs `{model}` while `{model}` is never put in eval mode {where}: "
                f"dropout stays active and batch-norm uses batch statistics and moves its running averages with "
                f"this data; call `{model}.eval()` before it and `{model}.train()` before training resumes"
            )
        return (
            f"the evaluation over `{data}` runs `{model}` without gradients but `{model}` is never put in "
            f"eval mode {where}: dropout stays active and batch-norm uses batch statistics; "
            f"call `{model}.eval()` before the evaluation and `{model}.train()` before training resumes"
        )

    def inline_fix(self, statement: cst.CSTNode, call: cst.Call) -> FixSpec | None:
        model = an.dotted(an.called_module(call))  # type: ignore[arg-type]
        replacement = an.insert_before(self.idx, statement, f"{model}.eval()") if model is not None else None
        if replacement is None:
            return None
        return FixSpec(f"call `{model}.eval()` before the evaluation loop", (replacement,), safe=False)

    def message(self, func: cst.FunctionDef, call: cst.Call, model_expr: cst.BaseExpression) -> str:
        code = self.ctx.module.code_for_node
        model = code(model_expr)
        through = "" if an.called_module(call) is model_expr else f" (through `{code(call.func)}()`)"
        name = func.name.value
        how = "without gradients" if self._grad_free(func, call) else "over its data (and back-propagates nothing)"
        return (
            f"`{name}()` runs `{model}`{through} {how} but never calls `{model}.eval()`, and no "
            f"caller does: dropout stays active and batch-norm uses batch statistics during evaluation; call "
            f"`{model}.eval()` at the start of `{name}()` (and `{model}.train()` before training resumes)"
        )

    def _grad_free(self, func: cst.FunctionDef, call: cst.Call) -> bool:
        return an.grad_free_decorated(func, self.imps) or an.in_grad_free_block(
            self.idx, call, self.imps, stop_at_function=False
        )

    def fix(self, func: cst.FunctionDef, model_expr: cst.BaseExpression) -> FixSpec | None:
        model = an.dotted(model_expr)
        replacement = an.insert_first(func.body, f"{model}.eval()") if model is not None else None
        if replacement is None:
            return None
        return FixSpec(f"call `{model}.eval()` at the start of `{func.name.value}()`", (replacement,), safe=False)
