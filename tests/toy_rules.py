"""Small fixable rules that exercise the fix machinery independently of the real rules'
fixes: a safe fix, an unsafe fix whose result the safe rule then fixes (two passes), and
a fix that would break the parse. `register` adds them to the registry for a test."""

from __future__ import annotations

from typing import Iterable

import libcst as cst
import libcst.matchers as m
import pytest

from torchlint import api, registry
from torchlint.rule import FileContext, FixSpec, Report, Rule


def _calls(module: cst.Module, method: str) -> list[cst.Call]:
    found: list[cst.Call] = []

    class Visitor(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if m.matches(node, m.Call(func=m.Attribute(attr=m.Name(method)), args=[])):
                found.append(node)

    module.visit(Visitor())
    return found


def _method(call: cst.Call, name: str, *args: str) -> cst.Call:
    assert isinstance(call.func, cst.Attribute)
    return call.with_changes(
        func=call.func.with_changes(attr=cst.Name(name)),
        args=[cst.Arg(cst.SimpleString(f'"{a}"')) for a in args],
    )


class ToyCuda(Rule):
    """## What it does
    Flags `x.cuda()`; the safe fix writes `x.to("cuda")`."""

    CODE = "TL980"
    NAME = "toy-cuda"
    SUMMARY = "x.cuda() call"
    TRIGGERS = (("cuda",),)

    def check(self, ctx: FileContext) -> Iterable[Report]:
        for call in _calls(ctx.module, "cuda"):
            fix = FixSpec('use `.to("cuda")`', ((call, _method(call, "to", "cuda")),))
            yield self.report(call, "`.cuda()`: use `.to(\"cuda\")`", fix)


class ToyCpu(Rule):
    """## What it does
    Flags `x.cpu()`; the unsafe fix writes `x.cuda()`, which `ToyCuda` then flags."""

    CODE = "TL981"
    NAME = "toy-cpu"
    SUMMARY = "x.cpu() call"
    TRIGGERS = (("cpu",),)

    def check(self, ctx: FileContext) -> Iterable[Report]:
        for call in _calls(ctx.module, "cpu"):
            fix = FixSpec("use `.cuda()`", ((call, _method(call, "cuda")),), safe=False)
            yield self.report(call, "`.cpu()`: use `.cuda()`", fix)


class ToyBroken(Rule):
    """## What it does
    Flags `x.breaks()`; its fix produces code that does not parse."""

    CODE = "TL982"
    NAME = "toy-broken"
    SUMMARY = "x.breaks() call"
    TRIGGERS = (("breaks",),)

    def check(self, ctx: FileContext) -> Iterable[Report]:
        for call in _calls(ctx.module, "breaks"):
            yield self.report(call, "`.breaks()`", FixSpec("break the file", ((call, cst.Name("lambda")),)))


TOY_RULES = (ToyCuda, ToyCpu, ToyBroken)


def register(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = (*registry.all_rules(), *TOY_RULES)
    codes = {**registry.catalog(), **{rule.CODE: rule.NAME for rule in TOY_RULES}}
    monkeypatch.setattr(registry, "all_rules", lambda: rules)
    monkeypatch.setattr(registry, "catalog", lambda: codes)
    real = api.enabled_rules
    monkeypatch.setattr(
        api, "enabled_rules", lambda config: [*real(config), *(r() for r in TOY_RULES if api.is_enabled(r.CODE, r.NAME, config))]
    )
