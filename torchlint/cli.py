"""The `torchlint` command: parses flags, prints, exits. All work happens in `api`."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable, NoReturn, Sequence, TypeVar

import click

from torchlint import __version__
from torchlint.config import Config, ConfigError, discover_config, load_config
from torchlint.discovery import PathError
from torchlint.finding import Finding, Severity

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2

F = TypeVar("F", bound=Callable[..., Any])


def fail(message: str) -> NoReturn:
    click.echo(f"torchlint: error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def split_codes(values: Sequence[str]) -> tuple[str, ...] | None:
    if not values:
        return None
    return tuple(code.strip() for value in values for code in value.split(",") if code.strip())


def resolve_config(config_file: str | None, isolated: bool, paths: Sequence[str]) -> Config:
    if isolated:
        return Config()
    if config_file:
        return load_config(Path(config_file))
    # The nearest existing folder: a file named by --stdin-filename need not exist.
    start = Path(paths[0]).absolute() if paths else Path.cwd()
    while not os.path.exists(start) and start != start.parent:  # False, not raising, where unsearchable
        start = start.parent
    return discover_config(start)


def config_options(func: F) -> F:
    func = click.option(
        "--isolated", is_flag=True, help="Ignore every configuration file; use the defaults and flags only."
    )(func)
    func = click.option(
        "--config",
        "config_file",
        type=click.Path(exists=True, dir_okay=False),
        help="Read settings from this pyproject.toml or torchlint.toml instead of the nearest one.",
    )(func)
    return func


class LazyGroup(click.Group):
    """Commands whose modules are imported only when the command is asked for (or the
    command list is shown): a `check` loads nothing of `probe`."""

    LAZY = {"probe": "torchlint.probe_cli"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.LAZY])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.LAZY:
            import importlib

            command: click.Command = importlib.import_module(self.LAZY[name]).command()
            return command
        return super().get_command(ctx, name)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="torchlint")
def main() -> None:
    """torchlint: catch the bugs people really make in PyTorch training code."""


@main.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--select", multiple=True, help="Rule codes, prefixes or names to enable (comma-separated).")
@click.option("--ignore", multiple=True, help="Rule codes, prefixes or names to disable (comma-separated).")
@click.option("--extend-select", multiple=True, help="Rule codes, prefixes or names to enable on top of `select`.")
@click.option("--extend-ignore", multiple=True, help="Rule codes, prefixes or names to disable on top of `ignore`.")
@click.option(
    "--format",
    "--output-format",
    "output_format",
    default="text",
    show_default=True,
    help="Output format: text, concise, json, json-lines, sarif, github, gitlab, rdjson, pylint or junit.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True), help="Write the report to FILE.")
@click.option("--exit-zero", is_flag=True, help="Exit with 0 even when there are findings.")
@click.option(
    "--fail-on",
    type=click.Choice([severity.value for severity in Severity]),
    help="The lowest severity that makes the exit status 1 (default: warning; info findings are shown, not failed).",
)
@click.option("--statistics", is_flag=True, help="Show how many findings each rule produced.")
@click.option("-q", "--quiet", is_flag=True, help="Print findings only: no source lines, no summary.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), help="Worker processes (default: the CPU count).")
@click.option("--fix", is_flag=True, help="Apply the safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="Count unsafe fixes as fixable: --fix and --diff apply them too.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them; exit 1 if any.")
@click.option("--force-exclude", is_flag=True, default=None, help="Apply the excludes to files named on the command line too.")
@click.option("--show-settings", is_flag=True, help="Print the effective settings for PATHS and exit.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the result cache (.torchlint_cache/).")
@click.option(
    "--changed-since",
    metavar="REF",
    help="Check only files changed since git revision REF: commits, staged and unstaged edits, untracked files.",
)
@click.option(
    "--add-noqa",
    is_flag=True,
    help="Add `# noqa: CODES` to every line with a finding (extending a `# noqa` there), so that the next run passes.",
)
@click.option(
    "--stdin-filename",
    metavar="PATH",
    help="Read the source from stdin (path `-`) and report it as PATH: PATH's configuration and per-file-ignores apply; "
    "with --fix, print the fixed source.",
)
@config_options
def check(
    paths: tuple[str, ...],
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    extend_select: tuple[str, ...],
    extend_ignore: tuple[str, ...],
    output_format: str,
    output: str | None,
    exit_zero: bool,
    fail_on: str | None,
    statistics: bool,
    quiet: bool,
    jobs: int | None,
    fix: bool,
    unsafe_fixes: bool,
    diff: bool,
    force_exclude: bool | None,
    show_settings: bool,
    no_cache: bool,
    changed_since: str | None,
    add_noqa: bool,
    stdin_filename: str | None,
    config_file: str | None,
    isolated: bool,
) -> None:
    """Check PATHS (default: the current folder) for PyTorch training bugs."""
    from torchlint import api
    from torchlint.cache import cache_dir
    from torchlint.changes import ChangesError
    from torchlint.projects import NearestConfigs, overrides
    from torchlint.registry import RuleMetas
    from torchlint.report import ReportContext, format_names, render
    from torchlint.sources import notebook_file_line, read_cell_lines, read_lines

    if output_format not in format_names():
        fail(f"unknown format {output_format!r}; choose one of {', '.join(format_names())}")
    reading_stdin = paths == ("-",) or (stdin_filename is not None and not paths)
    if not reading_stdin and ("-" in paths or stdin_filename is not None):
        fail("the source comes from stdin (`-` or --stdin-filename) or from PATHS, not both")
    if add_noqa and (fix or diff or reading_stdin):
        fail("--add-noqa edits files and cannot be combined with --fix, --diff or stdin")
    stdin_name = stdin_filename or "-"  # the name ruff and flake8 give stdin
    targets = ([stdin_filename] if stdin_filename else []) if reading_stdin else list(paths) or ["."]
    try:
        flags = {
            "select": split_codes(select),
            "ignore": split_codes(ignore),
            "extend_select": split_codes(extend_select),
            "extend_ignore": split_codes(extend_ignore),
            "force_exclude": force_exclude,
            "fail_on": Severity(fail_on) if fail_on else None,
        }
        config = resolve_config(config_file, isolated, targets).with_overrides(**flags)
        # Without --config or --isolated, each file has the settings of its own project.
        config_for = None if isolated or config_file or reading_stdin else NearestConfigs(config, overrides(**flags))
        if show_settings:
            click.echo(config.describe([(r.CODE, r.NAME) for r in api.enabled_rules(config)]), nl=False)
            sys.exit(EXIT_CLEAN)
        cwd = Path.cwd()
        if not reading_stdin:
            result = api.check_paths(
                targets,
                config,
                cwd=cwd,
                jobs=jobs,
                cache_dir=None if no_cache else cache_dir(config, cwd),
                changed_since=changed_since,
                config_for=config_for,
            )
    except (ConfigError, ChangesError) as exc:
        fail(str(exc))
    except PathError as exc:
        fail(str(exc))
    readers: dict[str, Any] = {"read_lines": read_lines, "read_cell_lines": read_cell_lines, "notebook_line": notebook_file_line}
    if reading_stdin:
        from torchlint.stdin_input import check_stdin, report_readers

        checked = check_stdin(sys.stdin.buffer.read(), stdin_name, config, fix=fix or diff, unsafe=unsafe_fixes)
        if diff:
            click.echo(checked.diff, nl=False)
            sys.exit(EXIT_FINDINGS if checked.fixed else EXIT_CLEAN)
        if fix:  # the fixed source is the output; the report goes to stderr
            sys.stdout.buffer.write(checked.output)
            sys.stdout.flush()
        findings, fixed, files, readers = checked.findings, checked.fixed, [stdin_name], report_readers(checked)
        internal_errors = [f for f in findings if f.is_internal_error]
    else:
        findings, fixed, files, internal_errors = result.findings, 0, result.files, result.internal_errors
        if add_noqa:
            add_noqa_comments(findings, cwd)
        if fix or diff:
            findings, fixed = apply_fixes(findings, config, unsafe_fixes, diff, config_for)
    context = ReportContext(
        files_checked=len(files),
        rules=RuleMetas(),
        show_source=not quiet and output is None,
        show_summary=not quiet,
        statistics=statistics,
        version=__version__,
        files=tuple(files),
        fixed=fixed,
        unsafe_fixes=unsafe_fixes,
        fail_on=config.fail_on,
        **readers,
    )
    text = render(output_format, findings, context)
    if output:
        try:
            Path(output).write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {output}: {exc.strerror or exc}")
    else:
        click.echo(text, nl=False, err=reading_stdin and fix)
    if not reading_stdin and not files:
        # "All checks passed" alone would read as if something had been checked.
        where = f"changed since {changed_since} " if changed_since is not None else ""
        click.echo(f"warning: No Python files {where or 'found '}under the given path(s)", err=True)
    for error in internal_errors:
        click.echo(f"torchlint: internal error in {error.filename}: {error.message}", err=True)
    if internal_errors:
        sys.exit(EXIT_ERROR)
    failing = any(f.severity.at_least(config.fail_on) for f in findings)
    sys.exit(EXIT_FINDINGS if failing and not exit_zero else EXIT_CLEAN)


def add_noqa_comments(findings: list[Finding], cwd: Path) -> NoReturn:
    from torchlint.add_noqa import add_noqa

    result = add_noqa(findings, cwd)
    for name, line, why in result.problems:
        click.echo(f"torchlint: {name}{f':{line}' if line else ''}: {why}", err=True)
    n = result.added
    click.echo(f"Added {n} noqa directive{'s' if n != 1 else ''} to {result.files} file{'s' if result.files != 1 else ''}.", err=True)
    if any(line == 0 for _, line, _ in result.problems):
        sys.exit(EXIT_ERROR)  # a file that could not be read or written
    sys.exit(EXIT_FINDINGS if result.problems else EXIT_CLEAN)


def apply_fixes(
    findings: list[Finding], config: Config, unsafe: bool, diff: bool, config_for: Callable[[Path], Config] | None
) -> tuple[list[Finding], int]:
    """Fix files in place, or print the diff and exit (1 when there is something to fix)."""
    from torchlint.fix import fix_findings

    result = fix_findings(findings, config, unsafe=unsafe, write=not diff, config_for=config_for)
    for failed in result.errors:
        click.echo(f"torchlint: {failed.name}: {failed.error}", err=True)
    if diff:
        click.echo(result.diff, nl=False)
        n = result.fixed
        click.echo(f"Would fix {n} finding{'s' if n != 1 else ''}." if n else "No fixes to apply.", err=True)
        sys.exit(EXIT_FINDINGS if n else EXIT_CLEAN)
    return result.findings, result.fixed


@main.command()
@config_options
def clean(config_file: str | None, isolated: bool) -> None:
    """Remove the result cache: .torchlint_cache/ next to the configuration file, else here."""
    from torchlint.cache import CACHE_DIR_NAME
    from torchlint.cache import clean as remove_cache
    from torchlint.config import find_config_file

    cwd = Path.cwd()
    found = None if isolated else Path(config_file) if config_file else find_config_file(cwd)
    folder = (found.resolve().parent if found else cwd) / CACHE_DIR_NAME
    try:
        removed = remove_cache(folder)
    except OSError as exc:
        fail(f"cannot remove {folder}: {exc.strerror or exc}")
    click.echo(f"removed {folder}" if removed else f"no cache at {folder}")


@main.command("rules")
def list_rules() -> None:
    """List every rule: code, name and summary."""
    from torchlint.registry import all_rules

    rules = all_rules()
    width = max((len(rule.NAME) for rule in rules), default=0)
    for rule in rules:
        click.echo(f"{rule.CODE}  {rule.NAME:<{width}}  {rule.SUMMARY}")


@main.command()
@click.argument("rule")
def explain(rule: str) -> None:
    """Print the documentation of RULE (a code such as TL001, or a name), or of any other
    code the output can show: TL000, TL998, TL999 and the probe's TL101-TL104."""
    from torchlint.codes import code_doc
    from torchlint.registry import rule_by_code_or_name

    found = rule_by_code_or_name(rule)
    if found is None:
        other = code_doc(rule)
        if other is None:
            fail(f"unknown rule or code {rule!r}; `torchlint rules` lists the rules")
        click.echo(other.render(), nl=False)
        return
    fix = "available" if found.fixable() else "none"
    click.echo(f"# {found.CODE} {found.NAME}\n\n{found.SUMMARY}\n\nSeverity: {found.SEVERITY.value}. Autofix: {fix}.\n")
    click.echo(found.doc())


