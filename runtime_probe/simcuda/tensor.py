"""The simulated CUDA tensor and the dispatch every operation on it goes through.

A tensor "on cuda" is a `SimTensor`: a `_make_wrapper_subclass` wrapper whose C++ device
is the Python-registered PrivateUse1 backend (renamed `vcuda`), holding a real CPU
tensor in `_elem`. C++ sees a non-CPU device, so autograd, `x.options()`, the `.to()`
alias checks and the numpy guards behave as for a device tensor; Python sees `cuda:0`.

Every aten operator with a `SimTensor` argument reaches `__torch_dispatch__`; factories
with `device="cuda"` (and C++ code that builds tensors from a simulated tensor's
options) reach Python kernels on the CUDA and PrivateUse1 dispatch keys. No
thread-local mode is involved, so DataLoader threads and autograd's device threads see
the same simulation. When simulated and CPU tensors meet, the operator's device rule
(`rules.py`) decides, and raises the message real CUDA raises.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, NamedTuple

import torch

from torchlint.runtime_probe.simcuda.rules import Rule, RuleBook
from torchlint.runtime_probe.simcuda.state import STATE, SIMULATED_ERROR, inconclusive

NAME = "vcuda"
CUDA0 = torch.device("cuda", 0)
CPU = torch.device("cpu")
aten = torch.ops.aten
_Tensor = torch.Tensor
_disabled_torch_function = torch._C._disabled_torch_function_impl
_make_wrapper = torch.Tensor._make_wrapper_subclass
PIN_FACTORY_MESSAGE = "Only dense CPU tensors can be pinned"
NUMPY_MESSAGE = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."


class SimTensor(torch.Tensor):
    """A tensor on the simulated `cuda:0`; its data is the CPU tensor `_elem`."""

    _elem: torch.Tensor

    @staticmethod
    def __new__(cls, elem: torch.Tensor) -> SimTensor:
        """`SimTensor(elem)` is `wrap(elem)`: one definition, which dispatch calls
        directly for every result, without this frame."""
        return wrap(elem)

    # What Python code sees.
    @property
    def device(self) -> torch.device:  # type: ignore[override]  # the stubs declare a writable attribute; at runtime it is a read-only C property
        return CUDA0

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]  # the stubs declare a writable attribute; at runtime it is a read-only C property
        return True

    @property
    def is_cpu(self) -> bool:  # type: ignore[override]  # the stubs declare a writable attribute; at runtime it is a read-only C property
        return False

    def get_device(self) -> int:
        return 0

    def type(self, dtype: Any = None, non_blocking: bool = False, **kwargs: Any) -> Any:
        if dtype is None:
            return "torch.cuda." + _Tensor.type(self._elem).rsplit(".", 1)[-1]
        return _Tensor.type(self, dtype, non_blocking, **kwargs)

    def numpy(self, *, force: bool = False) -> Any:
        raise TypeError(NUMPY_MESSAGE)

    def __array__(self, dtype: Any = None) -> Any:
        raise TypeError(NUMPY_MESSAGE)

    def tolist(self) -> Any:
        return _Tensor.cpu(self).tolist()

    def __format__(self, spec: str) -> str:
        if self.dim() == 0:
            return self.item().__format__(spec)
        formatted: str = _Tensor.__format__(self, spec)  # type: ignore[no-untyped-call]  # unannotated in torch
        return formatted

    def record_stream(self, stream: Any) -> None:
        return None

    # The wrapper's own storage is a stub with a null data pointer (C++ reading it would
    # crash, as `copy.deepcopy` did): Python's storage APIs use the CPU tensor's.
    def data_ptr(self) -> int:
        return self._elem.data_ptr()

    def untyped_storage(self) -> torch.UntypedStorage:
        return self._elem.untyped_storage()

    def storage(self) -> Any:
        return self._elem.storage()  # type: ignore[no-untyped-call]  # unannotated in torch

    def _typed_storage(self) -> Any:
        return self._elem._typed_storage()  # type: ignore[no-untyped-call]  # unannotated in torch

    def is_shared(self) -> bool:
        shared: bool = self._elem.is_shared()  # type: ignore[no-untyped-call]  # unannotated in torch
        return shared

    def share_memory_(self) -> SimTensor:
        self._elem.share_memory_()  # type: ignore[no-untyped-call]  # unannotated in torch
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> SimTensor:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        with torch.no_grad():
            result = _Tensor.clone(self)
        if self.requires_grad:
            result.requires_grad_(True)
        for key, value in self.__dict__.items():
            setattr(result, key, copy.deepcopy(value, memo))
        if self.grad is not None:
            result.grad = copy.deepcopy(self.grad, memo)
        memo[id(self)] = result
        return result  # type: ignore[return-value]

    def cuda(self, device: Any = None, non_blocking: bool = False, memory_format: Any = torch.preserve_format) -> SimTensor:
        if memory_format is torch.preserve_format:
            return self
        return _Tensor.to(self, memory_format=memory_format)  # type: ignore[return-value]

    def to(self, *args: Any, **kwargs: Any) -> Any:
        device, dtype, copy_, rest = parse_to(args, kwargs)
        dtype = dtype or self.dtype
        if device is None or device.type == "cuda":
            # As real PyTorch: no copy when nothing changes.
            if dtype == self.dtype and not copy_ and rest.get("memory_format", torch.preserve_format) is torch.preserve_format:
                return self
            return _Tensor.to(self, dtype, copy=copy_, **rest)
        return _Tensor.to(self, device, dtype, copy=copy_, **rest)

    def __reduce_ex__(self, protocol: Any) -> Any:
        from torchlint.runtime_probe.simcuda.patches import rebuild

        return (rebuild, (_Tensor.cpu(self.detach()), self.requires_grad))

    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["_elem"], None

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, torch.Tensor], meta: Any, outer_size: Any, outer_stride: Any) -> SimTensor:
        return wrap(inner["_elem"])

    __torch_function__ = _disabled_torch_function  # type: ignore[assignment]

    # `__torch_dispatch__` is `_torch_dispatch`, set below the functions it uses.


def as_device(value: Any) -> torch.device | None:
    if value is None or isinstance(value, torch.device):
        return value
    if isinstance(value, int):
        return torch.device("cuda", value)
    return torch.device(value)


def parse_to(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[torch.device | None, torch.dtype | None, bool, dict[str, Any]]:
    """`Tensor.to`'s overloads: (device, dtype, copy, other keyword arguments)."""
    rest = dict(kwargs)
    copy_ = bool(rest.pop("copy", False))
    device = as_device(rest.pop("device", None))
    dtype = rest.pop("dtype", None)
    items = list(args)
    if items and isinstance(items[0], torch.Tensor):
        other = items.pop(0)
        device, dtype = other.device, other.dtype
    elif items and isinstance(items[0], torch.dtype):
        dtype = items.pop(0)
    elif items and isinstance(items[0], (str, torch.device, int)):
        device = as_device(items.pop(0))
        if items and isinstance(items[0], torch.dtype):
            dtype = items.pop(0)
    if items:
        rest["non_blocking"] = items.pop(0)
    if items:
        copy_ = bool(items.pop(0))
    return device, dtype, copy_, rest


