"""Measure torchlint's false alarms on maintained PyTorch training code.

    python bench/maintained.py export MIRROR CHECKOUTS
    python bench/maintained.py check CHECKOUTS [--torchlint PATH] [--judgements FILE]
                                     [--results DIR] [--strict]

Maintained code has few bugs, so what torchlint reports there is mostly false alarms: this
measures precision, not recall. The repositories, their commits and their Python line
counts are listed as `[[repo]]` tables in bench/maintained/judgements.toml; each
finding read by hand is a `[[judgement]]` there (repo, commit, path, line, code, verdict,
reason), with verdict `true` (a real bug), `false` (a false alarm: the code is correct as
written) or `debatable` (correct in this use, but fragile or wrong under another reading).
The goal (issue 11): at most 0.5 false alarms per 100,000 lines over all rules but TL017
(info), and every judged true bug still found.

Reproducing: bring each repository with the `fetch` tool (`github:<owner>/<name>`; it
leaves a bare git directory at /work/.mirror/<owner>+<name>/repo), then `export` writes
the `.py` files of the recorded commit of each into CHECKOUTS/<owner>+<name>/ (no other
files: notebooks and data are not measured). `check` runs
`torchlint check --isolated --format json --exit-zero --jobs 1` on each checkout, one at a
time, and prints per rule: findings, judged true / false / debatable, unjudged, false
alarms per 100,000 lines; then the findings with no judgement, and the judged true bugs
that torchlint no longer reports. `--results DIR` keeps each repository's JSON output in
DIR and reuses it when present (delete it to re-run). `--strict` exits 1 when a finding
is unjudged, a true bug is lost or the false alarms exceed the goal.

The fetched code is never committed: only the judgements are.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

JUDGEMENTS = Path(__file__).resolve().parent / "maintained" / "judgements.toml"
INFO_RULE = "TL017"
VERDICTS = ("true", "false", "debatable")
GOAL_PER_100K = 0.5


class JudgementError(ValueError):
    """A judgements file that does not say what the benchmark needs."""


@dataclass(frozen=True)
class Repo:
    name: str
    commit: str
    python_lines: int


@dataclass(frozen=True)
class Finding:
    repo: str
    path: str
    line: int
    code: str
    message: str = ""

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.repo, self.path, self.line, self.code)


@dataclass(frozen=True)
class Judgement:
    repo: str
    commit: str
    path: str
    line: int
    code: str
    verdict: str
    reason: str

    @property
    def key(self) -> tuple[str, str, int, str]:
        return (self.repo, self.path, self.line, self.code)


def load(path: Path) -> tuple[list[Repo], dict[tuple[str, str, int, str], Judgement]]:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    repos = [Repo(r["name"], r["commit"], int(r["python_lines"])) for r in data.get("repo", [])]
    commits = {r.name: r.commit for r in repos}
    judgements: dict[tuple[str, str, int, str], Judgement] = {}
    for entry in data.get("judgement", []):
        j = Judgement(entry["repo"], entry["commit"], entry["path"], int(entry["line"]),
                      entry["code"], entry["verdict"], entry.get("reason", ""))
        where = f"{j.repo}/{j.path}:{j.line} {j.code}"
        if j.verdict not in VERDICTS:
            raise JudgementError(f"{where}: verdict {j.verdict!r} is not one of {VERDICTS}")
        if commits.get(j.repo) != j.commit:
            raise JudgementError(f"{where}: commit {j.commit} is not the listed commit of {j.repo}")
        if not j.reason:
            raise JudgementError(f"{where}: a judgement needs a reason")
        if j.key in judgements:
            raise JudgementError(f"{where}: judged twice")
        judgements[j.key] = j
    return repos, judgements


def python_lines(checkout: Path) -> int:
    total = 0
    for file in checkout.rglob("*.py"):
        with open(file, "rb") as handle:
            total += sum(1 for _ in handle)
    return total


def export(mirror: Path, checkouts: Path, repos: list[Repo]) -> None:
    """Write the .py files of each repository's recorded commit into checkouts/<name>/."""
    for repo in repos:
        git_dir = mirror / repo.name / "repo"
        if not git_dir.is_dir():
            sys.exit(f"{repo.name}: no {git_dir}; bring it with fetch github:{repo.name.replace('+', '/', 1)}")
        dest = checkouts / repo.name
        dest.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", repo.commit, "--", ":(glob)**/*.py"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            sys.exit(f"{repo.name}: git archive {repo.commit} failed (a newer snapshot?): "
                     f"{archive.stderr.decode(errors='replace').strip()}")
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        lines = python_lines(dest)
        note = "" if lines == repo.python_lines else f" (listed: {repo.python_lines})"
        print(f"{repo.name} {repo.commit[:12]}: {lines} lines{note}")


def run_torchlint(torchlint: str, checkout: Path, results: Path | None) -> list[dict[str, object]]:
    saved = results / f"{checkout.name}.json" if results else None
    if saved is not None and saved.is_file():
        try:
            return list(json.loads(saved.read_text(encoding="utf-8")))
        except json.JSONDecodeError as error:
            sys.exit(f"{saved}: not torchlint's JSON output ({error}); delete it to re-run")
    proc = subprocess.run([torchlint, "check", "--isolated", "--format", "json", "--exit-zero",
                           "--jobs", "1", str(checkout)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{checkout.name}: torchlint exited {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    if saved is not None:
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text(proc.stdout, encoding="utf-8")
    return list(json.loads(proc.stdout or "[]"))


def findings_of(repo: str, checkout: Path, items: list[dict[str, object]]) -> list[Finding]:
    root = os.path.realpath(checkout)
    found = []
    for item in items:
        path = os.path.relpath(os.path.realpath(str(item["filename"])), root)
        found.append(Finding(repo, Path(path).as_posix(), int(str(item["line"])), str(item["code"]),
                             str(item.get("message", ""))))
    return found


@dataclass
class Tally:
    findings: int = 0
    true: int = 0
    false: int = 0
    debatable: int = 0
    unjudged: int = 0


def tally(findings: list[Finding], judgements: dict[tuple[str, str, int, str], Judgement]
          ) -> tuple[dict[str, Tally], list[Finding], list[Judgement]]:
    """Per rule counts, the findings with no judgement, and the true bugs not found."""
    per_rule: dict[str, Tally] = {}
    unjudged = []
    for finding in findings:
        t = per_rule.setdefault(finding.code, Tally())
        t.findings += 1
        judgement = judgements.get(finding.key)
        if judgement is None:
            t.unjudged += 1
            if finding.code != INFO_RULE:  # info findings are counted, not judged
                unjudged.append(finding)
        else:
            setattr(t, judgement.verdict, getattr(t, judgement.verdict) + 1)
    reported = {f.key for f in findings}
    lost = [j for j in judgements.values() if j.verdict == "true" and j.key not in reported]
    return per_rule, unjudged, lost


def per_100k(count: int, lines: int) -> float:
    return 100_000 * count / lines if lines else 0.0


def report(per_rule: dict[str, Tally], lines: int, unjudged: list[Finding], lost: list[Judgement],
           repos: int) -> float:
    """Print the table; return the false alarms per 100k lines over all rules but TL017."""
    print(f"{repos} repositories, {lines:,} lines of Python\n")
    print(f"{'rule':<7}{'findings':>9}{'true':>6}{'false':>7}{'debat.':>8}{'unjudged':>10}{'FP/100k':>9}")
    total = Tally()
    for code in sorted(per_rule):
        t = per_rule[code]
        print(f"{code:<7}{t.findings:>9}{t.true:>6}{t.false:>7}{t.debatable:>8}{t.unjudged:>10}"
              f"{per_100k(t.false, lines):>9.2f}")
        if code != INFO_RULE:
            for name in ("findings", "true", "false", "debatable", "unjudged"):
                setattr(total, name, getattr(total, name) + getattr(t, name))
    rate = per_100k(total.false, lines)
    print(f"{'all but ' + INFO_RULE}: {total.findings} findings, true {total.true}, false {total.false}, "
          f"debatable {total.debatable}, unjudged {total.unjudged}")
    print(f"false alarms per 100k lines (all rules but {INFO_RULE}): {rate:.2f} (goal <= {GOAL_PER_100K})")
    judged_rate = per_100k(total.false + total.debatable, lines)
    print(f"false + debatable per 100k lines: {judged_rate:.2f}")
    if unjudged:
        print(f"\nfindings with no judgement ({len(unjudged)}):")
        for f in sorted(unjudged, key=lambda f: f.key):
            print(f"  {f.repo}/{f.path}:{f.line} {f.code} {f.message[:100]}")
    if lost:
        print(f"\ntrue bugs no longer found ({len(lost)}):")
        for j in sorted(lost, key=lambda j: j.key):
            print(f"  {j.repo}/{j.path}:{j.line} {j.code}: {j.reason}")
    return rate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("export", help="write the recorded commits' .py files into CHECKOUTS")
    ex.add_argument("mirror", type=Path, help="where fetch left the bare git directories (/work/.mirror)")
    ex.add_argument("checkouts", type=Path)
    ch = sub.add_parser("check", help="run torchlint on each checkout and score it against the judgements")
    ch.add_argument("checkouts", type=Path)
    ch.add_argument("--torchlint", default=str(Path(sys.executable).with_name("torchlint")))
    ch.add_argument("--results", type=Path, help="keep and reuse each repository's JSON output here")
    ch.add_argument("--strict", action="store_true",
                    help="exit 1 on an unjudged finding, a lost true bug or false alarms over the goal")
    for p in (ex, ch):
        p.add_argument("--judgements", type=Path, default=JUDGEMENTS)
    args = parser.parse_args(argv)
    try:
        repos, judgements = load(args.judgements)
    except (JudgementError, KeyError, tomllib.TOMLDecodeError) as error:
        sys.exit(f"{args.judgements}: {error}")
    if not repos:
        sys.exit(f"{args.judgements}: no [[repo]] listed")
    if args.command == "export":
        export(args.mirror, args.checkouts, repos)
        return 0
    findings: list[Finding] = []
    lines = 0
    for repo in repos:
        checkout = args.checkouts / repo.name
        if not checkout.is_dir():
            sys.exit(f"{repo.name}: no checkout at {checkout}; run `export` first")
        lines += python_lines(checkout)
        findings += findings_of(repo.name, checkout, run_torchlint(args.torchlint, checkout, args.results))
    per_rule, unjudged, lost = tally(findings, judgements)
    rate = report(per_rule, lines, unjudged, lost, len(repos))
    return 1 if args.strict and (unjudged or lost or rate > GOAL_PER_100K) else 0


if __name__ == "__main__":
    sys.exit(main())
