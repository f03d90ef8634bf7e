"""Assign the corpus's cases to the tune and holdout splits, once, reproducibly.

    python bench/recall/split.py          # assign cases whose split is "?" (new ones in cases/_new/)
    python bench/recall/split.py --check  # verify every recorded split is the computed one

Cases from one repository (one thread for the framework trackers, where unrelated users
report) form a family that stays in one split, so that a bug and its fixed twin never end
up on both sides. Families are stratified by their first labelled rule (negatives by the
rule they are a hard negative for), shuffled with a fixed seed per stratum, and dealt so
that each stratum's case count is balanced between the splits.

Cases are added in batches (`batch = N` in a case's labels; the first batch has none), and
a batch never moves a case of an earlier one: each batch is dealt on its own (its seed
names the batch), except that a case of a family that an earlier batch already placed
joins that family's split.
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

CORPUS = Path(__file__).resolve().parent
LABELS = CORPUS / "labels.toml"
SEED = 11
SPLITS = ("tune", "holdout")
# Trackers where each thread is a different user's code.
PER_THREAD = {"pytorch/pytorch", "pytorch/examples", "huggingface/transformers",
              "Lightning-AI/pytorch-lightning"}


def family(source: str) -> str:
    match = re.match(r"https://github\.com/([^/]+/[^/]+)", source)
    if not match:
        return source
    repo = match.group(1)
    return source if repo in PER_THREAD else repo


def stratum(cases: list[dict]) -> str:
    for case in sorted(cases, key=lambda c: c["id"]):
        required = [b for b in case.get("bug", []) if not b.get("optional")]
        if required:
            return required[0]["rule"]
    return "neg:" + sorted(cases, key=lambda c: c["id"])[0].get("negative_for", "")


def assign(entries: list[dict]) -> dict[str, str]:
    result: dict[str, str] = {}
    for batch in sorted({entry.get("batch", 1) for entry in entries}):
        placed = {family(e["source"]): result[e["id"]] for e in entries if e["id"] in result}
        members = [e for e in entries if e.get("batch", 1) == batch]
        for entry in members:
            if family(entry["source"]) in placed:
                result[entry["id"]] = placed[family(entry["source"])]
        result.update(deal([e for e in members if e["id"] not in result], batch))
    return result


def deal(entries: list[dict], batch: int) -> dict[str, str]:
    """The splits of one batch's new families, balanced per stratum."""
    families: dict[str, list[dict]] = defaultdict(list)
    for entry in entries:
        families[family(entry["source"])].append(entry)
    strata: dict[str, list[str]] = defaultdict(list)
    for key, members in families.items():
        strata[stratum(members)].append(key)
    result: dict[str, str] = {}
    for name in sorted(strata):
        keys = sorted(strata[name])
        random.Random(f"{SEED}:{name}" if batch == 1 else f"{SEED}:{batch}:{name}").shuffle(keys)
        counts = {split: 0 for split in SPLITS}
        for key in keys:
            split = min(SPLITS, key=lambda s: (counts[s], SPLITS.index(s)))
            counts[split] += len(families[key])
            for entry in families[key]:
                result[entry["id"]] = split
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the recorded splits")
    args = parser.parse_args(argv)
    text = LABELS.read_text(encoding="utf-8")
    entries = tomllib.loads(text)["case"]
    computed = assign(entries)
    if args.check:
        wrong = [e["id"] for e in entries if e["split"] != computed[e["id"]]]
        for case_id in wrong:
            print(f"{case_id}: recorded {next(e['split'] for e in entries if e['id'] == case_id)}, "
                  f"computed {computed[case_id]}")
        return 1 if wrong else 0
    for entry in entries:
        if entry["split"] != "?":
            continue
        split = computed[entry["id"]]
        pattern = f'id = "{entry["id"]}"\nsplit = "?"'
        if text.count(pattern) != 1:
            raise SystemExit(f"{entry['id']}: cannot find its split line")
        text = text.replace(pattern, f'id = "{entry["id"]}"\nsplit = "{split}"')
        for suffix in (".py", ""):
            source = CORPUS / "cases" / "_new" / f"{entry['id']}{suffix}"
            if source.exists():
                target = CORPUS / "cases" / split / source.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(source), str(target))
    LABELS.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
