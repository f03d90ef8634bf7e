"""Simulated CUDA: runs a CUDA training script on the CPU build of torch with `cuda:0`
simulated, so that the probe can confirm device, memory and timing bugs without a GPU.

`install()` is process-wide and irreversible (it registers the PrivateUse1 backend,
dispatcher kernels and autocast kernels, and patches `torch.cuda`): it is called only in
the probe's child process, before the probe's own hooks. It lives in the installed
torchlint package, so its frames are never taken for the user's. See docs/probe.md,
"Simulated CUDA", for what it does and what it cannot do.
"""

from __future__ import annotations

import io
import os
import re
import tokenize
import warnings
from typing import Any

DEFAULT_MEMORY = 80 * (1 << 30)
_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40}
_UNITS.update({"kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12})
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_installed = False


def parse_size(text: str) -> int:
    """Bytes from a size such as `24GiB`, `512MiB`, `80G` or `1000000`; ValueError if bad."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise ValueError(f"not a memory size: {text!r} (examples: 24GiB, 512MiB, 80G)")
    size = int(float(match.group(1)) * _UNITS[unit])
    if size <= 0:
        raise ValueError(f"not a memory size: {text!r} (it must be more than 0 bytes)")
    return size


def wants_cuda(source: str) -> bool:
    """Whether a script asks for CUDA: a name or string of its code says `cuda`
    (`torch.cuda`, `.cuda()`, `"cuda"`, `"cuda:0"`); comments do not count."""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.NAME, tokenize.STRING) and "cuda" in token.string.lower():
                return True
    except (tokenize.TokenError, SyntaxError):
        return "cuda" in source
    return False


class _BackendModule:
    """`torch.vcuda`: what torch asks a registered backend module."""

    def get_amp_supported_dtype(self) -> list[Any]:
        import torch

        return [torch.float16, torch.bfloat16]

    def is_available(self) -> bool:
        return True

    def is_initialized(self) -> bool:
        return True

    def device_count(self) -> int:
        return 1

    def current_device(self) -> int:
        return 0

    def _is_in_bad_fork(self) -> bool:
        return False

    def manual_seed_all(self, seed: int) -> None:
        return None

    def _lazy_init(self) -> None:
        return None


def _device_guard() -> Any:
    """The simulated device's guard. C++ asks it for its device type whenever it reads or
    sets the current device or stream (about twice per operator, more in backward), and
    the only method it looks up in Python is `type_`: a C callable returning the
    constant answers without a Python frame each time."""
    import itertools

    import torch

    class DeviceGuard(torch._C._acc.DeviceGuard):
        # The stubs type `type_` as returning a device; C++ takes a DeviceType.
        type_ = itertools.repeat(torch._C._autograd.DeviceType.PrivateUse1).__next__  # type: ignore[assignment]

    return DeviceGuard()


def _backend_kernels(libraries: list[Any]) -> None:
    """A Python kernel per operator on the CUDA and PrivateUse1 keys: factories with
    `device="cuda"` and C++ code building tensors from a simulated tensor's options land
    here. (A plain fallback trips an internal assert when the Python key is excluded, as
    inside `torch.tensor()`.) Operators with a CompositeImplicitAutograd kernel are left
    to decompose, or autograd would lose them."""
    import torch

    from torchlint.runtime_probe.simcuda.tensor import dispatch

    aten = torch.ops.aten
    library = torch.library.Library("aten", "IMPL")  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated
    libraries.append(library)
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key

    def kernel_for(qualified: str) -> Any:
        resolved: list[Any] = []

        def kernel(*args: Any, **kwargs: Any) -> Any:
            if not resolved:
                name, _, overload = qualified[len("aten::") :].partition(".")
                resolved.append(getattr(getattr(aten, name), overload or "default"))
            return dispatch(resolved[0], args, kwargs)

        return kernel

    for qualified in torch._C._dispatch_get_all_op_names():
        if not qualified.startswith("aten::") or has_kernel(qualified, "CompositeImplicitAutograd"):
            continue
        kernel = kernel_for(qualified)
        for key in ("CUDA", "PrivateUse1"):
            try:
                library.impl(qualified[len("aten::") :], kernel, key)  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated
            except RuntimeError:
                pass  # a kernel C++ already registered for this key


_libraries: list[Any] = []


def install(total_memory: int = DEFAULT_MEMORY) -> None:
    """Simulate `cuda:0` with `total_memory` bytes in this process, for good."""
    global _installed
    if _installed:
        return
    import torch
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    from torchlint.runtime_probe.simcuda import autocast, cuda_api, patches, tensor
    from torchlint.runtime_probe.simcuda.allocator import AllocatorConfig, parse_alloc_conf
    from torchlint.runtime_probe.simcuda.memory import MemoryTracker
    from torchlint.runtime_probe.simcuda.rules import RuleBook, load_rules
    from torchlint.runtime_probe.simcuda.state import STATE

    max_split, expandable = parse_alloc_conf(os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    STATE.memory = MemoryTracker(AllocatorConfig(total_memory, max_split, expandable))
    _setup_privateuseone_for_python_backend(tensor.NAME, backend_module=_BackendModule(), device_guard=_device_guard())
    tensor.configure(RuleBook(load_rules(torch.__version__)))
    fallback = torch.library.Library("_", "IMPL")  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated
    for key in ("CUDA", "PrivateUse1"):
        fallback.fallback(lambda op, *args, **kwargs: tensor.dispatch(op, args, kwargs), key)  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated
    _libraries.append(fallback)
    with warnings.catch_warnings():
        # "Warning only once for all operators, other operators may also be overridden":
        # overriding them is the point.
        warnings.simplefilter("ignore", UserWarning)
        _backend_kernels(_libraries)
        autocast.install()
    cuda_api.install(total_memory)
    patches.install()
    _installed = True


def clean_message(message: str) -> str:
    """A C++ message about the simulated backend, in the words real CUDA uses."""
    return message.replace("vcuda:0", "cuda:0").replace("torch.vcuda.", "torch.cuda.").replace("vcuda", "cuda")
