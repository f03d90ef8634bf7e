"""Unit tests of the evaluation concepts of the analysis library: gradient-free regions
(`grad_regions`) and eval-mode timelines, runs of a model and deliberate gradients
(`evaluation`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str, filename: str = "evaluate.py") -> FileContext:
    text = textwrap.dedent(source)
    return FileContext(filename, text, cst.parse_module(text))


def call_at(ctx: FileContext, text: str) -> cst.Call:
    """The call whose source is `text` (the first one)."""
    for call in an.index(ctx).nodes(cst.Call):
        if ctx.module.code_for_node(call) == text:
            return call
    raise AssertionError(f"no call {text!r}")


def function(ctx: FileContext, name: str) -> cst.FunctionDef:
    return next(f for f in an.index(ctx).nodes(cst.FunctionDef) if f.name.value == name)


class TestGradRegions:
    def test_chosen_context_manager_and_switches(self) -> None:
        ctx = context(
            """
            import contextlib
            import torch
            def run(model, x, train):
                ctx = contextlib.nullcontext() if train else torch.no_grad()
                with ctx:
                    a = model(x)
                torch.set_grad_enabled(False)
                b = model(x + 1)
                torch.set_grad_enabled(True)
                c = model(x + 2)
            """
        )
        regions = an.grad_regions(ctx)
        assert regions.grad_free(call_at(ctx, "model(x)"))
        assert regions.grad_free(call_at(ctx, "model(x + 1)"))
        assert not regions.grad_free(call_at(ctx, "model(x + 2)"))

    def test_every_caller_must_be_grad_free(self) -> None:
        ctx = context(
            """
            import torch
            def inner(model, x):
                return model(x)
            def middle(model, x):
                return inner(model, x)
            def only_free(model, x):
                with torch.no_grad():
                    middle(model, x)
            def helper(model, x):
                return model(x * 2)
            with torch.no_grad():
                helper(model, x)
            helper(model, x)
            """
        )
        regions = an.grad_regions(ctx)
        assert regions.grad_free(call_at(ctx, "model(x)"))
        assert not regions.grad_free(call_at(ctx, "model(x * 2)"))

    def test_module_switch_and_lightning_hooks(self) -> None:
        script = context(
            """
            import torch
            torch.set_grad_enabled(False)
            def main(model, x):
                return model(x)
            """
        )
        assert an.grad_regions(script).grad_free(call_at(script, "model(x)"))
        hooks = context(
            """
            import lightning as L
            class M(L.LightningModule):
                def validation_step(self, batch, i):
                    return self.net(batch)
                def training_step(self, batch, i):
                    return self.net(batch + 1)
            """
        )
        regions = an.grad_regions(hooks)
        assert regions.grad_free(call_at(hooks, "self.net(batch)"))
        assert not regions.grad_free(call_at(hooks, "self.net(batch + 1)"))


class TestEvaluations:
    def test_timeline_eval_train_and_rebinding(self) -> None:
        ctx = context(
            """
            def f(model, other, x, device):
                model.eval()
                a = model(x)
                model = model.to(device)
                b = model(x + 1)
                model.train()
                c = model(x + 2)
                net = Net().to(device).eval()
                d = net(x)
                net = other
                e = net(x)
            """
        )
        evals = an.evaluations(ctx)
        held = {
            text: evals.eval_before(call_at(ctx, text), key) is not None
            for text, key in [
                ("model(x)", "model"),
                ("model(x + 1)", "model"),
                ("model(x + 2)", "model"),
                ("net(x)", "net"),
            ]
        }
        assert held == {"model(x)": True, "model(x + 1)": True, "model(x + 2)": False, "net(x)": True}
        last = [c for c in an.index(ctx).nodes(cst.Call) if ctx.module.code_for_node(c) == "net(x)"][-1]
        assert evals.eval_before(last, "net") is None  # rebound to another object
        scopes = evals.evaluating_scopes()
        assert [(s.name.value, keys) for s, keys in scopes if isinstance(s, cst.FunctionDef)] == [
            ("f", {"model", "net"})
        ]

    def test_an_eval_switch_in_a_block_that_returns_holds_only_in_that_block(self) -> None:
        ctx = context(
            """
            def main(args, model, loader, optimizer):
                if args.eval_only:
                    model.eval()
                    preds = [model(x) for x in loader]
                    return preds
                for x, y in loader:
                    optimizer.zero_grad()
                    model(x, y).backward()
                    optimizer.step()
            """
        )
        evals = an.evaluations(ctx)
        event = evals.eval_before(call_at(ctx, "model(x)"), "model")
        assert event is not None
        assert evals.eval_before(call_at(ctx, "model(x, y)"), "model") is None
        main = function(ctx, "main")
        # The training after the `return` is not eval-mode training.
        assert not evals.wants_gradients(main, event.order, event.call)
        assert evals.wants_gradients(main, event.order)

    def test_runs_model_directly_and_through_a_method(self) -> None:
        ctx = context(
            """
            import torch
            class Runner:
                def infer(self, x):
                    return self.model(x)
                def safe(self, x):
                    with torch.no_grad():
                        return self.model(x)
                def evaluate(self, x):
                    self.model.eval()
                    self.model.forward(x)
                    self.infer(x)
                    self.safe(x)
                    self.model.parameters()
            """
        )
        evals = an.evaluations(ctx)
        keys = {"self.model"}
        runs = {
            text: evals.runs_model(call_at(ctx, text), keys)
            for text in ("self.model.forward(x)", "self.infer(x)", "self.safe(x)", "self.model.parameters()")
        }
        assert runs == {
            "self.model.forward(x)": "self.model",
            "self.infer(x)": "self.model",
            "self.safe(x)": None,
            "self.model.parameters()": None,
        }

    def test_wanted_gradients_and_restored_modes(self) -> None:
        ctx = context(
            """
            def saliency(model, x):
                model.eval()
                x.requires_grad_()
                return model(x)
            def finetune(model, x, optimizer):
                optimizer.step()
                model.eval()
                return model(x)
            def embed(model, x):
                snapshot = model.training
                model.eval()
                try:
                    return model(x)
                finally:
                    model.train(snapshot)
            """
        )
        evals = an.evaluations(ctx)
        assert evals.wants_gradients(function(ctx, "saliency"), -1)
        finetune = function(ctx, "finetune")
        assert not evals.wants_gradients(finetune, an.index(ctx).order(call_at(ctx, "optimizer.step()")))
        assert evals.restores_mode(function(ctx, "embed"), "model")
        assert not evals.restores_mode(function(ctx, "saliency"), "model")

    def test_eval_mode_from_every_caller(self) -> None:
        ctx = context(
            """
            def run(net, x):
                return net(x)
            def callback(net, x):
                return net(x)
            model.eval()
            run(model, x)
            run(model, y)
            callback(model, x)
            hooks.append(callback)
            other.train()
            def mixed(net, x):
                return net(x)
            mixed(model, x)
            mixed(other, x)
            """
        )
        evals = an.evaluations(ctx)
        found = evals.eval_from_callers(function(ctx, "run"), "net")
        assert found is not None and found.key == "model"
        assert evals.eval_from_callers(function(ctx, "callback"), "net") is None  # handed around
        assert evals.eval_from_callers(function(ctx, "mixed"), "net") is None

    def test_forward_like_methods_of_the_model(self) -> None:
        assert [an.name_says_forward(n) for n in ("infer", "predict_proba", "forward_features", "extract_feat")] == [
            True,
            True,
            True,
            True,
        ]
        assert not any(an.name_says_forward(n) for n in ("generate", "parameters", "set_input", "save", None))
        assert an.name_says_forward("run_inference")
        assert not any(an.name_says_forward(n) for n in ("enable_forward_chunking", "set_decoder", "register_forward_hook"))
        ctx = context(
            """
            import torch
            class Net(torch.nn.Module):
                @torch.no_grad()
                def predict(self, x):
                    return self(x)
            net = Net().eval()
            net.predict(x)
            net.encode(x)
            other.eval()
            other.predict(x)
            """
        )
        evals = an.evaluations(ctx)
        assert evals.runs_model(call_at(ctx, "net.predict(x)"), {"net"}) is None  # decorated
        assert evals.runs_model(call_at(ctx, "net.encode(x)"), {"net"}) == "net"
        assert evals.runs_model(call_at(ctx, "other.predict(x)"), {"other"}) == "other"

    def test_serving_handler_holds_the_setup_mode_in_its_hooks(self) -> None:
        ctx = context(
            """
            class Handler:
                def initialize(self, context):
                    self.model = load(context)
                    self.model.eval()
                    self.aux.eval()
                def inference(self, x):
                    return self.model(x), self.aux(x)
                def handle(self, data, context):
                    return self.inference(data)
                def finetune(self, x):
                    self.aux.train()
            class NotAHandler:
                def initialize(self):
                    self.model.eval()
                def inference(self, x):
                    return self.model(x + 1)
            """
        )
        evals = an.evaluations(ctx)
        held = evals.eval_before(call_at(ctx, "self.model(x)"), "self.model")
        assert held is not None and held.set_in == "initialize" and held.per_request
        assert evals.eval_before(call_at(ctx, "self.aux(x)"), "self.aux") is None  # trained elsewhere
        assert evals.eval_before(call_at(ctx, "self.model(x + 1)"), "self.model") is None  # no handle()
        # handle() reaches the model through inference(), which reports its own run
        assert evals.runs_model(call_at(ctx, "self.inference(data)"), {"self.model"}) is None

    def test_an_assigned_chain_names_the_switched_model_stored_on_an_object_too(self) -> None:
        ctx = context(
            """
            def f(self, model, x, device):
                self.net = model.eval().to(device)
                a = self.net(x)
                b = model(x)
                local = model.eval()
                c = local(x)
            """
        )
        evals = an.evaluations(ctx)
        assert evals.eval_before(call_at(ctx, "self.net(x)"), "self.net") is not None
        assert evals.eval_before(call_at(ctx, "model(x)"), "model") is not None
        assert evals.eval_before(call_at(ctx, "local(x)"), "local") is None

    def test_an_inference_wrapper_holds_the_constructor_mode_in_its_methods(self) -> None:
        ctx = context(
            """
            import torch
            class Pretrained:
                def __init__(self, model, device):
                    self.model_ = model.eval().to(device)
                    self.aux = load()
                    self.aux.eval()
                def apply(self, x):
                    return self.model_(x), self.aux(x)
                def tune(self):
                    self.aux.train()
            class Network(torch.nn.Module):
                def __init__(self, backbone):
                    super().__init__()
                    self.backbone = backbone.eval()
                def embed(self, x):
                    return self.backbone(x + 1)
            class Trainer:
                def __init__(self, model):
                    self.model = model.eval()
                def step(self, x):
                    self.model(x + 2).sum().backward()
            """
        )
        evals = an.evaluations(ctx)
        held = evals.eval_before(call_at(ctx, "self.model_(x)"), "self.model_")
        assert held is not None and held.set_in == "__init__" and not held.per_request
        assert evals.eval_before(call_at(ctx, "self.aux(x)"), "self.aux") is None  # trained by tune()
        # a network's owner sets the mode of what it holds; a trainer trains what it holds
        assert evals.eval_before(call_at(ctx, "self.backbone(x + 1)"), "self.backbone") is None
        assert evals.eval_before(call_at(ctx, "self.model(x + 2)"), "self.model") is None

    def test_volatile_inputs_and_the_model_that_runs_them(self) -> None:
        ctx = context(
            """
            import torch
            from torch.autograd import Variable
            from metrics import accuracy
            def evaluate(net, loader, criterion):
                for x, y in loader:
                    x = Variable(x, volatile=True)
                    y = Variable(y, volatile=True)
                    print(x)
                    out = net(x)
                    loss = criterion(out, y)
                    accuracy(out, y)
                return net.forward(Variable(x, volatile=False)), net(Variable(x, volatile=True))
            """
        )
        runs = an.evaluations(ctx).volatile_runs.values()
        assert sorted(ctx.module.code_for_node(c) for c in runs) == ["net(Variable(x, volatile=True))", "net(x)"]
