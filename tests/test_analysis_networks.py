"""`_analysis.networks` and the eval switches of `_analysis.modes`: which networks training
runs, what a call runs through a helper, whether a network's mode matters (its layers, in
this file or another module), where the code switches to eval mode; and the fix helpers
that TL009 and TL013 insert statements with."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str, filename: str = "train.py") -> FileContext:
    text = textwrap.dedent(source)
    return FileContext(filename, text, cst.parse_module(text))


def function(ctx: FileContext, name: str) -> cst.FunctionDef:
    return next(f for f in an.functions(ctx).all if f.name.value == name)


def calls_named(ctx: FileContext, name: str) -> list[cst.Call]:
    return [c for c in an.index(ctx).nodes(cst.Call) if an.callee_name(c) == name]


TRAINING = """
import torch
from torch import nn

def forward_step(net, x):
    return net(x)

def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(forward_step(model, x), y)
        loss.backward()
        optimizer.step()

@torch.no_grad()
def evaluate_critic(critic, x):
    return critic(x)

def fit(loader, optimizer):
    for epoch in range(3):
        train(model, loader, optimizer)
    evaluate_critic(critic, loader)
"""


class TestTrainedModels:
    def test_what_training_loops_run_with_gradients(self) -> None:
        ctx = context(TRAINING)
        trained = an.trained_models(ctx)
        # `net` through the helper `forward_step`; not `critic`, which only an evaluation helper runs.
        assert {"net", "model"} <= trained
        assert "critic" not in trained and "self" not in trained

    def test_training_loops_backward_and_step(self) -> None:
        ctx = context(TRAINING)
        loops = an.training(ctx).training_loops(an.functions(ctx))
        assert [ctx.module.code_for_node(loop.iter) for loop in loops] == ["loader", "range(3)"]

    def test_models_run_by_a_helper_are_spelled_as_the_caller_spells_them(self) -> None:
        ctx = context(TRAINING)
        (call,) = calls_named(ctx, "forward_step")
        assert [ctx.module.code_for_node(m) for m in an.models_run_by(ctx, call)] == ["model"]
        (evaluation,) = calls_named(ctx, "evaluate_critic")
        assert an.models_run_by(ctx, evaluation) == []  # judged on its own

    @pytest.mark.parametrize(
        ("key", "model"), [("model", True), ("self", False), ("criterion", False), ("len", False), ("val_acc", False)]
    )
    def test_looks_like_model(self, key: str, model: bool) -> None:
        assert an.looks_like_model(key) is model

    def test_framework_and_network_methods_own_their_mode(self) -> None:
        ctx = context(
            """
            import lightning as L
            from torch import nn
            class Lit(L.LightningModule):
                def validation_step(self, batch): ...
            class Net(nn.Module):
                def inference(self, x): ...
            class Trainer:
                def validate(self): ...
            """
        )
        funcs, imps = an.functions(ctx), an.imports(ctx)
        owned = {f.name.value: an.mode_owned_elsewhere(funcs, imps, f) for f in funcs.all}
        assert owned == {"validation_step": True, "inference": True, "validate": False}


NETWORKS = """
import torch
from torch import nn
import othermodule

class Plain(nn.Module):
    # a comment about dropout is not a dropout layer
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

class Dropped(nn.Module):
    def __init__(self, dropout=0.1):
        super().__init__()
        self.drop = nn.Dropout(dropout)

