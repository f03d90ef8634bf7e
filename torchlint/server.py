"""`torchlint server`: the Language Server Protocol over stdio, for editors.

Diagnostics on open, on change (debounced) and on save; code actions (the rule's fix,
"disable for this line", "disable for this file"); hover on a finding. Each document
is checked with the settings of its project (the nearest configuration file, as
`torchlint check` finds it), with the workspace settings (`select`, `ignore`,
`fail-on`, `unsafe-fixes`) on top. A document's findings are kept with its version:
code actions and hover read them, without parsing again; a text already checked under
the same settings is not checked again, and an unchanged file on open is served from
the result cache that `torchlint check` writes.

Needs pygls (the `lsp` extra); nothing else imports this module.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from torchlint import __version__, api
from torchlint.cache import ResultCache, cache_dir, content_digest
from torchlint.config import CONFIG_FILENAMES, Config, ConfigError
from torchlint.finding import Edit, Finding, Severity
from torchlint.newlines import normalize
from torchlint.noqa_edit import with_noqa
from torchlint.projects import NearestConfigs
from torchlint.registry import catalog
from torchlint.reparse import IncrementalParser
from torchlint.rule import RULE_DOC_URL, Rule
from torchlint.sources import SourceFile, Unreadable, decode, read_bytes
from torchlint.suppression import DISABLE_FILE, parse_suppressions

# Keystrokes closer together than this are checked once, after the last one. Short,
# as it counts in the 300 ms a diagnostic may take after a change (bench/lsp_latency.py):
# the changes that arrive while a check runs (it holds the event loop) are all read
# within it, so a burst of typing during a long check is still checked once.
DEBOUNCE_SECONDS = 0.025
# Texts whose findings are remembered, across documents (undo, switching back).
MEMO_SIZE = 64

SEVERITY_ORDER = (Severity.INFO, Severity.WARNING, Severity.ERROR)
LSP_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


# Jupyter notebooks opened as notebooks (LSP 3.17): their Python cells are checked together.
NOTEBOOK_SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
        )
    ],
    save=True,
)


class SettingsError(ValueError):
    pass


@dataclass(frozen=True)
class Settings:
    """The workspace settings; None: the project's configuration decides."""

    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    # From this severity up, findings show as errors (the ones `check` fails on).
    fail_on: Severity | None = None
    # Offer unsafe fixes as code actions too.
    unsafe_fixes: bool = False

    @classmethod
    def parse(cls, raw: Any) -> Settings:
        """From initializationOptions or didChangeConfiguration: `{"torchlint": {...}}`
        or the table itself; keys in kebab-case or camelCase."""
        if not isinstance(raw, Mapping):
            return cls()
        table = raw.get("torchlint", raw)
        if not isinstance(table, Mapping):
            raise SettingsError("torchlint settings must be an object")

        def get(*names: str) -> Any:
            return next((table[n] for n in names if n in table), None)

        def codes(name: str) -> tuple[str, ...] | None:
            value = get(name)
            if value is None:
                return None
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise SettingsError(f"torchlint setting {name!r} must be a list of rule codes")
            return tuple(value)

        fail_on = get("fail-on", "failOn")
        if fail_on is not None and fail_on not in {s.value for s in Severity}:
            raise SettingsError(f"torchlint setting 'fail-on' must be one of error, warning, info, not {fail_on!r}")
        unsafe = get("unsafe-fixes", "unsafeFixes")
        if unsafe is not None and not isinstance(unsafe, bool):
            raise SettingsError("torchlint setting 'unsafe-fixes' must be true or false")
        return cls(codes("select"), codes("ignore"), Severity(fail_on) if fail_on else None, bool(unsafe))


@dataclass
class Checked:
    """What is known of one version of a document."""

    version: int | None
    text: str
    findings: list[Finding]
    diagnostics: list[types.Diagnostic] = field(default_factory=list)


class TorchlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "torchlint",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=NOTEBOOK_SYNC,
        )
        self.settings = Settings()
        self.checked: dict[str, Checked] = {}
        self._configs: NearestConfigs | None = None
        self._rules: dict[int, list[Rule]] = {}
        # Findings by (text digest, configuration), with the project summaries they used.
        self._memo: dict[tuple[str, int], tuple[list[Finding], dict[str, str]]] = {}
        # Summaries of the project's modules by path: (content digest, summary).
        self._summaries: dict[str, tuple[str, Any]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        # Per open document: its last tree, so that a change parses only what it touched.
        self._parsers: dict[str, IncrementalParser] = {}

    # Settings and configuration

    def forget_configurations(self) -> None:
        self._configs = None
        self._rules.clear()
        self._memo.clear()
        self.checked.clear()

    def apply_settings(self, raw: Any) -> None:
        try:
            self.settings = Settings.parse(raw)
            self._configs = None
            self.configs()  # an unknown rule code is reported now, not per document
        except (SettingsError, ConfigError) as exc:
            self.settings = Settings()
            self._configs = None
            self.show_error(str(exc))
        self._rules.clear()
        self._memo.clear()
        self.checked.clear()

    def configs(self) -> NearestConfigs:
        if self._configs is None:
            settings = self.settings

            def adjust(config: Config) -> Config:
                return config.with_overrides(select=settings.select, ignore=settings.ignore)

            self._configs = NearestConfigs(adjust(Config()), adjust)
        return self._configs

    def show_error(self, message: str) -> None:
        self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"torchlint: {message}"))

    def rules_for(self, config: Config) -> list[Rule]:
        rules = self._rules.get(id(config))
        if rules is None:
            rules = self._rules[id(config)] = api.enabled_rules(config)
        return rules

    # Checking

    def schedule(self, uri: str) -> None:
        self.cancel_pending(uri)
        self._pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self.publish_edit, uri)

    def publish_edit(self, uri: str) -> None:
        """The diagnostics of an edited (or saved) document, then of the other open
        documents whose findings the edit changed: they may use what this module defines
        (a helper, a model), read as the editor holds it, saved or not."""
        self.cancel_pending(uri)
        self.publish(uri)
        for other in [u for u in self.workspace.text_documents if u != uri]:
            before = self.checked.pop(other, None)  # its text is unchanged, what it uses may not be
            document = self.workspace.get_text_document(other)
            after = self.check(document)
            if before is None or before.findings != after.findings:
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=other, version=after.version, diagnostics=after.diagnostics)
                )

    def cancel_pending(self, uri: str) -> None:
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()

    def publish(self, uri: str) -> None:
        self._pending.pop(uri, None)
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is not None:
            for cell_uri, checked in self.check_notebook(notebook).items():
                self.text_document_publish_diagnostics(
                    types.PublishDiagnosticsParams(uri=cell_uri, version=checked.version, diagnostics=checked.diagnostics)
                )
            return
        document = self.workspace.get_text_document(uri)
        checked = self.check(document)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=checked.diagnostics)
        )

    def check(self, document: TextDocument) -> Checked:
        text = normalize(document.source)
        known = self.checked.get(document.uri)
        if known is not None and known.version == document.version and known.text == text:
            return known
        notebook = self.workspace.get_notebook_document(cell_uri=document.uri)
        if notebook is not None:
            return self.check_notebook(notebook)[document.uri]
        path = Path(to_fs_path(document.uri) or "untitled.py")
        findings: list[Finding] = []
        config = self._config_for(path)
        if config is not None and self._checks(path, config, (".py", ".pyi")):
            parser = self._parsers.setdefault(document.uri, IncrementalParser())
            data = text.encode("utf-8")
            source = SourceFile(path, text, len(data))
            findings = self._findings(path, data, source, config, parser, from_disk_cache=known is None)
        checked = Checked(document.version, text, findings, [self.diagnostic(document, f) for f in findings])
        self.checked[document.uri] = checked
        return checked

    def check_notebook(self, notebook: types.NotebookDocument) -> dict[str, Checked]:
        """Check a notebook's code cells as one module, as `torchlint check` checks an
        `.ipynb` file, and keep each cell's findings under the cell's own document."""
        documents = [self.workspace.get_text_document(cell.document) for cell in notebook.cells]
        stored = {
            "cells": [
                {"cell_type": "code" if cell.kind == types.NotebookCellKind.Code else "markdown", "source": doc.source}
                for cell, doc in zip(notebook.cells, documents)
            ],
            "metadata": {},
            "nbformat": 4,
            "nbformat_minor": 5,
        }
        path = Path(to_fs_path(notebook.uri) or "untitled.ipynb")
        findings: list[Finding] = []
        config = self._config_for(path)
        if config is not None and self._checks(path, config, (".ipynb",)):
            data = json.dumps(stored).encode("utf-8")
            source = decode(path, data)
            if isinstance(source, SourceFile):
                findings = self._findings(path, data, source, config, None, from_disk_cache=False)
        by_cell: dict[str, Checked] = {}
        for number, document in enumerate(documents, start=1):
            found = [f for f in findings if f.cell == number]
            diagnostics = [self.diagnostic(document, f) for f in found]
            by_cell[document.uri] = Checked(document.version, normalize(document.source), found, diagnostics)
        self.checked.update(by_cell)
        return by_cell

    def _config_for(self, path: Path) -> Config | None:
        try:
            return self.configs()(path)
        except ConfigError as exc:
            self.show_error(str(exc))
            return None

    def _checks(self, path: Path, config: Config, suffixes: tuple[str, ...]) -> bool:
        from torchlint.discovery import excluded_by

        return (path.suffix in suffixes or not path.suffix) and not excluded_by(config, path, Path.cwd())

    def _findings(
        self,
        path: Path,
        data: bytes,
        source: SourceFile,
        config: Config,
        parser: IncrementalParser | None,
        from_disk_cache: bool,
    ) -> list[Finding]:
        from torchlint.project import Project, ProjectView

        memo_key = (hashlib.blake2b(data, digest_size=16).hexdigest(), id(config))
        # A fresh view of the project per check: a helper edited since may change the findings.
        project = Project(api.summarize_text, self._summaries, read=self.read_module)
        remembered = self._memo.get(memo_key)
        if remembered is not None and project.still_valid(path, remembered[1]):
            self._summaries.update(project.take_computed())
            return remembered[0]
        name = str(path)
        found: tuple[list[Finding], dict[str, str]] | None = None
        if from_disk_cache:  # a file just opened is often what `torchlint check` last saw
            hit = ResultCache.open(cache_dir(config, path.parent), config).get(path, content_digest(data), name)
            if hit is not None and project.still_valid(path, hit.deps):
                found = (hit.findings, hit.deps)
        if found is None:
            view = ProjectView.of(project, path)
            findings = api.findings_for(source, name, self.rules_for(config), config, view, parser)
            found = (findings, view.used)
        self._summaries.update(project.take_computed())
        if len(self._memo) >= MEMO_SIZE:
            self._memo.pop(next(iter(self._memo)))
        self._memo[memo_key] = found
        return found[0]

    def read_module(self, path: Path) -> bytes | Unreadable:
        """A module's content as the project model reads it: an open document's text as
        the editor holds it, other modules from the disk."""
        wanted = os.path.realpath(path)
        for uri, document in self.workspace.text_documents.items():
            where = to_fs_path(uri)
            if where is not None and os.path.realpath(where) == wanted:
                if self.workspace.get_notebook_document(cell_uri=uri) is None:
                    return normalize(document.source).encode("utf-8")
        return read_bytes(path)

    # Conversions

    def diagnostic(self, document: TextDocument, finding: Finding) -> types.Diagnostic:
        documented = finding.code in catalog()
        return types.Diagnostic(
            range=self.to_range(document, finding.line, finding.column, finding.end_line, finding.end_column),
            severity=LSP_SEVERITIES[self.shown_severity(finding.severity)],
            code=finding.code,
            code_description=types.CodeDescription(href=RULE_DOC_URL.format(code=finding.code)) if documented else None,
            source="torchlint",
            message=finding.message,
            data={"name": finding.name},
        )

    def shown_severity(self, severity: Severity) -> Severity:
        fail_on = self.settings.fail_on
        if fail_on is not None and SEVERITY_ORDER.index(severity) >= SEVERITY_ORDER.index(fail_on):
            return Severity.ERROR
        return severity

    def to_range(self, document: TextDocument, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        """1-based code-point positions -> the client's 0-based units."""
        server_range = types.Range(
            start=types.Position(line=line - 1, character=column - 1),
            end=types.Position(line=end_line - 1, character=end_column - 1),
        )
        return document.position_codec.range_to_client_units(document.lines, server_range)

    def text_edit(self, document: TextDocument, edit: Edit) -> types.TextEdit:
        return types.TextEdit(
            range=self.to_range(document, edit.line, edit.column, edit.end_line, edit.end_column),
            new_text=edit.replacement,
        )

    def findings_at(self, document: TextDocument, request: types.Range) -> list[Finding]:
        checked = self.check(document)
        start = document.position_codec.position_from_client_units(document.lines, request.start)
        end = document.position_codec.position_from_client_units(document.lines, request.end)
        lo, hi = (start.line + 1, start.character + 1), (end.line + 1, end.character + 1)
        return [f for f in checked.findings if (f.line, f.column) <= hi and lo <= (f.end_line, f.end_column)]

    # Code actions and hover

    def code_actions(self, document: TextDocument, request: types.Range) -> list[types.CodeAction]:
        actions: list[types.CodeAction] = []
        checked = self.check(document)
        diagnostics = dict(zip(map(id, checked.findings), checked.diagnostics))
        disabled_lines: set[tuple[int, str]] = set()
        for finding in self.findings_at(document, request):
            diagnostic = [diagnostics[id(finding)]]
            fix = finding.fix
            if fix is not None and (fix.safe or self.settings.unsafe_fixes):
                actions.append(
                    types.CodeAction(
                        title=f"Fix {finding.code}: {fix.description}" + ("" if fix.safe else " (unsafe)"),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=diagnostic,
                        is_preferred=fix.safe,
                        edit=self.workspace_edit(document, [self.text_edit(document, e) for e in fix.edits]),
                    )
                )
            if (finding.line, finding.code) not in disabled_lines:
                disabled_lines.add((finding.line, finding.code))
                line_edit = self.disable_line(document, checked.text, finding)
                if line_edit is not None:
                    actions.append(
                        types.CodeAction(
                            title=f"Disable {finding.code} for this line",
                            kind=types.CodeActionKind.QuickFix,
                            diagnostics=diagnostic,
                            edit=self.workspace_edit(document, [line_edit]),
                        )
                    )
                actions.append(
                    types.CodeAction(
                        title=f"Disable {finding.code} for this file",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=diagnostic,
                        edit=self.workspace_edit(document, [self.disable_file(document, checked.text, finding.code)]),
                    )
                )
        return actions

    def workspace_edit(self, document: TextDocument, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
        return types.WorkspaceEdit(changes={document.uri: edits})

    def disable_line(self, document: TextDocument, text: str, finding: Finding) -> types.TextEdit | None:
        new_text, changed, _ = with_noqa(text, {finding.line: {finding.code}})
        if not changed:
            return None  # a bare `# noqa` already, or no comment can go on this line
        old = text.split("\n")[finding.line - 1]
        new = new_text.split("\n")[finding.line - 1]
        return self.text_edit(document, Edit(finding.line, 1, finding.line, len(old) + 1, new))

    def disable_file(self, document: TextDocument, text: str, code: str) -> types.TextEdit:
        for directive in parse_suppressions(text).directives:
            if directive.kind == DISABLE_FILE and not directive.is_bare:
                at = directive.codes_end + 1
                return self.text_edit(document, Edit(directive.line, at, directive.line, at, f", {code}"))
        lines = text.split("\n")
        # After a shebang and an encoding declaration, which must stay first.
        line = 1
        while line <= min(2, len(lines)) and (lines[line - 1].startswith("#!") or "coding" in lines[line - 1]):
            line += 1
        return self.text_edit(document, Edit(line, 1, line, 1, f"# torchlint: disable-file={code}\n"))

    def hover(self, document: TextDocument, position: types.Position) -> types.Hover | None:
        found = self.findings_at(document, types.Range(start=position, end=position))
        if not found:
            return None
        from torchlint.registry import rule_by_code_or_name

        parts = []
        for finding in found:
            rule = rule_by_code_or_name(finding.code) if finding.code in catalog() else None
            summary = f" — {rule.SUMMARY}" if rule else ""
            lines = [f"**{finding.code} {finding.name}**{summary}", "", finding.message]
            if finding.fix is not None:
                how = "quick fix" if finding.fix.safe or self.settings.unsafe_fixes else "`torchlint check --fix --unsafe-fixes`"
                lines += ["", f"Fix: {finding.fix.description} ({how})."]
            if rule:
                lines += ["", f"[{finding.code} documentation]({RULE_DOC_URL.format(code=finding.code)})"]
            parts.append("\n".join(lines))
        return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))


