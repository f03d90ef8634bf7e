"""`_analysis.layouts`: tensor shapes, ranks and the layout model behind `.view()` checks."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from torchlint.rule import FileContext
from torchlint.rules import _analysis as an
from torchlint.rules._analysis.layouts import ONE, Op, Size, apply, index_op, layouts, source_layout, view_impossible, view_sizes


def context(source: str) -> FileContext:
    text = textwrap.dedent(source)
    return FileContext("model.py", text, cst.parse_module(text))


def views(ctx: FileContext) -> list[cst.Call]:
    return [c for c in an.index(ctx).nodes(cst.Call) if an.method_name(c) == "view"]


class TestSymbolicSizes:
    def test_ratios_are_kept_in_lowest_terms(self) -> None:
        half = Size(2).inverse()
        assert Size(6) * half == Size(3)
        assert Size(4).inverse() * Size(6) == Size(3, (), 2)
        assert Size(3) * Size(3).inverse() == ONE

    def test_factors_cancel_and_zero_has_no_inverse(self) -> None:
        heads = Size(1, (("nh", 1),))
        width = Size(1, (("C", 1),)) * heads.inverse()  # C // nh
        assert width * heads == Size(1, (("C", 1),))
        assert Size(0).inverse() == Size(0)
        assert Size(0).zero and not ONE.zero


class TestLayoutModel:
    def test_transpose_separates_neighbours(self) -> None:
        dims = apply(Op("transpose", ".transpose()", (1, 2)), source_layout(4))
        assert dims is not None
        # Merging the two swapped dimensions cannot be a view; keeping them apart can.
        assert view_impossible(dims, (False, False, False))  # (B, T, H*D) from (B, H, T, D)
        assert not view_impossible(dims, (False, False, False, False))

    def test_permute_back_is_contiguous(self) -> None:
        dims = source_layout(3)
        for perm in ((0, 2, 1), (0, 2, 1)):
            step = apply(Op("permute", ".permute()", perm), dims)
            assert step is not None
            dims = step
        assert not view_impossible(dims, (False, False))

    @pytest.mark.parametrize(
        ("index", "mergeable"),
        [
            ("x[:, 1]", False),  # a middle dimension of two or more elements leaves a gap
            ("x[:, -2]", False),
            ("x[:, 0]", True),  # the dimension may have had one element
            ("x[:, :, 1]", True),  # the innermost: the two left are still neighbours
        ],
    )
    def test_an_integer_index_keeps_the_gap_of_a_wide_dimension(self, index: str, mergeable: bool) -> None:
        op = index_op(cst.ensure_type(cst.parse_expression(index), cst.Subscript))
        assert op is not None
        dims = apply(op, source_layout(3))
        assert dims is not None and len(dims) == 2
        assert view_impossible(dims, (False,)) is not mergeable  # x[...].view(-1)

    def test_an_op_that_does_not_fit_the_rank_is_none(self) -> None:
        assert apply(Op("t", ".t()"), source_layout(3)) is None
        assert apply(Op("transpose", ".transpose()", (0, 5)), source_layout(3)) is None

    def test_view_sizes_marks_literal_ones(self) -> None:
        call = cst.ensure_type(cst.parse_expression("x.view(B, 1, -1)"), cst.Call)
        assert view_sizes(call) == (False, True, False)


class TestShapesFromCode:
    def test_rank_through_bindings_and_methods(self) -> None:
        ctx = context(
            """
            import torch
            def f(B, T, C):
                x = torch.zeros(B, T, C)
                y = x.unsqueeze(1)
                z = y.transpose(1, 2)
                return z
            """
        )
        found = layouts(ctx)
        returned = an.index(ctx).nodes(cst.Return)[0].value
        assert returned is not None
        assert found.rank(returned) == 4

    @pytest.mark.parametrize(
        ("body", "moves"),
        [
            ("y = x.transpose(1, 2)\n    return y.view(B, T, C)", True),
            ("y = x.transpose(1, 2).contiguous()\n    return y.view(B, T, C)", False),
            ("y = x.reshape(B, T, C)\n    return y.view(B, T, C)", False),
        ],
    )
    def test_chains_record_the_moves_that_reach_a_view(self, body: str, moves: bool) -> None:
        ctx = context(f"def f(x, B, T, C):\n    {body}\n")
        owner = an.receiver(views(ctx)[0])
        assert owner is not None
        chains = layouts(ctx).chains(owner)
        assert chains and any(c.moves for c in chains) is moves


class TestHelpers:
    def test_a_helper_continues_the_chain_of_its_argument(self) -> None:
        ctx = context(
            """
            def heads(x):
                return x.permute(0, 2, 1, 3)
            def merge(x, B, T, C):
                h = heads(x.view(B, T, 4, C // 4))
                return h.view(B, T, C)
            """
        )
        owner = an.receiver(views(ctx)[-1])
        assert owner is not None
        [chain] = layouts(ctx).chains(owner)
        assert chain.moves and [op.label for op in chain.ops] == ["heads()"]
        assert layouts(ctx).rank(chain.base) == 4

    def test_a_batch_first_recurrent_output_is_transposed(self) -> None:
        ctx = context(
            """
            import torch.nn as nn
            class Tagger(nn.Module):
                def __init__(self, n, h, flag):
                    self.gru = nn.GRU(n, h, batch_first=True)
                    self.lstm = nn.LSTM(n, h)
                    self.rnn = nn.RNN(n, h, batch_first=flag)
                def forward(self, x, h):
                    out, h = self.gru(x, h)
                    out.contiguous()
                    a = out.view(-1, 8)
                    b = h.view(-1, 8)
                    seq, _ = self.lstm(x)
                    c = seq.view(-1, 8)
                    other, _ = self.rnn(x)
                    d = other.view(-1, 8)
                    packed, _ = self.gru(pack_padded_sequence(x, lengths, batch_first=True))
                    e = packed.view(-1, 8)
                    f = out.data.view(-1, 8)
            """
        )
        found = layouts(ctx)
        owners = [an.receiver(v) for v in views(ctx)]
        moved = [any(c.moves for c in found.chains(o)) for o in owners if o is not None]
        # the output (a statement's `.contiguous()` keeps no copy), not the hidden state;
        # neither a time-first layer nor one whose batch_first the code does not show; not a
        # layer run on a PackedSequence, nor the `.data` that one holds
        assert moved == [True, False, False, False, False, False]
        [chain] = found.chains(owners[0])  # type: ignore[arg-type]
        assert found.rank(chain.base) == 3
        assert all(view_impossible(dims, (False, False)) for dims in found.layouts(chain))

    def test_a_helper_that_returns_a_copy_ends_the_chain(self) -> None:
        ctx = context(
            """
            def heads(x):
                return x.permute(0, 2, 1, 3).contiguous()
            def merge(x, B, T, C):
                return heads(x).view(B, T, C)
            """
        )
        owner = an.receiver(views(ctx)[-1])
        assert owner is not None
        assert not any(c.moves for c in layouts(ctx).chains(owner))
