"""The one configuration type, loaded from `[tool.torchlint]` in pyproject.toml or from
torchlint.toml, validated strictly: an unknown key or rule code is an error, never ignored.

ruff's vocabulary works too: `extend-select` / `extend-ignore` add to `select` /
`ignore`, and `extend = "../pyproject.toml"` starts from another configuration file
(its relative patterns stay relative to its own folder), which this file's keys override.
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from torchlint.finding import Severity
from torchlint.globs import PatternError, check_pattern, compile_pattern
from torchlint.registry import is_valid_selector
from torchlint.sources import DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_FILE_TOKENS

DEFAULT_EXCLUDE = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".eggs",
    "*.egg-info",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".torchlint_cache",
    ".ipynb_checkpoints",
    "node_modules",
    "build",
    "dist",
    "site-packages",
)

CONFIG_FILENAMES = ("torchlint.toml", ".torchlint.toml", "pyproject.toml")


class ConfigError(Exception):
    """A configuration problem, always naming the file and the key."""


@dataclass(frozen=True)
class ProbeScript:
    """Per-script settings of `torchlint probe`, matched by a glob on the script path."""

    pattern: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    max_steps: int | None = None


@dataclass(frozen=True)
class ProbeSettings:
    max_steps: int = 20
    timeout: float = 300.0
    device: str = "auto"
    scripts: tuple[ProbeScript, ...] = ()

    def for_script(self, relpath: str) -> ProbeScript | None:
        """The settings of the first pattern that matches the script's path (relative
        to the configuration file's folder)."""
        posix = relpath.replace("\\", "/")
        for script in self.scripts:
            pattern = compile_pattern(script.pattern)
            if pattern is not None and pattern.covers(posix):
                return script
        return None


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    respect_gitignore: bool = True
    # Apply the excludes to files named on the command line too (pre-commit names them).
    force_exclude: bool = False
    max_file_size: int = DEFAULT_MAX_FILE_BYTES
    max_file_tokens: int = DEFAULT_MAX_FILE_TOKENS
    # The lowest severity of finding that makes `check` exit with 1.
    fail_on: Severity = Severity.WARNING
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    # The file these settings came from, and the folder that relative patterns use.
    source: Path | None = None
    root: Path | None = None
    # The files that `extend` chained in, nearest first.
    extends: tuple[Path, ...] = ()

    def with_overrides(self, **changes: Any) -> Config:
        """These settings replaced; `extend_select` / `extend_ignore` add to the
        (replaced) `select` / `ignore`, as ruff's flags of those names do."""
        clean = {k: v for k, v in changes.items() if v is not None}
        for key in ("select", "ignore", "extend_select", "extend_ignore"):
            if key in clean:
                # Not `self.source`: the value comes from the flags or the editor, not that file.
                _check_selectors(clean[key], None, key.replace("_", "-"))
        for key in ("select", "ignore"):
            added = clean.pop(f"extend_{key}", ())
            if added:
                clean[key] = (*clean.get(key, getattr(self, key)), *added)
        return replace(self, **clean)

    def ignored_for(self, relpath: str) -> tuple[str, ...]:
        """The codes that `per-file-ignores` drops for a file (its path relative to the
        configuration file's folder). As in ruff, `"!src/**" = [...]` applies to every
        file that the pattern does not match."""
        codes: list[str] = []
        for text, ignored in self.per_file_ignores:
            pattern = compile_pattern(text)
            if pattern is not None and pattern.covers(relpath) != pattern.negated:
                codes.extend(ignored)
        return tuple(codes)

    def describe(self, enabled: Sequence[tuple[str, str]]) -> str:
        """The effective settings as `check --show-settings` prints them, TOML-like."""

        def value(v: object) -> str:
            if isinstance(v, bool):
                return "true" if v else "false"
            if isinstance(v, tuple):
                return "[" + ", ".join(value(x) for x in v) + "]"
            return json.dumps(v)

        pfi = ", ".join(f"{json.dumps(pattern)} = {value(codes)}" for pattern, codes in self.per_file_ignores)
        probe = self.probe
        scripts = ", ".join(
            f"{json.dumps(s.pattern)} = {{args = {value(s.args)}, env = {json.dumps(dict(s.env))}, "
            f"timeout = {value(s.timeout)}, max-steps = {value(s.max_steps)}}}"
            for s in probe.scripts
        )
        lines = [
            f"# settings file: {self.source if self.source else 'none (defaults)'}",
            *(f"# extends: {path}" for path in self.extends),
            f"# root of relative patterns: {self.root if self.root else 'the working folder'}",
            f"select = {value(self.select)}",
            f"ignore = {value(self.ignore)}",
            f"exclude = {value(self.exclude)}",
            f"extend-exclude = {value(self.extend_exclude)}",
            f"per-file-ignores = {{{pfi}}}",
            f"respect-gitignore = {value(self.respect_gitignore)}",
            f"force-exclude = {value(self.force_exclude)}",
            f"max-file-size = {self.max_file_size}",
            f"max-file-tokens = {self.max_file_tokens}",
            f"fail-on = {json.dumps(self.fail_on.value)}",
            "",
            "[probe]",
            f"max-steps = {probe.max_steps}",
            f"timeout = {probe.timeout}",
            f"device = {json.dumps(probe.device)}",
            f"scripts = {{{scripts}}}",
            "",
            f"# enabled rules ({len(enabled)}):",
            *(f"#   {code}  {name}" for code, name in enabled),
        ]
        return "\n".join(lines) + "\n"

    def fingerprint(self) -> str:
        """What of the settings changes findings; the cache keys on it. The root is in it
        because per-file-ignores patterns match paths relative to it."""
        root = self.root.resolve().as_posix() if self.root else None
        return repr((self.select, self.ignore, self.per_file_ignores, self.max_file_size, self.max_file_tokens, root))


