"""Measure torchlint's recall and precision on the labelled corpus of real bug reports.

    python bench/recall.py [--torchlint PATH] [--split tune|holdout|all] [--batch N] [--misses]
                           [--json FILE] [--show-holdout-rules] [--check-labels]

The corpus (bench/recall/cases/{tune,holdout}/, labels in bench/recall/labels.toml,
provenance in bench/recall/README.md) holds code from users' bug reports and fixes,
labelled by hand before torchlint was run on it. Each case (one file, or a small
project directory) is checked on its own, as a project, with the installed torchlint:
`torchlint check --format json --no-cache --isolated`.

A finding matches a label when the codes agree, the file agrees and the finding's line
is one of the label's acceptable lines (its `at` anchors). Each label is matched at most
once; a further finding on an already matched label is a duplicate (neither a TP nor an
FP); a finding on an `optional` label is ignored, and an unmatched optional label is no
FN. Every other finding is an FP, every other unmatched label an FN. TL017 (info) is
scored on its own and left out of the totals; TL000/TL999 are counted as errors.

Rule of the corpus: never tune a rule on the holdout split. The holdout split is printed
as totals only; `--show-holdout-rules` prints its per-rule table (for the final
measurement, not for development), and `--misses` lists the missed and false findings
of the tune split only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "recall"
LABELS = CORPUS / "labels.toml"
SPLITS = ("tune", "holdout")
INFO_RULE = "TL017"
ERROR_CODES = ("TL000", "TL999")


class LabelError(ValueError):
    """A label that does not name exactly one line of its case."""


@dataclass(frozen=True)
class Bug:
    """A labelled bug: its rule and every (file, line) a finding may point at."""

    rule: str
    file: str
    line: int
    locations: frozenset[tuple[str, int]]
    optional: bool = False
    why: str = ""


@dataclass
class Case:
    id: str
    split: str
    path: Path
    structure: str
    source: str
    notes: str
    negative_for: str
    bugs: list[Bug] = field(default_factory=list)
    batch: int = 1


@dataclass(frozen=True)
class Finding:
    rule: str
    file: str
    line: int
    message: str = ""


@dataclass
class CaseResult:
    case: Case
    tp: list[tuple[Bug, Finding]] = field(default_factory=list)
    fp: list[Finding] = field(default_factory=list)
    fn: list[Bug] = field(default_factory=list)
    duplicates: list[Finding] = field(default_factory=list)
    ignored: list[Finding] = field(default_factory=list)
    errors: list[Finding] = field(default_factory=list)


def case_path(root: Path, split: str, case_id: str) -> Path:
    """cases/<split>/<id>.py for a one-file case, cases/<split>/<id>/ for a project."""
    base = root / "cases" / split
    single = base / f"{case_id}.py"
    return single if single.is_file() else base / case_id


def case_files(path: Path) -> list[str]:
    if path.is_file():
        return [path.name]
    return sorted(str(p.relative_to(path)) for p in path.rglob("*.py"))


def anchor_line(text: str, anchor: str, where: str) -> int:
    """The 1-based line where `anchor` starts; it must occur exactly once in `text`."""
    count = text.count(anchor)
    if count != 1:
        raise LabelError(f"{where}: anchor {anchor!r} occurs {count} times (needs exactly 1)")
    return text[: text.index(anchor)].count("\n") + 1


def load_cases(labels: Path = LABELS, root: Path | None = None) -> list[Case]:
    root = root or labels.parent
    data = tomllib.loads(labels.read_text(encoding="utf-8"))
    cases, seen = [], set()
    for entry in data.get("case", []):
        case_id, split = entry["id"], entry["split"]
        if case_id in seen:
            raise LabelError(f"{case_id}: listed twice")
        seen.add(case_id)
        if split not in SPLITS:
            raise LabelError(f"{case_id}: split {split!r} is not one of {SPLITS}")
        path = case_path(root, split, case_id)
        if not path.exists():
            raise LabelError(f"{case_id}: no {path}")
        files = case_files(path)
        case = Case(case_id, split, path, entry.get("structure", ""), entry.get("source", ""),
                    entry.get("notes", ""), entry.get("negative_for", ""), batch=entry.get("batch", 1))
        for bug in entry.get("bug", []):
            file, lines = resolve_lines(case_id, path, files, bug)
            locations = {(file, line) for line in lines}
            for alt in bug.get("alt", []):
                alt_file, alt_lines = resolve_lines(case_id, path, files, alt)
                locations.update((alt_file, line) for line in alt_lines)
            case.bugs.append(Bug(bug["rule"], file, lines[0], frozenset(locations),
                                 bool(bug.get("optional")), bug.get("why", "")))
        cases.append(case)
    return cases


def resolve_lines(case_id: str, path: Path, files: list[str], spec: dict) -> tuple[str, list[int]]:
    """The file a label (or one of its `alt` places) names, and the lines its anchors name,
    the first anchor's line first (the line reports show)."""
    file = spec.get("file") or (files[0] if len(files) == 1 else "")
    if file not in files:
        raise LabelError(f"{case_id}: label file {spec.get('file')!r} is not one of {files}")
    text = (path / file if path.is_dir() else path).read_text(encoding="utf-8")
    where = f"{case_id}/{file}"
    lines = [anchor_line(text, anchor, where) for anchor in spec.get("at", [])]
    lines += spec.get("lines", [])
    if not lines:
        raise LabelError(f"{where}: a label with no acceptable line")
    return file, lines


