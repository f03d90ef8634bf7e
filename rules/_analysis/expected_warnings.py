"""Code that runs where a warning is expected: the body of `with warnings.catch_warnings():`
(the code reads or silences warnings itself), of `with pytest.warns(...)`/
`pytest.deprecated_call()` and `with self.assertWarns(...)`/`assertWarnsRegex(...)`, and the
function or lambda a test hands to the callable form of those checks
(`self.assertWarnsRegex(UserWarning, "...", fn)`, `pytest.warns(UserWarning, fn)`). A test
there misuses an API on purpose to see its warning, so a rule about the misuse that the
warning reports stays silent there.
"""

from __future__ import annotations

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.calls import method_name
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import Imports, imports

# The unittest methods and pytest helpers that expect a warning.
ASSERT_WARNS = ("assertWarns", "assertWarnsRegex")
PYTEST_WARNS = ("pytest.warns", "pytest.deprecated_call")


def expects_warning(imps: Imports, expr: cst.BaseExpression) -> bool:
    """`expr` is a check that a warning is raised, or `warnings.catch_warnings(...)`."""
    if not isinstance(expr, cst.Call):
        return False
    return method_name(expr) in ASSERT_WARNS or imps.callee(expr) in (*PYTEST_WARNS, "warnings.catch_warnings")


class ExpectedWarnings:
    """The `with` blocks and functions of one module in which a warning is expected."""

    def __init__(self, ctx: FileContext) -> None:
        self.idx = idx = index(ctx)
        self.imps = imports(ctx)
        # Names and lambdas handed to a callable-form check, by the scope that hands them.
        self.checked_names: set[tuple[int, str]] = set()
        self.checked_lambdas: set[int] = set()
        for call in idx.nodes(cst.Call):
            if not expects_warning(self.imps, call) or isinstance(idx.parent(call), cst.WithItem):
                continue
            for arg in call.args:
                if isinstance(arg.value, cst.Lambda):
                    self.checked_lambdas.add(id(arg.value))
                elif isinstance(arg.value, cst.Name) and arg.keyword is None:
                    self.checked_names.add((id(idx.scope(call)), arg.value.value))

    def covers(self, node: cst.CSTNode) -> bool:
        """`node` runs in a `with` block that expects a warning, or in a function that a
        callable-form check runs (defined in the scope that hands it to the check)."""
        for ancestor in self.idx.ancestors(node):
            if isinstance(ancestor, cst.With) and any(expects_warning(self.imps, item.item) for item in ancestor.items):
                return True
            if id(ancestor) in self.checked_lambdas:
                return True
            if isinstance(ancestor, cst.FunctionDef) and (
                (id(self.idx.scope(ancestor)), ancestor.name.value) in self.checked_names
            ):
                return True
        return False


def expected_warnings(ctx: FileContext) -> ExpectedWarnings:
    return ctx.analysis(ExpectedWarnings)