def create_server() -> TorchlintServer:
    server = TorchlintServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: TorchlintServer, params: types.InitializeParams) -> None:
        ls.apply_settings(params.initialization_options)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: TorchlintServer, params: types.DidChangeConfigurationParams) -> None:
        ls.apply_settings(params.settings)
        for uri in list(ls.workspace.text_documents):
            ls.publish(uri)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchlintServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.publish(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: TorchlintServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchlintServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if Path(to_fs_path(uri) or "").name in CONFIG_FILENAMES:
            # Saved settings: every open document is checked again under them.
            ls.forget_configurations()
            for open_uri in list(ls.workspace.text_documents):
                ls.publish(open_uri)
        else:
            ls.publish_edit(uri)  # now, without waiting for edits still debounced

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: TorchlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        ls.publish(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    async def notebook_did_change(ls: TorchlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: TorchlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        ls.publish(params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TorchlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        ls.cancel_pending(params.notebook_document.uri)
        for cell in params.cell_text_documents:
            ls.checked.pop(cell.uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchlintServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.cancel_pending(uri)
        ls.checked.pop(uri, None)
        ls._parsers.pop(uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(ls: TorchlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        if params.text_document.uri not in ls.workspace.text_documents:
            return []  # never opened: nothing was checked there
        actions = ls.code_actions(ls.workspace.get_text_document(params.text_document.uri), params.range)
        only = params.context.only
        if only is None:
            return actions
        # A requested kind covers its sub-kinds: `quickfix` asks for `quickfix.x` too.
        return [a for a in actions if a.kind is not None and any(a.kind == k or a.kind.startswith(f"{k}.") for k in only)]

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: TorchlintServer, params: types.HoverParams) -> types.Hover | None:
        if params.text_document.uri not in ls.workspace.text_documents:
            return None
        return ls.hover(ls.workspace.get_text_document(params.text_document.uri), params.position)

    return server


def start(streams: Sequence[Any] = ()) -> None:
    create_server().start_io(*streams)
