"""Source text + rules -> findings. Pure: no file I/O, no printing, no exits, no torch.

Per file: a trigger prefilter decides which rules can match; only then is the file
parsed (by LibCST; first by CPython's parser too, as a guard, unless the text plainly
nests too little to crash LibCST's native parser), rules run on the shared
parse, positions are resolved only for reported nodes, and suppression comments
are applied.
"""

from __future__ import annotations

import ast
import gc
import re
import sys
import threading
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Protocol, Sequence

from torchlint.finding import (
    INTERNAL_ERROR_CODE,
    PARSE_ERROR_CODE,
    Edit,
    Finding,
    Fix,
    file_problem,
)
from torchlint.rule import FileContext, FixSpec, Report, Rule
from torchlint.suppression import finding_lines, parse_suppressions

if TYPE_CHECKING:
    # LibCST (a tenth of a second to import) is imported when a file is parsed: a run
    # whose files trigger no rule never needs it.
    import libcst as cst

if TYPE_CHECKING:
    from torchlint.positions import Position
    from torchlint.project import ProjectView


class ParseFailure(Exception):
    def __init__(self, line: int, column: int, reason: str) -> None:
        super().__init__(reason)
        self.line = line
        self.column = column
        self.reason = reason


def triggered_rules(source: str, rules: Sequence[Rule]) -> list[Rule]:
    return [rule for rule in rules if rule.triggered_by(source)]


# How deeply CPython's parser may nest when it guards LibCST's: Python's default
# recursion limit, whatever the calling program set. At this limit `ast.parse` accepts
# about 3,000 levels of nesting; LibCST's native parser overflows its stack at about
# 10,000 (and the guard would not guard if a caller's higher limit let more through).
GUARD_RECURSION_LIMIT = 1000
# LibCST's code generation and the rules recurse once or twice per nesting level, all in
# Python frames, which since Python 3.11 do not grow the C stack: enough for the deepest
# tree the guard lets through.
TREE_RECURSION_LIMIT = 20_000
# CPython keeps `a and b and c ...` flat; LibCST nests one level per operator and crashes
# at about 8,000 of them in one expression. Checked exactly only when the file has this
# many `and`/`or` words at all.
MAX_BOOLEAN_CHAIN = 3000
_BOOLEAN_WORD = re.compile(r"\b(?:and|or)\b")


# CPython 3.11 keeps the AST constructor's recursion counter and the recursion limit
# per interpreter, not per thread: two threads parsing at once fail with "AST
# constructor recursion depth mismatch", one thread's limit cuts another's deep
# recursion short, and overlapping `warnings.catch_warnings()` leak their filters.
# Whatever parses or touches that state holds this lock, so that the checker and the
# probe can run in threads of one process (a server, a test, a CI harness).
INTERPRETER_LOCK = threading.RLock()


def python_ast(source: str) -> ast.Module:
    """`ast.parse(source)`, safe from other threads of this process parsing at once."""
    with INTERPRETER_LOCK:
        return ast.parse(source)


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    """Run with Python's recursion limit at `limit`, restoring the caller's afterwards."""
    old = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(limit)
    except RecursionError:  # already deeper than `limit`: keep the caller's limit
        pass
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


