"""TL003 view-after-transpose: `.view(...)` that merges dimensions of a transposed tensor."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Iterable, Iterator

import libcst as cst

from torchlint.rule import Example, FileContext, FixSpec, Report, Rule
from torchlint.rules._analysis import (
    Bindings,
    Imports,
    Index,
    bindings,
    dotted,
    imports,
    index,
    keyword,
    method_name,
    positional,
    receiver,
)

# ---------------------------------------------------------------------------
# A layout model: each dimension of a tensor, seen from the contiguous tensor it
# was made from. `.view` can merge neighbouring dimensions only when they are still
# neighbours, in order, in memory.


@dataclass(frozen=True)
class Dim:
    # "dim": position `pos` of the contiguous source; "unit": size 1 (its stride never
    # matters); "exp": stride 0, broadcast by `.expand()`; "maybe": source dimension
    # `pos`, given an explicit size by `.expand()` (broadcast if its size was 1).
    kind: str
    pos: int = 0


Layout = tuple[Dim, ...]
MAX_RANK = 8
# When the code does not show the rank, try this many ranks from the smallest one the
# indices allow, and flag only if the view fails for all of them.
RANK_WINDOW = 4


@dataclass(frozen=True)
class Op:
    """One layout-changing call: `kind` with its dimension arguments."""

    kind: str  # transpose, permute, t, T, mT, movedim, expand, keep
    label: str  # how the code spells it, for messages: `.transpose()`, `.T`
    first: tuple[int, ...] = ()
    second: tuple[int, ...] = ()
    sizes: tuple[str, ...] = ()  # for expand: "keep" (-1), "one" (1) or "size" per argument


def source_layout(rank: int, units: Iterable[int] = ()) -> Layout:
    unit_set = set(units)
    dims: list[Dim] = []
    pos = 0
    for i in range(rank):
        if i in unit_set:
            dims.append(Dim("unit"))
        else:
            dims.append(Dim("dim", pos))
            pos += 1
    return tuple(dims)


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
        return _expand(dims, op.sizes)
    if op.kind == "keep":
        # Copies (`.clone()`, `.float()`) keep a permuted layout but not a broadcast one.
        if any(d.kind in ("exp", "maybe") for d in dims):
            return source_layout(r, (i for i, d in enumerate(dims) if d.kind == "unit"))
        return dims
    return None


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


def _expand(dims: Layout, sizes: tuple[str, ...]) -> Layout | None:
    new = len(sizes) - len(dims)
    if new < 0:
        return None
    out: list[Dim] = []
    for i, size in enumerate(sizes):
        if i < new:
            if size == "keep":
                return None  # -1 is not allowed for a new leading dimension
            out.append(Dim("unit") if size == "one" else Dim("exp"))
            continue
        dim = dims[i - new]
        if size == "keep" or dim.kind == "exp":
            out.append(dim)
        elif size == "one":
            out.append(Dim("unit"))
        elif dim.kind == "unit":
            out.append(Dim("exp"))
        else:
            out.append(Dim("maybe", dim.pos))
    return tuple(out)


def _group_ok(group: Layout) -> bool:
    """Whether `.view` can merge these neighbouring dimensions into one."""
    real = [d for d in group if d.kind != "unit"]
    if len(real) < 2 or all(d.kind == "exp" for d in real):
        return True
    if any(d.kind in ("exp", "maybe") for d in real):
        return False
    return all(b.pos == a.pos + 1 for a, b in zip(real, real[1:]))


def view_impossible(dims: Layout, ones: tuple[bool, ...]) -> bool:
    """True when no way of forming the view's sizes from `dims` is legal.

    A view with fewer sizes than dimensions merges runs of neighbouring dimensions;
    it fails when every way of cutting the dimensions into that many runs merges a run
    whose strides do not line up. A literal size 1 may also be a new, empty run.
    A view with as many sizes as dimensions or more may only split: never flagged.
    """
    r, k = len(dims), len(ones)
    if k >= r:
        return False

    @lru_cache(maxsize=None)
    def fits(i: int, j: int) -> bool:
        if j == k:
            return i == r
        if ones[j] and fits(i, j + 1):
            return True
        return any(_group_ok(dims[i:end]) and fits(end, j + 1) for end in range(i + 1, r - (k - j - 1) + 1))

    return not fits(0, 0)


# ---------------------------------------------------------------------------
# Reading the code: literal dimensions, view sizes, layout chains and ranks.


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


def view_sizes(call: cst.Call) -> tuple[bool, ...] | None:
    """For each size of `x.view(...)`, whether it is a literal 1.

    None when the number of sizes is not written out (`*shape`, a shape variable) or
    the call reinterprets the dtype (`x.view(torch.float16)`, `dtype=`).
    """
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
    return tuple(int_value(v) == 1 for v in values)


_TRANSPOSES = frozenset({"transpose", "swapaxes", "swapdims"})
_MOVEDIMS = frozenset({"movedim", "moveaxis"})
_PRODUCER_METHODS = _TRANSPOSES | _MOVEDIMS | {"permute", "t", "expand"}
# Copies and casts that keep a permuted layout (`preserve_format`).
_STRIDE_KEEPING = frozenset({"clone", "detach", "float", "half", "double", "bfloat16", "to", "cpu", "cuda", "type_as"})
_MATRIX_ATTRS = {"T": "T", "mT": "mT", "mH": "mT", "H": "T"}


def _arg(call: cst.Call, i: int, name: str) -> cst.BaseExpression | None:
    kw = keyword(call, name)
    if kw is not None:
        value: cst.BaseExpression = kw.value
        return value
    args = positional(call)
    return args[i].value if len(args) > i else None


def producer_op(call: cst.Call, method: str, shift: int) -> Op | None:
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
    if method == "expand" and shift == 0:
        values = [a.value for a in call.args if a.keyword is None]
        if len(values) == 1 and _seq_elements(values[0]) is not None:
            values = _seq_elements(values[0]) or []
        if not values or len(values) != len(call.args) or not all(int_like(v, True) for v in values):
            return None
        sizes = tuple("keep" if int_value(v) == -1 else "one" if int_value(v) == 1 else "size" for v in values)
        return Op("expand", label, sizes=sizes)
    return None


@dataclass(frozen=True)
class Chain:
    """A tensor expression: a base tensor, assumed contiguous, then layout ops."""

    base: cst.BaseExpression
    ops: tuple[Op, ...]


class Layouts:
    """Layout chains and ranks of tensor expressions in one file (memoized per node)."""

    DEPTH = 40

    def __init__(self, ctx: FileContext) -> None:
        self.idx: Index = index(ctx)
        self.imps: Imports = imports(ctx)
        self.bindings: Bindings = bindings(ctx)
        self._ranks: dict[int, int | None] = {}
        self._shape_facts: dict[int, dict[str, list[tuple[int, int]]]] = {}

    # -- chains -------------------------------------------------------------

    def chain(self, expr: cst.BaseExpression, depth: int = 0) -> Chain | None:
        """The chain of `expr` when its last step is a layout op (through local names)."""
        if depth > self.DEPTH:
            return None
        if isinstance(expr, cst.Name):
            binding = self.bindings.seen_by(expr)
            if binding is None or binding.value is None:
                return None
            return self.chain(binding.value, depth + 1)
        if isinstance(expr, cst.Attribute):
            kind = _MATRIX_ATTRS.get(expr.attr.value)
            if kind is None or self._is_namespace(expr.value):
                return None
            return self._extend(expr.value, Op(kind, f".{expr.attr.value}"), depth)
        if not isinstance(expr, cst.Call):
            return None
        method = method_name(expr)
        owner = receiver(expr)
        if method in _PRODUCER_METHODS and owner is not None:
            qualified = self.imps.qualify(expr.func) or ""
            if qualified == f"torch.{method}" and self.imps.is_imported(expr.func):
                args = positional(expr)
                op = producer_op(expr, method, 1)
                return None if op is None or not args else self._extend(args[0].value, op, depth)
            if self._is_namespace(owner):
                return None
            op = producer_op(expr, method, 0)
            return None if op is None else self._extend(owner, op, depth)
        if method in _STRIDE_KEEPING and owner is not None and keyword(expr, "memory_format") is None:
            inner = self.chain(owner, depth + 1)
            return None if inner is None else Chain(inner.base, inner.ops + (Op("keep", f".{method}()"),))
        qualified = self.imps.qualify(expr.func) or ""
        short = qualified.rpartition(".")[2]
        if qualified == f"torch.{short}" and short in _PRODUCER_METHODS and positional(expr):
            op = producer_op(expr, short, 1)
            return None if op is None else self._extend(positional(expr)[0].value, op, depth)
        return None

    def _extend(self, receiver: cst.BaseExpression, op: Op, depth: int) -> Chain:
        inner = self.chain(receiver, depth + 1)
        return Chain(receiver, (op,)) if inner is None else Chain(inner.base, inner.ops + (op,))

    def _is_namespace(self, expr: cst.BaseExpression) -> bool:
        """`self.T`, `np.T`, `torch.t(...)`: an attribute of an object or module, not a tensor op."""
        return isinstance(expr, cst.Name) and (expr.value in ("self", "cls") or expr.value in self.imps.aliases)

    # -- layouts of a chain ---------------------------------------------------

    def layouts(self, chain: Chain) -> list[Layout]:
        """The final layout for each rank the base may have; empty when none applies."""
        if self._squeezed(chain.base):
            # Code that squeezes works with size-1 dimensions, and a transpose that only
            # moves size-1 dimensions keeps the memory order (HiFi-GAN's
            # `x.squeeze(0).transpose(1, 0).view(-1)` of a one-channel output): the sizes
            # decide, and they are not in the code.
            return []
        rank = self.rank(chain.base)
        units = self._unit_positions(chain.base)
        ranks = [rank] if rank is not None else list(range(1, MAX_RANK + 1))
        found: list[Layout] = []
        for r in ranks:
            dims: Layout | None = source_layout(r, units(r))
            for op in chain.ops:
                dims = apply(op, dims) if dims is not None else None
            if dims is not None:
                found.append(dims)
            if rank is None and found and r >= len(found[0]) + RANK_WINDOW:
                break
        if rank is None and found:
            lowest = len(found[0])
            found = [d for d in found if len(d) < lowest + RANK_WINDOW]
        return found

    def _squeezed(self, base: cst.BaseExpression, depth: int = 0) -> bool:
        if isinstance(base, cst.Name) and depth < self.DEPTH:
            binding = self.bindings.seen_by(base)
            return binding is not None and binding.value is not None and self._squeezed(binding.value, depth + 1)
        if not isinstance(base, cst.Call):
            return False
        name = self.imps.qualify(base.func) or ""
        return method_name(base) == "squeeze" or name == "torch.squeeze"

    def _unit_positions(self, base: cst.BaseExpression, depth: int = 0) -> Callable[[int], list[int]]:
        """Size-1 dimensions of `x.unsqueeze(d)` or `x[:, None]` (or a local name bound to
        one), for a given rank."""
        if isinstance(base, cst.Name) and depth < self.DEPTH:
            binding = self.bindings.seen_by(base)
            if binding is not None and binding.value is not None:
                return self._unit_positions(binding.value, depth + 1)
        if isinstance(base, cst.Call) and method_name(base) == "unsqueeze" and len(base.args) == 1:
            d = int_value(base.args[0].value)
            if d is not None:
                return lambda r: [x for x in (_norm(d, r),) if x is not None]
        if isinstance(base, cst.Subscript):
            found = _none_index(base)
            if found is not None:
                before, from_end = found
                return lambda r: before + [r - off for off in from_end]
        return lambda r: []

    # -- ranks ----------------------------------------------------------------

    def rank(self, expr: cst.BaseExpression, depth: int = 0) -> int | None:
        key = id(expr)
        if key in self._ranks:
            return self._ranks[key]
        self._ranks[key] = None  # a cycle reads "unknown"
        result = self._rank(expr, depth) if depth <= self.DEPTH else None
        self._ranks[key] = result
        return result

    def _rank(self, expr: cst.BaseExpression, depth: int) -> int | None:
        if isinstance(expr, cst.Name):
            return self._name_rank(expr, depth)
        if isinstance(expr, (cst.Integer, cst.Float)):
            return 0
        if isinstance(expr, cst.UnaryOperation):
            return self.rank(expr.expression, depth + 1)
        if isinstance(expr, cst.BinaryOperation):
            known = [r for r in (self.rank(expr.left, depth + 1), self.rank(expr.right, depth + 1)) if r is not None]
            return max(known) if known else None
        if isinstance(expr, cst.Attribute):
            if expr.attr.value in ("T", "mT", "mH", "H", "data"):
                inner = self.rank(expr.value, depth + 1)
                return 2 if inner is None and expr.attr.value == "T" else inner
            return None
        if isinstance(expr, cst.Call):
            return self._call_rank(expr, depth)
        if isinstance(expr, cst.Subscript):
            found = _none_index(expr)
            inner = self.rank(expr.value, depth + 1) if found is not None else None
            return None if inner is None or found is None else inner + len(found[0]) + len(found[1])
        return None

    def _name_rank(self, name: cst.Name, depth: int) -> int | None:
        binding = self.bindings.seen_by(name)
        since = binding.order if binding is not None else -1
        facts = self._facts(self.idx.scope(name)).get(name.value, [])
        use = self.idx.order(name)
        for order, rank in reversed(facts):
            if since < order < use:
                return rank
        if binding is None or binding.value is None:
            return None
        return self.rank(binding.value, depth + 1)

    def _facts(self, scope: cst.CSTNode) -> dict[str, list[tuple[int, int]]]:
        """`b, t, c = x.shape` / `= x.size()`: name -> [(order, rank)] in `scope`."""
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
                    facts.setdefault(subject.value, []).append((self.idx.end(assign), len(target.elements)))
            self._shape_facts[id(scope)] = facts
        return facts

    def _call_rank(self, call: cst.Call, depth: int) -> int | None:
        method = method_name(call)
        func = call.func
        if method is not None and isinstance(func, cst.Attribute) and not self.imps.is_imported(func):
            return self._method_rank(call, method, func.value, depth)
        qualified = self.imps.qualify(func) or ""
        short = qualified.rpartition(".")[2]
        args = positional(call)
        first = args[0].value if args else None
        if qualified.startswith("torch.") and self.imps.is_imported(func):
            if short in _FACTORIES:
                sizes = [a.value for a in args]
                if short in ("full", "randint"):
                    sizes = sizes[-2 if short == "full" else -1 :][:1]
                if len(sizes) == 1 and _seq_elements(sizes[0]) is not None:
                    return len(_seq_elements(sizes[0]) or [])
                if sizes and all(int_like(s, True) for s in sizes) and short not in ("full", "randint"):
                    return len(sizes)
                return None
            if short.endswith("_like") or short in _RANK_KEEPING_FUNCS:
                return self.rank(first, depth + 1) if first is not None else None
            if short in ("matmul", "bmm") and len(args) == 2:
                known = [r for r in (self.rank(a.value, depth + 1) for a in args) if r is not None]
                return max(known) if known else None
            if short == "permute" and len(args) >= 2:
                perm = _dims_arg(args[1].value) if len(args) == 2 else int_tuple(a.value for a in args[1:])
                return len(perm) if perm else None
            return None
        # A module of the model that only drops or activates: `self.attn_dropout(att)`.
        name = (dotted(func) or "").rpartition(".")[2].lower()
        if first is not None and ("dropout" in name or name.startswith("drop")):
            return self.rank(first, depth + 1)
        return None

    def _method_rank(self, call: cst.Call, method: str, receiver: cst.BaseExpression, depth: int) -> int | None:
        if method in ("view", "reshape"):
            sizes = view_sizes(call)
            return None if sizes is None else len(sizes)
        if method == "permute":
            op = producer_op(call, method, 0)
            return len(op.first) if op is not None else self.rank(receiver, depth + 1)
        if method == "t":
            inner = self.rank(receiver, depth + 1)
            return 1 if inner == 1 else 2
        if method in ("expand", "repeat"):
            values = [a.value for a in call.args]
            if values and not any(a.star or a.keyword for a in call.args) and all(int_like(v, True) for v in values):
                return len(values)
            return None
        if method == "unsqueeze":
            inner = self.rank(receiver, depth + 1)
            return None if inner is None else inner + 1
        if method == "flatten":
            return self._flatten_rank(call, receiver, depth)
        if method in _RANK_KEEPING_METHODS:
            return self.rank(receiver, depth + 1)
        return None

    def _flatten_rank(self, call: cst.Call, receiver: cst.BaseExpression, depth: int) -> int | None:
        if not call.args:
            return 1
        start_expr, end_expr = _arg(call, 0, "start_dim"), _arg(call, 1, "end_dim")
        start = int_value(start_expr) if start_expr is not None else 0
        end = int_value(end_expr) if end_expr is not None else -1
        inner = self.rank(receiver, depth + 1)
        if start is None or end is None or inner is None:
            return None
        s, e = _norm(start, inner), _norm(end, inner)
        return None if s is None or e is None or e < s else inner - (e - s)


_FACTORIES = frozenset({"zeros", "ones", "randn", "rand", "empty", "full", "randint"})
# Functions and methods whose result has the rank of their (first) tensor argument.
_RANK_KEEPING_FUNCS = _TRANSPOSES | _MOVEDIMS | {
    "softmax", "log_softmax", "dropout", "relu", "gelu", "silu", "tanh", "sigmoid", "exp", "abs",
    "sqrt", "rsqrt", "masked_fill", "leaky_relu", "elu", "contiguous", "clone",
}  # fmt: skip
_RANK_KEEPING_METHODS = _TRANSPOSES | _MOVEDIMS | _STRIDE_KEEPING | {
    "contiguous", "long", "int", "bool", "softmax", "log_softmax", "masked_fill", "masked_fill_",
    "relu", "sigmoid", "tanh", "exp", "abs", "neg", "sqrt", "rsqrt", "pow", "mul", "add", "sub",
    "div", "mul_", "add_", "sub_", "div_", "clamp", "requires_grad_",
}  # fmt: skip


def _none_index(sub: cst.Subscript) -> tuple[list[int], list[int]] | None:
    """`x[:, None]`, `x[..., None]`: positions of the new size-1 dimensions, counted from
    the front before an `...` and as offsets from the end after it; None for other indexing."""
    before: list[int] = []
    from_end: list[int] = []
    seen_ellipsis = False
    total = len(sub.slice)
    for i, element in enumerate(sub.slice):
        item = element.slice
        if isinstance(item, cst.Index) and isinstance(item.value, cst.Ellipsis):
            if seen_ellipsis:
                return None
            seen_ellipsis = True
            continue
        is_none = isinstance(item, cst.Index) and isinstance(item.value, cst.Name) and item.value.value == "None"
        is_full = isinstance(item, cst.Slice) and item.lower is None and item.upper is None and item.step is None
        if not (is_none or is_full):
            return None
        if is_none:
            if seen_ellipsis:
                from_end.append(total - i)
            else:
                before.append(i)
    return (before, from_end) if before or from_end else None


def layouts(ctx: FileContext) -> Layouts:
    return ctx.analysis(Layouts)


def _short(ctx: FileContext, node: cst.CSTNode, limit: int = 40) -> str:
    text = " ".join(ctx.module.code_for_node(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ---------------------------------------------------------------------------
# The rule.

# `.T` / `.H` only where the attribute ends: `.Tensor` and `.Tanh` are in every file.
_MATRIX_TRIGGERS = tuple(f".{attr}{end}" for attr in ("T", "H") for end in ".)]\n ,;")


class ViewAfterTranspose(Rule):
    """
    ## What it does
    Finds `.view(...)` calls on a tensor made non-contiguous by `.transpose()`,
    `.permute()`, `.t()`, `.T`, `.mT`, `.mH`, `.swapaxes()`, `.swapdims()`,
    `.movedim()`, `.moveaxis()` or `.expand()`, when the view merges dimensions whose
    strides no longer line up: directly chained (`x.transpose(1, 2).view(b, t, c)`) or
    through a local variable of the same function (`y = x.transpose(1, 2)` ...
    `y.view(b, -1)`) that is not reassigned in between.

    It tracks the permutation and, where the code shows it, the rank (an earlier
    `.view(b, t, h, d)`, `b, t, c = x.shape`, `torch.randn(2, 3, 4)`, a matmul of such
    tensors). A view is flagged only if every way of forming its sizes merges dimensions
    that are no longer neighbours in memory. When the rank cannot be known, only clear
    merges are flagged (`.view(-1)`, `.view(b, -1)` after `.transpose(1, 2)`).

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
    h, d)` on a 3-D tensor), a view of a matmul of the transposed tensor, a transpose
    undone by a second one, and a variable reassigned to something else in between.

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
    SUMMARY = "`.view(...)` merges dimensions of a transposed (non-contiguous) tensor and raises at runtime"
    TRIGGERS = (
        (".view",),
        ("transpose", "permute", ".t(", ".mT", ".mH", "swapaxes", "swapdims", "movedim", "moveaxis", ".expand(")
        + _MATRIX_TRIGGERS,
    )
    CONFIRMED_BY = ("TL003",)

    VALID = (
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
    )
    INVALID = (
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
    )

    def check(self, ctx: FileContext) -> Iterator[Report]:
        found: Layouts | None = None
        for call in index(ctx).nodes(cst.Call):
            if method_name(call) != "view":
                continue
            sizes = view_sizes(call)
            if sizes is None:
                continue
            owner = receiver(call)
            found = found or layouts(ctx)
            chain = found.chain(owner) if owner is not None else None
            if owner is None or chain is None:
                continue
            candidates = found.layouts(chain)
            if not candidates or not all(view_impossible(dims, sizes) for dims in candidates):
                continue
            yield self._report(ctx, call, owner, chain)

    def _report(self, ctx: FileContext, call: cst.Call, owner: cst.BaseExpression, chain: Chain) -> Report:
        label = next((op.label for op in reversed(chain.ops) if op.kind != "keep"), chain.ops[-1].label)
        text = _short(ctx, owner)
        if isinstance(owner, cst.Name):
            what = f"`{text}` comes from `{label}` and is not contiguous, so `{text}.view(...)`"
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
