"""A table or mask built by a function of one module and used by a layer's `forward` in
another (TL011): reported in the function when that `forward` computes with the result as
it got it (`x + sinusoid_table(n, d)`), not when it moves it first; the cache re-checks the
function's module when the layer changes what it does with the result."""

from __future__ import annotations

from pathlib import Path

from project_support import check, check_alone, copy_project, edit, findings, summary

FOUND = [("tables/encodings.py", 9, "TL011")]


def test_summaries_record_the_results_a_function_computes_with() -> None:
    source = """
    from .encodings import table, mask, other
    def forward(self, x):
        x = x + table(4)
        m = mask(4)
        y = x * m
        z = other(4).to(x.device) + x
        return y + z
    """
    assert summary(source)["defs"]["forward"]["mixes"] == [".encodings.table", ".encodings.mask"]


def test_the_table_that_forward_adds_to_its_input_is_reported(tmp_path: Path) -> None:
    # The table's `torch.zeros`, not the mask, which `forward` moves to the input's device.
    assert findings(check(copy_project("tables", tmp_path)), "TL011") == FOUND


def test_alone_the_function_is_not_known_to_run_in_a_forward(tmp_path: Path) -> None:
    assert check_alone(copy_project("tables", tmp_path), "tables/encodings.py", "TL011") == []


def test_moving_the_table_in_the_layer_rechecks_the_function(tmp_path: Path) -> None:
    project = copy_project("tables", tmp_path)
    cache = tmp_path / "cache"
    assert findings(check(project, cache=cache), "TL011") == FOUND
    edit(
        project / "tables" / "model.py",
        "sinusoid_table(tokens.size(1), self.dim)",
        "sinusoid_table(tokens.size(1), self.dim).to(x.device)",
    )
    assert findings(check(project, cache=cache), "TL011") == []
