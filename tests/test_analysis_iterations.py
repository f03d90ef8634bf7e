"""Unit tests of the iterations and evaluations concepts of the analysis library: what one
iteration of a loop runs (through local calls and the closure a step runs), the order of
nodes within it, last iterations; evaluation code, deliberate freezing."""

from __future__ import annotations

import libcst as cst

from analysis_support import context, code, call

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def loop(ctx: FileContext) -> cst.For:
    """The last loop of the module."""
    return an.index(ctx).nodes(cst.For)[-1]


class TestIterations:
    SOURCE = """
        def run_epoch(net, data):
            for x in data:
                step(net, x)

        def step(m, x):
            m(x).backward()

        def closure():
            return helper()

        def helper():
            pass

        for epoch in range(10):
            run_epoch(model, loader)
            optimizer.step(closure)
            validate(model)
        """

    def test_parts_follow_local_calls_with_arguments_bound(self) -> None:
        ctx = context(self.SOURCE)
        iterations = an.iterations(ctx)
        stepping = {id(call(ctx, "optimizer.step(closure)"))}
        parts = iterations.parts(loop(ctx).body, stepping)
        names = {p.root.name.value if isinstance(p.root, cst.FunctionDef) else "<body>": p for p in parts}
        assert set(names) == {"<body>", "run_epoch", "step", "closure", "helper"}
        inner = names["step"]
        assert [code(ctx, c) for c in inner.path] == ["run_epoch(model, loader)", "step(net, x)"]
        translated = inner.translate(cst.Name("m"))
        assert translated is not None and code(ctx, translated) == "model"
        data = names["run_epoch"].translate(cst.Name("data"))
        assert data is not None and code(ctx, data) == "loader"
        assert "closure" not in {p.root.name.value for p in iterations.parts(loop(ctx).body) if isinstance(p.root, cst.FunctionDef)}

    def test_order_within_an_iteration(self) -> None:
        ctx = context(self.SOURCE)
        iterations = an.iterations(ctx)
        first = (call(ctx, "run_epoch(model, loader)"), call(ctx, "step(net, x)"))
        later = (call(ctx, "validate(model)"),)
        assert iterations.before(first, later) and not iterations.before(later, first)

    def test_a_break_or_return_after_a_node_ends_the_iterations(self) -> None:
        ctx = context(
            """
            for epoch in range(epochs):
                train()
                if epoch == last:
                    test(model)
                    break
                log(epoch)
            """
        )
        iterations = an.iterations(ctx)
        assert iterations.stops_after(call(ctx, "test(model)"), loop(ctx))
        assert not iterations.stops_after(call(ctx, "log(epoch)"), loop(ctx))
        assert [code(ctx, s).strip() for s in iterations.following(call(ctx, "train()"))][-1] == "log(epoch)"


class TestEvaluations:
    def test_evaluation_code_and_functions(self) -> None:
        ctx = context(
            """
            import torch

            @torch.no_grad()
            def score(model):
                pass

            def validate_epoch(model):
                pass

            def train_epoch(model):
                pass

            for epoch in range(epochs):
                train_epoch(model)
                model.eval()
                score(model)
            """
        )
        evaluations = an.training_evaluations(ctx)
        funcs = {f.name.value: f for f in an.functions(ctx).all}
        assert evaluations.is_evaluation_function(funcs["score"])
        assert evaluations.is_evaluation_function(funcs["validate_epoch"])
        assert not evaluations.is_evaluation_function(funcs["train_epoch"])
        assert evaluations.serves_evaluation(call(ctx, "model.eval()"), loop(ctx).body)

    def test_freezing_on_purpose(self) -> None:
        ctx = context(
            """
            def set_bn_eval(m):
                m.eval()

            def freeze_bn(model):
                model.bn.eval()

            teacher.requires_grad_(False)
            for p in critic.parameters():
                p.requires_grad = False
            for epoch in range(epochs):
                model.apply(set_bn_eval)
                for layer in model.modules():
                    layer.eval()
                model.eval()
            """
        )
        evaluations = an.training_evaluations(ctx)
        epochs = an.index(ctx).nodes(cst.For)[-2]
        assert evaluations.freezes_layers(call(ctx, "m.eval()"), epochs)
        assert evaluations.freezes_layers(call(ctx, "model.bn.eval()"), epochs)
        assert evaluations.freezes_layers(call(ctx, "layer.eval()"), epochs)
        assert not evaluations.freezes_layers(call(ctx, "model.eval()"), epochs)
