"""Tensor shapes and layouts: the rank and symbolic sizes of tensors (`B * T`, `C // nh`),
and a layout model that follows each dimension back to the contiguous tensor it was made
from, through transposes, permutes, indexing, expands and the ops that keep or reset
layouts, so that a query can tell whether `.view(...)` can merge the dimensions it is asked
to merge. Values flow through local bindings (`dataflow`) and local helpers (`callgraph`).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from functools import lru_cache
from math import gcd
from typing import Callable, Iterable

import libcst as cst

from torchlint.rule import FileContext
from torchlint.rules._analysis.callgraph import Functions, functions as functions_of
from torchlint.rules._analysis.calls import bind_arguments, keyword, method_name, positional, receiver
from torchlint.rules._analysis.dataflow import Binding, Bindings, assigned_values, bindings
from torchlint.rules._analysis.index import Index, index
from torchlint.rules._analysis.names import Imports, dotted, imports

# Symbolic sizes: `B * T`, `C // nh`, `self.n_head` as products of named factors.


@dataclass(frozen=True)
class Size:
    """A size as a ratio of whole numbers times named factors with powers: `C // nh` is
    C * nh**-1. The ratio is kept in lowest terms with a positive denominator (as
    `fractions.Fraction` would, whose import with `decimal` cost 1% of a one-file check)."""

    numerator: int
    atoms: tuple[tuple[str, int], ...] = ()
    denominator: int = 1

    @property
    def zero(self) -> bool:
        return self.numerator == 0

    def __mul__(self, other: Size) -> Size:
        powers = dict(self.atoms)
        for atom, power in other.atoms:
            powers[atom] = powers.get(atom, 0) + power
        atoms = tuple(sorted((a, p) for a, p in powers.items() if p))
        return _size(self.numerator * other.numerator, self.denominator * other.denominator, atoms)

    def inverse(self) -> Size:
        """1 / size; zero stays zero."""
        if self.zero:
            return self
        return _size(self.denominator, self.numerator, tuple((a, -p) for a, p in self.atoms))


def _size(numerator: int, denominator: int, atoms: tuple[tuple[str, int], ...]) -> Size:
    divisor = gcd(numerator, denominator) * (-1 if denominator < 0 else 1)
    return Size(numerator // divisor, atoms, denominator // divisor)


ONE = Size(1)
Shape = tuple[Size | None, ...]


def product(sizes: Iterable[Size | None]) -> Size | None:
    total = ONE
    for size in sizes:
        if size is None:
            return None
        total = total * size
    return total


# A layout model: each dimension of a tensor, seen from the contiguous tensor it
# was made from. `.view` can merge neighbouring dimensions only when they are still
# neighbours, in order, in memory.


@dataclass(frozen=True)
class Dim:
    # "dim": position `pos` of the contiguous source; "unit": size 1 (its stride never
    # matters); "exp": stride 0, broadcast by `.expand()`; "maybe": source dimension
    # `pos`, given an explicit size by `.expand()` (broadcast if its size was 1).
    # `size`: the symbolic size where the code shows it.
    kind: str
    pos: int = 0
    size: Size | None = None


Layout = tuple[Dim, ...]
MAX_RANK = 8
# When the code does not show the rank, try this many ranks from the smallest one the
# indices allow, and flag only if the view fails for all of them.
RANK_WINDOW = 4


@dataclass(frozen=True)
class Op:
    """One layout-changing call: `kind` with its dimension arguments."""

    kind: str  # transpose, permute, t, T, mT, movedim, expand, unsqueeze, index, keep, broadcast
    label: str  # how the code spells it, for messages: `.transpose()`, `.T`
    first: tuple[int, ...] = ()
    second: tuple[int, ...] = ()
    # expand: "keep" (-1), "one" (1) or "size" per argument; index: one item per index
    sizes: tuple[str, ...] = ()
    shape: Shape = ()  # expand: the sizes asked for


def source_layout(rank: int, shape: Shape | None = None) -> Layout:
    """A contiguous tensor of `rank` (with `shape` where known)."""
    sizes = shape if shape is not None and len(shape) == rank else (None,) * rank
    return tuple(Dim("unit", 0, ONE) if size == ONE else Dim("dim", i, size) for i, size in enumerate(sizes))


def _norm(d: int, rank: int) -> int | None:
    return d % rank if -rank <= d < rank else None


def apply(op: Op, dims: Layout) -> Layout | None:
    """The layout after `op`, or None when `op` cannot apply to a tensor of this rank."""
    r = len(dims)
    if op.kind == "transpose":
        a, b = (_norm(d, r) for d in op.first)
        if a is None or b is None:
            return None
        out = list(dims)
        out[a], out[b] = out[b], out[a]
        return tuple(out)
    if op.kind == "permute":
        perm = [_norm(d, r) for d in op.first]
        if len(perm) != r or sorted(p for p in perm if p is not None) != list(range(r)):
            return None
        return tuple(dims[p] for p in perm if p is not None)
    if op.kind == "t":
        return tuple(reversed(dims)) if r == 2 else None
    if op.kind == "T":
        return tuple(reversed(dims)) if r >= 2 else None
    if op.kind == "mT":
        return dims[:-2] + (dims[-1], dims[-2]) if r >= 2 else None
    if op.kind == "movedim":
        return _movedim(dims, op.first, op.second)
    if op.kind == "expand":
        return _expand(dims, op.sizes, op.shape)
    if op.kind == "index":
        return _index(dims, op.sizes)
    if op.kind == "unsqueeze":
        at = _norm(op.first[0], r + 1)
        return None if at is None else dims[:at] + (Dim("unit", 0, ONE),) + dims[at:]
    if op.kind == "broadcast" and any(d.kind == "unit" for d in dims):
        return None  # a size-1 dimension may broadcast: the other operand places it in memory
    if op.kind in ("keep", "broadcast"):
        # Copies (`.clone()`, `.float()`) keep a permuted layout but not a broadcast one.
        if any(d.kind in ("exp", "maybe") for d in dims):
            return source_layout(r, tuple(d.size for d in dims))
        return dims
    return None


def _index(dims: Layout, items: tuple[str, ...]) -> Layout | None:
    """Basic indexing: "all" (`:`) keeps a dimension, "slice" keeps part of it, "unit"
    one element of it, "drop" (an integer) removes it, "drop-wide" (an integer such as 1 or
    -2, which only a dimension of two or more elements has) removes it and leaves a gap in
    memory between its neighbours, "none" adds a size-1 dimension, "ellipsis" keeps the rest."""
    r = len(dims)
    consumed = sum(item not in ("none", "ellipsis") for item in items)
    if consumed > r or items.count("ellipsis") > 1:
        return None
    out: list[Dim] = []
    gaps: set[int] = set()
    i = 0
    for item in items:
        if item == "ellipsis":
            out.extend(dims[i : i + r - consumed])
            i += r - consumed
        elif item == "none":
            out.append(Dim("unit", 0, ONE))
        else:
            dim = dims[i]
            if item == "unit":
                out.append(Dim("unit", 0, ONE))
            elif item == "drop-wide" and dim.kind in ("dim", "maybe"):
                gaps.add(dim.pos)
            elif item not in ("drop", "drop-wide"):
                out.append(dim if item == "all" else Dim(dim.kind, dim.pos))
            i += 1
    out.extend(dims[i:])
    # A removed dimension may have had size 1, so the ones left keep only their order; one
    # of two or more elements keeps its place, and its neighbours no longer merge.
    order = sorted({d.pos for d in out if d.kind in ("dim", "maybe")} | gaps)
    return tuple(Dim(d.kind, order.index(d.pos), d.size) if d.kind in ("dim", "maybe") else d for d in out)


def _movedim(dims: Layout, source: tuple[int, ...], dest: tuple[int, ...]) -> Layout | None:
    r = len(dims)
    src = [_norm(d, r) for d in source]
    dst = [_norm(d, r) for d in dest]
    if len(src) != len(dst) or None in src or None in dst or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        return None
    out: list[Dim | None] = [None] * r
    for s, d in zip(src, dst):
        out[d] = dims[s]  # type: ignore[index]
    rest = iter(dims[i] for i in range(r) if i not in src)
    return tuple(slot if slot is not None else next(rest) for slot in out)


def _expand(dims: Layout, sizes: tuple[str, ...], shape: Shape) -> Layout | None:
    new = len(sizes) - len(dims)
    if new < 0:
        return None
    out: list[Dim] = []
    for i, size in enumerate(sizes):
        asked = shape[i] if len(shape) == len(sizes) else None
        if i < new:
            if size == "keep":
                return None  # -1 is not allowed for a new leading dimension
            out.append(Dim("unit", 0, ONE) if size == "one" else Dim("exp", 0, asked))
            continue
        dim = dims[i - new]
        if size == "keep" or dim.kind == "exp":
            out.append(dim)
        elif size == "one":
            out.append(Dim("unit", 0, ONE))
        elif dim.kind == "unit":
            out.append(Dim("exp", 0, asked))
        else:
            out.append(Dim("maybe", dim.pos, asked))
    return tuple(out)


def _group_ok(group: Layout) -> bool:
    """Whether `.view` can merge these neighbouring dimensions into one."""
    real = [d for d in group if d.kind != "unit"]
    if len(real) < 2 or all(d.kind == "exp" for d in real):
        return True
    if any(d.kind in ("exp", "maybe") for d in real):
        return False
    return all(b.pos == a.pos + 1 for a, b in zip(real, real[1:]))


def _size_fits(group: Layout, wanted: Size | None) -> bool:
    """Whether a run of dimensions may have the size a view asks for (unknown: yes)."""
    have = product(d.size for d in group)
    return wanted is None or have is None or have == wanted


def view_impossible(dims: Layout, ones: tuple[bool, ...], wanted: Shape | None = None) -> bool:
    """True when no way of forming the view's sizes from `dims` is legal.

    A view with fewer sizes than dimensions merges runs of neighbouring dimensions;
    it fails when every way of cutting the dimensions into that many runs merges a run
    whose strides do not line up. A literal size 1 may also be a new, empty run.
    Where the sizes are known symbolically (`wanted`, and the dimensions' own) and some
    cut explains them, only such cuts count. A view with as many sizes as dimensions or
    more may only split, unless every size is known (`_chunks_fail`).
    """
    r, k = len(dims), len(ones)
    if k >= r:
        return wanted is not None and len(wanted) == k and _chunks_fail(dims, wanted)

    @lru_cache(maxsize=None)
    def fits(i: int, j: int, strides: bool, sizes: bool) -> bool:
        if j == k:
            return i == r
        if ones[j] and fits(i, j + 1, strides, sizes):
            return True
        return any(
            (not strides or _group_ok(dims[i:end]))
            and (not sizes or _size_fits(dims[i:end], wanted[j] if wanted else None))
            and fits(end, j + 1, strides, sizes)
            for end in range(i + 1, r - (k - j - 1) + 1)
        )

    by_size = wanted is not None and len(wanted) == k and fits(0, 0, False, True)
    return not fits(0, 0, True, by_size)


def _chunks_fail(dims: Layout, wanted: Shape) -> bool:
    """A view that splits as well as merges (`(t, b * h, d)` viewed as `(t, b, h * d)`):
    when every size is known and the sizes line up in chunks of equal products, whether a
    chunk merges dimensions that are no longer neighbours. Unknown sizes, or sizes that
    do not line up: no."""
    real = [d for d in dims if d.size != ONE]
    want = [w for w in wanted if w != ONE]
    if any(d.size is None for d in real) or want.count(None) > 1:
        return False
    if None in want:
        total, known = product(d.size for d in real), product(w for w in want if w is not None)
        if total is None or known is None or known.zero:
            return False
        want = [total * known.inverse() if w is None else w for w in want]
    chunks: list[Layout] = []
    i = j = 0
    while i < len(real) and j < len(want):
        match = next(
            (
                (a, n - a)
                for n in range(2, len(real) - i + len(want) - j + 1)
                for a in range(1, n)
                if i + a <= len(real)
                and j + n - a <= len(want)
                and product(d.size for d in real[i : i + a]) == product(want[j : j + n - a])
            ),
            None,
        )
        if match is None:
            return False
        chunks.append(tuple(real[i : i + match[0]]))
        i, j = i + match[0], j + match[1]
    return i == len(real) and j == len(want) and not all(_group_ok(chunk) for chunk in chunks)


# Reading the code: literal dimensions, view sizes, layout chains and shapes.


def int_value(expr: cst.BaseExpression) -> int | None:
    if isinstance(expr, cst.Integer):
        try:
            return int(expr.value, 0)
        except ValueError:
            return int(expr.value)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = int_value(expr.expression)
        if inner is None:
            return None
        return -inner if isinstance(expr.operator, cst.Minus) else inner
    return None


def int_tuple(exprs: Iterable[cst.BaseExpression]) -> tuple[int, ...] | None:
    values = [int_value(e) for e in exprs]
    return None if any(v is None for v in values) else tuple(v for v in values if v is not None)


def _seq_elements(expr: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    if isinstance(expr, (cst.Tuple, cst.List)) and not any(isinstance(e, cst.StarredElement) for e in expr.elements):
        return [e.value for e in expr.elements]
    return None


def _dims_arg(expr: cst.BaseExpression) -> tuple[int, ...] | None:
    """`1` -> (1,), `(0, 2)` -> (0, 2); None when not literal."""
    single = int_value(expr)
    if single is not None:
        return (single,)
    elements = _seq_elements(expr)
    return None if elements is None else int_tuple(elements)


_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo)
_INT_CALLS = frozenset({"size", "numel", "len", "int", "prod", "dim"})


def _is_index(sub: cst.Subscript) -> bool:
    return len(sub.slice) == 1 and isinstance(sub.slice[0].slice, cst.Index)


def int_like(expr: cst.BaseExpression, operand: bool = False) -> bool:
    """An expression that is surely a single size (`-1`, `b * t`, `x.size(0)`), not a shape.

    As an operand of arithmetic, names and attributes count too (`b * t`); alone they
    may hold a shape or a dtype (`x.view(shape)`, `x.view(dtype)`).
    """
    if int_value(expr) is not None:
        return True
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _ARITHMETIC):
        return int_like(expr.left, True) and int_like(expr.right, True)
    if isinstance(expr, cst.Call):
        name = expr.func.attr.value if isinstance(expr.func, cst.Attribute) else dotted(expr.func)
        if name == "size":
            return bool(expr.args)
        return name in _INT_CALLS
    if isinstance(expr, cst.Subscript):
        return _is_index(expr)
    if operand:
        if isinstance(expr, cst.Name):
            return True
        if isinstance(expr, cst.Attribute):
            return expr.attr.value not in ("shape", "dtype")
    return False


def _size_args(call: cst.Call) -> list[cst.BaseExpression] | None:
    """The sizes of `x.view(a, b)` / `x.view((a, b))`, when written out one by one;
    None for `*shape`, a shape variable or a dtype (`x.view(torch.float16)`, `dtype=`)."""
    if not call.args or any(a.keyword is not None or a.star for a in call.args):
        return None
    values = [a.value for a in call.args]
    if len(values) == 1:
        elements = _seq_elements(values[0])
        if elements is not None:
            values = elements
        elif not int_like(values[0]):
            return None
    if not values or not all(int_like(v, True) for v in values):
        return None
    return values


def view_sizes(call: cst.Call) -> tuple[bool, ...] | None:
    """For each size of `x.view(...)`, whether it is a literal 1."""
    values = _size_args(call)
    return None if values is None else tuple(int_value(v) == 1 for v in values)


SizeReader = Callable[[cst.BaseExpression], "Size | None"]


def symbol(
    expr: cst.BaseExpression,
    spell: Callable[[cst.CSTNode], str],
    define: Callable[[cst.Name], cst.BaseExpression | None] = lambda name: None,
    depth: int = 0,
) -> Size | None:
    """The symbolic size of a size expression; None for -1 (inferred). `define` gives the
    arithmetic a local size name was computed by (`B = BS // S`)."""
    value = int_value(expr)
    if value is not None:
        return None if value < 0 else Size(value)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Multiply, cst.FloorDivide, cst.Divide)):
        left, right = symbol(expr.left, spell, define, depth), symbol(expr.right, spell, define, depth)
        if left is None or right is None:
            return None
        return left * (right if isinstance(expr.operator, cst.Multiply) else right.inverse())
    if isinstance(expr, cst.Name) and depth < 4:
        definition = define(expr)
        if definition is not None:
            return symbol(definition, spell, define, depth + 1)
    return Size(1, ((" ".join(spell(expr).split()), 1),))


_TRANSPOSES = frozenset({"transpose", "swapaxes", "swapdims"})
_MOVEDIMS = frozenset({"movedim", "moveaxis"})
_PRODUCER_METHODS = _TRANSPOSES | _MOVEDIMS | {"permute", "t", "expand", "unsqueeze"}
# Casts, copies and elementwise ops whose result keeps the layout of the tensor they act
# on (`preserve_format`; an elementwise op follows its first operand): a transposed
# `pred.t().eq(target)` is still transposed. Not `masked_fill`, `softmax` or `where`:
# they return contiguous tensors.
_LAYOUT_KEEPING = frozenset(
    "clone detach float half double bfloat16 bool long int short byte char to cpu cuda type type_as "
    "logical_not abs neg exp log sqrt rsqrt sigmoid tanh relu clamp clamp_min clamp_max sign floor ceil "
    "round sin cos square reciprocal".split()
)
# Elementwise ops of two tensors: the result follows the first one, except along its
# size-1 dimensions, which the other one may broadcast.
_BROADCASTING = frozenset(
    "eq ne gt lt ge le greater less greater_equal less_equal logical_and logical_or add sub mul div pow".split()
)
# In-place ops return the tensor itself.
_IN_PLACE_KEEPING = frozenset(
    "add_ sub_ mul_ div_ pow_ clamp_ masked_fill_ fill_ zero_ copy_ requires_grad_ exp_ sigmoid_ "
    "relu_ abs_ neg_ sqrt_ floor_ ceil_ round_ normal_ uniform_".split()
)
_ELEMENTWISE_FUNCS = frozenset(
    "relu gelu silu sigmoid tanh dropout leaky_relu elu selu celu mish hardswish hardsigmoid softplus "
    "abs exp log sqrt rsqrt neg sign".split()
)
# Activation and dropout modules of a model (`self.act(x)`, `self.attn_drop(x)`).
_ELEMENTWISE_WORDS = "act|activation|relu|gelu|silu|swish|mish|sigmoid|tanh|drop|dropout"
_ELEMENTWISE_MODULE = re.compile(rf"(?i)(^|_)({_ELEMENTWISE_WORDS})\d*$")
# Modules that keep their input's shape (not always its layout): activations, dropout, norms.
_SHAPE_KEEPING_MODULE = re.compile(rf"(?i)(^|_)({_ELEMENTWISE_WORDS}|norm|ln|bn)\d*$")
_KEEPING_OPERATORS = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
    cst.BitAnd, cst.BitOr, cst.BitXor,
)  # fmt: skip
_MATRIX_ATTRS = {"T": "T", "mT": "mT", "mH": "mT", "H": "T"}
LAYOUT_MOVES = frozenset({"transpose", "permute", "t", "T", "mT", "movedim", "expand"})
_RANK_KEEPING_OPS = frozenset({"transpose", "permute", "t", "T", "mT", "movedim", "keep", "broadcast"})
# Ops whose result is a new contiguous tensor whatever their input's layout.
_CONTIGUOUS_RESULTS = frozenset(
    "contiguous matmul bmm mm einsum baddbmm addmm linear masked_fill softmax log_softmax".split()
)
_ATTENTION_CALL = re.compile(r"(?i)attn|attention|sdpa|flash")
# More ways a file can lead to one view than this: give up rather than guess.
MAX_PATHS = 8


def _arg(call: cst.Call, i: int, name: str) -> cst.BaseExpression | None:
    kw = keyword(call, name)
    if kw is not None:
        value: cst.BaseExpression = kw.value
        return value
    args = positional(call)
    return args[i].value if len(args) > i else None


def producer_op(call: cst.Call, method: str, shift: int, size: SizeReader) -> Op | None:
    """The layout op of `x.method(...)` (shift 0) or `torch.method(x, ...)` (shift 1)."""
    label = f".{method}()"
    if any(a.star for a in call.args):
        return None
    if method in _TRANSPOSES:
        if len(positional(call)) > 2 + shift:
            return None  # numpy's `a.transpose(1, 0, 2)`: a full permutation, not torch's
        a, b = _arg(call, shift, "dim0"), _arg(call, shift + 1, "dim1")
        dims = int_tuple([a, b]) if a is not None and b is not None else None
        return None if dims is None else Op("transpose", label, dims)
    if method in _MOVEDIMS:
        src, dst = _arg(call, shift, "source"), _arg(call, shift + 1, "destination")
        first = _dims_arg(src) if src is not None else None
        second = _dims_arg(dst) if dst is not None else None
        return None if first is None or second is None else Op("movedim", label, first, second)
    if method == "permute":
        rest = [a.value for a in positional(call)[shift:]]
        if not rest:
            dims_kw = keyword(call, "dims")
            rest = [dims_kw.value] if dims_kw is not None else []
        perm = _dims_arg(rest[0]) if len(rest) == 1 else int_tuple(rest)
        return None if not perm else Op("permute", label, perm)
    if method == "t":
        return Op("t", label) if len(call.args) == shift else None
    if method == "unsqueeze":
        at = _arg(call, shift, "dim")
        d = int_value(at) if at is not None and len(call.args) == shift + 1 else None
        return None if d is None else Op("unsqueeze", label, (d,))
    if method == "expand" and shift == 0:
        values = _size_args(call)
        if values is None or len(values) != len(call.args) and len(call.args) != 1:
            return None
        sizes = tuple("keep" if int_value(v) == -1 else "one" if int_value(v) == 1 else "size" for v in values)
        return Op("expand", label, sizes=sizes, shape=tuple(size(v) for v in values))
    return None


def _unit_slice(item: cst.Slice) -> bool:
    """`:1`, `0:1`, `-1:`: one element."""
    lower = int_value(item.lower) if item.lower is not None else 0
    upper = int_value(item.upper) if item.upper is not None else None
    return item.step is None and ((lower == 0 and upper == 1) or (lower == -1 and item.upper is None))


def index_op(sub: cst.Subscript, counter: Callable[[cst.Name], bool] = lambda name: False) -> Op | None:
    """Basic indexing (`x[:k]`, `x[0]`, `x[:, None]`, `x[..., -1]`, `x[i]` for a `counter`
    name) as a layout op; None for an index that may be a tensor, a list or another name
    (advanced indexing copies)."""
    items: list[str] = []
    for element in sub.slice:
        item = element.slice
        if isinstance(item, cst.Slice):
            whole = item.lower is None and item.upper is None and item.step is None
            items.append("all" if whole else "unit" if _unit_slice(item) else "slice")
        elif not isinstance(item, cst.Index):
            return None
        elif isinstance(item.value, cst.Ellipsis):
            items.append("ellipsis")
        elif isinstance(item.value, cst.Name) and item.value.value == "None":
            items.append("none")
        elif (number := int_value(item.value)) is not None:
            items.append("drop-wide" if number >= 1 or number <= -2 else "drop")
        elif isinstance(item.value, cst.Name) and counter(item.value):
            items.append("drop")
        else:
            return None
    return Op("index", "[...]", sizes=tuple(items))


def _shape_after(ops: Iterable[Op], shape: Shape) -> Shape | None:
    """The sizes after layout ops, through the layout model."""
    dims: Layout | None = source_layout(len(shape), shape)
    for op in ops:
        dims = apply(op, dims) if dims is not None else None
    return None if dims is None else tuple(d.size for d in dims)


def _final_layouts(ops: tuple[Op, ...], shape: Shape | None) -> list[Layout]:
    """The layout after `ops` of a contiguous base of `shape`; when even the rank is
    unknown, of each of the few smallest ranks the ops accept."""
    ranks = [len(shape)] if shape is not None else list(range(1, MAX_RANK + 1))
    found: list[Layout] = []
    for r in ranks:
        dims: Layout | None = source_layout(r, shape)
        for op in ops:
            dims = apply(op, dims) if dims is not None else None
        if dims is not None:
            found.append(dims)
        if shape is None and found and r >= len(found[0]) + RANK_WINDOW:
            break
    if shape is None and found:
        lowest = len(found[0])
        found = [d for d in found if len(d) < lowest + RANK_WINDOW]
    return found


def _channels_last(dims: Layout) -> bool:
    """Channels-last memory order: logical (N, C, H, W) stored as (N, H, W, C)."""
    r = len(dims)
    if r < 4 or any(d.kind != "dim" for d in dims):
        return False
    return sorted(range(r), key=lambda i: dims[i].pos) == [0, *range(2, r), 1]


def _callee_short(call: cst.Call, imps: Imports) -> str:
    return (imps.qualify(call.func) or method_name(call) or "").rpartition(".")[2]


@dataclass(frozen=True)
class Chain:
    """One way a tensor expression is built: a base tensor, assumed contiguous, then
    layout ops. `binding` is the binding that a base name reads on this path."""

    base: cst.BaseExpression
    ops: tuple[Op, ...]
    binding: Binding | None = None

    @property
    def moves(self) -> bool:
        """Whether a transpose-like op reorders or broadcasts the base's dimensions."""
        return any(op.kind in LAYOUT_MOVES for op in self.ops)

    def then(self, op: Op) -> Chain:
        return Chain(self.base, self.ops + (op,), self.binding)


_BROADCAST_OP = Op("broadcast", "elementwise op")


class Layouts:
    """Layout chains and shapes of tensor expressions in one file (memoized per node)."""

    DEPTH = 40

    def __init__(self, ctx: FileContext) -> None:
        self.idx: Index = index(ctx)
        self.imps: Imports = imports(ctx)
        self.bindings: Bindings = bindings(ctx)
        self.funcs: Functions = functions_of(ctx)
        self.module = ctx.module
        self.ctx = ctx
        self._shapes: dict[int, Shape | None] = {}
        self._chains: dict[int, tuple[Chain, ...]] = {}
        self._shape_facts: dict[int, dict[str, list[tuple[int, Shape]]]] = {}
        self._views: dict[int, list[tuple[int, Shape]]] = {}

    # -- chains -------------------------------------------------------------

    def chains(self, expr: cst.BaseExpression) -> tuple[Chain, ...]:
        """One chain per way `expr` may be built along the paths of its function (both
        arms of an `if` that bind a name it reads); empty when that is unknown."""
        key = id(expr)
        if key in self._chains:
            return self._chains[key]
        self._chains[key] = ()  # a cycle (a loop that transposes its own result) reads "unknown"
        found = self._chains_of(expr)
        if len(found) > MAX_PATHS:
            found = ()
        self._chains[key] = found
        return found

    def _chains_of(self, expr: cst.BaseExpression) -> tuple[Chain, ...]:
        if isinstance(expr, cst.Name):
            return self._name_chains(expr)
        if isinstance(expr, cst.Attribute):
            kind = _MATRIX_ATTRS.get(expr.attr.value)
            if expr.attr.value == "data":
                if isinstance(expr.value, cst.Name) and any(map(self._recurrent_output, self.bindings.reaching(expr.value))):
                    return (Chain(expr, ()),)  # a PackedSequence's contiguous `.data`, if the layer ran on one
                return self.chains(expr.value)
            if kind is None or self._is_namespace(expr.value):
                return (Chain(expr, ()),)
            return self._extend(expr.value, Op(kind, f".{expr.attr.value}"))
        if isinstance(expr, cst.Call):
            return self._call_chains(expr)
        if isinstance(expr, cst.Subscript):
            op = index_op(expr, self._counter)
            return (Chain(expr, ()),) if op is None else self._extend(expr.value, op)
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            return self._extend(_first_operand(expr.left, expr.comparisons[0].comparator), _BROADCAST_OP)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, _KEEPING_OPERATORS):
            return self._extend(_first_operand(expr.left, expr.right), _BROADCAST_OP)
        if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.BitInvert)):
            return self._extend(expr.expression, Op("keep", "unary op"))
        return (Chain(expr, ()),)

    def _counter(self, name: cst.Name) -> bool:
        """`i` of `for i in range(...)`: an int, which indexes like a literal."""
        reaching = self.bindings.reaching(name)
        return bool(reaching) and all(
            isinstance(b.node, cst.For)
            and isinstance(b.node.target, cst.Name)
            and isinstance(b.node.iter, cst.Call)
            and dotted(b.node.iter.func) in ("range", "trange")
            for b in reaching
        )

    def _name_chains(self, name: cst.Name) -> tuple[Chain, ...]:
        reaching = self.bindings.reaching(name)
        if not reaching:
            return (Chain(name, ()),)
        out: list[Chain] = []
        for binding in reaching:
            recurrent = self._recurrent_output(binding)
            if recurrent is not None:
                out.append(Chain(name, (_batch_first_op(self.module.code_for_node(recurrent.func)),), binding))
                continue
            paths = self.chains(binding.value) if binding.value is not None else ()
            if binding.value is not None and not paths:
                return ()
            # A value without a transpose is a base of its own: its name keeps the facts
            # that the code states about it (`b, t, c = x.shape`).
            out.extend(p for p in paths if p.moves)
            if not paths or not all(p.moves for p in paths):
                out.append(Chain(name, (), binding))
        return tuple(dict.fromkeys(out))

    def _recurrent_output(self, binding: Binding) -> cst.Call | None:
        """The call of a batch-first recurrent layer whose output `binding` unpacks
        (`out, hidden = self.gru(x, h)` after `self.gru = nn.GRU(..., batch_first=True)`):
        the layer computes in (time, batch) order and hands the output back transposed."""
        assign = binding.node
        if binding.value is not None or not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target, value = assign.targets[0].target, assign.value
        if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(value, cst.Call) or len(target.elements) != 2:
            return None
        first = target.elements[0].value
        if not (isinstance(first, cst.Name) and first.value == binding.name):
            return None
        layer = dotted(value.func)
        built = assigned_values(self.ctx).get(layer, []) if layer is not None else []
        if not built or not all(self._batch_first_recurrent(v) for v in built) or self._packed(value):
            return None
        return value

    def _packed(self, layer_call: cst.Call) -> bool:
        """The layer runs on a `PackedSequence` (`pack_padded_sequence(...)`) and returns one."""
        args = positional(layer_call)
        if not args:
            return False
        inputs = [args[0].value]
        if isinstance(args[0].value, cst.Name):
            inputs = [b.value for b in self.bindings.reaching(args[0].value) if b.value is not None]
        return any(isinstance(v, cst.Call) and _callee_short(v, self.imps).startswith("pack") for v in inputs)

    def _batch_first_recurrent(self, expr: cst.BaseExpression) -> bool:
        if not isinstance(expr, cst.Call) or (self.imps.qualify(expr.func) or "") not in _RECURRENT_LAYERS:
            return False
        flag = keyword(expr, "batch_first")
        return flag is not None and isinstance(flag.value, cst.Name) and flag.value.value == "True"

    def _call_chains(self, call: cst.Call) -> tuple[Chain, ...]:
        method = method_name(call)
        owner = receiver(call)
        if owner is not None and method in _PRODUCER_METHODS:
            qualified = self.imps.qualify(call.func) or ""
            if qualified == f"torch.{method}" and self.imps.is_imported(call.func):
                args = positional(call)
                op = producer_op(call, method, 1, self.size)
                return (Chain(call, ()),) if op is None or not args else self._extend(args[0].value, op)
            if self._is_namespace(owner):
                return (Chain(call, ()),)
            op = producer_op(call, method, 0, self.size)
            return (Chain(call, ()),) if op is None else self._extend(owner, op)
        if (
            owner is not None
            and (method in _LAYOUT_KEEPING or method in _IN_PLACE_KEEPING or method in _BROADCASTING)
            and keyword(call, "memory_format") is None
            and not self._is_namespace(owner)
        ):
            return self._extend(owner, Op("broadcast" if method in _BROADCASTING else "keep", f".{method}()"))
        qualified = self.imps.qualify(call.func) or ""
        short = qualified.rpartition(".")[2]
        args = positional(call)
        if qualified == f"torch.{short}" and short in _PRODUCER_METHODS and args:
            op = producer_op(call, short, 1, self.size)
            if op is not None:
                return self._extend(args[0].value, op)
        if args and (
            (qualified.startswith("torch.") and self.imps.is_imported(call.func) and short in _ELEMENTWISE_FUNCS)
            or (not self.imps.is_imported(call.func) and _ELEMENTWISE_MODULE.search(short) and len(args) == 1)
        ):
            return self._extend(args[0].value, Op("keep", f"{short}()"))
        returned = self._returned_chains(call)
        return returned if returned is not None else (Chain(call, ()),)

    def _returned_chains(self, call: cst.Call) -> tuple[Chain, ...] | None:
        """The chains of what a local helper returns (`split_heads(x)`, `self.heads(x)`), with
        each chain that starts at one of its parameters continued from the argument that the
        call passes; None when the call runs no single local function or returns no tensor
        expression."""
        targets = self.funcs.resolve(call)
        if len(targets) != 1:
            return None
        helper = targets[0]
        returns = [r for r in self.idx.within(helper, cst.Return) if self.idx.scope(r) is helper]
        if not returns or any(r.value is None for r in returns):
            return None
        arguments = bind_arguments(self.funcs, helper, call)
        out: list[Chain] = []
        for ret in returns:
            assert ret.value is not None
            for chain in self.chains(ret.value):
                param = chain.binding.node if chain.binding is not None else None
                if not isinstance(param, cst.Param):
                    out.append(chain)
                    continue
                argument = arguments.get(param.name.value)
                if argument is None:
                    return None
                out.extend(Chain(a.base, a.ops + chain.ops, a.binding) for a in self.chains(argument))
        # Messages name the helper the caller sees, not the op hidden inside it.
        label = f"{self.module.code_for_node(call.func)}()"
        return tuple(dict.fromkeys(Chain(c.base, tuple(dataclasses.replace(op, label=label) for op in c.ops), c.binding) for c in out))

    def _extend(self, receiver: cst.BaseExpression, op: Op) -> tuple[Chain, ...]:
        return tuple(path.then(op) for path in self.chains(receiver))

    def _is_namespace(self, expr: cst.BaseExpression) -> bool:
        """`self.T`, `np.T`, `torch.t(...)`: an attribute of an object or module, not a tensor op."""
        return isinstance(expr, cst.Name) and (expr.value in ("self", "cls") or expr.value in self.imps.aliases)

    # -- sizes --------------------------------------------------------------

    def size(self, expr: cst.BaseExpression) -> Size | None:
        return symbol(expr, self.module.code_for_node, self._size_definition)

    def sizes(self, call: cst.Call) -> Shape | None:
        """The sizes of `x.view(...)` / `x.reshape(...)` / `torch.zeros(...)` as symbols."""
        values = _size_args(call)
        return None if values is None else tuple(self.size(v) for v in values)

    def _size_definition(self, name: cst.Name) -> cst.BaseExpression | None:
        """`BS // S` for `B` after `B = BS // S`, `1` after `n = 1`: the one number or
        product a size name holds."""
        reaching = self.bindings.reaching(name)
        value = reaching[0].value if len(reaching) == 1 else None
        arithmetic = isinstance(value, cst.BinaryOperation) and isinstance(
            value.operator, (cst.Multiply, cst.FloorDivide, cst.Divide)
        )
        return value if arithmetic or (value is not None and int_value(value) is not None) else None

    # -- layouts of a chain ---------------------------------------------------

    def layouts(self, chain: Chain, view: cst.Call | None = None) -> list[Layout]:
        """The final layout for each rank the base may have; empty when none applies or
        when the base's own layout is unknown."""
        origin = self._origin(chain)
        if self._squeezed(origin) or self._attention_output(origin) or self._channels_last_input(origin):
            return []
        shape = self.base_shape(chain)
        if shape is None and view is not None and all(op.kind in _RANK_KEEPING_OPS for op in chain.ops):
            shown = self._evidence(chain, view)
            if shown is not None:
                return [
                    tuple(Dim(d.kind, d.pos, size) for d, size in zip(dims, shown))
                    for dims in _final_layouts(chain.ops, (None,) * len(shown))
                ]
        return _final_layouts(chain.ops, shape)

    def _origin(self, chain: Chain) -> cst.BaseExpression | None:
        """The expression the base comes from: a base name's assigned value (the whole
        right-hand side when it is unpacked: `x, attn = attention(q, k, v)`)."""
        expr: cst.BaseExpression | None = chain.base
        binding = chain.binding
        for _ in range(self.DEPTH):
            if binding is not None:
                node = binding.node
                expr = node.value if binding.value is None and isinstance(node, cst.Assign) else binding.value
            if not isinstance(expr, cst.Name):
                return expr
            reaching = self.bindings.reaching(expr)
            if len(reaching) != 1:
                return expr
            binding = reaching[0]
        return expr

    def _squeezed(self, origin: cst.BaseExpression | None) -> bool:
        """Code that squeezes works with size-1 dimensions, and a transpose that only moves
        size-1 dimensions keeps the memory order (HiFi-GAN's `x.squeeze(0).transpose(1,
        0).view(-1)` of a one-channel output): the sizes decide, and they are not in the code."""
        if not isinstance(origin, cst.Call):
            return False
        return method_name(origin) == "squeeze" or (self.imps.qualify(origin.func) or "") == "torch.squeeze"

    def _attention_output(self, origin: cst.BaseExpression | None) -> bool:
        """`F.scaled_dot_product_attention(q, k, v)` (or a wrapper): flash kernels return
        their output in (batch, time, heads, dim) memory order, the math kernel does not,
        so whether `y.transpose(1, 2).view(...)` works depends on the backend. A local
        function of the module (`attention()` doing matmuls) is read as written."""
        if not isinstance(origin, cst.Call):
            return False
        name = _callee_short(origin, self.imps)
        if not _ATTENTION_CALL.search(name):
            return False
        local = isinstance(origin.func, cst.Name) and name in functions_of(self.ctx).by_name
        return not local

    def _channels_last_input(self, origin: cst.BaseExpression | None) -> bool:
        """A base computed from a channels-last tensor (`x.permute(0, 3, 1, 2)`): convolutions,
        `F.interpolate` and pooling keep that memory format, so the base's layout is unknown."""
        if not isinstance(origin, cst.Call) or _callee_short(origin, self.imps) in _CONTIGUOUS_RESULTS:
            return False
        inputs = [a.value for a in origin.args if not a.star]
        owner = receiver(origin)
        if owner is not None and not self._is_namespace(owner):
            inputs.append(owner)
        return any(
            _channels_last(dims) for e in inputs for p in self.chains(e) if p.moves for dims in self.layouts(p)
        )

    # -- shapes ---------------------------------------------------------------

    def base_shape(self, chain: Chain) -> Shape | None:
        if chain.binding is not None and isinstance(chain.base, cst.Name):
            return self._binding_shape(chain.base, chain.binding, 0)
        return self.shape(chain.base)

    def rank(self, expr: cst.BaseExpression, depth: int = 0) -> int | None:
        found = self.shape(expr, depth)
        return None if found is None else len(found)

    def shape(self, expr: cst.BaseExpression, depth: int = 0) -> Shape | None:
        """The rank of `expr` and, where the code shows them, its sizes; None when unknown."""
        key = id(expr)
        if key in self._shapes:
            return self._shapes[key]
        self._shapes[key] = None  # a cycle reads "unknown"
        result = self._shape(expr, depth) if depth <= self.DEPTH else None
        self._shapes[key] = result
        return result

    def _shape(self, expr: cst.BaseExpression, depth: int) -> Shape | None:
        if isinstance(expr, cst.Name):
            return self._name_shape(expr, depth)
        if isinstance(expr, (cst.Integer, cst.Float)):
            return ()
        if isinstance(expr, cst.UnaryOperation):
            return self.shape(expr.expression, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.MatrixMultiply):
                return _matmul_shape(self.shape(expr.left, depth + 1), self.shape(expr.right, depth + 1))
            return _broadcast(self.shape(expr.left, depth + 1), self.shape(expr.right, depth + 1))
        if isinstance(expr, cst.Comparison) and len(expr.comparisons) == 1:
            right = expr.comparisons[0].comparator
            return _broadcast(self.shape(expr.left, depth + 1), self.shape(right, depth + 1))
        if isinstance(expr, cst.Attribute):
            if expr.attr.value == "data":
                return self.shape(expr.value, depth + 1)
            kind = _MATRIX_ATTRS.get(expr.attr.value)
            if kind is None:
                return None
            inner = self.shape(expr.value, depth + 1)
            if inner is None and kind == "T":
                return (None, None)
            return None if inner is None else _shape_after([Op(kind, "")], inner)
        if isinstance(expr, cst.Call):
            return self._call_shape(expr, depth)
        if isinstance(expr, cst.Subscript):
            op = index_op(expr, self._counter)
            inner = self.shape(expr.value, depth + 1) if op is not None else None
            return None if op is None or inner is None else _shape_after([op], inner)
        return None

    def _name_shape(self, name: cst.Name, depth: int) -> Shape | None:
        """The shape every binding that reaches `name` agrees on (sizes they disagree on
        are unknown)."""
        reaching = self.bindings.reaching(name)
        if not reaching:
            return self._fact(name, -1)
        return _agree([self._binding_shape(name, b, depth) for b in reaching])

    def _binding_shape(self, name: cst.Name, binding: Binding, depth: int) -> Shape | None:
        fact = self._fact(name, binding.order)
        if fact is not None:
            return fact
        if binding.value is not None:
            return self.shape(binding.value, depth + 1)
        return self._unpacked_shape(binding, depth)

    def _fact(self, name: cst.Name, since: int) -> Shape | None:
        """The shape stated by `b, t, c = x.shape` between `since` and the use of `name`."""
        use = self.idx.order(name)
        for order, shape in reversed(self._facts(self.idx.scope(name)).get(name.value, [])):
            if since < order < use:
                return shape
        return None

    def _unpacked_shape(self, binding: Binding, depth: int) -> Shape | None:
        """`q, k, v = x.split(c, dim=2)`, `_, pred = out.topk(k, 1)`, `a, b = [f(t) for t in ts]`,
        `out, h = self.lstm(x)` (batch, time, features)."""
        if self._recurrent_output(binding) is not None:
            return (None, None, None)
        assign = binding.node
        if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return None
        target, value = assign.targets[0].target, assign.value
        if not isinstance(target, (cst.Tuple, cst.List)):
            return None
        if isinstance(value, (cst.ListComp, cst.GeneratorExp)):
            return self.shape(value.elt, depth + 1)
        elements = _seq_elements(value)
        if elements is not None:
            names = [e.value for e in target.elements]
            at = next((i for i, e in enumerate(names) if isinstance(e, cst.Name) and e.value == binding.name), None)
            return self.shape(elements[at], depth + 1) if at is not None and len(elements) == len(names) else None
        if not isinstance(value, cst.Call):
            return None
        method = method_name(value)
        qualified = self.imps.qualify(value.func) or ""
        subject: cst.BaseExpression | None
        if method is not None and not self.imps.is_imported(value.func):
            subject = receiver(value)
        elif qualified.startswith("torch.") and positional(value):
            method, subject = qualified.rpartition(".")[2], positional(value)[0].value
        else:
            return None
        inner = self.shape(subject, depth + 1) if subject is not None else None
        if inner is None:
            return None
        if method in _SPLITTING:
            return (None,) * len(inner)  # the split dimension's size changes
        if method == "unbind" and inner:
            return (None,) * (len(inner) - 1)
        return None

    def _facts(self, scope: cst.CSTNode) -> dict[str, list[tuple[int, Shape]]]:
        """`b, t, c = x.shape` / `= x.size()`: name -> [(order, shape)] in `scope`."""
        facts = self._shape_facts.get(id(scope))
        if facts is None:
            facts = {}
            for assign in self.idx.within(scope, cst.Assign):
                if len(assign.targets) != 1 or self.idx.scope(assign) is not scope:
                    continue
                target, value = assign.targets[0].target, assign.value
                if not isinstance(target, (cst.Tuple, cst.List)):
                    continue
                if any(isinstance(e, cst.StarredElement) for e in target.elements):
                    continue
                subject = None
                if isinstance(value, cst.Attribute) and value.attr.value == "shape":
                    subject = value.value
                elif isinstance(value, cst.Call) and method_name(value) == "size" and not value.args:
                    subject = receiver(value)
                if isinstance(subject, cst.Name):
                    shape = tuple(
                        symbol(e.value, self.module.code_for_node)
                        if isinstance(e.value, cst.Name) and e.value.value != "_"
                        else None
                        for e in target.elements
                    )
                    facts.setdefault(subject.value, []).append((self.idx.end(assign), shape))
            self._shape_facts[id(scope)] = facts
        return facts

    def _call_shape(self, call: cst.Call, depth: int) -> Shape | None:
        method = method_name(call)
        func = call.func
        args = positional(call)
        callee = dotted(func) or ""
        if len(args) == 1 and len(call.args) == 1 and "." not in callee.removeprefix("self."):
            # A module of the model that only drops, activates or normalizes: `self.attn_dropout(att)`.
            if _SHAPE_KEEPING_MODULE.search(callee.rpartition(".")[2]) and not self.imps.is_imported(func):
                return self.shape(args[0].value, depth + 1)
        if method is not None and isinstance(func, cst.Attribute) and not self.imps.is_imported(func):
            return self._method_shape(call, method, func.value, depth)
        qualified = self.imps.qualify(func) or ""
        short = qualified.rpartition(".")[2]
        first = args[0].value if args else None
        if qualified.startswith("torch.") and self.imps.is_imported(func):
            if short in _FACTORIES:
                return self._factory_shape(call, short)
            if short in _PRODUCER_METHODS and first is not None:
                op = producer_op(call, short, 1, self.size)
                inner = self.shape(first, depth + 1)
                if op is not None and op.kind == "permute" and inner is None:
                    return (None,) * len(op.first)
                return None if op is None or inner is None else _shape_after([op], inner)
            if short.endswith("_like") or short in _RANK_KEEPING_FUNCS:
                return self.shape(first, depth + 1) if first is not None else None
            if short in ("matmul", "bmm") and len(args) == 2:
                return _matmul_shape(self.shape(args[0].value, depth + 1), self.shape(args[1].value, depth + 1))
            if short == "scaled_dot_product_attention" and first is not None:
                inner = self.shape(first, depth + 1)
                return None if not inner else inner[:-1] + (None,)
            if short == "einsum" and first is not None:
                rank = _einsum_rank(first)
                return None if rank is None else (None,) * rank
        return None

    def _factory_shape(self, call: cst.Call, short: str) -> Shape | None:
        args = [a.value for a in positional(call)]
        if short in ("Tensor", "FloatTensor"):
            # `torch.Tensor(2, 3)` allocates; `torch.Tensor([1, 2])` holds data.
            return tuple(self.size(e) for e in args) if args and all(int_like(a) for a in args) else None
        if short in ("full", "randint"):
            sizes = args[-2 if short == "full" else -1 :][:1]
            elements = _seq_elements(sizes[0]) if sizes else None
            return None if elements is None else tuple(self.size(e) for e in elements)
        if len(args) == 1 and _seq_elements(args[0]) is not None:
            return tuple(self.size(e) for e in _seq_elements(args[0]) or [])
        if args and all(int_like(s, True) for s in args):
            return tuple(self.size(e) for e in args)
        return None

    def _method_shape(self, call: cst.Call, method: str, receiver: cst.BaseExpression, depth: int) -> Shape | None:
        if method in ("view", "reshape"):
            shown = self.sizes(call)
            if shown is None or None not in shown:
                return shown
            # `x.view(b, -1, d)`: the inferred size is the rest of the receiver's sizes.
            inner = self.shape(receiver, depth + 1)
            total, known = product(inner) if inner else None, product(s for s in shown if s is not None)
            rest = total * known.inverse() if total is not None and known is not None and not known.zero else None
            return tuple(rest if s is None else s for s in shown) if shown.count(None) == 1 else shown
        if method in _PRODUCER_METHODS:
            op = producer_op(call, method, 0, self.size)
            inner = self.shape(receiver, depth + 1)
            if op is None:
                return None
            if inner is None:
                if op.kind == "permute":
                    return (None,) * len(op.first)
                if op.kind == "t":
                    return (None, None)
                if op.kind == "expand":
                    return op.shape if "keep" not in op.sizes else (None,) * len(op.sizes)
                return None
            return _shape_after([op], inner)
        if method == "repeat":
            values = _size_args(call)
            return None if values is None else (None,) * len(values)
        if method == "flatten":
            return self._flatten_shape(call, receiver, depth)
        if method in _RANK_KEEPING_METHODS:
            return self.shape(receiver, depth + 1)
        return None

    def _flatten_shape(self, call: cst.Call, receiver: cst.BaseExpression, depth: int) -> Shape | None:
        inner = self.shape(receiver, depth + 1)
        if not call.args:
            return (None if inner is None else product(inner),)
        start_expr, end_expr = _arg(call, 0, "start_dim"), _arg(call, 1, "end_dim")
        start = int_value(start_expr) if start_expr is not None else 0
        end = int_value(end_expr) if end_expr is not None else -1
        if start is None or end is None or inner is None:
            return None
        s, e = _norm(start, len(inner)), _norm(end, len(inner))
        if s is None or e is None or e < s:
            return None
        return inner[:s] + (product(inner[s : e + 1]),) + inner[e + 1 :]

    # -- a shape the function shows elsewhere ---------------------------------

    def _evidence(self, chain: Chain, view: cst.Call) -> Shape | None:
        """When the base's rank is unknown: the sizes of an earlier view of the same
        function that this view merges (`.view(B, T, nh, C // nh)` ... `.view(B, T, C)`),
        provided the base is computed from tensors of that rank by a function of this
        module, whose code is there to read (`attention(q, k, v)` of such views)."""
        sizes = self.sizes(view)
        producer = self._producer(chain)
        if sizes is None or producer is None or not isinstance(producer.func, cst.Name):
            return None
        if producer.func.value not in functions_of(self.ctx).by_name:
            return None
        at = self.idx.order(view)
        shown = {s for order, s in self._views_of(self.idx.scope(view)) if order < at and _merges(sizes, s)}
        if len(shown) != 1:
            return None
        evidence = shown.pop()
        inputs = [a.value for a in producer.args if not a.star and a.keyword is None]
        return evidence if any(self.rank(e) == len(evidence) for e in inputs) else None

    def _views_of(self, scope: cst.CSTNode) -> list[tuple[int, Shape]]:
        """Every `.view(...)` / `.reshape(...)` of a function with its sizes written out."""
        found = self._views.get(id(scope))
        if found is None:
            found = []
            for call in self.idx.within(scope, cst.Call):
                if method_name(call) in ("view", "reshape") and self.idx.scope(call) is scope:
                    sizes = self.sizes(call)
                    if sizes is not None:
                        found.append((self.idx.order(call), sizes))
            self._views[id(scope)] = found
        return found

    def _producer(self, chain: Chain) -> cst.Call | None:
        """The call that made the base: `attention(q, k, v)` in `x, attn = attention(q, k, v)`."""
        binding = chain.binding
        if binding is None:
            return chain.base if isinstance(chain.base, cst.Call) else None
        if isinstance(binding.value, cst.Call):
            return binding.value
        node = binding.node
        if binding.value is None and isinstance(node, cst.Assign) and isinstance(node.value, cst.Call):
            return node.value
        return None


