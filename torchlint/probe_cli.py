"""The `torchlint probe` command. Imports no torch: the probed scripts run in
subprocesses. `torchlint.cli` registers `command()`; the helpers of `torchlint.cli` that it
reuses are imported when called, so that neither module needs the other to load first."""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from torchlint.config import DEVICES, ConfigError
from torchlint.discovery import PathError

if TYPE_CHECKING:
    from torchlint.runtime_probe.api import ProbeResult

SCRIPT_ARGS = "script_args"
FORMATS = ("text", "json", "sarif", "github", "junit")


class _ProbeCommand(click.Command):
    """Everything after `--` goes to the probed script, untouched by click."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            split = args.index("--")
            ctx.meta[SCRIPT_ARGS] = tuple(args[split + 1 :])
            args = args[:split]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return [*super().collect_usage_pieces(ctx), "[-- SCRIPT_ARGS...]"]


def _write(path: str, text: str) -> None:
    from torchlint.cli import fail

    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")


def _require_torch(device: str) -> None:
    from torchlint.cli import fail

    if importlib.util.find_spec("torch") is None:
        fail("`torchlint probe` needs PyTorch: pip install 'torchlint[probe]'")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            fail("--device cuda: no CUDA device is available here")


def _memory_size(text: str | None) -> int | None:
    from torchlint.cli import fail
    from torchlint.runtime_probe.simcuda import parse_size

    if text is None:
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        fail(f"--simulated-memory: {exc}")


def _probe(
    paths: tuple[str, ...],
    probe_all: bool,
    max_steps: int | None,
    timeout: float | None,
    device: str | None,
    simulated_memory: str | None,
    nproc_per_node: int,
    report: str | None,
    junit: str | None,
    output_format: str,
    output: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    config_file: str | None,
    isolated: bool,
) -> None:
    """Run the scripts under PATHS that `torchlint check` flags, under instrumentation,
    and confirm the bugs at runtime. Arguments after `--` go to the script. Exits 1 when
    a bug is confirmed or found, or when a script fails on its own (crashes, exits with a
    non-zero status): a script that cannot start confirms nothing."""
    from torchlint.cli import EXIT_CLEAN, EXIT_FINDINGS, fail, resolve_config, split_codes
    from torchlint.runtime_probe import json_report, junit_report, text_report
    from torchlint.runtime_probe.api import ProbeOptions, ProbeResult, ScriptResult, plan, probe_script

    script_args: tuple[str, ...] | None = click.get_current_context().meta.get(SCRIPT_ARGS)
    targets = list(paths) or ["."]
    try:
        config = resolve_config(config_file, isolated, targets)
        config = config.with_overrides(select=split_codes(select), ignore=split_codes(ignore))
    except ConfigError as exc:
        fail(str(exc))
    _require_torch(device or config.probe.device)
    options = ProbeOptions(max_steps, timeout, device, nproc_per_node, script_args, probe_all)
    options = dataclasses.replace(options, simulated_memory=_memory_size(simulated_memory))
    cwd = Path.cwd()
    try:
        chosen = plan(targets, config, options, cwd)
    except PathError as exc:
        fail(str(exc))
    if script_args is not None and len(chosen.scripts) > 1:
        fail(
            f"arguments after `--` are for one script, but {len(chosen.scripts)} would run; "
            "give per-script `args` in [tool.torchlint.probe.scripts] instead"
        )
    # The text report shows progress as scripts finish; beside a machine-readable format
    # on stdout it goes to stderr.
    progress_to_stderr = output_format != "text" and output is None
    results: list[ScriptResult] = []
    for path, findings in chosen.scripts:
        result = probe_script(path, findings, config, options, cwd)
        click.echo(text_report.render_script(result), err=progress_to_stderr)
        results.append(result)
    outcome = ProbeResult(tuple(results), chosen.skipped, chosen.files_checked)
    if results:
        click.echo(text_report.render_summary(outcome), nl=False, err=progress_to_stderr)
    else:
        for skipped in chosen.skipped:
            click.echo(f"skipped {skipped.path}: {skipped.reason}", err=progress_to_stderr)
        hint = "" if probe_all else " (--all probes scripts without static findings)"
        click.echo(f"Nothing to probe: no runnable script has static findings{hint}.", err=progress_to_stderr)
    if output is not None:
        _write(output, _formatted(outcome, output_format, cwd))
    elif output_format != "text":
        click.echo(_formatted(outcome, output_format, cwd), nl=False)
    if report:
        _write(report, json_report.render(outcome))
    if junit:
        _write(junit, junit_report.render(outcome))
    sys.exit(EXIT_FINDINGS if outcome.has_findings or outcome.has_failures else EXIT_CLEAN)


def _formatted(outcome: ProbeResult, output_format: str, cwd: Path) -> str:
    from torchlint import __version__
    from torchlint.registry import RuleMetas
    from torchlint.report import ReportContext, render
    from torchlint.runtime_probe import json_report, junit_report, text_report
    from torchlint.runtime_probe.annotations import as_findings

    if output_format == "text":
        return "".join(text_report.render_script(s) + "\n" for s in outcome.scripts) + text_report.render_summary(outcome)
    if output_format == "json":
        return json_report.render(outcome)
    if output_format == "junit":
        return junit_report.render(outcome)
    context = ReportContext(
        files_checked=len(outcome.scripts), rules=RuleMetas(), version=__version__, cwd=cwd, show_source=False
    )
    return render(output_format, as_findings(outcome), context)


_OPTIONS = (
    click.argument("paths", nargs=-1, type=click.Path()),
    click.option("--all", "probe_all", is_flag=True, help="Probe every runnable script, not only those with static findings."),
    click.option("--max-steps", type=click.IntRange(min=1), help="Stop each script after N optimizer steps (default 20)."),
    click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per script before it is killed (default 300)."),
    click.option(
        "--device",
        type=click.Choice(DEVICES),
        help="auto: a GPU if there is one, else simulated CUDA for scripts that ask for CUDA; cpu: hide GPUs; "
        "cuda: require one; simulated: always simulate CUDA on the CPU.",
    ),
    click.option(
        "--simulated-memory",
        metavar="SIZE",
        help="Memory of the simulated CUDA device, such as 24GiB (default 80GiB).",
    ),
    click.option("--nproc-per-node", type=click.IntRange(min=1), default=1, show_default=True, help="Launch through torchrun with N ranks."),
    click.option("--report", type=click.Path(dir_okay=False), help="Write the JSON report to FILE."),
    click.option("--junit", type=click.Path(dir_okay=False), help="Write JUnit XML to FILE, one test case per script."),
    click.option(
        "--format",
        "output_format",
        type=click.Choice(FORMATS),
        default="text",
        show_default=True,
        help="Report format; sarif and github list what was confirmed or found, and checks that need a GPU.",
    ),
    click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write the report to FILE."),
    click.option("--select", multiple=True, help="Static rules whose findings select scripts (comma-separated)."),
    click.option("--ignore", multiple=True, help="Static rules to leave out (comma-separated)."),
)


def command() -> click.Command:
    from torchlint.cli import config_options

    func = config_options(_probe)
    for option in reversed(_OPTIONS):
        func = option(func)
    return click.command("probe", cls=_ProbeCommand)(func)
