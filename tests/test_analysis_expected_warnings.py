"""Unit tests of `torchlint.rules._analysis.expected_warnings` (code that runs where a test
expects a warning) and of `flow.runs_once` (scopes that one run executes at most once)."""

from __future__ import annotations

import libcst as cst

from analysis_support import call, context
from torchlint.rules import _analysis as an

WARNING_CHECKS = """
import unittest
import warnings
import pytest
from pytest import warns as expect_warning

class T(unittest.TestCase):
    def test_callable(self):
        def checked():
            a.step()
        def unchecked():
            b.step()
        self.assertWarnsRegex(UserWarning, "msg", checked)
        self.assertWarns(UserWarning, lambda: c.step())
        unchecked()

    def test_context(self):
        with self.assertWarns(UserWarning):
            d.step()
        with self.assertRaises(ValueError):
            e.step()

    def test_other_checked(self):
        def checked():
            f.step()
        checked()

def test_pytest():
    with pytest.warns(UserWarning):
        g.step()
    with expect_warning(UserWarning):
        h.step()
    with warnings.catch_warnings(record=True):
        i.step()
    pytest.warns(UserWarning, checked)
    j.step()
"""


def test_code_where_a_warning_is_expected() -> None:
    ctx = context(WARNING_CHECKS, "test_sched.py")
    warned = an.expected_warnings(ctx)
    covered = {name for name in "abcdefghij" if warned.covers(call(ctx, f"{name}.step()"))}
    # `f` sits in a same-named `checked` of another test, which only calls it.
    assert covered == {"a", "c", "d", "g", "h", "i"}


def test_expects_warning_reads_imports() -> None:
    ctx = context("from pytest import warns\nimport pytest as pt\nwarns(W)\npt.warns(W)\nwarns_of(W)\n")
    imps = an.imports(ctx)
    found = [c for c in an.index(ctx).nodes(cst.Call) if an.expects_warning(imps, c)]
    assert [ctx.module.code_for_node(c) for c in found] == ["warns(W)", "pt.warns(W)"]


def test_scopes_that_run_once() -> None:
    ctx = context(
        """
        def setup():
            pass

        def per_batch():
            pass

        def exported_step():
            pass

        def main():
            setup()
            for batch in loader:
                per_batch()

        def test_one():
            pass

        main()
        """
    )
    idx, funcs = an.index(ctx), an.functions(ctx)
    once = {f.name.value for f in idx.nodes(cst.FunctionDef) if an.runs_once(idx, funcs, f)}
    assert once == {"setup", "main", "test_one"}
    assert an.runs_once(idx, funcs, idx.module)
