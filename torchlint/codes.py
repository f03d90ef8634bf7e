"""The documentation of every code that torchlint's output can show, as `torchlint
explain` prints it: the rules' (their docstrings), the codes that no rule owns (TL000,
TL900, TL998, TL999, documented here) and the probe's runtime codes (TL101-TL104, documented
beside their definitions in `runtime_probe/protocol.py`, which does not import torch).
"""

from __future__ import annotations

from dataclasses import dataclass

from torchlint.finding import (
    FILE_PROBLEMS,
    FILE_TOO_LARGE_CODE,
    INTERNAL_ERROR_CODE,
    PARSE_ERROR_CODE,
    UNUSED_SUPPRESSION_CODE,
    UNUSED_SUPPRESSION_NAME,
    Severity,
)
from torchlint.runtime_probe.protocol import RUNTIME_DOCS, RUNTIME_NAMES

FILE_PROBLEM_DOCS = {
    PARSE_ERROR_CODE: (
        "a file, or a notebook cell, that cannot be read or parsed",
        """\
## What is reported

One TL000 per file, at the offending position, with the reason, when torchlint cannot
turn a file it checks into a syntax tree; the run goes on with the other files.

Reported for every `.py` and `.ipynb` file checked, because every one is read and decoded:

- bytes that are not valid text in the file's declared encoding (UTF-8 by default), or an
  unknown encoding declaration;
- a file, or a folder found while walking a tree, that cannot be read (no permission): a
  folder gets one TL000 of its own, since none of its files is checked; a path named on the
  command line that cannot be read, or that lies below a folder that cannot be searched, is
  an error instead (exit status 2);
- a notebook that is not valid JSON, is older than nbformat 4, or has a cell whose
  `source` is not text.

Reported only for files that torchlint parses, that is files containing the trigger words
of at least one enabled rule (`backward` and `step(` for TL001, a timing call and `cuda`
for TL002, `.view` and a transposing call for TL003, ...):

- a syntax error (with CPython's own message and position);
- a NUL byte;
- code nested more deeply than CPython's or LibCST's parser accepts;
- in a notebook, a code cell that does not parse on its own (Jupyter runs cells one at a
  time): the TL000 names that cell, at a line of it, and the other cells are still checked.

## What is not reported

A file that contains no enabled rule's trigger words is never parsed: this prefilter is
what makes torchlint fast on large trees. A syntax error in such a file is **not**
reported, and neither is one in a file whose rules are all deselected. torchlint is no
syntax checker: use `python -m py_compile`, ruff or your tests for that.

## Severity

An error: it fails the run with any `--fail-on`. `ignore = ["TL000"]` (or `--ignore TL000`)
hides it; `select` does not, since an unparsed file hides whatever it holds.""",
    ),
    FILE_TOO_LARGE_CODE: (
        "a file over `max-file-size` or `max-file-tokens`, not checked",
        """\
## What is reported

A file that contains some rule's trigger words but is larger than `max-file-size`
(1.5 MB by default), or has more tokens than `max-file-tokens` (250,000 by default), is not
parsed. Checking a file takes about 2 to 4 KB of memory per token at its peak (LibCST's
syntax tree; about 580 bytes per byte of ordinary code, see docs/performance.md): a 5.8 MB
module would need some 3.3 GB, and a 1.5 MB generated table, with one token per byte, 3 GB.
The two defaults keep a run under 1 GB. The notice gives the file's size or token count and
the setting that checks it:

```toml
[tool.torchlint]
max-file-size = 6000000     # bytes
max-file-tokens = 1500000
```

## Severity

Info: it is shown in every output format but does not fail the run, since the file
may well be fine; `--fail-on info` makes it fail. `ignore = ["TL998"]` hides it.""",
    ),
    INTERNAL_ERROR_CODE: (
        "torchlint itself failed on a file (a bug in torchlint)",
        """\
## What is reported

A rule raised an exception on a file (its other findings and the other rules' are kept),
or the worker process checking a file died (a crash in native code, the out-of-memory
killer), which loses that file's findings. The message names the rule, the exception and
where it was raised.

## Severity

An error, and the run exits with status 2 whatever `--fail-on` says: the result is
incomplete. Please report it with the file (or a reduced copy) that triggers it.""",
    ),
}


UNUSED_SUPPRESSION_DOC = (
    "a suppression comment that suppresses nothing, or names no torchlint rule",
    """\
## What is reported

A `# noqa: TL0xx` or `# torchlint: disable=TL0xx` (or `disable-file=`) comment whose
torchlint codes suppress no finding on their line (a comment applies to a finding's
reported line only), and codes or names in such a comment that are no torchlint rule
(`# noqa: TL0O1`). Like ruff's RUF100, it is reported only when `select` names it
(`select = ["TL", "TL900"]` or `--extend-select TL900`), never through `ALL`.

Only torchlint's part of a comment is judged: `# noqa: E501` and a bare `# noqa` may
serve other tools (flake8, ruff) and are left alone; in `# torchlint: disable=...` every
name is torchlint's.

## Fix

Removes the unused codes, or the whole comment when nothing in it is used.

## Severity

A warning.""",
)


@dataclass(frozen=True)
class CodeDoc:
    code: str
    name: str
    summary: str
    # None for the probe's runtime codes, whose severity follows their status.
    severity: Severity | None
    body: str
    autofix: str = "none"

    def render(self) -> str:
        head = f"# {self.code} {self.name}\n\n{self.summary}\n\n"
        if self.severity is not None:
            head += f"Severity: {self.severity.value}. Autofix: {self.autofix}.\n\n"
        return head + self.body.rstrip("\n") + "\n"


def code_doc(key: str) -> CodeDoc | None:
    """The documentation of a code that no rule owns, by code or name; None if unknown."""
    key_upper, key_lower = key.upper(), key.lower()
    for code, (summary, body) in FILE_PROBLEM_DOCS.items():
        name, severity = FILE_PROBLEMS[code]
        if key_upper == code or key_lower == name:
            return CodeDoc(code, name, summary, severity, body)
    if key_upper == UNUSED_SUPPRESSION_CODE or key_lower == UNUSED_SUPPRESSION_NAME:
        summary, body = UNUSED_SUPPRESSION_DOC
        return CodeDoc(UNUSED_SUPPRESSION_CODE, UNUSED_SUPPRESSION_NAME, summary, Severity.WARNING, body, "safe")
    for code, name in RUNTIME_NAMES.items():
        if key_upper == code or key_lower == name:
            summary = (
                "A runtime finding of `torchlint probe`: observed while the script ran, never "
                "reported by `torchlint check`. Its severity is error when found or confirmed."
            )
            return CodeDoc(code, name, summary, None, RUNTIME_DOCS[code])
    return None