# LibCST's parser crashes at about 1,500 nested brackets and at 5,000 to 7,000 chained
# operators (`a + b + ...`, `x if c else ...`, `.b.c...`). When the raw text bounds the
# nesting far below that, CPython's guarding parse (15% of LibCST's parse time) is
# skipped: deep nesting needs deeply nested brackets (counted outside strings and
# comments), a long line, or a long bracketed region with many chaining operators.
SAFE_BRACKET_DEPTH = 200
SAFE_LINE_CHARS = 2_000
SAFE_REGION_CHARS = 6_000
SAFE_CONTINUATIONS = 50
# Strings and comments, in unrolled-loop form (a backslash-newline continues a string).
_STRING_OR_COMMENT = re.compile(
    r"#[^\n]*"
    r"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    r"|'[^'\\\n]*(?:\\.[^'\\\n]*)*'"
    r'|"[^"\\\n]*(?:\\.[^"\\\n]*)*"',
    re.S,
)
# F-strings are stripped too, though their fields are code: a one-line f-string is
# bounded by the line length; a triple-quoted one must be short.
_TRIPLE_QUOTE = re.compile(r"\'\'\'|\"\"\"")
# What chains in LibCST's trees, one level per occurrence (`'` stands for a string:
# adjacent strings concatenate).
_CHAINING = re.compile(r"[-+*/%@&|^~.<>']|\b(?:if|lambda|not|await|and|or)\b")
SAFE_CHAIN = 1_000
_BRACKET = re.compile(r"[()\[\]{}]")
_OPENING = frozenset("([{")


def parse(source: str) -> cst.Module:
    """Parse `source`, raising `ParseFailure` with CPython's own reason when it is not Python."""
    import libcst as cst

    _refuse_nul(source)
    if not plainly_shallow(source):
        _guard(source)
    try:
        with unvalidated_nodes():
            return cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        _guard(source)  # CPython's reason, where it has one, says more than LibCST's
        reason = str(exc.message).strip().splitlines()[0] if exc.message else "syntax error"
        raise ParseFailure(exc.raw_line, exc.raw_column + 1, f"LibCST cannot parse this code: {reason}") from None
    except (RecursionError, MemoryError):
        raise ParseFailure(1, 1, "code is nested too deeply for LibCST's parser") from None


class SourceParser(Protocol):
    """How `check_source` turns a text into a tree and reported nodes into their ranges:
    the whole text each time (`WHOLE_TEXT`), or only what an edit changed
    (`torchlint.reparse.IncrementalParser`, for an editor's successive versions)."""

    def parse(self, source: str) -> cst.Module: ...

    def node_positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Position]: ...


