"""TL003 view-after-transpose: `.view(...)` that merges dimensions of a transposed tensor."""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules._analysis import index, method_name, receiver
from torchlint.rules._analysis.layouts import LAYOUT_MOVES, Chain, Layouts, layouts, view_impossible, view_sizes


def _short(ctx: FileContext, node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(ctx.module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# `.T` / `.H` only where the attribute ends: `.Tensor` and `.Tanh` are in every file.
_MATRIX_TRIGGERS = tuple(f".{attr}{end}" for attr in ("T", "H") for end in ".)]\n ,;")


class ViewAfterTranspose(Rule):
    """
    ## What it does
    Finds `.view(...)` calls on a tensor made non-contiguous by `.transpose()`,
    `.permute()`, `.t()`, `.T`, `.mT`, `.mH`, `.swapaxes()`, `.swapdims()`,
    `.movedim()`, `.moveaxis()` or `.expand()`, when the view merges dimensions whose
    strides no longer line up: directly chained (`x.transpose(1, 2).view(b, t, c)`) or
    through local variables of the same function (`y = x.transpose(1, 2)` ...
    `y.view(b, -1)`). Casts, copies, elementwise ops and comparisons keep the transposed
    layout, and so does a basic slice: the top-k accuracy helper's
    `correct = pred.t().eq(...)` ... `correct[:k].view(-1)` fails too. So does the output
    of a recurrent layer built with `batch_first=True` (`out, h = self.gru(x, h)` after
    `self.gru = nn.GRU(..., batch_first=True)`), which computes in (time, batch) order
    and returns the output transposed; a statement `out.contiguous()` whose result is
    thrown away leaves `out` as it was.

    It tracks the permutation and, where the code shows them, the rank and the sizes
    (an earlier `.view(b, t, h, d)`, `b, t, c = x.shape`, `torch.randn(2, 3, 4)`, a
    matmul of such tensors, an earlier view of the function whose sizes this one
    merges). A view is flagged only if every way of forming its sizes merges dimensions
    that are no longer neighbours in memory; where the sizes are known by name, only
    the ways that give those sizes count (`.view(-1, ws, ws, c)` after a Swin window
    `.permute(0, 1, 3, 2, 4, 5)`). When the rank cannot be known, only clear merges are
    flagged (`.view(-1)`, `.view(b, -1)` after `.transpose(1, 2)`). When several
    assignments may reach the view (the arms of an `if`), it is flagged only if it fails
    for each of them.

    ## Why is this bad?
    `.view` never copies: it reinterprets the same memory with new sizes. After a
    transpose the memory order differs from the logical order, so merging the swapped
    dimensions is impossible and PyTorch raises `RuntimeError: view size is not
    compatible with input tensor's size and stride (at least one dimension spans across
    two contiguous subspaces). Use .reshape(...) instead.` This classic bug hides in
    attention code (merging heads back after `transpose(1, 2)`), in detection heads
    (`permute(0, 2, 3, 1).view(n, -1)`) and in broadcasting code
    (`x.unsqueeze(1).expand(-1, k, -1).view(-1, d)`). It often goes unnoticed until a
    code path (a flag, a batch size, an input shape) makes the tensor non-contiguous.

    ## Example
    ```python
    def attention(q, k, v):
        b, h, t, d = q.shape
        y = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v  # (b, h, t, d)
        return y.transpose(1, 2).view(b, t, h * d)  # merges h and d: raises
    ```

    ## Use instead
    ```python
    def attention(q, k, v):
        b, h, t, d = q.shape
        y = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
        return y.transpose(1, 2).contiguous().view(b, t, h * d)
        # or: y.transpose(1, 2).reshape(b, t, h * d)
    ```

    Not flagged: `.contiguous().view(...)`, `.reshape(...)`, `.flatten(...)`,
    `.view(dtype)`, a view that only splits dimensions (`x.transpose(0, 1).view(t, b,
    h, d)` on a 3-D tensor), a view of a matmul or `masked_fill` of the transposed
    tensor, a transpose undone by a second one, a variable reassigned to something else
    in between, and tensors whose memory order the code cannot show: the output of
    `F.scaled_dot_product_attention` (flash kernels return it in (batch, time, heads,
    dim) order), or of an op on a channels-last tensor (`F.interpolate`, convolutions).

    ## Fix safety
    The fix inserts `.contiguous()` before `.view`, which copies the tensor into the
    layout the view expects; the result has the sizes the code asked for. It is safe:
    the original line raises at runtime, so no working behaviour changes. (Unlike the
    original view, the result does not share memory with the transposed tensor.)

    ## Runtime confirmation
    `torchlint probe` runs the script and reports the `RuntimeError` of the view, or a
    `.view` on a non-contiguous tensor, at the flagged line.

    ## References
    - [torch.Tensor.view](https://pytorch.org/docs/stable/generated/torch.Tensor.view.html)
    - [Tensor views](https://pytorch.org/docs/stable/tensor_view.html)
    - [torch.Tensor.contiguous](https://pytorch.org/docs/stable/generated/torch.Tensor.contiguous.html)
    """

    CODE = "TL003"
    NAME = "view-after-transpose"
    SUMMARY = "`.view()` merges dimensions of a transposed (non-contiguous) tensor and fails"
    TRIGGERS = (
        (".view",),
        ("transpose", "permute", ".t(", ".mT", ".mH", "swapaxes", "swapdims", "movedim", "moveaxis", ".expand(",
         "batch_first")
        + _MATRIX_TRIGGERS,
    )
    CONFIRMED_BY = ("TL003",)

    VALID = (
        # a batch-first recurrent layer's output made contiguous, or indexed down to (batch,
        # features); a time-first layer's output
        """
        import torch.nn as nn
        class Tagger(nn.Module):
            def __init__(self, n, h):
                super().__init__()
                self.lstm = nn.LSTM(n, h, batch_first=True)
                self.gru = nn.GRU(n, h)
            def forward(self, x):
                out, _ = self.lstm(x)
                last = out[:, -1, :]
                seq, _ = self.gru(x)
                return out.contiguous().view(-1, 8), last.view(-1), seq.view(-1, 8)
        """,
        # a local helper that returns a contiguous copy, or either layout depending on a flag
        """
        def to_heads(x, b, t, h):
            return x.view(b, t, h, -1).transpose(1, 2).contiguous()
        def maybe_t(w, flag):
            if flag:
                return w.t()
            return w
        def merge(x, w, b, t, c, flag):
            y = to_heads(x, b, t, 4).view(b, 4 * t, -1)
            return y, maybe_t(w, flag).view(-1)
        """,
        # a helper whose tensor argument comes through `*args`: the binding is unknown
        """
        def heads(x):
            return x.permute(0, 2, 1, 3)
        def merge(parts, b, t, c):
            return heads(*parts).view(b, t, c)
        """,
        # .contiguous() in between
        """
        def merge(y, b, t, c):
            return y.transpose(1, 2).contiguous().view(b, t, c)
        """,
        # .reshape and .flatten copy when they must
        """
        def merge(y, b, t, c):
            a = y.transpose(1, 2).reshape(b, t, c)
            return a, y.permute(0, 2, 1, 3).flatten(2)
        """,
        # .view(dtype) reinterprets bits, it does not merge dimensions
        """
        import torch
        def bits(x):
            a = x.t().view(torch.int16)
            return a, x.transpose(0, 1).view(dtype=torch.uint8)
        """,
        # a view that only splits: (t, b, c) -> (b, t, c) -> (b, t, h, d)
        """
        def split_heads(x, t, b, h, d):
            return x.transpose(0, 1).view(b, t, h, d)
        """,
        # ViT tokens back to an image: (b, n, c) -> (b, c, n) -> (b, c, h, w) only splits
        """
        def to_image(x, h, w):
            b, n, c = x.shape
            x = x.transpose(1, 2).view(b, c, h, w)
            return x
        """,
        # a view of the matmul result, not of the transposed tensor
        """
        def scores(q, k, b, h, t):
            return (q @ k.transpose(-2, -1)).view(b * h, t, t)
        """,
        # a second transpose undoes the first
        """
        def roundtrip(x, b):
            y = x.transpose(1, 2).transpose(1, 2)
            return y.view(b, -1)
        """,
        # the variable is reassigned to something contiguous before the view
        """
        def f(x, b, t, c):
            y = x.transpose(1, 2)
            y = y.contiguous()
            return y.view(b, t * c)
        """,
        # permute(0, 2, 3, 1) then merging the two spatial dims only: legal
        """
        def head(feat, b, c):
            return feat.permute(0, 2, 3, 1).view(b, -1, c)
        """,
        # numpy: transpose takes a full permutation and view takes a dtype
        """
        import numpy as np
        def to_bytes(a):
            return a.transpose(1, 0, 2).view(np.uint8), a.T.view(np.float32)
        """,
        # the transpose happened in another function
        """
        def make(x):
            y = x.transpose(1, 2)
            return y
        def use(y, b):
            return y.view(b, -1)
        """,
        # expanding new leading dimensions and merging only those: both have stride 0
        """
        import torch
        def tile(b, n):
            row = torch.randn(5)
            return row.expand(b, n, 5).view(b * n, 5)
        """,
        # a 2-D transpose viewed with two sizes only splits or keeps dimensions
        """
        def f(w, n, m):
            return w.t().view(n, m)
        """,
        # `self.T` is an attribute (a temperature), not a transpose
        """
        class Sampler:
            def scale(self, b):
                return self.T.view(b, -1)
        """,
        # a size variable: the number of sizes is unknown
        """
        def f(x, shape):
            return x.transpose(1, 2).view(shape)
        """,
        # unsqueeze then transpose moves a size-1 dimension only
        """
        import torch
        def f(b):
            x = torch.randn(b, 3, 4)
            return x.unsqueeze(1).transpose(1, 2).view(b, -1)
        """,
        # HiFi-GAN: a one-channel output squeezed, then transposed: only a size-1 dim moves
        """
        def vocode(hidden_states):
            waveform = hidden_states.squeeze(0).transpose(1, 0).view(-1)
            return waveform
        """,
        # the view comes first in source order; the transpose is later
        """
        def f(x, b):
            z = x.view(b, -1)
            x = x.transpose(1, 2)
            return z, x
        """,
        # fairseq's multi-head attention: one arm of the `if` reaches the view without a
        # transpose (masked_fill copies), so the branches disagree: silent
        """
        def mask_heads(w, mask, bsz, heads, tgt, src, kv_bsz, is_tpu):
            w = w.view(bsz, heads, tgt, src)
            if not is_tpu:
                w = w.view(kv_bsz, -1, heads, tgt, src)
                w = w.masked_fill(mask, float("-inf"))
            else:
                w = w.transpose(0, 2)
                w = w.masked_fill(mask, float("-inf"))
                w = w.transpose(0, 2)
            return w.view(bsz * heads, tgt, src)
        """,
        # the top-k accuracy helper, fixed: reshape, contiguous, or a fresh tensor
        """
        import torch
        def accuracy(output, target, topk=(1,)):
            maxk = max(topk)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            hits = torch.zeros(maxk, target.size(0))
            res = []
            for k in topk:
                res.append(correct[:k].reshape(-1).float().sum(0))
                res.append(correct[:k].contiguous().view(-1).float().sum(0))
                res.append(hits[:k].view(-1).sum(0))
            return res
        """,
        # masked_fill returns a new contiguous tensor
        """
        def f(x, mask, b):
            return x.transpose(1, 2).masked_fill(mask, 0.0).view(b, -1)
        """,
        # interpolate keeps a channels-last input channels-last: permuting back is contiguous
        """
        import torch.nn.functional as F
        def resize_tokens(x, t, h, w, c, size):
            x = x.reshape(t, h, w, c).permute(0, 3, 1, 2)
            x = F.interpolate(x, size=size, mode="bilinear")
            return x.permute(0, 2, 3, 1).view(-1, c)
        """,
        # the sizes show the view merges neighbours only: (n, t, c, f) stored as (n, c, f, t)
        """
        def to_frames(conv_out):
            n, c, f, t = conv_out.size()
            return conv_out.permute(0, 3, 1, 2).view(n, t, c * f)
        """,
        # merging batch dimensions after transposing the last two works (PyTorch >= 0.4)
        """
        import torch
        def f():
            a = torch.Tensor(16, 8, 32, 64)
            return a.transpose(-1, -2).view(-1, 64, 32)
        """,
        # an elementwise op whose size-1 dimension the other operand broadcasts
        """
        def distances(ze, emb, bsz, groups, var_dim, tsz, num_vars):
            z = ze.view(bsz, groups, var_dim, tsz).permute(0, 3, 1, 2)
            return (z.unsqueeze(0) - emb.unsqueeze(1)).view(num_vars, bsz, tsz, groups, -1)
        """,
        # scaled_dot_product_attention's memory order depends on the kernel that runs
        """
        import torch.nn.functional as F
        def attend(q, k, v, B, T, C):
            q = q.view(B, T, 4, C // 4).transpose(1, 2)
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return y.transpose(1, 2).view(B, T, C)
        """,
        # the rank is unknown: (b, c, t) transposed back to (b, t, c) may be a plain view
        """
        def merge(x, B, T, C):
            return x.transpose(1, 2).view(B, T, C)
        """,
        # an earlier 4-D view does not show the rank of what a module returns
        """
        class Mixer:
            def forward(self, x):
                B, T, C = x.shape
                h = x.view(B, T, self.nh, C // self.nh)
                y = self.mix(h)
                return y.transpose(1, 2).view(B, T, C)
        """,
        # A loop over index tensors: advanced indexing copies, the result is contiguous.
        """
        def gather_boxes(out, b, a, ch, f, keep):
            pred = out.view(b, a, ch, f, f).permute(0, 1, 3, 4, 2)
            for idx in keep:
                boxes = pred[idx].view(-1, ch)
        """,
    )
    INVALID = (
        # a batch-first recurrent layer hands its (time, batch) output back transposed, and a
        # `.contiguous()` whose result is thrown away changes nothing
        """
        import torch.nn as nn
        class GruRNN(nn.Module):
            def __init__(self, n, h, out):
                super().__init__()
                self.gru = nn.GRU(n, h, bidirectional=True, batch_first=True)
                self.decoder = nn.Linear(2 * h, out)
            def forward(self, x, hidden):
                gru_output, hidden = self.gru(x, hidden)
                gru_output.contiguous()
                return self.decoder(gru_output.view(-1, 2 * self.h)), hidden  # expect: TL003
        """,
        # a method that permutes, called by the code that views (hyunwoongko/transformer's
        # `split()` / `concat()` helpers without their `.contiguous()`)
        Example(
            """
            from torch import nn
            class MultiHead(nn.Module):
                def heads(self, x):
                    return x.permute(0, 2, 1, 3)
                def forward(self, x):
                    B, T, C = x.shape
                    h = self.heads(x.view(B, T, 4, C // 4))
                    return h.view(B, T, C)  # expect: TL003
            """
        ),
        # a module-level helper that transposes a matrix
        Example(
            """
            def transposed(w):
                return w.t()
            def flat(w):
                return transposed(w).view(-1)  # expect: TL003
            """
        ),
        Example(
            """
            def merge(y, b, t, c):
                # y: (b, heads, t, head_dim)
                y = y.view(b, 4, t, c // 4)
                return y.transpose(1, 2).view(b, t, c)  # expect: TL003
            """,
            fixed="""
            def merge(y, b, t, c):
                # y: (b, heads, t, head_dim)
                y = y.view(b, 4, t, c // 4)
                return y.transpose(1, 2).contiguous().view(b, t, c)  # expect: TL003
            """,
        ),
        # nanoGPT's attention without `.contiguous()`
        Example(
            """
            import math
            import torch.nn.functional as F

            def attention(self, x):
                B, T, C = x.size()
                q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
                k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v
                y = y.transpose(1, 2).view(B, T, C)  # expect: TL003
                return y
            """,
            fixed="""
            import math
            import torch.nn.functional as F

            def attention(self, x):
                B, T, C = x.size()
                q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
                k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = F.softmax(att, dim=-1)
                att = self.attn_dropout(att)
                y = att @ v
                y = y.transpose(1, 2).contiguous().view(B, T, C)  # expect: TL003
                return y
            """,
        ),
        # the documentation's example: the rank comes from `q.shape` through a matmul
        """
        import torch
        def attention(q, k, v):
            b, h, t, d = q.shape
            y = torch.softmax(q @ k.transpose(-2, -1), dim=-1) @ v
            return y.transpose(1, 2).view(b, t, h * d)  # expect: TL003
        """,
        # flattening everything after a transpose, rank unknown
        Example(
            """
            def flat(x):
                return x.transpose(0, 1).view(-1)  # expect: TL003
            """,
            fixed="""
            def flat(x):
                return x.transpose(0, 1).contiguous().view(-1)  # expect: TL003
            """,
        ),
        # through a local variable
        Example(
            """
            def pool(x, b):
                y = x.transpose(1, 2)
                out = y.view(b, -1)  # expect: TL003
                return out
            """,
            fixed="""
            def pool(x, b):
                y = x.transpose(1, 2)
                out = y.contiguous().view(b, -1)  # expect: TL003
                return out
            """,
        ),
        # detection head: channels last then flatten
        """
        def loc_head(loc):
            return loc.permute(0, 2, 3, 1).view(loc.size(0), -1)  # expect: TL003
        """,
        # `torch.transpose` through an alias
        """
        import torch as T
        def f(x, b):
            return T.transpose(x, 1, 2).view(b, -1)  # expect: TL003
        """,
        # 2-D transposes: .t(), .T, .mT
        """
        def f(w, x, z):
            a = w.t().view(-1)  # expect: TL003
            b = x.T.view(-1)  # expect: TL003
            c = z.mT.view(-1)  # expect: TL003
            return a, b, c
        """,
        # known rank from a factory
        """
        import torch
        def f():
            x = torch.randn(2, 3, 4)
            return x.permute(0, 2, 1).view(2, 12)  # expect: TL003
        """,
        # known rank from unpacking the shape
        """
        def f(x):
            b, c, h, w = x.shape
            y = x.permute(0, 2, 3, 1)
            return y.view(b, h * w * c)  # expect: TL003
        """,
        # swapaxes / movedim
        """
        def f(x, n):
            a = x.swapaxes(0, 1).view(-1)  # expect: TL003
            b = x.movedim(1, 0).view(-1)  # expect: TL003
            return a, b
        """,
        # expand of an unsqueezed dimension then merging it with a real one
        """
        def repeat_rows(x, k):
            b, d = x.shape
            return x.unsqueeze(1).expand(-1, k, -1).view(b * k, d)  # expect: TL003
        """,
        # a copy keeps the transposed layout
        """
        def f(x, b):
            return x.transpose(1, 2).float().view(b, -1)  # expect: TL003
        """,
        # a multi-line chain is reported at the `.view`
        """
        def f(x, b, t, c):
            x = x.view(b, t, 4, c // 4)
            return (
                x.transpose(1, 2)
                .view(b, 4, -1)  # expect: TL003
            )
        """,
        # pytorch/examples#836: `eq` keeps `pred.t()`'s layout, and so does `[:k]`
        Example(
            """
            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                pred = pred.t()
                correct = pred.eq(target.view(1, -1).expand_as(pred))
                res = []
                for k in topk:
                    correct_k = correct[:k].view(-1).float().sum(0)  # expect: TL003
                    res.append(correct_k)
                return res
            """,
            fixed="""
            def accuracy(output, target, topk=(1,)):
                maxk = max(topk)
                _, pred = output.topk(maxk, 1, True, True)
                pred = pred.t()
                correct = pred.eq(target.view(1, -1).expand_as(pred))
                res = []
                for k in topk:
                    correct_k = correct[:k].contiguous().view(-1).float().sum(0)  # expect: TL003
                    res.append(correct_k)
                return res
            """,
        ),
        # Swin's window partition: the sizes by name pick the merge of (B, H // ws, W // ws)
        """
        def window_partition(x, ws):
            B, H, W, C = x.shape
            x = x.view(B, H // ws, ws, W // ws, ws, C)
            return x.permute(0, 1, 3, 2, 4, 5).view(-1, ws, ws, C)  # expect: TL003
        """,
        # both arms of the `if` transpose
        """
        def f(x, b, flag):
            if flag:
                y = x.transpose(1, 2)
            else:
                y = x.permute(0, 2, 1)
            return y.view(b, -1)  # expect: TL003
        """,
        # the Annotated Transformer without `.contiguous()`: the rank of `x` comes from the
        # earlier view that the last one merges, and `attention` is a matmul of this module
        """
        import math
        import torch

        def attention(query, key, value):
            scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
            p_attn = scores.softmax(dim=-1)
            return torch.matmul(p_attn, value), p_attn

        class MultiHeadedAttention:
            def forward(self, query, key, value):
                nbatches = query.size(0)
                query, key, value = [
                    lin(x).view(nbatches, -1, self.h, self.d_k).transpose(1, 2)
                    for lin, x in zip(self.linears, (query, key, value))
                ]
                x, self.attn = attention(query, key, value)
                x = x.transpose(1, 2).view(nbatches, -1, self.h * self.d_k)  # expect: TL003
                return self.linears[-1](x)
        """,
        # dual-path RNN: (B, K, S, N) stored as (B, N, K, S); merging B and K fails
        """
        def intra_to_inter(x):
            B, N, K, S = x.shape
            return x.permute(0, 2, 3, 1).view(B * K, S, N)  # expect: TL003
        """,
        # a view that splits one dimension and merges two transposed ones
        """
        def memory(h, S):
            d, BS, H = h.shape
            B = BS // S
            return h.transpose(1, 0).view(B, S, d * H)  # expect: TL003
        """,
        # merging an expanded (broadcast) dimension with a real one
        """
        def tile_weight(weight, T, B, H, K):
            return weight.view(1, H, K).expand(T * B, H, K).view(T * B * H, K, 1)  # expect: TL003
        """,
        # an activation keeps its input's layout
        """
        import torch.nn.functional as F
        def f(x, b):
            return F.relu(x.transpose(1, 2)).view(b, -1)  # expect: TL003
        """,
        # Indexing with a range counter keeps the permuted strides (pytorch-YOLOv4's loss).
        """
        def targets(output, b, a, ch, f):
            pred = output.view(b, a, ch, f, f).permute(0, 1, 3, 4, 2)[..., :4]
            for i in range(b):
                boxes = pred[i].view(-1, 4)  # expect: TL003
        """,
    )

    def check(self, ctx: FileContext) -> Iterator[Report]:
        found: Layouts | None = None
        for call in index(ctx).nodes(cst.Call):
            if method_name(call) != "view":
                continue
            sizes = view_sizes(call)
            owner = receiver(call)
            if sizes is None or owner is None:
                continue
            found = found or layouts(ctx)
            paths = found.chains(owner)
            # Every way the code may reach this view must transpose and then fail.
            if not paths or not all(p.moves and self._fails(found, p, call, sizes) for p in paths):
                continue
            yield self._report(ctx, call, owner, paths[0])

    @staticmethod
    def _fails(found: Layouts, chain: Chain, call: cst.Call, sizes: tuple[bool, ...]) -> bool:
        candidates = found.layouts(chain, call)
        wanted = found.sizes(call)
        return bool(candidates) and all(view_impossible(dims, sizes, wanted) for dims in candidates)

    def _report(self, ctx: FileContext, call: cst.Call, owner: cst.BaseExpression, chain: Chain) -> Report:
        label = next(op.label for op in reversed(chain.ops) if op.kind in LAYOUT_MOVES)
        text = _short(ctx, owner)
        if isinstance(owner, cst.Name):
            what = f"`{text}` comes from `{label}` and is not contiguous, so `{text}.view(...)`"
        elif chain.ops[-1].kind not in LAYOUT_MOVES:
            what = f"`{text}` comes from `{label}` and is not contiguous, so `.view(...)`"
        else:
            what = f"`{text}` is not contiguous, so `.view(...)`"
        message = (
            f"{what} merges dimensions whose strides no longer line up and raises a RuntimeError: "
            f"call `.contiguous()` before `.view(...)`, or use `.reshape(...)`"
        )
        fixed = cst.Call(func=cst.Attribute(value=owner, attr=cst.Name("contiguous")))
        fix = FixSpec("insert `.contiguous()` before `.view(...)`", ((owner, fixed),))
        attr = call.func.attr if isinstance(call.func, cst.Attribute) else call
        return self.report(attr, message, fix)
