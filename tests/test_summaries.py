"""Unit tests of the summaries (torchlint.rules._summaries): what one module tells the
others about its functions, methods and classes."""

from __future__ import annotations

import ast
import inspect
import json
from typing import Any

import pytest

import torchlint.rules._summarize as summarize_module
from torchlint.rules._summarize import summarize


def summary(source: str) -> dict[str, Any]:
    return summarize(ast.parse(inspect.cleandoc(source)))


def effects(source: str, name: str) -> set[str]:
    return set(summary(source)["defs"][name]["effects"])


@pytest.mark.parametrize(
    ("body", "effect"),
    [
        ("optimizer.zero_grad()", "clears_grads"),
        ("model.zero_grad(set_to_none=True)", "clears_grads"),
        ("for p in params:\n        p.grad = None", "clears_grads"),
        ("for p in params:\n        p.grad.zero_()", "clears_grads"),
        ("for p in params:\n        del p.grad", "clears_grads"),
        ("zero_grads(model)", "clears_grads"),
        ("optimizer.step()", "steps"),
        ("scaler.step(opt)", "steps"),
        ("loss.backward()", "backward"),
        ("torch.autograd.backward(loss)", "backward"),
        ("torch.cuda.synchronize()", "syncs"),
        ("value = loss.item()", "syncs"),
        ("out = y.cpu()", "syncs"),
        ("with torch.no_grad():\n        model(x)", "enters_grad_free"),
        ("with torch.inference_mode():\n        model(x)", "enters_grad_free"),
        ("model.eval()", "sets_eval"),
        ("model.train(False)", "sets_eval"),
        ("model.train()", "sets_train"),
        ("model.to(device)", "moves_device"),
        ("net.cuda()", "moves_device"),
        ("torch.cuda.set_device(rank)", "selects_gpu"),
        ("os.environ['CUDA_VISIBLE_DEVICES'] = str(rank)", "selects_gpu"),
        ("dist.init_process_group('nccl', device_id=dev)", "selects_gpu"),
        ("dist.init_process_group('nccl')", "inits_process_group"),
        ("sampler = DistributedSampler(data)", "distributed_sampler"),
        ("torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)", "clips_grads"),
        ("clip_grad_value_(params, 0.5)", "clips_grads"),
        ("scaler.unscale_(optimizer)", "unscales"),
        ("for batch in x:\n        model(batch).backward()\n        optimizer.step()", "steps_in_loop"),
    ],
)
def test_function_effects(body: str, effect: str) -> None:
    source = f"import os, torch\nimport torch.distributed as dist\ndef f(model, x):\n    {body}\n"
    assert effect in set(summarize(ast.parse(source))["defs"]["f"]["effects"])


@pytest.mark.parametrize(
    "body",
    [
        "lr_scheduler.step()",  # a schedule's step is not an optimizer's
        "env.step(action)",
        "torch.set_grad_enabled(True)",
        "sampler = DistributedSampler(data, shuffle=False)",  # the order never changes anyway
        "sampler = DistributedSampler(data, **kwargs)",
    ],
)
def test_what_is_no_effect(body: str) -> None:
    source = f"import torch\ndef f(x):\n    {body}\n"
    found = set(summarize(ast.parse(source))["defs"]["f"]["effects"])
    assert not found & {"steps", "syncs", "enters_grad_free", "distributed_sampler"}


def test_a_grad_free_decorator() -> None:
    assert "grad_free" in effects(
        """
        import torch
        @torch.no_grad()
        def evaluate(model, x):
            return model(x)
        """,
        "evaluate",
    )


@pytest.mark.parametrize(
    ("body", "frozen"),
    [
        ("self.requires_grad_(False)", True),
        ("for p in self.parameters():\n        p.requires_grad = False", True),
        ("for name, p in self.named_parameters():\n        p.requires_grad_(False)", True),
        ("[p.requires_grad_(False) for p in self.parameters()]", True),
        ("for p in self.head.parameters():\n        p.requires_grad = False", False),  # a part only
        ("for p in self.parameters():\n        p.requires_grad = True", False),
        ("self.requires_grad_(True)", False),
    ],
)
def test_a_method_that_freezes_its_own_parameters(body: str, frozen: bool) -> None:
    source = f"class Encoder:\n    def __init__(self):\n        {body.replace(chr(10), chr(10) + '    ')}\n"
    found = summarize(ast.parse(source))["defs"]["Encoder"]["methods"]["__init__"]["effects"]
    assert ("freezes_self" in found) is frozen


def test_mode_set_on_a_parameter_and_by_a_flag() -> None:
    found = summary(
        """
        def run_epoch(model, loader, train):
            model.train(train)

        def evaluate(net, helper):
            net.eval()
            helper.model.eval()
        """
    )["defs"]
    assert found["run_epoch"]["mode_params"] == {"model": "flag:train"}
    assert found["evaluate"]["mode_params"] == {"net": "eval"}


