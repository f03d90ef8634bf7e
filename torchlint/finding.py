"""The one finding type that every part of torchlint produces and consumes."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    def at_least(self, threshold: Severity) -> bool:
        """Whether this severity is `threshold` or graver (`--fail-on` compares so)."""
        return _RANK[self] >= _RANK[threshold]


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


@dataclass(frozen=True, order=True)
class Edit:
    """Replace the text between two 1-based (line, column) positions; end is exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int
    replacement: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "replacement": self.replacement,
        }


@dataclass(frozen=True, order=True)
class Fix:
    description: str
    edits: tuple[Edit, ...]
    # Unsafe fixes may change behaviour beyond the bug; `--fix` applies only safe ones
    # unless `--unsafe-fixes` is given.
    safe: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "safe": self.safe,
            "edits": [e.to_dict() for e in self.edits],
        }


PARSE_ERROR_CODE = "TL000"
PARSE_ERROR_NAME = "parse-error"
INTERNAL_ERROR_CODE = "TL999"
INTERNAL_ERROR_NAME = "internal-error"
FILE_TOO_LARGE_CODE = "TL998"
FILE_TOO_LARGE_NAME = "file-too-large"
# A suppression comment that suppresses nothing or names no rule (ruff's RUF100); the
# engine reports it when `select` names it (never through `ALL`).
UNUSED_SUPPRESSION_CODE = "TL900"
UNUSED_SUPPRESSION_NAME = "unused-suppression"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem at one place. Field order is the sort order of reports."""

    filename: str
    # 1-based notebook cell; 0 for plain source files.
    cell: int
    line: int
    column: int
    end_line: int
    end_column: int
    code: str
    name: str
    message: str
    severity: Severity = field(default=Severity.ERROR)
    fix: Fix | None = field(default=None)

    @property
    def is_internal_error(self) -> bool:
        return self.code == INTERNAL_ERROR_CODE

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "filename": self.filename,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "fix": self.fix.to_dict() if self.fix else None,
        }
        if self.cell:
            data["cell"] = self.cell
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Finding:
        fix = data.get("fix")
        return cls(
            filename=data["filename"],
            cell=data.get("cell", 0),
            line=data["line"],
            column=data["column"],
            end_line=data["end_line"],
            end_column=data["end_column"],
            code=data["code"],
            name=data["name"],
            message=data["message"],
            severity=Severity(data["severity"]),
            fix=None
            if fix is None
            else Fix(
                description=fix["description"],
                safe=fix["safe"],
                edits=tuple(Edit(**e) for e in fix["edits"]),
            ),
        )


FILE_PROBLEMS = {
    PARSE_ERROR_CODE: (PARSE_ERROR_NAME, Severity.ERROR),
    FILE_TOO_LARGE_CODE: (FILE_TOO_LARGE_NAME, Severity.INFO),
    INTERNAL_ERROR_CODE: (INTERNAL_ERROR_NAME, Severity.ERROR),
}


def file_problem(filename: str, code: str, message: str, line: int = 1, column: int = 1) -> Finding:
    """A finding about the file rather than its code: `TL000` (cannot be read or parsed,
    at the offending position), `TL998` (over `max-file-size`, not checked; info, so
    that it fails a run only with `--fail-on info`) or `TL999` (torchlint failed on it)."""
    name, severity = FILE_PROBLEMS[code]
    return Finding(
        filename=filename,
        cell=0,
        line=line,
        column=column,
        end_line=line,
        end_column=column,
        code=code,
        name=name,
        message=message,
        severity=severity,
    )