_TOP_KEYS = {
    "select",
    "ignore",
    "extend-select",
    "extend-ignore",
    "extend",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "respect-gitignore",
    "force-exclude",
    "max-file-size",
    "max-file-tokens",
    "fail-on",
    "probe",
}
_PROBE_KEYS = {"max-steps", "timeout", "device", "scripts"}
_SCRIPT_KEYS = {"args", "env", "timeout", "max-steps"}
DEVICES = ("auto", "cuda", "cpu", "simulated")


def find_config_file(start: Path) -> Path | None:
    """The nearest torchlint.toml, or pyproject.toml with a [tool.torchlint] table, upwards."""
    start = start.resolve()
    folder = start if os.path.isdir(start) else start.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_FILENAMES:
            path = candidate / name
            if not os.path.isfile(path):  # False, not raising, in a folder that cannot be searched
                continue
            if name != "pyproject.toml" or _has_tool_table(path):
                return path
    return None


def _has_tool_table(path: Path) -> bool:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        # A broken pyproject.toml that may hold our table: let load_config report it.
        return "[tool.torchlint" in path.read_text(encoding="utf-8", errors="replace")
    return isinstance(data.get("tool"), dict) and "torchlint" in data["tool"]


def load_config(path: Path, _chain: tuple[Path, ...] = ()) -> Config:
    table, prefix = _read_table(path)
    base = None
    if "extend" in table:
        base = _extended(path, table["extend"], prefix, _chain)
    return config_from_mapping(table, path, prefix, base)


def _extended(path: Path, target: Any, prefix: str, chain: tuple[Path, ...]) -> Config:
    name = f"{prefix}.extend" if prefix else "extend"
    if not isinstance(target, str) or not target:
        raise ConfigError(f"{path}: {name} must be the path of another configuration file")
    parent = (path.parent / os.path.expanduser(target)).resolve()
    here = path.resolve()
    if parent == here or parent in chain:
        raise ConfigError(f"{path}: {name} = {target!r} extends itself through {' -> '.join(map(str, (*chain, here)))}")
    if not parent.is_file():
        raise ConfigError(f"{path}: {name}: no such configuration file {parent}")
    return load_config(parent, (*chain, here))


def _read_table(path: Path) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    if path.name == "pyproject.toml":
        table = data.get("tool", {}).get("torchlint", {})
        prefix = "tool.torchlint"
    else:  # torchlint.toml: its own table, or a [tool.torchlint] one
        tool = data.get("tool")
        if isinstance(tool, dict) and "torchlint" in tool:
            table, prefix = tool["torchlint"], "tool.torchlint"
        else:
            table, prefix = data, ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{prefix}] must be a table")
    return table, prefix


def discover_config(start: Path) -> Config:
    path = find_config_file(start)
    return load_config(path) if path else Config()