def test_a_mode_method_called_on_a_parameter_is_recorded_for_its_class_to_answer() -> None:
    found = summary(
        """
        def encode(model, loader):
            model.val_start()
            model.logger = None
            model.reset()

        def resume(model):
            model.val_start()
            model.train()

        def step(model, x):
            model.train_emb(x)
        """
    )["defs"]
    assert found["encode"]["mode_params"] == {"model": "method:val_start"}
    assert found["resume"]["mode_params"] == {"model": "train"}  # the last switch is the last word
    assert found["step"]["mode_params"] == {}  # given arguments: a step, not a switch


def test_runs_names_the_parameters_and_attributes_called_as_modules() -> None:
    found = summary(
        """
        class Runner:
            def infer(self, x, head):
                features = self.backbone(x)
                return head.forward(features), self.log(x.shape)

        def predict(model, batch, device):
            return model(batch.to(device))
        """
    )["defs"]
    assert found["Runner"]["methods"]["infer"]["runs"] == ["self.backbone", "head", "self.log"]
    assert found["predict"]["runs"] == ["model"]


def test_calls_name_the_project_functions_they_may_run() -> None:
    found = summary(
        """
        import torch
        from . import helpers
        from .dist import setup as setup_dist
        import pkg.utils as utils

        def local():
            pass

        class Trainer:
            def fit(self):
                self.step()
                local()
                helpers.clear(self.optimizer)
                setup_dist()
                utils.log("x")
                torch.cuda.synchronize()
                print("done")
        """
    )
    assert found["imports"] == {"torch": "torch", "helpers": ".helpers", "setup_dist": ".dist.setup", "utils": "pkg.utils"}
    calls = found["defs"]["Trainer"]["methods"]["fit"]["calls"]
    assert calls == [":Trainer.step", ":local", ".helpers.clear", ".dist.setup", "pkg.utils.log", "torch.cuda.synchronize"]


def test_returns_name_what_a_factory_builds() -> None:
    found = summary(
        """
        from torch.utils.data import DataLoader
        from .models import Net

        def make_loader(data):
            loader = DataLoader(data, batch_size=8)
            return loader

        def build(device):
            return Net().to(device)
        """
    )["defs"]
    assert found["make_loader"]["returns"] == ["torch.utils.data.DataLoader"]
    assert found["build"]["returns"] == [".models.Net"]


def test_a_class_records_its_attributes_methods_and_layers() -> None:
    found = summary(
        """
        from torch import nn
        from .data import make_loader
        from .layers import Block

        class Net(nn.Module):
            '''No dropout here.'''

            def __init__(self, width, dropout=0.1):
                super().__init__()
                self.fc = nn.Linear(width, width)
                self.dropout = nn.Dropout(dropout)
                self.block = Block(width)

            def forward(self, x):
                return self.block(self.dropout(self.fc(x)))

        class Trainer:
            def __init__(self, model):
                self.model = model
                self.loader = make_loader()
        """
    )["defs"]
    net = found["Net"]
    assert net["bases"] == ["torch.nn.Module"]
    assert net["mode_words"] is False  # the docstring and the rate parameter do not count
    assert net["dropout_params"] == {"dropout": 0.1}
    assert net["init_params"] == ["width", "dropout"]
    assert net["uses"] == [".layers.Block"]
    assert set(net["methods"]) == {"__init__", "forward"}
    assert found["Trainer"]["attrs"] == {"model": [], "loader": [".data.make_loader"]}


@pytest.mark.parametrize(
    "layer", ["nn.BatchNorm2d(8)", "nn.Dropout(0.5)", "nn.LSTM(8, 8)", "nn.TransformerEncoderLayer(8, 2)"]
)
def test_mode_dependent_layers(layer: str) -> None:
    found = summary(
        f"""
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.layer = {layer}
        """
    )
    assert found["defs"]["Net"]["mode_words"] is True


@pytest.mark.parametrize(
    ("body", "placed"),
    [
        ("n = ids.shape[0]\n    ids = ids.to(device=device, dtype=torch.float32)\n    return ids[:n] + 1", True),
        ("return torch.meshgrid(ids.to(device=device), torch.arange(4, device=device))", True),
        ("return conv(x, ids[:, None].float().to(device=x.device))", True),
        ("if ids.size(0) > 1:\n        return ids.cuda()\n    return ids.cuda() * 2", True),
        ("ids = ids.to(torch.float32)\n    return ids.to(device)", False),  # a cast, then the cast is moved
        ("ids = ids + 1\n    return ids.to(device)", False),  # computed with on the host first
        ("moved = ids.to(device)\n    return moved + ids", False),  # read again, unmoved
        ("if device.type == 'cuda':\n        ids = ids.to(device)\n    return ids * 2", False),  # moved on one path only
        ("return x[ids.to(device)]", True),
        ("ids = ids.cuda()\n    ids = ids * 2\n    return ids", True),  # computed with once moved
        ("ids = ids * 2\n    ids = ids.cuda()\n    return ids", False),
        ("return x[ids]", False),
    ],
)
def test_the_parameters_a_function_moves_before_reading_them(body: str, placed: bool) -> None:
    found = summarize(ast.parse(f"def embed(x, ids, device):\n    {body}"))["defs"]["embed"]["places_params"]
    assert found == (["ids"] if placed else [])


def test_a_summary_is_plain_json() -> None:
    data = summarize(ast.parse(inspect.getsource(summarize_module)))
    assert json.loads(json.dumps(data)) == data
