"""The nearest configuration of each file, for a tree that holds several projects (a
monorepo with a pyproject.toml per package), as ruff does: a file is checked with the
settings of the closest torchlint.toml or pyproject.toml with a `[tool.torchlint]`
table above it, or with the run's own settings where there is none. Flags given on the
command line apply on top of every file's settings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from torchlint.config import Config, find_config_file, load_config


class NearestConfigs:
    """Config per file: `fallback` where no configuration file is found, and each
    configuration file read once."""

    def __init__(self, fallback: Config, adjust: Callable[[Config], Config] = lambda config: config) -> None:
        self.fallback = fallback
        self.adjust = adjust
        self._by_folder: dict[Path, Config] = {}
        self._by_file: dict[Path, Config] = {}
        if fallback.source is not None:
            self._by_file[fallback.source.resolve()] = fallback

    def __call__(self, path: Path) -> Config:
        folder = path.resolve().parent
        found = self._by_folder.get(folder)
        if found is None:
            found = self._by_folder[folder] = self._for_folder(folder)
        return found

    def _for_folder(self, folder: Path) -> Config:
        config_file = find_config_file(folder)
        if config_file is None:
            return self.fallback
        key = config_file.resolve()
        if key not in self._by_file:
            self._by_file[key] = self.adjust(load_config(config_file))
        return self._by_file[key]


def overrides(**changes: Any) -> Callable[[Config], Config]:
    return lambda config: config.with_overrides(**changes)