# Recurrent layers that take `batch_first=`; their output is a transposed view when it is set.
_RECURRENT_LAYERS = frozenset({"torch.nn.GRU", "torch.nn.LSTM", "torch.nn.RNN"})


def _batch_first_op(layer: str) -> Op:
    """What a batch-first recurrent layer does to the layout of its (time, batch) output."""
    return Op("transpose", f"{layer}(...)` with `batch_first=True", (0, 1))


def _first_operand(left: cst.BaseExpression, right: cst.BaseExpression) -> cst.BaseExpression:
    """The operand whose layout an elementwise result follows: the left one, unless it is
    a number (`1 - x.t()`)."""
    return right if isinstance(left, (cst.Integer, cst.Float)) else left


def _agree(shapes: list[Shape | None]) -> Shape | None:
    """One shape for values that may each reach a use: their common rank, and each size
    they all agree on."""
    if not shapes or any(s is None for s in shapes):
        return None
    first = shapes[0]
    assert first is not None
    if any(len(s) != len(first) for s in shapes if s is not None):
        return None
    return tuple(size if all(s is not None and s[i] == size for s in shapes) else None for i, size in enumerate(first))


def _broadcast(left: Shape | None, right: Shape | None) -> Shape | None:
    """Elementwise result: the longer operand's shape (only its rank when both are known
    and differ in a size)."""
    if left is None or right is None:
        known = left if right is None else right
        return None if known is None else tuple(None if s == ONE else s for s in known)
    longer, shorter = (left, right) if len(left) >= len(right) else (right, left)
    offset = len(longer) - len(shorter)
    return longer[:offset] + tuple(
        a if a == b or b == ONE else b if a == ONE else None for a, b in zip(longer[offset:], shorter)
    )


