"""Names and imports: what an expression is called and what a name refers to through the
module's imports (`import torch as T`, `from torch import optim`), string literals, and
the mentions of a named object.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.index import Index, index


# `type(expr) is cst.Name` rather than `isinstance`: LibCST's concrete node classes have
# no subclasses, and `isinstance` on its ABCs costs ten times more in these hot helpers.


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes; None for anything else."""
    kind = type(expr)
    if kind is cst.Name:
        return expr.value  # type: ignore[attr-defined,no-any-return]
    parts: list[str] = []
    while kind is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
        kind = type(expr)
    if kind is cst.Name:
        parts.append(expr.value)  # type: ignore[attr-defined]
        return ".".join(reversed(parts))
    return None


def last_name(expr: cst.BaseExpression) -> str | None:
    """The final name of `x`, `a.b.x`, `x[0]` or `self.xs[i]`: what the code calls the object."""
    kind = type(expr)
    while kind is cst.Subscript:
        expr = expr.value  # type: ignore[attr-defined]
        kind = type(expr)
    if kind is cst.Name:
        return expr.value  # type: ignore[attr-defined,no-any-return]
    if kind is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined,no-any-return]
    return None


def _module_name(node: cst.BaseExpression | None) -> str:
    return dotted(node) or "" if node is not None else ""


@dataclass(frozen=True)
class Imports:
    """Local name -> qualified name, for every import anywhere in the module."""

    aliases: dict[str, str]

    def qualify(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of a name/attribute chain, through the import aliases.

        Names that were not imported are returned as written (`model.eval`).
        """
        name = dotted(expr)
        if name is None:
            return None
        head, _, rest = name.partition(".")
        target = self.aliases.get(head)
        if target is None:
            return name
        return f"{target}.{rest}" if rest else target

    def is_imported(self, expr: cst.BaseExpression) -> bool:
        name = dotted(expr)
        return name is not None and name.partition(".")[0] in self.aliases

    def callee(self, call: cst.Call) -> str | None:
        return self.qualify(call.func)

    def mentions(self, module_prefix: str) -> bool:
        return any(t == module_prefix or t.startswith(module_prefix + ".") for t in self.aliases.values())


def imports(ctx: FileContext) -> Imports:
    return ctx.analysis(_build_imports)


def _build_imports(ctx: FileContext) -> Imports:
    idx = index(ctx)
    aliases: dict[str, str] = {}
    for node in idx.nodes(cst.Import):
        for alias in node.names:
            full = _module_name(alias.name)
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                aliases[alias.asname.name.value] = full
            else:
                head = full.partition(".")[0]
                aliases[head] = head
    for from_node in idx.nodes(cst.ImportFrom):
        if isinstance(from_node.names, cst.ImportStar):
            continue
        base = "." * len(from_node.relative) + _module_name(from_node.module)
        for alias in from_node.names:
            imported = _module_name(alias.name)
            local = imported
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                local = alias.asname.name.value
            aliases[local] = f"{base}.{imported}" if not base.endswith(".") else f"{base}{imported}"
    return Imports(aliases)


def calls_to(ctx: FileContext, qualified: frozenset[str], bare: frozenset[str] = frozenset()) -> list[cst.Call]:
    """Calls whose callee resolves through the imports to one of `qualified`, or is spelled as
    one of `bare` with no import behind it (a snippet that leaves its imports out)."""
    imps = imports(ctx)
    found: list[cst.Call] = []
    for call in index(ctx).nodes(cst.Call):
        name = imps.callee(call)
        if name is not None and (name in qualified or (name in bare and not imps.is_imported(call.func))):
            found.append(call)
    return found


def string_text(node: cst.CSTNode) -> str | None:
    """The text of a string literal; for an f-string, its literal parts with `{}` for each field."""
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        return "".join(
            part.value if isinstance(part, cst.FormattedStringText) else "{}" for part in node.parts
        )
    if isinstance(node, cst.ConcatenatedString):
        left, right = string_text(node.left), string_text(node.right)
        return None if left is None or right is None else left + right
    return None


def mentions(idx: Index, scope: cst.CSTNode, name: str) -> list[cst.BaseExpression]:
    """Names and attribute chains in `scope` that spell `name` (`loader`, `self.loader`),
    including as the receiver of an attribute (`loader.sampler`)."""
    found: list[cst.BaseExpression] = []
    last = name.rpartition(".")[2]
    for node in idx.within(scope, cst.Name, cst.Attribute):
        if isinstance(node, cst.Name):
            parent = idx.parent(node)
            if node.value != last or (isinstance(parent, cst.Attribute) and parent.attr is node):
                continue
        elif not isinstance(node, cst.Attribute) or node.attr.value != last:
            continue
        if dotted(node) == name:
            found.append(node)
    return found
