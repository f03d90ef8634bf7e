"""bench/maintained.py scores torchlint's findings on maintained code against judgements
read by hand: per rule counts, false alarms per 100k lines, unjudged findings and lost
true bugs."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

MAINTAINED = Path(__file__).resolve().parent.parent / "bench" / "maintained.py"
_spec = importlib.util.spec_from_file_location("bench_maintained", MAINTAINED)
assert _spec is not None and _spec.loader is not None
maintained = importlib.util.module_from_spec(_spec)
sys.modules["bench_maintained"] = maintained  # dataclasses look their module up there
_spec.loader.exec_module(maintained)

LOOP = """\
import torch

model = torch.nn.Linear(4, 2)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for x in [torch.randn(3, 4)] * 5:
    loss = model(x).sum()
    loss.backward()
    opt.step()
"""


def judgements_file(tmp_path: Path, body: str, commit: str = "abc") -> Path:
    path = tmp_path / "judgements.toml"
    path.write_text(f'[[repo]]\nname = "me+proj"\ncommit = "abc"\npython_lines = 8\n\n{body}', encoding="utf-8")
    return path


def judgement(verdict: str, line: int = 8, commit: str = "abc", reason: str = "why") -> str:
    return (f'[[judgement]]\nrepo = "me+proj"\ncommit = "{commit}"\npath = "train.py"\nline = {line}\n'
            f'code = "TL001"\nverdict = "{verdict}"\nreason = "{reason}"\n')


@pytest.mark.parametrize(
    "body, complaint",
    [
        (judgement("maybe"), "verdict 'maybe'"),
        (judgement("false", commit="def"), "not the listed commit"),
        (judgement("false", reason=""), "needs a reason"),
        (judgement("false") + judgement("true"), "judged twice"),
    ],
)
def test_a_judgement_that_says_too_little_is_refused(tmp_path: Path, body: str, complaint: str) -> None:
    with pytest.raises(maintained.JudgementError, match=complaint):
        maintained.load(judgements_file(tmp_path, body))


def test_the_tally_counts_verdicts_and_names_unjudged_findings_and_lost_bugs(tmp_path: Path) -> None:
    body = judgement("false", line=8) + judgement("true", line=30) + judgement("debatable", line=9)
    _, judgements = maintained.load(judgements_file(tmp_path, body))
    findings = [maintained.Finding("me+proj", "train.py", 8, "TL001"),
                maintained.Finding("me+proj", "train.py", 9, "TL001"),
                maintained.Finding("me+proj", "train.py", 12, "TL001"),
                maintained.Finding("me+proj", "train.py", 3, "TL017")]
    per_rule, unjudged, lost = maintained.tally(findings, judgements)
    tl001 = per_rule["TL001"]
    assert (tl001.findings, tl001.true, tl001.false, tl001.debatable, tl001.unjudged) == (3, 0, 1, 1, 1)
    assert per_rule["TL017"].unjudged == 1
    assert [f.line for f in unjudged] == [12]  # info findings are counted, not listed
    assert [j.line for j in lost] == [30]


def check(tmp_path: Path, body: str) -> subprocess.CompletedProcess[str]:
    checkout = tmp_path / "checkouts" / "me+proj"
    checkout.mkdir(parents=True)
    (checkout / "train.py").write_text(LOOP, encoding="utf-8")
    return subprocess.run([sys.executable, str(MAINTAINED), "check", str(tmp_path / "checkouts"),
                           "--judgements", str(judgements_file(tmp_path, body)), "--strict"],
                          capture_output=True, text=True, timeout=300)


def test_a_judged_false_alarm_is_counted_per_100k_lines_and_fails_the_goal(tmp_path: Path) -> None:
    done = check(tmp_path, judgement("false", line=8))
    assert "1 repositories, 8 lines of Python" in done.stdout
    assert "TL001" in done.stdout and "12500.00" in done.stdout  # 1 false alarm in 8 lines
    assert "findings with no judgement" not in done.stdout
    assert done.returncode == 1


def test_an_unjudged_finding_is_listed(tmp_path: Path) -> None:
    done = check(tmp_path, "")
    assert "findings with no judgement (1):" in done.stdout
    assert "me+proj/train.py:8 TL001" in done.stdout
    assert done.returncode == 1


def test_a_found_true_bug_passes_and_a_lost_one_is_named(tmp_path: Path) -> None:
    assert check(tmp_path / "a", judgement("true", line=8)).returncode == 0
    lost = check(tmp_path / "b", judgement("true", line=8) + judgement("true", line=5, reason="was found"))
    assert "true bugs no longer found (1):" in lost.stdout and "train.py:5 TL001: was found" in lost.stdout
    assert lost.returncode == 1
