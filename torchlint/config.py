"""The one configuration type, loaded from `[tool.torchlint]` in pyproject.toml or from
torchlint.toml, validated strictly: an unknown key or rule code is an error, never ignored."""

from __future__ import annotations

import fnmatch
import json
import shlex
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Mapping, Sequence

from torchlint.registry import is_valid_selector
from torchlint.sources import DEFAULT_MAX_FILE_BYTES

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

    def for_script(self, path: str) -> ProbeScript | None:
        posix = PurePosixPath(path.replace("\\", "/"))
        for script in self.scripts:
            if posix.match(script.pattern) or fnmatch.fnmatch(posix.as_posix(), script.pattern):
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
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    # The file these settings came from, and the folder that relative patterns use.
    source: Path | None = None
    root: Path | None = None

    def with_overrides(self, **changes: Any) -> Config:
        clean = {k: v for k, v in changes.items() if v is not None}
        for key in ("select", "ignore"):
            if key in clean:
                _check_selectors(clean[key], self.source, key)
        return replace(self, **clean)

    def ignored_for(self, relpath: str) -> tuple[str, ...]:
        posix = PurePosixPath(relpath)
        codes: list[str] = []
        for pattern, ignored in self.per_file_ignores:
            if posix.match(pattern) or fnmatch.fnmatch(relpath, pattern):
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
            f"# root of relative patterns: {self.root if self.root else 'the working folder'}",
            f"select = {value(self.select)}",
            f"ignore = {value(self.ignore)}",
            f"exclude = {value(self.exclude)}",
            f"extend-exclude = {value(self.extend_exclude)}",
            f"per-file-ignores = {{{pfi}}}",
            f"respect-gitignore = {value(self.respect_gitignore)}",
            f"force-exclude = {value(self.force_exclude)}",
            f"max-file-size = {self.max_file_size}",
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
        return repr((self.select, self.ignore, self.per_file_ignores, self.max_file_size, root))


_TOP_KEYS = {
    "select",
    "ignore",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
    "respect-gitignore",
    "force-exclude",
    "max-file-size",
    "probe",
}
_PROBE_KEYS = {"max-steps", "timeout", "device", "scripts"}
_SCRIPT_KEYS = {"args", "env", "timeout", "max-steps"}
DEVICES = ("auto", "cuda", "cpu", "simulated")


def find_config_file(start: Path) -> Path | None:
    """The nearest torchlint.toml, or pyproject.toml with a [tool.torchlint] table, upwards."""
    start = start.resolve()
    folder = start if start.is_dir() else start.parent
    for candidate in (folder, *folder.parents):
        for name in CONFIG_FILENAMES:
            path = candidate / name
            if not path.is_file():
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


def load_config(path: Path) -> Config:
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
    else:
        table = data.get("tool", {}).get("torchlint", data)
        prefix = "tool.torchlint" if "tool" in data else ""
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{prefix}] must be a table")
    return config_from_mapping(table, path, prefix)


def discover_config(start: Path) -> Config:
    path = find_config_file(start)
    return load_config(path) if path else Config()


def config_from_mapping(table: Mapping[str, Any], path: Path | None, prefix: str = "tool.torchlint") -> Config:
    where = str(path) if path else "<settings>"

    def key_name(key: str) -> str:
        return f"{prefix}.{key}" if prefix else key

    unknown = sorted(set(table) - _TOP_KEYS)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {key_name(unknown[0])!r}; known keys: {', '.join(sorted(_TOP_KEYS))}"
        )
    config = Config(source=path, root=path.parent if path else None)
    changes: dict[str, Any] = {}
    for key in ("select", "ignore", "exclude", "extend-exclude"):
        if key in table:
            values = _string_list(table[key], where, key_name(key))
            if key in ("select", "ignore"):
                _check_selectors(values, path, key_name(key))
            changes[key.replace("-", "_")] = values
    if "per-file-ignores" in table:
        raw = table["per-file-ignores"]
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: {key_name('per-file-ignores')} must be a table of pattern = [codes]")
        pairs = []
        for pattern, codes in raw.items():
            values = _string_list(codes, where, f"{key_name('per-file-ignores')}.{pattern}")
            _check_selectors(values, path, f"{key_name('per-file-ignores')}.{pattern}")
            pairs.append((pattern, values))
        changes["per_file_ignores"] = tuple(pairs)
    if "respect-gitignore" in table:
        changes["respect_gitignore"] = _bool(table["respect-gitignore"], where, key_name("respect-gitignore"))
    if "force-exclude" in table:
        changes["force_exclude"] = _bool(table["force-exclude"], where, key_name("force-exclude"))
    if "max-file-size" in table:
        changes["max_file_size"] = _positive_int(table["max-file-size"], where, key_name("max-file-size"))
    if "probe" in table:
        changes["probe"] = _probe_settings(table["probe"], where, key_name("probe"))
    return replace(config, **changes)


def _probe_settings(raw: Any, where: str, name: str) -> ProbeSettings:
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {name} must be a table")
    unknown = sorted(set(raw) - _PROBE_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {name}.{unknown[0]!r}; known keys: {', '.join(sorted(_PROBE_KEYS))}")
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
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: {name} must be a table")
    unknown = sorted(set(raw) - _SCRIPT_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {name}.{unknown[0]}; known keys: {', '.join(sorted(_SCRIPT_KEYS))}")
    args: tuple[str, ...] = ()
    if "args" in raw:
        if isinstance(raw["args"], str):
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


def _string_list(value: Any, where: str, name: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {name} must be a list of strings")
    return tuple(value)


def _bool(value: Any, where: str, name: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where}: {name} must be true or false")
    return value


def _positive_int(value: Any, where: str, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: {name} must be a positive integer")
    return value


def _positive_number(value: Any, where: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{where}: {name} must be a positive number")
    return float(value)


def _check_selectors(values: tuple[str, ...], path: Path | None, name: str) -> None:
    for value in values:
        if not is_valid_selector(value):
            where = f"{path}: " if path else ""
            raise ConfigError(f"{where}{name}: unknown rule code or name {value!r} (see `torchlint rules`)")