def run_torchlint(torchlint: str, case: Case) -> list[Finding]:
    """Check one case as a project, with no cache and no configuration of its own."""
    if case.path.is_file():
        cwd, target = case.path.parent, case.path.name
    else:
        cwd, target = case.path, "."
    proc = subprocess.run(
        [torchlint, "check", "--format", "json", "--no-cache", "--isolated", target],
        cwd=cwd, capture_output=True, text=True, check=False,
    )
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{case.id}: torchlint exited {proc.returncode}: {proc.stderr.strip()}")
    return [
        Finding(item["code"], os.path.normpath(item["filename"]), item["line"], item.get("message", ""))
        for item in json.loads(proc.stdout or "[]")
    ]


def match(case: Case, findings: list[Finding]) -> CaseResult:
    """Pair findings with labels: code, file and an acceptable line must agree."""
    result = CaseResult(case)
    unmatched = [bug for bug in case.bugs if not bug.optional]
    matched: list[Bug] = []
    for finding in sorted(findings, key=lambda f: (f.file, f.line, f.rule)):
        if finding.rule in ERROR_CODES:
            result.errors.append(finding)
            continue

        def accepts(bug: Bug) -> bool:
            return bug.rule == finding.rule and (finding.file, finding.line) in bug.locations

        hit = next((bug for bug in unmatched if accepts(bug)), None)
        if hit is not None:
            unmatched.remove(hit)
            matched.append(hit)
            result.tp.append((hit, finding))
        elif any(accepts(bug) for bug in matched):
            result.duplicates.append(finding)
        elif any(accepts(bug) for bug in case.bugs if bug.optional):
            result.ignored.append(finding)
        else:
            result.fp.append(finding)
    result.fn = unmatched
    return result


def ratio(num: int, den: int) -> float | None:
    return num / den if den else None


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float | None:
        return ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return ratio(self.tp, self.tp + self.fn)

    def as_dict(self) -> dict[str, object]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn,
                "precision": self.precision, "recall": self.recall}


def score(results: list[CaseResult]) -> tuple[dict[str, Score], Score, Score]:
    """Per-rule scores, the total over all rules but TL017, and TL017's own score."""
    per_rule: dict[str, Score] = {}

    def rule_score(rule: str) -> Score:
        return per_rule.setdefault(rule, Score())

    for result in results:
        for bug, _ in result.tp:
            rule_score(bug.rule).tp += 1
        for finding in result.fp:
            rule_score(finding.rule).fp += 1
        for bug in result.fn:
            rule_score(bug.rule).fn += 1
    total = Score()
    for rule, s in per_rule.items():
        if rule != INFO_RULE:
            total.tp, total.fp, total.fn = total.tp + s.tp, total.fp + s.fp, total.fn + s.fn
    return dict(sorted(per_rule.items())), total, per_rule.get(INFO_RULE, Score())