@main.command()
@click.option(
    "-o", "--output", default="docs/rules", show_default=True, type=click.Path(file_okay=False), help="Folder of the pages."
)
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if the pages are out of date.")
def docs(output: str, check_only: bool) -> None:
    """Generate the rule documentation pages from the rules' own metadata."""
    from torchlint import docs as rule_docs
    from torchlint.registry import all_rules

    folder = Path(output)
    try:
        changed = rule_docs.stale(folder, all_rules()) if check_only else rule_docs.write(folder, all_rules())
    except OSError as exc:
        fail(f"cannot write the rule pages to {folder}: {exc.strerror or exc}")
    for name in changed:
        click.echo(f"{'out of date' if check_only else 'wrote'}: {folder / name}")
    if check_only and changed:
        click.echo("Run `torchlint docs` to regenerate them.", err=True)
        sys.exit(EXIT_FINDINGS)


@main.command()
def server() -> None:
    """Run the language server (LSP over stdio) for editors; needs `pip install 'torchlint[lsp]'`."""
    try:
        from torchlint.server import start
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] not in ("pygls", "lsprotocol"):
            raise
        fail(f"the language server needs pygls ({exc.name} is missing): pip install 'torchlint[lsp]'")
    start()



def run() -> NoReturn:
    """Entry point that turns any unexpected exception into a clear one-line error."""
    leave(exit_status())