def config_from_mapping(
    table: Mapping[str, Any], path: Path | None, prefix: str = "tool.torchlint", base: Config | None = None
) -> Config:
    """The settings of `table`, over those of `base` (an extended configuration)."""
    where = str(path) if path else "<settings>"

    def key_name(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    _check_keys(table, _TOP_KEYS, where, key_name)
    root = path.parent if path else None
    config = Config(source=path, root=root)
    if base is not None:
        config = _rebased(base, root, path)
    changes: dict[str, Any] = {}
    for key in ("select", "ignore", "exclude", "extend-exclude", "extend-select", "extend-ignore"):
        if key in table:
            values = _string_list(table[key], where, key_name(key))
            if key in ("select", "ignore", "extend-select", "extend-ignore"):
                _check_selectors(values, path, key_name(key))
            else:
                for pattern in values:
                    _check_pattern(pattern, where, key_name(key))
            changes[key.replace("-", "_")] = values
    # ruff's order: this file's `select` replaces the extended one, then `extend-select` adds.
    for key in ("select", "ignore"):
        added = changes.pop(f"extend_{key}", ())
        if added:
            changes[key] = (*changes.get(key, getattr(config, key)), *added)
    if base is not None and "extend_exclude" in changes:
        changes["extend_exclude"] = (*config.extend_exclude, *changes["extend_exclude"])
    if "per-file-ignores" in table:
        raw = table["per-file-ignores"]
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{where}: {key_name('per-file-ignores')} must be a table of pattern = [codes], not {_described(raw)}"
            )
        pairs = []
        for pattern, codes in raw.items():
            _check_pattern(pattern, where, key_name("per-file-ignores"))
            quoted = json.dumps(pattern)
            values = _string_list(codes, where, f"{key_name('per-file-ignores')}.{quoted}", quoted)
            _check_selectors(values, path, f"{key_name('per-file-ignores')}.{pattern}")
            pairs.append((pattern, values))
        changes["per_file_ignores"] = tuple(pairs)
    if "respect-gitignore" in table:
        changes["respect_gitignore"] = _bool(table["respect-gitignore"], where, key_name("respect-gitignore"))
    if "force-exclude" in table:
        changes["force_exclude"] = _bool(table["force-exclude"], where, key_name("force-exclude"))
    if "max-file-size" in table:
        changes["max_file_size"] = _positive_int(table["max-file-size"], where, key_name("max-file-size"))
    if "max-file-tokens" in table:
        changes["max_file_tokens"] = _positive_int(table["max-file-tokens"], where, key_name("max-file-tokens"))
    if "fail-on" in table:
        changes["fail_on"] = _severity(table["fail-on"], where, key_name("fail-on"))
    if "probe" in table:
        changes["probe"] = _probe_settings(table["probe"], where, key_name("probe"))
    return replace(config, **changes)


def _rebased(base: Config, root: Path | None, path: Path | None) -> Config:
    """An extended configuration as seen from `root`: its patterns that name paths are
    rewritten to mean the same files from there."""
    if root is None or base.root is None:
        return replace(base, source=path, root=root)
    return replace(
        base,
        exclude=tuple(rebase_pattern(p, base.root, root) for p in base.exclude),
        extend_exclude=tuple(rebase_pattern(p, base.root, root) for p in base.extend_exclude),
        per_file_ignores=tuple((rebase_pattern(p, base.root, root), codes) for p, codes in base.per_file_ignores),
        source=path,
        root=root,
        extends=(*((base.source,) if base.source else ()), *base.extends),
    )


def rebase_pattern(pattern: str, old_root: Path, new_root: Path) -> str:
    """`pattern`, relative to `old_root`, rewritten relative to `new_root`. Patterns
    without a folder part (`*.py`, `build`) and `**/` patterns match at any depth and
    stay as they are."""
    negated = pattern.startswith("!")
    body = pattern[1:] if negated else pattern
    if "/" not in body.rstrip("/") or body.startswith("**/"):
        return pattern
    trailing = "/" if body.endswith("/") else ""
    target = old_root.resolve() / body.strip("/")
    moved = Path(os.path.relpath(target, new_root.resolve())).as_posix()
    return ("!" if negated else "") + moved + trailing


def _probe_settings(raw: Any, where: str, name: str) -> ProbeSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {name} must be a table")
    _check_keys(raw, _PROBE_KEYS, where, lambda key: f"{name}.{key}")
    settings = ProbeSettings()
    changes: dict[str, Any] = {}
    if "max-steps" in raw:
        changes["max_steps"] = _positive_int(raw["max-steps"], where, f"{name}.max-steps")
    if "timeout" in raw:
        changes["timeout"] = _positive_number(raw["timeout"], where, f"{name}.timeout")
    if "device" in raw:
        if raw["device"] not in DEVICES:
            raise ConfigError(f"{where}: {name}.device must be one of {', '.join(DEVICES)}, not {raw['device']!r}")
        changes["device"] = raw["device"]
    if "scripts" in raw:
        scripts_raw = raw["scripts"]
        if not isinstance(scripts_raw, dict):
            raise ConfigError(f"{where}: {name}.scripts must be a table of script pattern = settings")
        changes["scripts"] = tuple(
            _probe_script(pattern, value, where, f"{name}.scripts.{pattern!r}") for pattern, value in scripts_raw.items()
        )
    return replace(settings, **changes)


