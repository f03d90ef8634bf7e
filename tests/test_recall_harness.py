"""The recall harness's label resolution and matching, on synthetic cases (no torchlint run)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


def load_module(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


recall = load_module("recall_harness", BENCH / "recall.py")
split = load_module("recall_split", BENCH / "recall" / "split.py")

SCRIPT = """\
for x, y in loader:
    loss = model(x).sum()
    loss.backward()
    optimizer.step()
"""

TRAINER = """\
class Trainer:
    def fit(self):
        for epoch in range(3):
            self.train_epoch()
"""

SAMPLER = """\
sampler = DistributedSampler(dataset)
"""


def write_corpus(root: Path, labels: str) -> Path:
    (root / "cases" / "tune").mkdir(parents=True)
    (root / "cases" / "tune" / "one.py").write_text(SCRIPT)
    project = root / "cases" / "holdout" / "proj"
    project.mkdir(parents=True)
    (project / "trainer.py").write_text(TRAINER)
    (project / "data.py").write_text(SAMPLER)
    (root / "labels.toml").write_text(labels)
    return root / "labels.toml"


LABELS = """\
[[case]]
id = "one"
split = "tune"
source = "https://github.com/a/b/issues/1"
structure = "script"
[[case.bug]]
rule = "TL001"
file = ""
at = ["    optimizer.step()", "    loss.backward()"]
[[case.bug]]
rule = "TL017"
file = ""
lines = [1]
optional = true

