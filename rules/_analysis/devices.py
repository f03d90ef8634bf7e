"""Devices: whether a module places work on a CUDA device.
"""

from __future__ import annotations

import re

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.calls import method_name
from torchlint.rules._analysis.index import index
from torchlint.rules._analysis.names import string_text


_CUDA_TEXT = re.compile(r"^(cuda|nccl)\b")


def uses_cuda(ctx: FileContext) -> bool:
    """The module places work on a CUDA device: a `.cuda()` call, a `"cuda..."` device string,
    or the NCCL backend. (`torch.cuda.is_available()` alone is not placement.)"""
    return ctx.analysis(_build_uses_cuda)


def _build_uses_cuda(ctx: FileContext) -> bool:
    if "cuda" not in ctx.source and "nccl" not in ctx.source:
        return False
    idx = index(ctx)
    if any(method_name(call) == "cuda" for call in idx.nodes(cst.Call)):
        return True
    for node in idx.nodes(cst.SimpleString, cst.FormattedString):
        text = string_text(node)
        # A device string, not an item of a list of names (`["cuda", "cpu"]`) or a docstring.
        if text is not None and _CUDA_TEXT.match(text) and not isinstance(idx.parent(node), (cst.Element, cst.Expr)):
            return True
    return False