class _WholeText:
    def parse(self, source: str) -> cst.Module:
        return parse(source)

    def node_positions(self, module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[int, Position]:
        from torchlint.positions import node_positions

        return node_positions(module, nodes)


WHOLE_TEXT: SourceParser = _WholeText()


def _skip_validation(node: object) -> None:
    pass


@contextmanager
def unvalidated_nodes() -> Iterator[None]:
    """Construct LibCST nodes without validating each one, for the parser's use.

    Every node's constructor ends in `CSTNode.__post_init__`, which checks that the node
    could be printed back as valid code: a tenth to a quarter of `libcst.parse_module`'s
    time (LibCST's own comment there suggests moving it out of parsing). The native
    parser builds its nodes from code that already parsed, so the check cannot fail on
    them. Nodes built for fixes (outside this block) are still checked. The block holds
    `INTERPRETER_LOCK`, under which this process's other LibCST work runs too; where a
    LibCST release no longer validates in `__post_init__`, nothing is changed."""
    import libcst as cst

    validate = cst.CSTNode.__dict__.get("__post_init__")
    if validate is None:
        yield
        return
    with INTERPRETER_LOCK:
        setattr(cst.CSTNode, "__post_init__", _skip_validation)
        try:
            yield
        finally:
            setattr(cst.CSTNode, "__post_init__", validate)


@contextmanager
def collections_paused() -> Iterator[None]:
    """Run without the cyclic garbage collector while one file's tree is alive. A syntax
    tree holds no reference cycles, yet building and analysing its hundreds of thousands
    of objects sets off collections that walk them again and again (some 15% of the
    parse time, even with the larger first generation that `api` sets); once the tree
    is freed, the collector resumes with only what survived it to look at."""
    with INTERPRETER_LOCK:
        if not gc.isenabled():
            yield
            return
        gc.disable()
        try:
            yield
        finally:
            gc.enable()


def syntax_problem(source: str) -> tuple[int, int, str] | None:
    """Where and why CPython's parser rejects `source` (line, column, reason), or None.
    About a sixth of LibCST's parse time: cheap enough to try each notebook cell alone."""
    try:
        _refuse_nul(source)
        _guard(source)
    except ParseFailure as failure:
        return failure.line, failure.column, failure.reason
    return None


def _refuse_nul(source: str) -> None:
    nul = source.find("\0")
    if nul >= 0:
        line = source.count("\n", 0, nul) + 1
        column = nul - (source.rfind("\n", 0, nul) + 1) + 1
        raise ParseFailure(line, column, "source contains a NUL byte")


def plainly_shallow(source: str) -> bool:
    """Whether the raw text bounds the nesting far below what crashes LibCST. Anything
    unusual (unbalanced brackets, long lines) answers no, never a wrong yes."""
    # Backslash continuations join lines into one logical line; few of them join little.
    # An `elif` nests the rest of its `if` statement one level deeper.
    if source.count("\\\n") > SAFE_CONTINUATIONS or source.count("elif") > SAFE_CHAIN:
        return False
    if len(source) > SAFE_LINE_CHARS and max(map(len, source.split("\n"))) > SAFE_LINE_CHARS:
        return False
    for quote in _TRIPLE_QUOTE.finditer(source):
        at = quote.start()
        prefix = source[max(0, at - 2) : at].lower()  # closing quotes pass too: no harm
        if prefix[-1:] == "f" or ("f" in prefix and prefix[-1:].isalpha()):
            literal = _STRING_OR_COMMENT.match(source, at)
            if literal is None or literal.end() - at > SAFE_LINE_CHARS:
                return False
    code = _STRING_OR_COMMENT.sub(_placeholder, source)
    depth = start = 0
    for match in _BRACKET.finditer(code):
        at = match.start()
        if code[at] in _OPENING:
            if depth == 0:
                start = at
            depth += 1
            if depth > SAFE_BRACKET_DEPTH:
                return False
        else:
            depth -= 1
            if depth < 0:
                return False
            if depth == 0 and at - start > SAFE_REGION_CHARS and len(_CHAINING.findall(code, start, at)) > SAFE_CHAIN:
                return False
    return depth == 0


def _placeholder(match: re.Match[str]) -> str:
    return "" if match.group().startswith("#") else "'"


def _guard(source: str) -> None:
    """CPython's parser, which refuses deep nesting with an error instead of crashing."""
    try:
        with INTERPRETER_LOCK, warnings.catch_warnings(), recursion_limit(GUARD_RECURSION_LIMIT):
            # Invalid escape sequences and the like are the user's business, not ours.
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
            if len(_BOOLEAN_WORD.findall(source)) >= MAX_BOOLEAN_CHAIN:
                _check_boolean_chains(tree)
            del tree
    except SyntaxError as exc:
        raise ParseFailure(exc.lineno or 1, exc.offset or 1, f"SyntaxError: {exc.msg}") from None
    except (RecursionError, MemoryError):
        raise ParseFailure(1, 1, "code is nested too deeply for Python's parser") from None
    except ValueError as exc:
        raise ParseFailure(1, 1, str(exc)) from None


def _check_boolean_chains(tree: ast.AST) -> None:
    """Raise `ParseFailure` at an expression that chains too many `and`/`or` for LibCST."""
    chained: dict[int, int] = {}  # id of a BoolOp -> operators in it and its BoolOp operands
    for node in ast.walk(tree):  # parents before children: totals flow down to the innermost
        if isinstance(node, ast.BoolOp):
            total = chained.get(id(node), 0) + len(node.values) - 1
            if total >= MAX_BOOLEAN_CHAIN:
                raise ParseFailure(
                    node.lineno,
                    node.col_offset + 1,
                    f"an expression chains {MAX_BOOLEAN_CHAIN} or more `and`/`or` operators, "
                    "more than LibCST's parser can nest",
                )
            for value in node.values:
                if isinstance(value, ast.BoolOp):
                    chained[id(value)] = total


def parse_error(filename: str, line: int, column: int, reason: str) -> Finding:
    return file_problem(filename, PARSE_ERROR_CODE, f"cannot parse this file: {reason}", line, column)


def internal_error(filename: str, rule: Rule, exc: BaseException) -> Finding:
    import traceback

    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" at {frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}" if frame else ""
    reason = one_line(f"{type(exc).__name__}: {exc}")
    message = (
        f"rule {rule.CODE} ({rule.NAME}) failed on this file: "
        f"{reason}{where}; its other findings were kept, please report this"
    )
    return file_problem(filename, INTERNAL_ERROR_CODE, message)


def one_line(text: str, limit: int = 200) -> str:
    """The first line of `text`, shortened to `limit` characters: reasons fit on one line."""
    first = text.strip().split("\n", 1)[0].strip()
    return first if len(first) <= limit else first[: limit - 1] + "…"


def summarize_source(source: str) -> dict[str, Any] | None:
    """The summary that other files of a project see of this module (see
    `torchlint.rules._summarize`); None when Python cannot parse it."""
    from torchlint.rules._summarize import summarize

    try:
        with INTERPRETER_LOCK, warnings.catch_warnings(), recursion_limit(GUARD_RECURSION_LIMIT):
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
            return summarize(tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def check_source(
    source: str,
    filename: str,
    rules: Sequence[Rule],
    project: ProjectView | None = None,
    *,
    noqa: bool = True,
    unused_suppressions: bool = False,
    parser: SourceParser = WHOLE_TEXT,
) -> list[Finding]:
    """Check one file's text with `rules`; never raises for any input. `project` resolves
    its imports of the project's other modules (and records which summaries it used).

    `noqa=False` leaves `# noqa` comments to the caller (flake8 applies them itself);
    `unused_suppressions` adds TL900 findings for suppression comments that suppress nothing.
    """
    active = triggered_rules(source, rules)
    if not active and not (unused_suppressions and "#" in source):
        return []
    findings: list[Finding] = []
    if active:
        with INTERPRETER_LOCK, collections_paused():
            findings = _check_tree(source, filename, active, project, parser)
    suppressions = parse_suppressions(source, noqa=noqa)
    kept = [
        f
        for f in findings
        if f.is_internal_error or not suppressions.suppresses(f.code, f.name, finding_lines(f))
    ]
    if unused_suppressions:
        from torchlint.unused_suppressions import unused_suppressions as unused

        kept.extend(unused(source, filename, suppressions, findings))
    return sorted(set(kept))


def _check_tree(
    source: str, filename: str, rules: Sequence[Rule], project: ProjectView | None, parser: SourceParser
) -> list[Finding]:
    """Parse `source` and run `rules` on it; the tree is gone when this returns (unless
    `parser` keeps it for the next version of the text)."""
    try:
        module = parser.parse(source)
    except ParseFailure as failure:
        return [parse_error(filename, failure.line, failure.column, failure.reason)]
    ctx = FileContext(filename, source, module, project)
    try:
        with recursion_limit(TREE_RECURSION_LIMIT):
            return _run_rules(ctx, rules, parser)
    finally:
        ctx.release()


def _run_rules(ctx: FileContext, rules: Sequence[Rule], parser: SourceParser) -> list[Finding]:
    reported: list[tuple[Rule, Report]] = []
    findings: list[Finding] = []
    for rule in rules:
        try:
            reported.extend((rule, report) for report in rule.check(ctx))
        except Exception as exc:  # a broken rule must not lose the file or the run
            findings.append(internal_error(ctx.filename, rule, exc))
    if reported:
        findings.extend(_locate(ctx, reported, parser))
    return findings


def _locate(ctx: FileContext, reported: Sequence[tuple[Rule, Report]], parser: SourceParser) -> list[Finding]:
    positions = parser.node_positions(ctx.module, [report.node for _, report in reported])
    findings = []
    for rule, report in reported:
        where = positions.get(id(report.node))
        if where is None:
            findings.append(internal_error(ctx.filename, rule, LookupError("reported a node outside this file's tree")))
            continue
        line, column, end_line, end_column = where
        try:
            fix = render_fix(ctx, report.fix) if report.fix else None
        except Exception as exc:  # a fix the engine cannot render
            findings.append(internal_error(ctx.filename, rule, exc))
            continue
        findings.append(
            Finding(
                filename=ctx.filename,
                cell=0,
                line=line,
                column=column + 1,
                end_line=end_line,
                end_column=end_column + 1,
                code=rule.CODE,
                name=rule.NAME,
                message=report.message,
                severity=rule.SEVERITY,
                fix=fix,
            )
        )
    return findings


def render_fix(ctx: FileContext, spec: FixSpec) -> Fix | None:
    """Turn node replacements into minimal text edits on the original source."""
    import libcst as cst

    edits = []
    for old, new in spec.replacements:
        fixed = ctx.module.deep_replace(old, new)
        assert isinstance(fixed, cst.Module)
        edit = _text_edit(ctx.source, fixed.code)
        if edit is not None:
            edits.append(edit)
    if not edits:
        return None
    return Fix(description=spec.description, edits=tuple(sorted(edits)), safe=spec.safe)


def _text_edit(old: str, new: str) -> Edit | None:
    if old == new:
        return None
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    line, column = offset_to_position(old, start)
    end_line, end_column = offset_to_position(old, end_old)
    return Edit(line, column, end_line, end_column, new[start:end_new])


def offset_to_position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def position_to_offset(text: str, line: int, column: int) -> int:
    offset = 0
    for _ in range(line - 1):
        offset = text.index("\n", offset) + 1
    return offset + column - 1


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; an edit that overlaps an earlier-applied one is skipped."""
    chosen: list[tuple[int, int, str]] = []
    for edit in sorted(set(edits)):
        start = position_to_offset(text, edit.line, edit.column)
        end = position_to_offset(text, edit.end_line, edit.end_column)
        if chosen and start < chosen[-1][1]:
            continue
        chosen.append((start, end, edit.replacement))
    for start, end, replacement in reversed(chosen):
        text = text[:start] + replacement + text[end:]
    return text
