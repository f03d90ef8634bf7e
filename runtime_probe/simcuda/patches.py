"""Python-level behaviour of a CUDA build that the CPU build lacks: `torch.load` with
`map_location`, pinned memory, a bare `"cuda"` device, CUDA generators, the foreach
fast paths, `ctc_loss` with CPU lengths, torch's dispatch-rule lookup for simulated
tensors; and what the simulation refuses
(`torch.compile`, NCCL), which makes the probe's result inconclusive."""

from __future__ import annotations

import contextvars
import functools
import weakref
from typing import Any, Callable

import torch

from torchlint.runtime_probe.simcuda.state import inconclusive, refusal
from torchlint.runtime_probe.simcuda.tensor import CUDA0, SimTensor, as_device

# Where the `torch.load` in progress puts simulated tensors: None for "where they were
# saved" (cuda), a CPU device for `map_location="cpu"`.
_load_target: contextvars.ContextVar[torch.device | None] = contextvars.ContextVar("torchlint_load_target", default=None)


def rebuild(cpu_tensor: torch.Tensor, requires_grad: bool) -> torch.Tensor:
    """Unpickles a simulated tensor (saved as CPU data): on cuda unless loaded to the CPU."""
    target = _load_target.get()
    result = cpu_tensor if target is not None and target.type == "cpu" else cpu_tensor.to(CUDA0)
    return result.requires_grad_(True) if requires_grad else result


def _map_target(map_location: Any) -> torch.device | str | None:
    if map_location is None:
        return None
    if isinstance(map_location, (str, torch.device, int)):
        return as_device(map_location)
    if isinstance(map_location, dict):
        return as_device(map_location.get("cuda:0", map_location.get("cuda", "cuda")))
    return "callable"


def _to_cuda(obj: Any, memo: dict[int, Any]) -> Any:
    """A loaded object with its CPU tensors moved to the simulated device."""
    if id(obj) in memo:
        return memo[id(obj)]
    result: Any
    if isinstance(obj, torch.Tensor):
        result = obj if type(obj) is SimTensor else obj.to(CUDA0)
    elif isinstance(obj, torch.nn.Module):
        result = obj.to(CUDA0)
    elif isinstance(obj, dict):
        result = type(obj)() if type(obj) is not dict else {}
        for key, value in obj.items():
            result[key] = _to_cuda(value, memo)
    elif isinstance(obj, tuple) and hasattr(obj, "_fields"):
        result = type(obj)(*(_to_cuda(v, memo) for v in obj))
    elif isinstance(obj, (list, tuple)):
        result = type(obj)(_to_cuda(v, memo) for v in obj)
    else:
        result = obj
    memo[id(obj)] = result
    return result


def _patch_load() -> None:
    original = torch.load
    torch.serialization.add_safe_globals([rebuild])

    @functools.wraps(original)
    def load(f: Any, map_location: Any = None, *args: Any, **kwargs: Any) -> Any:
        target = _map_target(map_location)
        if target == "callable":
            return original(f, map_location, *args, **kwargs)
        token = _load_target.set(target if isinstance(target, torch.device) else None)
        try:
            if isinstance(target, torch.device) and target.type == "cuda":
                return _to_cuda(original(f, "cpu", *args, **kwargs), {})
            return original(f, map_location, *args, **kwargs)
        finally:
            _load_target.reset(token)

    torch.load = load


def _is_bare_cuda(device: Any) -> bool:
    if isinstance(device, str):
        return device == "cuda"
    return isinstance(device, torch.device) and device.type == "cuda" and device.index is None


