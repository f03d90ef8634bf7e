"""Helpers shared by the analysis library's unit tests: a file context from a snippet, the
code of a node, the call spelled a given way."""

from __future__ import annotations

import textwrap

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an


def context(source: str, filename: str = "train.py") -> FileContext:
    text = textwrap.dedent(source)
    return FileContext(filename, text, cst.parse_module(text))


def code(ctx: FileContext, node: cst.CSTNode) -> str:
    return ctx.module.code_for_node(node)


def call(ctx: FileContext, text: str) -> cst.Call:
    """The first call whose code is `text`."""
    return next(c for c in an.index(ctx).nodes(cst.Call) if code(ctx, c) == text)