[[case]]
id = "proj"
split = "holdout"
source = "https://github.com/a/c/pull/2"
structure = "multi-module"
[[case.bug]]
rule = "TL014"
file = "trainer.py"
at = ["        for epoch in range(3):"]
alt = [{file = "data.py", at = ["sampler = DistributedSampler"]}]
"""


def finding(rule: str, file: str, line: int) -> object:
    return recall.Finding(rule, file, line)


def test_anchor_names_the_line_where_it_starts() -> None:
    assert recall.anchor_line("a\nb\nc = 1\n", "c = 1", "x") == 3
    assert recall.anchor_line("a\nb\nc = 1\n", "b\nc", "x") == 2


@pytest.mark.parametrize("anchor", ["zzz", "a"])
def test_anchor_must_occur_exactly_once(anchor: str) -> None:
    with pytest.raises(recall.LabelError, match="occurs"):
        recall.anchor_line("a\na\n", anchor, "case")


def test_labels_resolve_to_files_and_lines(tmp_path: Path) -> None:
    cases = recall.load_cases(write_corpus(tmp_path, LABELS))
    one, proj = cases
    assert one.path == tmp_path / "cases" / "tune" / "one.py"
    assert one.bugs[0].line == 4  # the first anchor is the line reports show
    assert one.bugs[0].locations == {("one.py", 4), ("one.py", 3)}
    assert one.bugs[1].optional
    assert proj.path.is_dir()
    assert proj.bugs[0].locations == {("trainer.py", 3), ("data.py", 1)}


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ('split = "holdout"', 'split = "?"', "split"),
        ('file = "trainer.py"', 'file = "missing.py"', "label file"),
        ('at = ["        for epoch in range(3):"]', 'at = []', "no acceptable line"),
        ('id = "proj"', 'id = "one"', "listed twice"),
    ],
)
def test_bad_labels_are_reported(tmp_path: Path, old: str, new: str, message: str) -> None:
    with pytest.raises(recall.LabelError, match=message):
        recall.load_cases(write_corpus(tmp_path, LABELS.replace(old, new)))


def test_matching_counts_tp_fp_fn_duplicates_and_ignores_optional(tmp_path: Path) -> None:
    one, proj = recall.load_cases(write_corpus(tmp_path, LABELS))
    result = recall.match(one, [
        finding("TL001", "one.py", 4),  # TP
        finding("TL001", "one.py", 3),  # another acceptable line of the matched label
        finding("TL001", "one.py", 2),  # wrong line
        finding("TL004", "one.py", 4),  # wrong rule
        finding("TL017", "one.py", 1),  # optional label
        finding("TL000", "one.py", 1),  # parse error
    ])
    assert [(f.rule, f.line) for _, f in result.tp] == [("TL001", 3)]
    assert [(f.rule, f.line) for f in result.duplicates] == [("TL001", 4)]
    assert sorted((f.rule, f.line) for f in result.fp) == [("TL001", 2), ("TL004", 4)]
    assert [f.rule for f in result.ignored] == ["TL017"]
    assert [f.rule for f in result.errors] == ["TL000"]
    assert result.fn == []

    missed = recall.match(proj, [finding("TL014", "trainer.py", 1)])
    assert [b.rule for b in missed.fn] == ["TL014"]
    assert len(missed.fp) == 1
    in_other_file = recall.match(proj, [finding("TL014", "data.py", 1)])
    assert len(in_other_file.tp) == 1 and in_other_file.fn == []


def test_scores_leave_tl017_out_of_the_totals(tmp_path: Path) -> None:
    one, proj = recall.load_cases(write_corpus(tmp_path, LABELS))
    results = [
        recall.match(one, [finding("TL001", "one.py", 4), finding("TL017", "one.py", 2)]),
        recall.match(proj, []),
    ]
    per_rule, total, info = recall.score(results)
    assert (per_rule["TL001"].tp, per_rule["TL014"].fn) == (1, 1)
    assert (total.tp, total.fp, total.fn) == (1, 0, 1)
    assert (total.precision, total.recall) == (1.0, 0.5)
    assert (info.tp, info.fp, info.fn) == (0, 1, 0)
    assert info.precision == 0.0 and info.recall is None


def test_findings_are_read_relative_to_the_case(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one, proj = recall.load_cases(write_corpus(tmp_path, LABELS))
    calls = []

    class Done:
        returncode = 1
        stdout = '[{"code": "TL014", "filename": "./data.py", "line": 1, "message": "m"}]'
        stderr = ""

    def fake_run(argv, cwd, **kwargs):  # type: ignore[no-untyped-def]
        calls.append((argv, cwd))
        return Done()

    monkeypatch.setattr(recall.subprocess, "run", fake_run)
    assert recall.run_torchlint("torchlint", proj) == [recall.Finding("TL014", "data.py", 1, "m")]
    assert calls[0] == (["torchlint", "check", "--format", "json", "--no-cache", "--isolated", "."],
                        proj.path)
    recall.run_torchlint("torchlint", one)
    assert calls[1] == (["torchlint", "check", "--format", "json", "--no-cache", "--isolated", "one.py"],
                        one.path.parent)
    Done.returncode = 2
    with pytest.raises(RuntimeError, match="exited 2"):
        recall.run_torchlint("torchlint", one)


def test_split_keeps_a_family_together_and_balances_strata() -> None:
    entries = [
        {"id": f"{rule}_{n}", "source": f"https://github.com/o/r{rule}{n}/issues/1",
         "bug": [{"rule": rule}]}
        for rule in ("TL001", "TL003") for n in range(4)
    ] + [
        {"id": "neg_twin", "source": "https://github.com/o/rTL0010/pull/9", "negative_for": "TL001"},
        {"id": "thread_a", "source": "https://github.com/pytorch/pytorch/issues/1", "bug": [{"rule": "TL002"}]},
        {"id": "thread_b", "source": "https://github.com/pytorch/pytorch/issues/2", "bug": [{"rule": "TL002"}]},
    ]
    assigned = split.assign(entries)
    assert assigned["neg_twin"] == assigned["TL001_0"]
    assert sorted(assigned[f"TL003_{n}"] for n in range(4)) == ["holdout", "holdout", "tune", "tune"]
    tl001_family = [assigned[f"TL001_{n}"] for n in range(4)] + [assigned["neg_twin"]]
    assert abs(tl001_family.count("tune") - tl001_family.count("holdout")) == 1
    assert {assigned["thread_a"], assigned["thread_b"]} == {"tune", "holdout"}
    assert split.assign(entries) == assigned


def test_the_corpus_labels_resolve_and_its_splits_are_the_computed_ones() -> None:
    cases = recall.load_cases()
    assert {c.split for c in cases} == set(recall.SPLITS)
    assert split.main(["--check"]) == 0
