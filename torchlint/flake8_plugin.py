"""The flake8 plugin (entry point `flake8.extension`, prefix `TL`): torchlint's engine
and rules inside flake8, so that `flake8 --select TL` reports TL0xx findings.

flake8 does the selecting (`--select`, `--extend-ignore`, `per-file-ignores`) and
applies `# noqa` comments itself (so `--disable-noqa` works); torchlint's own
`# torchlint: disable...` comments still apply. torchlint's configuration file is not
read: in a flake8 run, flake8's configuration decides. Imported only by flake8.
"""

from __future__ import annotations

import argparse
import ast
from typing import Iterator, Sequence

from torchlint import __version__


class TorchlintChecker:
    name = "torchlint"
    version = __version__
    # Whether flake8 reports any TL code in this run; when it does not (`--select E,F`),
    # the plugin parses nothing, since flake8 runs every installed plugin.
    selected = True

    @classmethod
    def parse_options(cls, options: argparse.Namespace) -> None:
        from flake8.style_guide import Decision, DecisionEngine  # type: ignore[import-untyped]

        from torchlint.registry import known_codes

        decider = DecisionEngine(options)
        cls.selected = any(decider.decision_for(code) is Decision.Selected for code in known_codes())

    def __init__(self, tree: ast.AST, filename: str, lines: Sequence[str]) -> None:
        # flake8 passes the tree it parsed; the engine parses with LibCST, from the lines.
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        if not self.selected:
            return
        from torchlint import engine
        from torchlint.api import enabled_rules
        from torchlint.config import Config

        source = "".join(self.lines)
        for finding in engine.check_source(source, self.filename, enabled_rules(Config()), noqa=False):
            message = finding.message.replace("\n", " ")
            yield finding.line, finding.column - 1, f"{finding.code} [{finding.name}] {message}", type(self)