def fmt(value: float | None) -> str:
    return "   -" if value is None else f"{value:.2f}"


def print_table(title: str, rows: dict[str, Score]) -> None:
    print(f"\n{title}")
    print(f"  {'rule':<8} {'TP':>4} {'FP':>4} {'FN':>4} {'prec':>6} {'recall':>6}")
    for rule, s in rows.items():
        print(f"  {rule:<8} {s.tp:>4} {s.fp:>4} {s.fn:>4} {fmt(s.precision):>6} {fmt(s.recall):>6}")


def print_misses(results: list[CaseResult]) -> None:
    print("\ntune: missed labels (FN) and false findings (FP)")
    for result in results:
        for bug in result.fn:
            print(f"  FN {bug.rule} {result.case.id}/{bug.file}:{bug.line} "
                  f"[{result.case.structure}] {bug.why}")
        for finding in result.fp:
            print(f"  FP {finding.rule} {result.case.id}/{finding.file}:{finding.line} "
                  f"[{result.case.structure}] {finding.message}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torchlint", default=str(Path(sys.executable).with_name("torchlint")),
                        help="the torchlint executable (default: the one beside this Python)")
    parser.add_argument("--split", choices=(*SPLITS, "all"), default="all")
    parser.add_argument("--misses", action="store_true", help="list the tune split's FNs and FPs")
    parser.add_argument("--show-holdout-rules", action="store_true",
                        help="print the holdout split per rule (final measurement only)")
    parser.add_argument("--batch", type=int, help="only the cases of this batch (README, Batches)")
    parser.add_argument("--json", type=Path, help="write a JSON summary here")
    parser.add_argument("--check-labels", action="store_true",
                        help="only load and resolve the labels, print the corpus counts")
    args = parser.parse_args(argv)
    if os.sep in args.torchlint:
        # The cases run in their own folders: a relative path would point nowhere there.
        args.torchlint = str(Path(args.torchlint).resolve())

    cases = [c for c in load_cases() if args.batch is None or c.batch == args.batch]
    splits = SPLITS if args.split == "all" else (args.split,)
    if args.check_labels:
        for split in splits:
            in_split = [c for c in cases if c.split == split]
            rules = Counter(b.rule for c in in_split for b in c.bugs if not b.optional)
            negatives = sum(1 for c in in_split if not any(not b.optional for b in c.bugs))
            print(f"{split}: {len(in_split)} cases, {sum(rules.values())} labels, "
                  f"{negatives} without a label; {dict(sorted(rules.items()))}")
        return 0

    summary: dict[str, object] = {"torchlint": args.torchlint, "splits": {}}
    for split in splits:
        results = [match(c, run_torchlint(args.torchlint, c)) for c in cases if c.split == split]
        per_rule, total, info = score(results)
        errors = sum(len(r.errors) for r in results)
        duplicates = sum(len(r.duplicates) for r in results)
        print(f"\n== {split}: {len(results)} cases; all rules but {INFO_RULE}: TP {total.tp}, "
              f"FP {total.fp}, FN {total.fn}, precision {fmt(total.precision)}, "
              f"recall {fmt(total.recall)}; {INFO_RULE}: TP {info.tp}, FP {info.fp}, FN {info.fn}; "
              f"duplicates {duplicates}, errors {errors}")
        entry: dict[str, object] = {"cases": len(results), "total": total.as_dict(),
                                    INFO_RULE: info.as_dict(), "duplicates": duplicates,
                                    "errors": errors}
        if split == "tune" or args.show_holdout_rules:
            print_table(f"{split} per rule", per_rule)
            entry["per_rule"] = {rule: s.as_dict() for rule, s in per_rule.items()}
        if split == "tune":
            entry["misses"] = [
                {"case": r.case.id, "structure": r.case.structure, "kind": "FN", "rule": b.rule,
                 "file": b.file, "line": b.line, "why": b.why}
                for r in results for b in r.fn
            ] + [
                {"case": r.case.id, "structure": r.case.structure, "kind": "FP", "rule": f.rule,
                 "file": f.file, "line": f.line, "message": f.message}
                for r in results for f in r.fp
            ]
            if args.misses:
                print_misses(results)
        summary["splits"][split] = entry  # type: ignore[index]
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