def wrap(elem: torch.Tensor) -> SimTensor:
    """`elem` (a CPU tensor) on the simulated device: a new allocation unless its
    storage is already there (a view)."""
    if type(elem) is not _Tensor:
        elem = elem.as_subclass(_Tensor)
    tracker = STATE.memory
    if tracker is not None:
        tracker.on_new(elem)
    wrapper: SimTensor = _make_wrapper(
        SimTensor,
        elem.size(),
        strides=elem.stride(),
        storage_offset=elem.storage_offset(),
        dtype=elem.dtype,
        layout=elem.layout,
        device=INNER,
    )
    wrapper._elem = elem
    return wrapper


def _where(t: Any) -> str:
    return "cuda:0" if type(t) is SimTensor else str(t.device)


def _error(message: str) -> RuntimeError:
    error = RuntimeError(message)
    setattr(error, SIMULATED_ERROR, True)
    return error


def _legacy_type(t: torch.Tensor) -> str:
    base = _Tensor.type(t._elem if type(t) is SimTensor else t).rsplit(".", 1)[-1]
    return ("torch.cuda." if type(t) is SimTensor else "torch.") + base


def _bound(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Any, bool]]:
    """(name, value, checked) per argument given; `checked`: positional or `out=`."""
    bound = []
    for i, argument in enumerate(func._schema.arguments):
        if i < len(args) and not argument.kwarg_only:
            bound.append((argument.name, args[i], True))
        elif argument.name in kwargs:
            bound.append((argument.name, kwargs[argument.name], not argument.kwarg_only or argument.is_out))
    return bound


