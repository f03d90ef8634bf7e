"""The one matcher for path patterns: `exclude`, `extend-exclude`, `per-file-ignores`,
the probe's per-script settings and `.gitignore` files.

Patterns follow gitignore, plus ruff's `{a,b}` alternatives:

- `*` matches anything but `/`, `?` one character but `/`, `[a-z]` / `[!a-z]` one
  character of (or not of) a set; `\\` escapes the next character.
- `**/` at the start or between slashes matches zero or more folders, `/**` at the end
  everything inside; `**` elsewhere is a plain `*`.
- `{tests,docs}` matches either alternative (which may hold patterns themselves).
- A pattern with a slash at its start or in its middle is anchored: it matches paths
  relative to its base (the folder of the configuration file, or of the `.gitignore`).
  One without matches a file or folder name at any depth.
- A trailing `/` matches folders only; a leading `!` negates (the last match wins).

A pattern that matches a folder matches everything inside it (`covers`), as gitignore
excludes what lies in an excluded folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Iterable


class PatternError(ValueError):
    """A pattern whose braces do not pair up; `.gitignore` lines like it match literally."""


@dataclass(frozen=True)
class PathPattern:
    text: str
    # The pattern without its `!`, leading `./` or `/` and trailing `/`.
    glob: str
    negated: bool = False
    dir_only: bool = False
    anchored: bool = False

    @cached_property
    def regex(self) -> re.Pattern[str]:
        """Compiled on the first match: a check of the files named on the command line
        (the pre-commit and editor case) never matches the default excludes, and
        compiling their nineteen regexes was some 3% of its time."""
        return _regex(self.glob)

    def matches(self, relpath: str, is_dir: bool = False) -> bool:
        """Whether the pattern matches this path itself (a `/`-separated path relative
        to the pattern's base, without a leading `./`)."""
        if self.dir_only and not is_dir:
            return False
        if not relpath or relpath == ".":
            return False
        subject = relpath if self.anchored else relpath.rsplit("/", 1)[-1]
        return self.regex.fullmatch(subject) is not None

    def covers(self, relpath: str, is_dir: bool = False) -> bool:
        """Whether the pattern matches the path or one of the folders above it."""
        parts = relpath.split("/")
        for end in range(1, len(parts)):
            if self.matches("/".join(parts[:end]), True):
                return True
        return self.matches(relpath, is_dir)


def compile_pattern(text: str) -> PathPattern | None:
    """A pattern as written in the configuration or a `.gitignore` line; None for a
    blank line or a comment."""
    line = text.rstrip("\n")
    if not line.strip() or line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip()
    negated = line.startswith("!")
    if negated:
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    if line.startswith("./"):
        line = line[2:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    return PathPattern(text, line, negated, dir_only, anchored)


def compile_patterns(texts: Iterable[str]) -> list[PathPattern]:
    return [p for p in map(compile_pattern, texts) if p is not None]


def last_match(patterns: Iterable[PathPattern], relpath: str, is_dir: bool) -> bool:
    """gitignore's rule: the last pattern that matches decides; `!` patterns un-ignore."""
    result = False
    for pattern in patterns:
        if pattern.matches(relpath, is_dir):
            result = not pattern.negated
    return result


def names_regex(patterns: Iterable[PathPattern], is_dir: bool) -> re.Pattern[str] | None:
    """One regex that fullmatches a file's (or with `is_dir`, a folder's) name, without
    its folders, where some of `patterns` matches it; None where none can. For patterns
    that are not anchored (they match a name at any depth): a walk asks it of every entry,
    and asking each pattern in turn was some 40% of walking a tree."""
    globs = tuple(p.glob for p in patterns if not p.anchored and (is_dir or not p.dir_only))
    return _alternatives(globs) if globs else None


@lru_cache(maxsize=256)
def _alternatives(globs: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{_regex_text(glob)})" for glob in globs), re.DOTALL)


def check_pattern(text: str) -> None:
    """Raise `PatternError` for a configured pattern whose braces do not pair up, which
    would otherwise silently match its braces literally."""
    _translate(text, 0, top=True)


@lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(_regex_text(pattern), re.DOTALL)


def _regex_text(pattern: str) -> str:
    try:
        body, _ = _translate(pattern, 0, top=True)
    except PatternError:  # as git does: braces are no syntax of .gitignore
        body, _ = _translate(pattern.replace("{", "\\{").replace("}", "\\}"), 0, top=True)
    return body


def _translate(pattern: str, i: int, top: bool) -> tuple[str, int]:
    """Regex text for `pattern` from `i` up to its end or, inside braces, up to the `,`
    or `}` that ends the alternative; returns it and where it stopped."""
    out: list[str] = []
    n = len(pattern)
    while i < n:
        c = pattern[i]
        at_start = i == 0 or pattern[i - 1] == "/"
        if pattern.startswith("**", i) and at_start and (i + 2 == n or pattern[i + 2] == "/"):
            if i + 2 == n:
                out.append(".*")  # `a/**`: everything inside a
                i += 2
            else:
                out.append("(?:[^/]*/)*")  # `**/`: zero or more folders
                i += 3
        elif c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            klass, i = _character_class(pattern, i)
            out.append(klass)
        elif c == "{":
            alternatives: list[str] = []
            i += 1
            while True:
                alternative, i = _translate(pattern, i, top=False)
                alternatives.append(alternative)
                if i >= n:
                    raise PatternError(f"unclosed '{{' in {pattern!r}")
                i += 1
                if pattern[i - 1] == "}":
                    break
            out.append("(?:" + "|".join(alternatives) + ")")
        elif not top and c in ",}":
            return "".join(out), i
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out), i


def _character_class(pattern: str, i: int) -> tuple[str, int]:
    """`[...]` at `pattern[i]` as a regex class; an unclosed `[` is a literal `[`."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    start = j
    if j < len(pattern) and pattern[j] == "]":  # `[]a]`: a leading `]` is literal
        j += 1
    close = pattern.find("]", j)
    if close < 0:
        return re.escape("["), i + 1
    body = pattern[start:close]
    items = []
    k = 0
    while k < len(body):
        if body[k] == "\\" and k + 1 < len(body):
            items.append(re.escape(body[k + 1]))
            k += 2
        elif k + 2 < len(body) and body[k + 1] == "-":
            items.append(f"{re.escape(body[k])}-{re.escape(body[k + 2])}")
            k += 3
        else:
            items.append(re.escape(body[k]))
            k += 1
    # A class never matches `/`, as in gitignore.
    return ("[^/" if negated else "(?!/)[") + "".join(items) + "]", close + 1
