"""Pack 2 precision helpers: test files, exclusive branches, host names; and the rules that
stay silent in test files (TL011, TL017)."""

from __future__ import annotations

import inspect

import libcst as cst
import pytest

from torchlint import engine
from torchlint.registry import all_rules
from torchlint.rule import FileContext
from torchlint.rules import _analysis as an

RULES = {rule.CODE: rule for rule in all_rules()}


def context(source: str, filename: str = "example.py") -> FileContext:
    source = inspect.cleandoc(source) + "\n"
    return FileContext(filename, source, cst.parse_module(source))


@pytest.mark.parametrize(
    "filename, expected",
    [
        ("tests/pipelines/test_mnist.py", True),
        ("pkg/tests/helpers.py", True),
        ("src/model_test.py", True),
        ("conftest.py", True),
        ("C:\\repo\\testing\\utils.py", True),
        ("train.py", False),
        ("latest_model.py", False),
        ("src/contest/train.py", False),
    ],
)
def test_is_test_file(filename: str, expected: bool) -> None:
    assert an.is_test_file(context("x = 1", filename)) is expected


def assignments(ctx: FileContext) -> dict[str, cst.Assign]:
    found: dict[str, cst.Assign] = {}
    for assign in an.index(ctx).nodes(cst.Assign):
        found.setdefault(ctx.module.code_for_node(assign.value).strip(), assign)
    return found


def test_exclusive_branches_of_one_if_and_of_two_ifs_on_one_condition() -> None:
    ctx = context(
        """
        def f(flag, other):
            if flag:
                a = 1
            elif other:
                b = 2
            else:
                c = 3
            d = 4
            if flag:
                e = 5
            else:
                g = 6
        """
    )
    idx = an.index(ctx)
    a, b, c, d, e, g = (assignments(ctx)[str(n)] for n in (1, 2, 3, 4, 5, 6))
    assert an.in_exclusive_branches(idx, a, b)
    assert an.in_exclusive_branches(idx, b, c)
    assert an.in_exclusive_branches(idx, a, g)
    assert not an.in_exclusive_branches(idx, a, e)
    assert not an.in_exclusive_branches(idx, a, d)
    assert not an.in_exclusive_branches(idx, d, e)


@pytest.mark.parametrize(
    "name, expected",
    [("x_host", True), ("cpu_mask", True), ("self.hostBuffer", True), ("ghost", False), ("cpus_used", False)],
)
def test_says_host(name: str, expected: bool) -> None:
    assert an.says_host(name) is expected


FACTORY_IN_FORWARD = """
import torch
from torch import nn
class Net(nn.Module):
    def forward(self, x):
        return x + torch.randn(x.shape)
model = Net().cuda()
"""

LOADER_IN_TRAINING = """
import torch
from torch.utils.data import DataLoader
loader = DataLoader(train_set, batch_size=32, shuffle=True)
for x, y in loader:
    criterion(model(x.cuda()), y.cuda()).backward()
"""


@pytest.mark.parametrize("code, source", [("TL011", FACTORY_IN_FORWARD), ("TL017", LOADER_IN_TRAINING)])
def test_silent_in_test_files_only(code: str, source: str) -> None:
    rule = RULES[code]
    in_script = engine.check_source(source, "train.py", [rule()])
    in_tests = engine.check_source(source, "tests/test_train.py", [rule()])
    assert [f.code for f in in_script] == [code]
    assert in_tests == []