def exit_status() -> int | str | None:
    try:
        main(standalone_mode=True)
    except SystemExit as exit:
        return exit.code
    except KeyboardInterrupt:
        click.echo("torchlint: interrupted", err=True)
        return 130
    except Exception as exc:  # last line of defence: never a traceback for the user
        if os.environ.get("TORCHLINT_DEBUG"):
            raise
        click.echo(
            f"torchlint: internal error: {type(exc).__name__}: {exc} (set TORCHLINT_DEBUG=1 for a traceback)",
            err=True,
        )
        return EXIT_ERROR
    return EXIT_CLEAN


def leave(status: int | str | None) -> NoReturn:
    """Exit without tearing the interpreter down. Freeing LibCST's classes and every
    module's objects one by one is some 25 ms of a 180 ms one-file check (the pre-commit
    and editor case, bench/startup.py), and nothing in it matters to a finished run. As
    mypy does: the output is flushed and the exit handlers (the dataclass cache's save)
    run first. A run that left a thread going, or whose output cannot be flushed (a
    closed pipe or stream), exits the ordinary way, as before."""
    import atexit
    import threading

    if threading.active_count() == 1:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):  # a closed pipe, or a stream closed (the server's stdout)
            pass
        else:
            if isinstance(status, str):
                print(status, file=sys.stderr, flush=True)
                status = 1
            atexit._run_exitfuncs()
            os._exit(status or 0)
    sys.exit(status)