def _probe_script(pattern: str, raw: Any, where: str, name: str) -> ProbeScript:
    _check_pattern(pattern, where, name)
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {name} must be a table, not {_described(raw)}")
    _check_keys(raw, _SCRIPT_KEYS, where, lambda key: f"{name}.{key}")
    args: tuple[str, ...] = ()
    if "args" in raw:
        if isinstance(raw["args"], str):
            import shlex  # for the probe's settings only: not on every check's start-up

            args = tuple(shlex.split(raw["args"]))
        else:
            args = _string_list(raw["args"], where, f"{name}.args")
    env: tuple[tuple[str, str], ...] = ()
    if "env" in raw:
        if not isinstance(raw["env"], dict) or not all(isinstance(v, str) for v in raw["env"].values()):
            raise ConfigError(f"{where}: {name}.env must be a table of strings")
        env = tuple(sorted(raw["env"].items()))
    return ProbeScript(
        pattern=pattern,
        args=args,
        env=env,
        timeout=_positive_number(raw["timeout"], where, f"{name}.timeout") if "timeout" in raw else None,
        max_steps=_positive_int(raw["max-steps"], where, f"{name}.max-steps") if "max-steps" in raw else None,
    )


def _check_keys(table: Mapping[str, Any], known: set[str], where: str, key_name: Callable[[str], str]) -> None:
    """An unknown key is an error that suggests the nearest known one (a typo, usually)."""
    unknown = sorted(set(table) - known)
    if not unknown:
        return
    key = unknown[0]
    import difflib  # on this error only: not on every check's start-up

    nearest = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f"did you mean {key_name(nearest[0])!r}? " if nearest else ""
    raise ConfigError(f"{where}: unknown key {key_name(key)!r}; {hint}known keys: {', '.join(sorted(known))}")


def _check_pattern(pattern: str, where: str, name: str) -> None:
    try:
        check_pattern(pattern)
    except PatternError as exc:
        raise ConfigError(f"{where}: {name}: {exc}") from None


def _string_list(value: Any, where: str, name: str, key: str | None = None) -> tuple[str, ...]:
    """`key`: the key as the file spells it, where the last part of `name` is not (a quoted
    pattern of `per-file-ignores`)."""
    if isinstance(value, str):
        # A string is a common slip (flake8 writes `ignore = E501`): say how to write the list.
        items = [part.strip() for part in value.split(",") if part.strip()]
        raise ConfigError(
            f"{where}: {name} must be a list of strings, not the string {value!r}; "
            f"write {key or name.rsplit('.', 1)[-1]} = {json.dumps(items)}"
        )
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {name} must be a list of strings, not {_described(value)}")
    return tuple(value)


def _described(value: Any) -> str:
    """A TOML value as an error message names it: `the string '8MB'`, `a table`."""
    if isinstance(value, list):
        odd = next((v for v in value if not isinstance(v, str)), None)
        return f"a list holding {_described(odd)}" if odd is not None else "a list"
    if isinstance(value, dict):
        return "a table"
    kinds = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"))
    kind = next((label for cls, label in kinds if isinstance(value, cls)), type(value).__name__)
    shown = json.dumps(value) if isinstance(value, bool) else repr(value)
    return f"the {kind} {shown}"


def _severity(value: Any, where: str, name: str) -> Severity:
    choices = [severity.value for severity in Severity]
    if value not in choices:
        raise ConfigError(f"{where}: {name} must be one of {', '.join(map(json.dumps, choices))}, not {_described(value)}")
    return Severity(value)


def _bool(value: Any, where: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {name} must be true or false, not {_described(value)}")
    return value


def _positive_int(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: {name} must be a positive integer, not {_described(value)}")
    return value


def _positive_number(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: {name} must be a positive number, not {_described(value)}")
    return float(value)


def _check_selectors(values: tuple[str, ...], path: Path | None, name: str) -> None:
    for value in values:
        if not is_valid_selector(value):
            where = f"{path}: " if path else ""
            raise ConfigError(f"{where}{name}: unknown rule code or name {value!r} (see `torchlint rules`)")