def _matmul_shape(left: Shape | None, right: Shape | None) -> Shape | None:
    if left is not None and right is not None and len(left) >= 2 and len(right) >= 2:
        batch = _broadcast(left[:-2], right[:-2]) or ()
        return batch + (left[-2], right[-1])
    if left is not None and len(left) >= 2:
        return left[:-1] + (None,)
    if right is not None and len(right) >= 2:
        return right[:-2] + (None, right[-1])
    return None


def _einsum_rank(equation: cst.BaseExpression) -> int | None:
    """`torch.einsum("bhqk,bhkd->bhqd", ...)`: the output's letters."""
    if not isinstance(equation, cst.SimpleString):
        return None
    text = equation.evaluated_value
    if not isinstance(text, str) or "->" not in text or "." in text:
        return None
    return len(text.partition("->")[2].replace(" ", ""))


def _merges(merged: Shape, shown: Shape) -> bool:
    """Whether `merged` is `shown` with runs of neighbouring sizes multiplied together (an
    inferred size, -1, standing for any run), at least one run merging two sizes."""
    if len(merged) >= len(shown):
        return False

    @lru_cache(maxsize=None)
    def fits(i: int, j: int) -> bool:
        if j == len(merged):
            return i == len(shown)
        return any(
            (merged[j] is None or (None not in shown[i:end] and product(shown[i:end]) == merged[j]))
            and fits(end, j + 1)
            for end in range(i + 1, len(shown) - (len(merged) - j - 1) + 1)
        )

    return fits(0, 0) and sum(s != ONE for s in shown) > sum(s != ONE for s in merged)


_FACTORIES = frozenset({"zeros", "ones", "randn", "rand", "empty", "full", "randint", "Tensor", "FloatTensor"})
_SPLITTING = frozenset({"split", "chunk", "tensor_split", "topk", "sort", "split_with_sizes"})
# Functions and methods whose result has the shape of their (first) tensor argument.
_RANK_KEEPING_FUNCS = {
    "softmax", "log_softmax", "dropout", "relu", "gelu", "silu", "tanh", "sigmoid", "exp", "abs",
    "sqrt", "rsqrt", "masked_fill", "leaky_relu", "elu", "contiguous", "clone",
}  # fmt: skip
_RANK_KEEPING_METHODS = _LAYOUT_KEEPING | _IN_PLACE_KEEPING | _BROADCASTING | {
    "contiguous", "softmax", "log_softmax", "masked_fill", "requires_grad_",
}  # fmt: skip


def layouts(ctx: FileContext) -> Layouts:
    return ctx.analysis(Layouts)

