"""TL004 eval-without-no-grad: a model in eval mode called with gradients enabled."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules._analysis import (
    Evaluations,
    Imports,
    Index,
    ModeEvent,
    dotted,
    enclosing_loops,
    evaluations,
    method_name,
    parameter_names,
)

_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _torch_alias(imps: Imports) -> str | None:
    names = sorted(local for local, target in imps.aliases.items() if target == "torch")
    return "torch" if "torch" in names else (names[0] if names else None)


class EvalWithoutNoGrad(Rule):
    """
    ## What it does
    Finds calls of a model (`model(x)`, `model.forward(x)`) that come after
    `model.eval()` (or `model.train(False)`) in the same function and run with
    gradients enabled: not inside `with torch.no_grad():`, `torch.inference_mode()` or
    `torch.set_grad_enabled(False)` (or a project's own wrapper whose name says
    `no_grad` / `inference`, or an `ExitStack` that entered one), not in a function
    decorated with one of those, not after `torch.set_grad_enabled(False)`, and not in
    a helper whose every call site in the module is gradient-free. Also a function
    that runs a model its every caller in the module put in eval mode first (the model
    passed as an argument, or a global), as evaluation scripts do with `net.eval()` in
    their `__main__` block and the forward in `test_net(net, ...)`. And a call, after
    `model.eval()`, of a helper that runs the model with gradients: a method of the
    same class that calls `self.model` (`self.infer(x)`), a method of the model whose
    name says it runs the forward (`self.model.infer(x)`, `net.predict(x)`, `encode`,
    `extract_...`), or a function of another module of the project that calls the model
    passed to it (`predict(model, x)`), or a function of the same module that runs the model
    passed to it and neither trains nor asks for input gradients on that call's path
    (`run_epoch(val_loader, model)` where only a given optimizer makes it back-propagate). A TorchServe handler (a class with
    `initialize()` and `handle()`) runs `initialize()` once and its hooks
    (`preprocess`, `inference`, `postprocess`, `handle`) per request: a model that
    `initialize()` puts in eval mode is in eval mode there. Likewise a class that only
    applies the models it holds (not a network or a framework class, no method of it
    trains, and no module of the project turns gradients off, as its callers there might
    around it): the eval mode that its constructor leaves on `self.model_` (also through
    `self.model_ = model.eval().to(device)`) holds in its other methods. And legacy evaluation on
    inputs made with `Variable(x, volatile=True)`: `volatile` has no effect since
    PyTorch 0.4, so `net(inputs)` builds a graph.

    ## Why is this bad?
    `model.eval()` only switches layers such as dropout and batch norm to inference
    behaviour; it does not turn off autograd. Every evaluation forward pass still
    records the graph and keeps all intermediate activations alive until the output
    is freed: evaluation takes several times the memory it needs (often the cause of
    out-of-memory errors in validation loops that "should" be lighter than training)
    and runs slower. Outputs accumulated across batches (`outputs.append(model(x))`)
    keep every batch's graph alive.

    ## Example
    ```python
    model.eval()
    for x, y in val_loader:
        out = model(x)
        correct += (out.argmax(1) == y).sum().item()
    ```

    ## Use instead
    ```python
    model.eval()
    with torch.no_grad():  # or torch.inference_mode()
        for x, y in val_loader:
            out = model(x)
            correct += (out.argmax(1) == y).sum().item()
    ```

    Not flagged: a model put back with `model.train()` before the call, a frozen
    teacher or target network (`teacher.requires_grad_(False)`, `p.requires_grad =
    False` over its parameters, `model.freeze()`, or a class whose constructor freezes
    its own parameters, in this module or another of the project), a function that back-propagates or steps an optimizer
    after the `eval()` (eval-mode training, e.g. frozen batch norm; not training that a
    `return` of the block holding the `eval()` keeps from following it) or asks for input
    gradients (`x.requires_grad_()`), `torch.jit.trace` / `torch.onnx.export` /
    `torch.compile` / `torch.export` of the model, `model.generate(...)`, a method of
    the model decorated with `no_grad` (in this module or another of the project), a dummy
    pass in a constructor (`__init__`) that infers the shape of the next layer, and a
    helper that saves the model's training flags to restore them (`was_training =
    model.training` ... `model.train(was_training)`) around a single call (not a loop):
    it switches the mode for one call and leaves gradients to its caller. Tests
    (`def test_...` in a module that imports pytest or unittest) are not checked: they
    run eval mode with gradients on purpose.

    ## Fix safety
    The fix wraps the single statement holding the call (`out = model(x)` or
    `model(x)`) in `with torch.no_grad():`, using the module's own name for `torch`; it
    is offered only when `torch` is imported as a module. It is safe when the output is
    only evaluated; it is marked unsafe when the function returns the output, whose
    callers might back-propagate through it.

    ## Runtime confirmation
    `torchlint probe` runs the script and reports forward passes of a module in eval
    mode that built an autograd graph.

    ## References
    - [torch.no_grad](https://pytorch.org/docs/stable/generated/torch.no_grad.html)
    - [Locally disabling gradient computation](https://pytorch.org/docs/stable/notes/autograd.html#locally-disable-grad-doc)
    - [torch.nn.Module.eval](https://pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval)
    """

    CODE = "TL004"
    NAME = "eval-without-no-grad"
    SUMMARY = "Model in eval mode runs forward with gradients enabled, building a graph it never uses"
    TRIGGERS = ((".eval(", "train(False", "train(mode=False", "volatile"),)
    CONFIRMED_BY = ("TL004",)

    VALID = (
        # After eval(), helpers that want gradients: an attack on the inputs, and the
        # shared epoch function given the optimizer; and one under no_grad.
        """
        import torch
        import torch.nn.functional as F
        def run_epoch(loader, model, optimizer=None):
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                if optimizer is not None:
                    loss.backward()
                    optimizer.step()

        def fgsm(model, x, y, eps):
            x = x.clone().requires_grad_(True)
            F.cross_entropy(model(x), y).backward()
            return x + eps * x.grad.sign()

        model.eval()
        adversarial = [fgsm(model, x, y, 0.1) for x, y in test_loader]
        run_epoch(finetune_loader, model, optimizer)
        with torch.no_grad():
            run_epoch(val_loader, model)
        """,
        # a module of the file with only buffers, fed data: no parameter, so no graph
        """
        import torch
        class MelScale(torch.nn.Module):
            def __init__(self, n_mels=64):
                super().__init__()
                self.n_mels = n_mels
                self.register_buffer("weights", torch.rand(n_mels, 129))
            def forward(self, power):
                return torch.log(self.weights @ power + 1e-6)
        mel = MelScale()
        mel.eval()
        for power in spectrogram_batches:
            features.append(mel(power))
        """,
        # a method of the same class that runs the model under no_grad
        """
        import torch
        class Runner:
            def infer(self, x):
                with torch.no_grad():
                    return self.model(x)

            def evaluate(self, loader):
                self.model.eval()
                return [self.infer(x) for x in loader]
        """,
        # the classic evaluation loop
        """
        import torch
        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                for x, y in loader:
                    out = model(x)
        """,
        # inference mode, imported by name
        """
        from torch import inference_mode
        def evaluate(model, x):
            model.eval()
            with inference_mode():
                return model(x)
        """,
        # decorated with no_grad, through an alias
        """
        import torch as T
        @T.no_grad()
        def evaluate(model, x):
            model.eval()
            return model(x)
        """,
        # back in training mode before the call
        """
        def step(model, x):
            model.eval()
            model.train()
            return model(x)
        """,
        # set_grad_enabled with a flag, as in the transfer-learning tutorial
        """
        import torch
        def run(model, phase, x):
            if phase == "train":
                model.train()
            else:
                model.eval()
            with torch.set_grad_enabled(phase == "train"):
                out = model(x)
            return out
        """,
        # gradients switched off for the whole function
        """
        import torch
        def predict(model, x):
            torch.set_grad_enabled(False)
            model.eval()
            return model(x)
        """,
        # every call site of the helper is gradient-free
        """
        import torch
        def forward_eval(model, x):
            model.eval()
            return model(x)
        def main(model, x):
            with torch.no_grad():
                forward_eval(model, x)
        """,
        # a frozen teacher in a distillation step
        """
        import torch.nn.functional as F
        def distill(student, teacher, x, opt):
            teacher.requires_grad_(False)
            teacher.eval()
            t = teacher(x)
            loss = F.kl_div(student(x), t)
            loss.backward()
            opt.step()
        """,
        # deliberate eval-mode training (frozen batch norm)
        """
        def finetune(model, loader, optimizer):
            model.eval()
            for x, y in loader:
                loss = model(x).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        """,
        # tracing and exporting are not forward passes; generate manages its own grad mode
        """
        import torch
        def export(model, x):
            model.eval()
            traced = torch.jit.trace(model, x)
            torch.onnx.export(model, x, "model.onnx")
            compiled = torch.compile(model)
            return traced, compiled, model.generate(x)
        """,
        # ExitStack entering no_grad, and the project's own decorator
        """
        import contextlib
        import torch
        def smart_inference_mode():
            return torch.inference_mode()
        def run(model, x):
            with contextlib.ExitStack() as stack:
                stack.enter_context(torch.no_grad())
                model.eval()
                return model(x)
        @smart_inference_mode()
        def detect(model, x):
            model.eval()
            return model(x)
        """,
        # saliency: gradients with respect to the input are the point
        """
        def saliency(model, x):
            model.eval()
            x.requires_grad_()
            score = model(x).max()
            score.backward()
            return x.grad
        """,
        # target network frozen through its parameters
        """
        class Agent:
            def __init__(self, net, target):
                self.net, self.target = net, target
                for p in self.target.parameters():
                    p.requires_grad = False
            def td(self, s):
                self.target.eval()
                return self.target(s)
        """,
        # a different object is evaluated
        """
        import torch
        def f(model, ema, x):
            ema.eval()
            with torch.no_grad():
                ema(x)
            return model(x)
        """,
        # a context manager chosen by a flag
        """
        import contextlib
        import torch
        def run(model, x, train):
            if not train:
                model.eval()
            with torch.no_grad() if not train else contextlib.nullcontext():
                a = model(x)
            ctx = contextlib.nullcontext() if train else torch.inference_mode()
            with ctx:
                b = model(x)
            return a, b
        """,
        # Lightning runs validation_step without gradients
        """
        import lightning as L
        class Module(L.LightningModule):
            def validation_step(self, batch, batch_idx):
                self.backbone.eval()
                return self.backbone(batch[0])
        """,
        # a constructor's dummy pass to infer the next layer's shape
        """
        from torch import nn
        class Unet(nn.Module):
            def __init__(self, encoder, x):
                super().__init__()
                middle = nn.Sequential(nn.Conv2d(8, 8, 3), nn.BatchNorm2d(8)).eval()
                x = middle(x)
                self.head = nn.Conv2d(x.shape[1], 2, 1)
        """,
        # the call comes before eval() in the function
        """
        def f(model, x):
            out = model(x)
            model.eval()
            return out
        """,
        # a test compares eval-mode outputs with gradients on purpose
        """
        import unittest
        import torch
        class TestInference(unittest.TestCase):
            def test_ddp_inference(self):
                model = torch.nn.Linear(2, 2)
                model.eval()
                for _ in range(3):
                    self.assertEqual(model(torch.ones(1, 2)).shape, (1, 2))
        """,
        # a library helper that saves the training flags and puts them back: it switches
        # the mode for one call and leaves gradients to its caller (kornia)
        """
        def run_descriptor(module, patches):
            modes = [m.training for m in module.modules()]
            module.eval()
            try:
                return module(patches)
            finally:
                for m, mode in zip(module.modules(), modes):
                    m.training = mode
        """,
        """
        def embed(model, x):
            was_training = model.training
            model.eval()
            out = model(x)
            model.train(was_training)
            return out
        """,
        # The caller evaluates under no_grad: the helper's forward needs nothing more.
        """
        import torch
        def test_net(net, x):
            return net(x).argmax(1)
        if __name__ == "__main__":
            net = Net()
            net.eval()
            with torch.no_grad():
                print(test_net(net, batch))
        """,
        # One caller passes a model in training mode: the helper is not only an evaluation.
        """
        import torch
        def run(net, x):
            return net(x)
        model.eval()
        print(run(model, x))
        model.train()
        loss = run(model, x).sum()
        loss.backward()
        """,
        # A saliency map of a model in eval mode needs the gradients.
        """
        import torch
        def saliency(net, image):
            image.requires_grad_()
            net(image).max().backward()
            return image.grad.abs()
        net.eval()
        heat = saliency(net, image)
        """,
        # The helper is also handed around as a callback: callers this file does not show.
        """
        import torch
        def predict(net, x):
            return net(x)
        net.eval()
        print(predict(net, x))
        server.register(predict)
        """,
        # The model's own predict() turns gradients off.
        """
        import torch
        class Net(torch.nn.Module):
            @torch.no_grad()
            def predict(self, x):
                return self(x).argmax(1)
        def evaluate(loader):
            net = Net().eval()
            return [net.predict(x) for x in loader]
        """,
        # A serving handler whose per-request inference runs under inference mode.
        """
        import torch
        class Handler:
            def initialize(self, context):
                self.model = load(context)
                self.model.eval()
            def inference(self, batch):
                with torch.inference_mode():
                    return self.model(batch)
            def handle(self, data, context):
                return self.inference(self.preprocess(data))
        """,
        # An inference wrapper whose constructor puts the model in eval mode and whose
        # methods run it under no_grad; a trainer whose constructor does and which trains it.
        """
        import torch
        class Pretrained:
            def __init__(self, model, device):
                self.model_ = model.eval().to(device)
            def apply(self, batch):
                with torch.no_grad():
                    return self.model_(batch)
        class Trainer:
            def __init__(self, model, optimizer):
                self.model = model.eval()
                self.optimizer = optimizer
            def fit(self, loader):
                for x, y in loader:
                    self.model(x).sum().backward()
                    self.optimizer.step()
        """,
        # Legacy volatile inputs evaluated under no_grad; a loss is not a model.
        """
        import torch
        from torch.autograd import Variable
        def evaluate(net, x, y, criterion):
            with torch.no_grad():
                out = net(Variable(x, volatile=True))
            target = Variable(y, volatile=True)
            return criterion(out, target)
        """,
        # Frozen by its own constructor, or by the framework's freeze(): no graph is built.
        """
        import torch
        class Encoder(torch.nn.Module):
            def __init__(self, width):
                super().__init__()
                self.proj = torch.nn.Linear(width, width)
                for p in self.parameters():
                    p.requires_grad = False
        def features(loader, classifier):
            encoder = Encoder(8).eval()
            classifier.freeze()
            classifier.eval()
            return [classifier(encoder(x)) for x in loader]
        """,
        # Built frozen by a constructor keyword of a class from another package.
        """
        import torch
        from towers import ImageTower
        def embed_all(loader):
            tower = ImageTower(weights="imagenet", trainable=False).cuda()
            tower.eval()
            return [tower(x) for x in loader]
        """,
    )
    INVALID = (
        # One epoch function for training and evaluation: the evaluation call passes no
        # optimizer, so nothing back-propagates there, but every forward records a graph.
        """
        import torch.nn.functional as F
        def run_epoch(loader, model, optimizer=None):
            total = 0.0
            for x, y in loader:
                loss = F.cross_entropy(model(x), y)
                if optimizer is not None:
                    optimizer.zero_grad()
                    loss.backward()
                    optimizer.step()
                total += loss.item()
            return total

        for epoch in range(10):
            model.train()
            run_epoch(train_loader, model, optimizer)
            model.eval()
            print(run_epoch(val_loader, model))  # expect: TL004
        """,
        # The keyword says the tower is trained: its graph is recorded for nothing.
        """
        import torch
        from towers import ImageTower
        def embed_all(loader):
            tower = ImageTower(weights="imagenet", trainable=True).cuda()
            tower.eval()
            return [tower(x) for x in loader]  # expect: TL004
        """,
        # Evaluation on one branch only, which returns before the training below.
        """
        def main(args, model, loader, optimizer):
            if args.eval_only:
                model.eval()
                for x, y in loader:
                    print(model(x).argmax(1))  # expect: TL004
                return
            for x, y in loader:
                optimizer.zero_grad()
                model(x, y).backward()
                optimizer.step()
        """,
        # a buffer-only module fed the output of a trainable encoder: the graph reaches its weights
        """
        import torch
        class MelScale(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("weights", torch.rand(64, 129))
            def forward(self, power):
                return self.weights @ power
        mel = MelScale()
        mel.eval()
        for x in batches:
            out = mel(encoder(x))  # expect: TL004
        """,
        # a module that takes its layers from its caller may own parameters
        """
        import torch
        class Head(torch.nn.Module):
            def __init__(self, proj):
                super().__init__()
                self.proj = proj
            def forward(self, x):
                return self.proj(x)
        head = Head(torch.nn.Linear(4, 2))
        head.eval()
        for x in batches:
            out = head(x)  # expect: TL004
        """,
        # the evaluation runs through a method of the same class
        """
        import torch
        class Runner:
            def infer(self, x):
                return self.model(x)

            def evaluate(self, loader):
                self.model.eval()
                outputs = []
                for x in loader:
                    outputs.append(self.infer(x))  # expect: TL004
                return outputs
        """,
        Example(
            """
            import torch
            def evaluate(model, loader):
                model.eval()
                correct = 0
                for x, y in loader:
                    out = model(x)  # expect: TL004
                    correct += (out.argmax(1) == y).sum().item()
                return correct
            """,
            fixed="""
            import torch
            def evaluate(model, loader):
                model.eval()
                correct = 0
                for x, y in loader:
                    with torch.no_grad():
                        out = model(x)  # expect: TL004
                    correct += (out.argmax(1) == y).sum().item()
                return correct
            """,
        ),
        # train(False), module-level script code, torch imported under another name
        Example(
            """
            import torch as T
            model = T.nn.Linear(4, 2)
            model.train(False)
            preds = model(T.randn(8, 4))  # expect: TL004
            """,
            fixed="""
            import torch as T
            model = T.nn.Linear(4, 2)
            model.train(False)
            with T.no_grad():
                preds = model(T.randn(8, 4))  # expect: TL004
            """,
        ),
        # self.eval() then self(...) in a method; an expression statement
        Example(
            """
            import torch
            class Net(torch.nn.Module):
                def warmup(self, x):
                    self.eval()
                    self(x)  # expect: TL004
            """,
            fixed="""
            import torch
            class Net(torch.nn.Module):
                def warmup(self, x):
                    self.eval()
                    with torch.no_grad():
                        self(x)  # expect: TL004
            """,
        ),
        # an attribute model and .forward
        """
        class Trainer:
            def validate(self, batch):
                self.model.eval()
                return self.model.forward(batch)  # expect: TL004
        """,
        # eval chained on construction
        """
        import torch
        import torchvision
        def classify(img):
            net = torchvision.models.resnet18().to("cpu").eval()
            logits = net(img)  # expect: TL004
            return logits.argmax(1)
        """,
        # the backward happened before eval(): validation after training
        """
        def fit(model, train_loader, val_loader, optimizer):
            model.train()
            for x, y in train_loader:
                loss = model(x).sum()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            losses = [model(x).sum().item() for x, y in val_loader]  # expect: TL004
            return losses
        """,
        # the no_grad block ended before the call
        """
        import torch
        def f(model, x, y):
            model.eval()
            with torch.no_grad():
                a = model(x)
            b = model(y)  # expect: TL004
            return a, b
        """,
        # a helper with no gradient-free call site
        """
        import torch
        def predict(model, x):
            model.eval()
            return model(x)  # expect: TL004
        def main(model, x):
            with torch.no_grad():
                predict(model, x)
            predict(model, x)
        """,
        # gradients switched back on
        """
        import torch
        def f(model, x):
            torch.set_grad_enabled(False)
            model.eval()
            torch.set_grad_enabled(True)
            return model(x)  # expect: TL004
        """,
        # two calls, two findings
        """
        def compare(model, a, b):
            model.eval()
            ya = model(a)  # expect: TL004
            yb = model(b)  # expect: TL004
            return ya - yb
        """,
        # enable_grad is not gradient-free
        """
        import torch
        def f(model, x):
            model.eval()
            with torch.enable_grad():
                return model(x)  # expect: TL004
        """,
        # an evaluation loop in a training script's main block
        """
        import torch
        from torch import nn
        if __name__ == "__main__":
            net = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1))
            net.eval()
            outputs = []
            for _ in range(3):
                outputs.append(net(torch.randn(2, 8)))  # expect: TL004
        """,
        # reassigned to the same model moved to a device: still in eval mode
        """
        def f(model, x, device):
            model.eval()
            model = model.to(device)
            return model(x)  # expect: TL004
        """,
        # switching back to training afterwards is not saving the mode
        """
        def validate(model, loader):
            model.eval()
            losses = [model(x).mean().item() for x in loader]  # expect: TL004
            model.train()
            return losses
        """,
        # a script's own `test_...` function is an evaluation loop, not a test
        """
        def test_model(model, loader):
            model.eval()
            return [model(x).argmax(1) for x, _ in loader]  # expect: TL004
        """,
        # an evaluation loop is one even when the mode is saved and restored
        """
        def validate(model, loader):
            was_training = model.training
            model.eval()
            total = 0.0
            for x, y in loader:
                total += (model(x).argmax(1) == y).sum().item()  # expect: TL004
            model.train(was_training)
            return total
        """,
        # eval() in the main block, the forward in a helper that receives the model
        # (ssd.pytorch's eval.py, CRAFT's test.py).
        """
        import torch
        def test_net(net, images):
            detections = []
            for x in images:
                detections.append(net(x.cuda()))  # expect: TL004
            return detections
        if __name__ == "__main__":
            net = build_ssd("test").cuda()
            net.eval()
            test_net(net, images)
        """,
        # A global model put in eval mode at module level, run by a function.
        """
        import torch
        model = torch.nn.Linear(4, 4)
        model.eval()
        def evaluate(loader):
            return [model(x).argmax(1) for x in loader]  # expect: TL004
        print(evaluate(val_loader))
        """,
        # The evaluation runs through a method of the model other than forward.
        """
        class Trainer:
            def validate(self, loader):
                self.net.eval()
                scores = []
                for x, _ in loader:
                    scores.append(self.net.predict(x))  # expect: TL004
                return scores
        """,
        # A serving handler: initialize() once, then inference() per request.
        """
        import torch
        class SegmentationHandler:
            def initialize(self, context):
                self.net = torch.jit.load(context.model_path)
                self.net.eval()
            def preprocess(self, data):
                return torch.stack(data)
            def inference(self, batch):
                return self.net(batch).argmax(1)  # expect: TL004
            def handle(self, data, context):
                return self.inference(self.preprocess(data)).tolist()
        """,
        # An inference wrapper: the constructor's eval mode holds in every other method.
        """
        import torch
        class Pretrained:
            def __init__(self, model, device):
                self.device = device
                self.model_ = model.eval().to(device)
            def _apply(self, batches):
                return [self.model_(torch.as_tensor(b, device=self.device)) for b in batches]  # expect: TL004
            def __call__(self, features):
                return self._apply(features)
        """,
        # Legacy evaluation with volatile inputs, which builds graphs since PyTorch 0.4.
        """
        from torch.autograd import Variable
        def test(net, loader):
            correct = 0
            for images, labels in loader:
                images = Variable(images.cuda(), volatile=True)
                outputs = net(images)  # expect: TL004
                correct += (outputs.argmax(1) == labels).sum().item()
            probs = net(Variable(images, volatile=True))  # expect: TL004
            return correct, probs
        """,
    )

    def check(self, ctx: FileContext) -> Iterator[Report]:
        evals = evaluations(ctx)
        idx = evals.idx
        reported: set[int] = set()
        for scope, keys in evals.evaluating_scopes():
            if isinstance(scope, cst.FunctionDef) and scope.name.value == "__init__":
                # A constructor's one dummy pass to infer shapes (fastai's DynamicUnet)
                # is not an evaluation loop.
                continue
            for call in idx.within(scope, cst.Call):
                key = evals.runs_model(call, keys)
                if key is None or idx.scope(call) is not scope:
                    continue
                event = evals.eval_before(call, key)
                if event is None or evals.freezing.is_frozen(key) or evals.regions.grad_free(call):
                    continue
                if evals.runs_parameter_free(call, key):
                    continue
                if evals.wants_gradients(scope, event.order, event.call):
                    continue
                if evals.restores_mode(scope, key) and not _repeated(idx, call):
                    continue
                if _in_test(idx, evals.imps, call):
                    continue
                reported.add(id(call))
                yield self._report(ctx, evals, call, key, event)
        for call in evals.volatile_runs.values():
            if id(call) not in reported and not evals.regions.grad_free(call) and not _in_test(idx, evals.imps, call):
                yield self._report(ctx, evals, call, None, None)
        yield from self._evaluated_by_callers(ctx, evals)

    def _evaluated_by_callers(self, ctx: FileContext, evals: Evaluations) -> Iterator[Report]:
        """A function (not a method) that runs a model its callers put in eval mode: the
        mode is set in one scope (often `__main__`), the forward runs in another. Every
        call site must pass (or see, for a global) a model in eval mode."""
        idx = evals.idx
        evaluated = evals.evaluated()
        if not evaluated:
            return
        for func in idx.nodes(cst.FunctionDef):
            if evals.funcs.enclosing_class(func) is not None:
                continue
            own = evals.own_keys(func)
            for call in idx.within(func, cst.Call):
                name = dotted(call.func) if isinstance(call.func, cst.Name) else None
                if name is None or name in own or evals.freezing.is_frozen(name) or idx.scope(call) is not func:
                    continue
                if name not in evaluated and name not in parameter_names(func):
                    continue  # neither a global in eval mode nor something a caller passes
                event = evals.eval_from_callers(func, name)
                if event is None or evals.regions.grad_free(call) or _in_test(idx, evals.imps, call):
                    continue
                if evals.wants_gradients(func, -1):
                    break
                if not evals.restores_mode(func, name):
                    yield self._report(ctx, evals, call, event.key, event, caller_of=func)

    def _report(
        self,
        ctx: FileContext,
        evals: Evaluations,
        call: cst.Call,
        key: str | None,
        event: ModeEvent | None,
        caller_of: cst.FunctionDef | None = None,
    ) -> Report:
        callee = ctx.module.code_for_node(call.func)
        fix = ": wrap the call in `with torch.no_grad():` (or `torch.inference_mode()`)"
        if id(call) in evals.volatile_runs:
            fix = f"; `volatile=True` has no effect since PyTorch 0.4{fix} instead"
        if event is None:
            after = "on a `Variable(..., volatile=True)` input"
        else:
            how = "eval()" if isinstance(event.call, cst.Call) and method_name(event.call) == "eval" else "train(False)"
            after = f"after `{key}.{how}`" + (f" in `{event.set_in}()`" if event.set_in else "")
            after += ", per request," if event.per_request else ""
            if caller_of is not None:
                after = f"in `{caller_of.name.value}()`, which runs only {after},"
        message = (
            f"`{callee}(...)` runs {after} with gradients enabled, so autograd records a graph "
            f"that is never used (memory and time){fix}"
        )
        return self.report(call, message, self._fix(evals, call))

    @staticmethod
    def _fix(evals: Evaluations, call: cst.Call) -> FixSpec | None:
        alias = _torch_alias(evals.imps)
        idx = evals.idx
        statement = idx.parent(call)
        if alias is None or not isinstance(statement, (cst.Assign, cst.Expr)) or statement.value is not call:
            return None
        line = idx.parent(statement)
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        if not isinstance(idx.parent(line), (cst.IndentedBlock, cst.Module)):
            return None
        wrapped = cst.With(
            items=[cst.WithItem(cst.Call(func=cst.Attribute(value=cst.Name(alias), attr=cst.Name("no_grad"))))],
            body=cst.IndentedBlock(body=[line.with_changes(leading_lines=())]),
            leading_lines=line.leading_lines,
        )
        returned = isinstance(statement, cst.Assign) and _returns_any(idx, statement)
        return FixSpec(f"wrap the call in `with {alias}.no_grad():`", ((line, wrapped),), safe=not returned)


def _in_test(idx: Index, imps: Imports, call: cst.Call) -> bool:
    """A call inside a test (`def test_...` in a module that imports pytest or unittest,
    at any depth): tests run eval mode with gradients on purpose, to compare outputs, and
    their graphs cost nothing that matters. (A script's own `def test(model, loader)` is
    an evaluation loop, not a test.)"""
    if not (imps.mentions("pytest") or imps.mentions("unittest")):
        return False
    return any(isinstance(a, cst.FunctionDef) and a.name.value.startswith("test_") for a in idx.ancestors(call))


def _repeated(idx: Index, call: cst.Call) -> bool:
    """Whether `call` runs in a loop or comprehension of its function."""
    if enclosing_loops(idx, call):
        return True
    for ancestor in idx.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return False
        if isinstance(ancestor, _COMPREHENSIONS):
            return True
    return False


def _returns_any(idx: Index, assign: cst.Assign) -> bool:
    """Whether the function returns or yields a name that `assign` binds."""
    bound = {n.value for t in assign.targets for n in idx.within(t.target, cst.Name)}
    scope = idx.scope(assign)
    for node in idx.within(scope, cst.Return, cst.Yield):
        value = node.value if isinstance(node, (cst.Return, cst.Yield)) else None
        if isinstance(value, cst.BaseExpression) and any(n.value in bound for n in idx.within(value, cst.Name)):
            return True
    return False