def _patch_devices() -> None:
    """A bare "cuda" becomes cuda:0: the C++ `to()` asks the absent CUDA guard for the
    current index."""
    tensor = torch.Tensor
    original_to, original_cuda = tensor.to, tensor.cuda

    @functools.wraps(original_to)
    def to(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
        if args and _is_bare_cuda(args[0]):
            args = (CUDA0, *args[1:])
        if _is_bare_cuda(kwargs.get("device")):
            kwargs["device"] = CUDA0
        return original_to(self, *args, **kwargs)

    @functools.wraps(original_cuda)
    def cuda(self: torch.Tensor, device: Any = None, *args: Any, **kwargs: Any) -> Any:
        if device is None or _is_bare_cuda(device) or device == 0:
            device = CUDA0
        return original_cuda(self, device, *args, **kwargs)

    def with_device(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            if _is_bare_cuda(kwargs.get("device")):
                kwargs["device"] = CUDA0
            return func(*args, **kwargs)

        return call

    # The wrappers take any arguments; the stubs type the originals precisely (overloads).
    tensor.to, tensor.cuda = to, cuda  # type: ignore[method-assign, assignment]
    torch.tensor = with_device(torch.tensor)
    torch.as_tensor = with_device(torch.as_tensor)
    torch.asarray = with_device(torch.asarray)
    tensor.new_tensor = with_device(tensor.new_tensor)  # type: ignore[method-assign]

    # The CPU build cannot page-lock memory: a pinned tensor is a copy remembered by its
    # storage, so that `is_pinned()` answers as on a GPU machine (a DataLoader with
    # `pin_memory=True` hands out pinned batches) for it and its views while it lives.
    pinned: dict[int, weakref.ref[torch.Tensor]] = {}

    def is_pinned(self: torch.Tensor, device: Any = None) -> bool:
        if type(self) is SimTensor:
            return False
        owner = pinned.get(self.untyped_storage().data_ptr())
        return owner is not None and owner() is not None

    def pin_memory(self: torch.Tensor, device: Any = None) -> torch.Tensor:
        if type(self) is SimTensor:
            # ATen's `_pin_memory` check, in its words (`toString()`: CUDAFloatType); a
            # DataLoader with `pin_memory=True` over CUDA tensors raises it too.
            scalar = str(self.type()).rsplit(".", 1)[-1].removesuffix("Tensor")
            raise RuntimeError(f"cannot pin 'CUDA{scalar}Type' only dense CPU tensors can be pinned")
        if is_pinned(self):
            return self
        copy = self.clone(memory_format=torch.contiguous_format)
        address = copy.untyped_storage().data_ptr()
        pinned[address] = weakref.ref(copy, lambda ref: pinned.pop(address, None) if pinned.get(address) is ref else None)
        return copy

    tensor.pin_memory = pin_memory  # type: ignore[method-assign, assignment]  # the stub's self is TensorBase
    tensor.is_pinned = is_pinned  # type: ignore[method-assign, assignment]

    class Generator(torch._C.Generator):
        """A CUDA generator cannot exist on the CPU build: a CPU one stands in."""

        def __new__(cls, device: Any = "cpu") -> Generator:
            place = device if isinstance(device, torch.device) else torch.device(device)
            return super().__new__(cls, "cpu" if place.type == "cuda" else place)  # type: ignore[call-arg]

    torch.Generator = Generator  # type: ignore[misc]


def _patch_ctc_loss() -> None:
    """CUDA accepts CPU length tensors; the C++ composite turns them into lists except
    for tensor subclasses, where it then divides a cuda tensor by them."""
    functional = torch.nn.functional
    original = functional.ctc_loss

    @functools.wraps(original)
    def ctc_loss(log_probs: Any, targets: Any, input_lengths: Any, target_lengths: Any, *args: Any, **kwargs: Any) -> Any:
        if type(log_probs) is SimTensor:
            input_lengths, target_lengths = (
                t.tolist() if isinstance(t, torch.Tensor) and type(t) is not SimTensor else t for t in (input_lengths, target_lengths)
            )
        return original(log_probs, targets, input_lengths, target_lengths, *args, **kwargs)

    functional.ctc_loss = ctc_loss


def _patch_foreach() -> None:
    """Optimizers and `clip_grad_norm_` take their foreach fast paths for CUDA tensors."""
    import torch.optim.optimizer as optimizer
    import torch.utils._foreach_utils as foreach_utils

    for module in (optimizer, foreach_utils):
        supported = module._foreach_supported_types
        if SimTensor not in supported:
            supported.append(SimTensor)


class _NoWeakrefs:
    """Stands in for the `weakref` module inside `torch.utils.swap_tensors`."""

    @staticmethod
    def getweakrefs(obj: object) -> list[Any]:
        return []


def _patch_module_moves() -> None:
    """`Module._apply` swaps a CPU parameter or gradient with its simulated copy
    (`swap_tensors`), where a CUDA build assigns `.data` and keeps the object. The swap
    refuses tensors that something holds a weak reference to (the probe does, to
    gradients), although the object keeps its identity as it would on CUDA: for moves
    to or from the simulated device the check is skipped."""
    import torch.utils as utils

    # `swap_tensors` is unannotated in torch: typed here as what it is.
    original: Callable[[torch.Tensor, torch.Tensor], None] = utils.swap_tensors

    @functools.wraps(original)
    def swap_tensors(t1: torch.Tensor, t2: torch.Tensor) -> None:
        if type(t1) is not SimTensor and type(t2) is not SimTensor:
            return original(t1, t2)
        saved = utils.weakref  # type: ignore[attr-defined]
        utils.weakref = _NoWeakrefs  # type: ignore[attr-defined, assignment]  # a class stands in for the module
        try:
            return original(t1, t2)
        finally:
            utils.weakref = saved  # type: ignore[attr-defined]

    utils.swap_tensors = swap_tensors


def _patch_dispatch_rule_lookup() -> None:
    """Before every `__torch_dispatch__` call, C++ asks
    `torch._library.simple_registry.find_torch_dispatch_rule` (looked up by name) for a
    rule registered with `torch.library.register_torch_dispatch` for the operator and
    the exact class: two registry calls in Python per simulated operator. Rules are
    registered per class and `SimTensor` is the simulator's own, so none exists for it:
    the answer is given at once, and every other class is asked as before."""
    import torch._library.simple_registry as registry

    original = registry.find_torch_dispatch_rule

    @functools.wraps(original)
    def find_torch_dispatch_rule(op: Any, torch_dispatch_class: type) -> Callable[..., Any] | None:
        if torch_dispatch_class is SimTensor:
            return None
        return original(op, torch_dispatch_class)

    registry.find_torch_dispatch_rule = find_torch_dispatch_rule


def _patch_unsupported() -> None:
    torch.compile = refusal("torch.compile is not simulated")
    import torch.distributed as dist

    if dist.is_available():
        original = dist.init_process_group

        @functools.wraps(original)
        def init_process_group(backend: Any = None, *args: Any, **kwargs: Any) -> Any:
            if backend is None or "nccl" in str(backend):
                raise inconclusive("NCCL (distributed CUDA) is not simulated")
            return original(backend, *args, **kwargs)

        dist.init_process_group = init_process_group


def install() -> None:
    _patch_load()
    _patch_devices()
    _patch_ctc_loss()
    _patch_foreach()
    _patch_module_moves()
    _patch_dispatch_rule_lookup()
    _patch_unsupported()
