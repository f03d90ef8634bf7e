"""What a rule is: metadata, documentation, examples and a check over one parsed file.

A rule never sees the CLI, the configuration or the file system: it receives a
`FileContext` and yields `Report`s. The engine turns reports into `Finding`s.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Sequence, TypeVar

from torchlint.finding import Severity

if TYPE_CHECKING:
    # Only the rules themselves need LibCST at run time: the registry, the configuration
    # and a fully cached run can name rules without importing it.
    import libcst as cst

    from torchlint.project import ProjectView

T = TypeVar("T")


@dataclass(frozen=True)
class Example:
    """A code example of a rule.

    INVALID examples mark each expected finding with a trailing `# expect: TL0xx`
    comment on the reported line; VALID examples carry no marker and must produce
    nothing. `fixed`, when given, is the source after applying the rule's fixes.
    """

    source: str
    fixed: str | None = None

    @property
    def code(self) -> str:
        return inspect.cleandoc(self.source) + "\n"

    @property
    def fixed_code(self) -> str | None:
        return None if self.fixed is None else inspect.cleandoc(self.fixed) + "\n"


@dataclass(frozen=True)
class FixSpec:
    """A rule's suggested edit, as CST node replacements; the engine renders the text."""

    description: str
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]
    safe: bool = True


@dataclass(frozen=True)
class Report:
    node: cst.CSTNode
    message: str
    fix: FixSpec | None = None


class FileContext:
    """One parsed file, plus analyses that rules share and compute at most once.

    `project`, when the file is checked as part of a project, resolves the names it
    imports to the summaries of the project's other modules (None: nothing is known
    beyond this file)."""

    def __init__(self, filename: str, source: str, module: cst.Module, project: ProjectView | None = None) -> None:
        self.filename = filename
        self.source = source
        self.module = module
        self.project = project
        self._analyses: dict[Callable[[FileContext], Any], Any] = {}

    def analysis(self, compute: Callable[[FileContext], T]) -> T:
        try:
            return self._analyses[compute]  # type: ignore[no-any-return]
        except KeyError:
            result = self._analyses[compute] = compute(self)
            return result

    def release(self) -> None:
        """Drop the analyses, which often refer back to this context: without the
        reference cycles, the file's tree is freed as soon as the caller lets it go."""
        self._analyses.clear()


# Where the generated rule pages (`torchlint docs`) are published; SARIF help links
# and the docs index point here.
REPOSITORY_URL = "https://github.com/torchlint/torchlint"
RULE_DOC_URL = REPOSITORY_URL + "/blob/main/docs/rules/{code}.md"

_SECTION = re.compile(r"^## (.+)$", re.MULTILINE)
DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead")


def doc_sections(doc: str) -> dict[str, str]:
    """The `## ` sections of a rule's documentation, by heading."""
    heads = list(_SECTION.finditer(doc))
    sections: dict[str, str] = {}
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(doc)
        sections[head.group(1).strip()] = doc[head.end() : end].strip()
    return sections


class Rule:
    """Base class of every rule. Subclasses live in `torchlint.rules`, one per module.

    The subclass docstring is the rule's documentation, in Markdown, with the
    sections of `DOC_SECTIONS` as `## ` headings (and optionally `Fix safety`,
    `Runtime confirmation`, `References`).
    """

    CODE: ClassVar[str]
    NAME: ClassVar[str]
    SUMMARY: ClassVar[str]
    SEVERITY: ClassVar[Severity] = Severity.ERROR
    # How often a finding is a real bug, in code scanning's terms (`very-high`, `high`,
    # `medium`, `low`): dashboards sort and filter alerts by it.
    PRECISION: ClassVar[str] = "high"
    # A file is parsed for this rule only if, for every group, it contains at least one
    # of the group's substrings. Cheap and conservative: a rule must never need a
    # file that its triggers reject.
    TRIGGERS: ClassVar[tuple[tuple[str, ...], ...]]
    # Runtime codes of `torchlint probe` that can confirm this rule's findings.
    CONFIRMED_BY: ClassVar[tuple[str, ...]] = ()
    VALID: ClassVar[Sequence[Example | str]] = ()
    INVALID: ClassVar[Sequence[Example | str]] = ()

    def check(self, ctx: FileContext) -> Iterable[Report]:
        raise NotImplementedError

    def report(self, node: cst.CSTNode, message: str, fix: FixSpec | None = None) -> Report:
        return Report(node=node, message=message, fix=fix)

    @classmethod
    def triggered_by(cls, text: str) -> bool:
        return all(any(word in text for word in group) for group in cls.TRIGGERS)

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        return doc_sections(cls.doc())

    @classmethod
    def examples(cls, kind: str) -> list[Example]:
        items = cls.VALID if kind == "valid" else cls.INVALID
        return [item if isinstance(item, Example) else Example(item) for item in items]

    @classmethod
    def fixable(cls) -> bool:
        return any(ex.fixed is not None for ex in cls.examples("invalid"))


@dataclass(frozen=True)
class RuleMeta:
    """Plain metadata of a rule, for reporters that must not depend on rule classes."""

    code: str
    name: str
    summary: str
    severity: Severity
    doc: str = field(repr=False)
    precision: str = "high"

    @property
    def url(self) -> str:
        return RULE_DOC_URL.format(code=self.code)

    @classmethod
    def of(cls, rule: type[Rule]) -> RuleMeta:
        return cls(rule.CODE, rule.NAME, rule.SUMMARY, rule.SEVERITY, rule.doc(), rule.PRECISION)