def _flat(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def check(func: Any, rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> RuntimeError | None:
    """The error real CUDA raises for this mix of simulated and CPU tensors, if any."""
    name = func._schema.name.split("::", 1)[1]
    if rule is Rule.STRICT:
        common = None
        for argument, value, checked in _bound(func, args, kwargs):
            if not checked:
                continue
            for t in _flat(value):
                if isinstance(t, torch.Tensor):
                    where = _where(t)
                    if common is None:
                        common = where
                    elif where != common:
                        return _error(
                            f"Expected all tensors to be on the same device, but got {argument} is on {where}, "
                            f"different from other tensors on {common} (when checking argument in method wrapper_CUDA_{name})"
                        )
        return None
    if rule in (Rule.TI, Rule.FOREACH):
        return _check_iterator(func, rule, args, kwargs)
    if rule is Rule.INDEX:
        indexed = args[0]
        indices = args[1] if len(args) > 1 else kwargs.get("indices")
        if type(indexed) is not SimTensor:
            if any(type(t) is SimTensor for t in indices or ()):
                return _error(f"indices should be either on cpu or on the same device as the indexed tensor ({indexed.device})")
            STATE.unverified_mix(str(func))
            return None
        if any(isinstance(t, torch.Tensor) and type(t) is not SimTensor for t in args[2:]):
            STATE.unverified_mix(str(func))  # CPU `values`: CUDA's rule for them is not modelled
        return None
    if rule is Rule.CONV:
        return _check_convolution(args)
    STATE.unverified_mix(str(func))
    return None


def _check_iterator(func: Any, rule: Rule, args: tuple[Any, ...], kwargs: dict[str, Any]) -> RuntimeError | None:
    bound = _bound(func, args, kwargs)
    lists = [v for _, v, _ in bound if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor)]
    if rule is Rule.FOREACH and len(lists) > 1:
        for items in zip(*lists):
            places = {_where(t) for t in items if isinstance(t, torch.Tensor)}
            if len(places) > 1:
                first, second = sorted(places, key=lambda p: p != "cuda:0")
                return _error(f"Expected all tensors to be on the same device, but found at least two devices, {first} and {second}!")
    common = None
    for _, value, _ in bound:
        if rule is Rule.FOREACH and isinstance(value, (list, tuple)) and len(lists) <= 1:
            continue  # one list may mix devices: the slow path runs one operator per tensor
        for t in _flat(value):
            if not isinstance(t, torch.Tensor) or (type(t) is not SimTensor and t.dim() == 0 and t.device.type == "cpu"):
                continue
            where = _where(t)
            if common is None:
                common = where
            elif where != common:
                return _error(f"Expected all tensors to be on the same device, but found at least two devices, {common} and {where}!")
    return None


def _check_convolution(args: tuple[Any, ...]) -> RuntimeError | None:
    source, weight = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    on_device = type(source) is SimTensor
    for label, other in (("weight", weight), ("bias", bias)):
        if isinstance(other, torch.Tensor) and on_device != (type(other) is SimTensor):
            tail = f" or input should be a MKLDNN tensor and {label} is a dense tensor" if not on_device else ""
            return _error(f"Input type ({_legacy_type(source)}) and {label} type ({_legacy_type(other)}) should be the same{tail}")
    return None


def _unwrap_list(value: list[Any] | tuple[Any, ...], flags: list[bool]) -> list[Any] | tuple[Any, ...]:
    """A list of tensors (`Tensor[]`, `Tensor?[]`) with its simulated ones unwrapped;
    flags = [simulated, cpu]."""
    inner = []
    for x in value:
        if type(x) is SimTensor:
            flags[0] = True
            inner.append(x._elem)
        else:
            if isinstance(x, _Tensor) and x.device.type == "cpu":
                flags[1] = True
            inner.append(x)
    return tuple(inner) if type(value) is tuple else inner


def _unwrap(values: list[Any] | dict[str, Any], where: tuple[Any, ...], flags: list[bool]) -> None:
    """Unwrap, in place, the entries of `values` at `where` (the indices or keys of the
    operator's tensor arguments); flags = [simulated, cpu]."""
    for i in where:
        value = values[i]
        kind = type(value)
        if kind is SimTensor:
            flags[0] = True
            values[i] = value._elem
        elif kind is list or kind is tuple:
            values[i] = _unwrap_list(value, flags)
        elif isinstance(value, _Tensor) and value.device.type == "cpu":
            flags[1] = True


class OpInfo(NamedTuple):
    """What dispatch needs to know about an operator, worked out once per operator."""

    op: Any
    # What runs on the CPU tensors: the operator's C++ entry point or its emulation.
    kernel: Callable[..., Any]
    # The host waits for the result (`.item()`, `nonzero`): the stream is idle afterwards.
    host_waits: bool
    # Per return: the (index, name) of the input it writes to (in-place, out=), if any.
    aliases: tuple[tuple[int, str] | None, ...]
    # The positions and the names of the arguments that can hold tensors (`Tensor`,
    # `Tensor?`, `Tensor[]`): the only ones unwrapped and checked; sizes, scalars and
    # dtypes are passed on untouched.
    tensor_positions: tuple[int, ...]
    tensor_names: frozenset[str]


def _op_info(func: Any) -> OpInfo:
    schema = func._schema
    aliases: list[tuple[int, str] | None] = []
    for ret in schema.returns:
        info = ret.alias_info
        target = None
        if info is not None and info.is_write:
            for i, argument in enumerate(schema.arguments):
                if argument.alias_info is not None and argument.alias_info.before_set == info.before_set:
                    target = (i, argument.name)
                    break
        aliases.append(target)
    tensors = [(i, argument) for i, argument in enumerate(schema.arguments) if "Tensor" in str(argument.type)]
    return OpInfo(
        func,
        EMULATED.get(func) or func._op,
        func in SYNC_OPS,
        tuple(aliases),
        tuple(i for i, argument in tensors if not argument.kwarg_only),
        frozenset(argument.name for _, argument in tensors),
    )


# id(OpOverload) -> its OpInfo: an id is hashed in C, an OpOverload's __hash__ in Python.
# OpOverloads live for good, and the entry checks its operator, so an id is never stale.
_OPS: dict[int, OpInfo] = {}


def dispatch(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """An operator with simulated tensors among its arguments, or a factory for the
    simulated device (the backend kernels call this)."""
    return _torch_dispatch(SimTensor, func, (), args, kwargs)


def _torch_dispatch(cls: Any, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
    """`SimTensor.__torch_dispatch__`: the one frame every operator on a simulated tensor
    runs (what the helpers above do for the rare cases is written out here for the
    common one: positional tensors, no keyword tensors)."""
    info = _OPS.get(id(func))
    if info is None or info.op is not func:
        info = _OPS[id(func)] = _op_info(func)
    simulated = cpu = False
    inner_args = list(args)
    count = len(args)
    for i in info.tensor_positions:
        if i >= count:
            break  # trailing defaults left out
        value = inner_args[i]
        kind = type(value)
        if kind is SimTensor:
            simulated = True
            inner_args[i] = value._elem
        elif kind is list or kind is tuple:
            flags = [simulated, cpu]
            inner_args[i] = _unwrap_list(value, flags)
            simulated, cpu = flags
        elif isinstance(value, _Tensor) and value.device.type == "cpu":
            cpu = True
    if kwargs:
        flags = [simulated, cpu]
        inner_kwargs = dict(kwargs)
        _unwrap(inner_kwargs, tuple(info.tensor_names.intersection(kwargs)), flags)
        simulated, cpu = flags
        target = inner_kwargs.get("device")
        if target is not None:
            to_device = target.type in ("cuda", NAME)
            if to_device:
                inner_kwargs["device"] = CPU
        else:
            to_device = simulated
        if inner_kwargs.get("pin_memory"):
            if to_device:
                raise RuntimeError(PIN_FACTORY_MESSAGE)  # `empty_cuda`'s check
            inner_kwargs["pin_memory"] = False  # the CPU build has no pinned allocator
    else:
        kwargs = inner_kwargs = {}
        to_device = simulated
    if simulated and cpu:
        rule = RULES.rule(func)
        if rule is Rule.COMPOSITE:
            # The operator's own decomposition, on the simulated tensors: its pieces are checked.
            return func._op_dk(torch._C.DispatchKey.CompositeExplicitAutograd, *args, **kwargs)
        if rule is not Rule.CROSS:
            error = check(func, rule, args, kwargs)
            if error is not None:
                raise error
    if simulated or to_device:
        # A kernel launch on the stream model; the host waits for some results.
        stream = STATE.stream
        launched = stream.launched = stream.launched + 1
        if info.host_waits or (func is _TO_COPY and not to_device and not inner_kwargs.get("non_blocking")):
            stream.completed = launched
    try:
        out = info.kernel(*inner_args, **inner_kwargs)
    except NotImplementedError as error:
        if simulated or to_device:
            raise inconclusive(f"{func} has no CPU kernel to stand in for its CUDA kernel") from error
        raise
    if type(out) is _Tensor and not info.aliases[0]:
        return wrap(out) if to_device else out
    return _rewrap(info.aliases, args, kwargs, out, to_device)


def _rewrap(aliases: tuple[tuple[int, str] | None, ...], args: tuple[Any, ...], kwargs: dict[str, Any], out: Any, to_device: bool) -> Any:
    single = not isinstance(out, (tuple, list))
    outs = (out,) if single else out
    results: list[Any] = []
    for i, value in enumerate(outs):
        alias = aliases[i] if i < len(aliases) else None
        if alias is not None:
            index, name = alias
            original = args[index] if index < len(args) else kwargs.get(name)
            if isinstance(original, torch.Tensor):
                results.append(original)  # in-place and out=: the caller's own tensor
                continue
        if to_device and isinstance(value, _Tensor):
            results.append(wrap(value))
        elif to_device and isinstance(value, (list, tuple)):
            results.append(type(value)(wrap(x) if isinstance(x, _Tensor) else x for x in value))
        else:
            results.append(value)
    if single:
        return results[0]
    return tuple(results) if isinstance(out, tuple) else results


# --- operators with no CPU kernel that CUDA tensors reach: fused RNN cells ------------


def _lstm_cell(ig: Any, hg: Any, cx: Any, ib: Any = None, hb: Any = None) -> tuple[Any, Any, Any]:
    gates = ig + hg if ib is None else ig + hg + ib + hb
    i, f, c, o = gates.chunk(4, 1)
    i, f, c, o = i.sigmoid(), f.sigmoid(), c.tanh(), o.sigmoid()
    cy = f * cx + i * c
    return o * cy.tanh(), cy, torch.cat([i, f, c, o], 1)


def _lstm_cell_backward(ghy: Any, gcy: Any, cx: Any, cy: Any, workspace: Any, has_bias: bool) -> tuple[Any, Any, Any]:
    i, f, c, o = workspace.chunk(4, 1)
    tcy = cy.tanh()
    ghy = torch.zeros_like(cy) if ghy is None else ghy
    gcy = torch.zeros_like(cy) if gcy is None else gcy
    gc = ghy * o * (1 - tcy * tcy) + gcy
    gates = torch.cat([gc * c * i * (1 - i), gc * cx * f * (1 - f), gc * i * (1 - c * c), ghy * tcy * o * (1 - o)], 1)
    return gates, gc * f, gates.sum(0) if has_bias else None


def _gru_cell(ig: Any, hg: Any, hx: Any, ib: Any = None, hb: Any = None) -> tuple[Any, Any]:
    if ib is not None:
        ig, hg = ig + ib, hg + hb
    ir, ii, inn = ig.chunk(3, 1)
    hr, hi, hn = hg.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (ii + hi).sigmoid()
    n = (inn + r * hn).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hn, hx], 1)


def _gru_cell_backward(ghy: Any, workspace: Any, has_bias: bool) -> tuple[Any, ...]:
    r, z, n, hn, hx = workspace.chunk(5, 1)
    dn = ghy * (1 - z) * (1 - n * n)
    dr = dn * hn * r * (1 - r)
    dz = ghy * (hx - n) * z * (1 - z)
    gi, gh = torch.cat([dr, dz, dn], 1), torch.cat([dr, dz, dn * r], 1)
    return gi, gh, ghy * z, gi.sum(0) if has_bias else None, gh.sum(0) if has_bias else None


EMULATED: dict[Any, Callable[..., Any]] = {
    aten._thnn_fused_lstm_cell.default: _lstm_cell,
    aten._thnn_fused_lstm_cell_backward_impl.default: _lstm_cell_backward,
    aten._thnn_fused_gru_cell.default: _gru_cell,
    aten._thnn_fused_gru_cell_backward.default: _gru_cell_backward,
    aten.record_stream.default: lambda *args, **kwargs: None,
}
# Operators whose result the host waits for: the stream is idle afterwards.
SYNC_OPS = frozenset(
    {
        aten._local_scalar_dense.default,
        aten.is_nonzero.default,
        aten.equal.default,
        aten.nonzero.default,
        aten.masked_select.default,
        aten._unique2.default,
    }
)
_TO_COPY = aten._to_copy.default
RULES: RuleBook = RuleBook({})
# The C++ device of simulated tensors; exists once the backend is renamed.
INNER = CPU


# The protocol is a classmethod; torch types the base attribute as the plain function
# `_disabled_torch_dispatch_impl`.
SimTensor.__torch_dispatch__ = classmethod(_torch_dispatch)  # type: ignore[assignment]


def configure(book: RuleBook) -> None:
    """Called by `install()` once the PrivateUse1 backend is named `vcuda`."""
    global RULES, INNER
    RULES = book
    INNER = torch.device(NAME, 0)