class Normed(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(4)

class Outer(Plain):
    def __init__(self):
        super().__init__()
        self.inner = Plain()

class Foreign(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = othermodule.Body()

plain = Plain().cuda()
plain = nn.DataParallel(plain)
zero = Dropped(dropout=0)
zero_positional = Dropped(0.0)
default = Dropped()
normed = Normed()
outer = Outer()
foreign = Foreign()
loaded = torch.load("model.pt")
"""


class TestModeFree:
    @pytest.mark.parametrize(
        ("key", "free"),
        [
            ("plain", True),  # through `.cuda()` and DataParallel
            ("zero", True),  # dropout built with rate 0
            ("zero_positional", True),
            ("default", False),  # the default rate 0.1
            ("normed", False),
            ("outer", True),  # a base and a submodule of this file without such layers
            ("foreign", False),  # a submodule whose layers are unknown
            ("loaded", False),
            ("never_assigned", False),
            (None, False),
        ],
    )
    def test_whether_eval_mode_changes_a_network_of_this_file(self, key: str | None, free: bool) -> None:
        assert an.mode_free(context(NETWORKS), key) is free

    def test_a_file_python_cannot_parse_leaves_its_networks_unknown(self) -> None:
        # The layers are read from the summary of `ctx.source`, which Python must parse.
        ctx = context(NETWORKS)
        broken = FileContext(ctx.filename, "class (:\n", ctx.module)
        assert an.mode_free(broken, "plain") is False


class TestEvalSwitches:
    SOURCE = """
    def set_mode(model, training):
        model.train(training)

    def quiet(model):
        set_mode(model, False)

    def evaluate(model, loader):
        return [model(x) for x in loader]

    def run_eval(model, loader):
        return evaluate(model, loader)

    def main():
        for epoch in range(3):
            train_one(model)
            model.eval()
            run_eval(model, val_loader)

    def score(model):
        return model(batch)

    def other():
        score(model)
        evaluate(model, loader)
        model.eval()
    """

    def test_reaches_eval_through_local_helpers(self) -> None:
        ctx = context(self.SOURCE)
        switches = an.eval_switches(ctx)
        assert switches.reaches_eval(function(ctx, "quiet"))
        assert not switches.reaches_eval(function(ctx, "evaluate"))

    def test_eval_before_a_call_site(self) -> None:
        ctx = context(self.SOURCE)
        switches = an.eval_switches(ctx)
        (in_main,) = calls_named(ctx, "run_eval")
        assert switches.eval_before(in_main, function(ctx, "main"))
        in_other = next(c for c in calls_named(ctx, "evaluate") if an.index(ctx).scope(c) is function(ctx, "other"))
        assert not switches.eval_before(in_other, function(ctx, "other"))  # only after the call

    def test_callers_leave_train_mode(self) -> None:
        ctx = context(self.SOURCE)
        switches = an.eval_switches(ctx)
        # `other` calls `score` before its eval(): it runs in train mode.
        assert switches.callers_leave_train_mode(function(ctx, "score"))
        # `evaluate` runs after an eval() on one of its paths (main -> run_eval).
        assert not switches.callers_leave_train_mode(function(ctx, "evaluate"))
        assert not switches.callers_leave_train_mode(function(ctx, "run_eval"))
        assert not switches.callers_leave_train_mode(function(ctx, "main"))  # no caller: unknown

    def test_grad_free_statement(self) -> None:
        ctx = context(
            """
            for epoch in range(3):
                with torch.no_grad():
                    for x in val_loader:
                        model(x)
            """
        )
        idx, imps = an.index(ctx), an.imports(ctx)
        inner = [loop for loop in idx.nodes(cst.For) if an.dotted(loop.iter) == "val_loader"][0]
        assert isinstance(an.grad_free_statement(idx, imps, inner), cst.With)
        outer = [loop for loop in idx.nodes(cst.For) if loop is not inner][0]
        assert an.grad_free_statement(idx, imps, outer) is outer


class TestEvaluationData:
    @pytest.mark.parametrize(
        ("name", "says"),
        [
            ("val_loader", True),
            ("self.valid_sampler", True),
            ("testset", True),
            ("valloader", True),
            ("dev_dl", True),
            ("train_loader", False),
            ("values", False),
            ("tester", False),
            (None, False),
        ],
    )
    def test_names_of_evaluation_data(self, name: str | None, says: bool) -> None:
        assert an.says_evaluation_data(name) is says


class TestInsertions:
    def test_insert_before_the_line_that_holds_a_node(self) -> None:
        ctx = context(
            """
            def f():
                a = 1
                clip(b)
            clip(c)
            if x: clip(d)
            """
        )
        idx = an.index(ctx)
        clips = calls_named(ctx, "clip")
        replaced = an.insert_before(idx, clips[0], "u()")
        assert replaced is not None
        assert ctx.module.code_for_node(replaced[1]).splitlines()[1:] == ["    a = 1", "    u()", "    clip(b)"]
        at_top = an.insert_before(idx, clips[1], "u()")
        assert at_top is not None and "u()\nclip(c)" in ctx.module.code_for_node(at_top[1])
        assert an.insert_before(idx, clips[2], "u()") is None  # a one-line suite

    def test_insert_first_goes_after_a_docstring(self) -> None:
        ctx = context(
            '''
            def f():
                """Doc."""
                return 1

            def g():
                return 2
            '''
        )
        f, g = function(ctx, "f"), function(ctx, "g")
        after_doc = an.insert_first(f.body, "m.eval()")
        assert after_doc is not None
        assert ctx.module.code_for_node(after_doc[1]).split() == ['"""Doc."""', "m.eval()", "return", "1"]
        first = an.insert_first(g.body, "m.eval()")
        assert first is not None and ctx.module.code_for_node(first[1]).split()[0] == "m.eval()"


class TestParameterFree:
    """`Networks.parameter_free`: a module class of the file that, as its body shows, owns
    only buffers."""

    @pytest.mark.parametrize(
        ("init", "free"),
        [
            ('self.register_buffer("fb", torch.randn(80, 201))', True),
            ("self.hop = hop", True),
            ("self.fc = nn.Linear(4, 2)", False),
            ("self.w = nn.Parameter(torch.zeros(3))", False),
            ('self.register_parameter("w", None)', False),
            ("self.inner = Inner()", False),
            ("self.net = net", False),
            ("self.blocks = make_blocks(hop)", False),
            ("self.hop, self.net = hop, net", False),
            ("self.net: nn.Module = net", False),
        ],
    )
    def test_the_constructor_decides(self, init: str, free: bool) -> None:
        ctx = context(
            f"""
            import torch
            from torch import nn
            class Features(nn.Module):
                def __init__(self, net=None, hop=160):
                    super().__init__()
                    {init}
                def forward(self, x):
                    return x
            """
        )
        assert an.networks(ctx).parameter_free("Features") is free

    def test_a_subclass_of_a_class_of_the_file_is_not_judged(self) -> None:
        ctx = context(
            """
            import torch
            class Base(torch.nn.Module):
                pass
            class Features(Base):
                def forward(self, x):
                    return x
            """
        )
        assert not an.networks(ctx).parameter_free("Features")
        assert an.networks(ctx).parameter_free("Base")

    def test_a_layer_built_in_forward_counts(self) -> None:
        ctx = context(
            """
            import torch
            class Features(torch.nn.Module):
                def forward(self, x):
                    return torch.nn.Conv1d(1, 1, 3)(x)
            """
        )
        assert not an.networks(ctx).parameter_free("Features")


def test_torch_layers_that_compute_the_same_in_eval_mode() -> None:
    ctx = context(
        """
        import torch.nn as nn
        a = nn.Linear(3, 4)
        b = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
        c = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.1))
        d = nn.LSTM(3, 4, 2, batch_first=True)
        e = nn.LSTM(3, 4, 2, dropout=0.2)
        f = nn.BatchNorm1d(4)
        g = nn.TransformerEncoderLayer(8, 2)
        h = Custom()
        """
    )
    assert {k for k in "abcdefgh" if an.mode_free(ctx, k)} == {"a", "b", "d"}


def test_a_name_moved_by_a_statement_of_its_own_is_a_module() -> None:
    ctx = context(
        """
        session = model.prepare_session(device=device)
        session.to(torch_device)
        x = x.to(torch_device)
        """
    )
    nets = an.Networks(ctx)
    found = {name: nets.moved_in_place(cst.parse_expression(name)) for name in ("session", "x", "model")}
    assert found == {"session": True, "x": False, "model": False}
