"""`torch.autocast("cuda")` on the simulated device: CUDA's cast policy, so that float16
regions really compute in float16.

Core torch registers no autocast kernels for PrivateUse1, so `autocast("cuda")` also
switches the `vcuda` autocast state on, and Python kernels on the AutocastPrivateUse1 key
cast the arguments of CUDA's lists (`autocast_mode.cpp`): lower precision for matmuls
and convolutions, float32 for reductions, losses and pointwise functions that
overflow, the widest type for mixed-type operators; `binary_cross_entropy` raises CUDA's
"unsafe to autocast" error. Leaf weights are cast once per region, as CUDA's cast
cache does."""

from __future__ import annotations

import functools
import weakref
from typing import Any, Callable

import torch
from torch.utils._pytree import tree_flatten

from torchlint.runtime_probe.simcuda.state import SIMULATED_ERROR
from torchlint.runtime_probe.simcuda.tensor import NAME, SimTensor

LOWER_PRECISION = """_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d
convolution prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm chain_matmul
linalg_multi_dot _thnn_fused_lstm_cell _thnn_fused_gru_cell lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell
_scaled_dot_product_flash_attention scaled_dot_product_attention""".split()
FLOAT32 = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm
native_layer_norm group_norm frobenius_norm nuclear_norm cosine_similarity poisson_nll_loss cosine_embedding_loss
nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss
multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss binary_cross_entropy_with_logits dist
pdist cdist renorm logsumexp upsample_nearest1d upsample_nearest2d upsample_nearest3d upsample_linear1d
upsample_bilinear2d upsample_trilinear3d upsample_bicubic2d prod cumprod cumsum linalg_vector_norm
linalg_matrix_norm softmax log_softmax sum norm""".split()
WIDEST = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add stack cat".split()
BCE_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)
# The stubs list AutocastCUDA but not AutocastPrivateUse1, which exists at runtime.
_KEY = torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastPrivateUse1)  # type: ignore[attr-defined]
_cast_cache: dict[int, tuple[weakref.ref[torch.Tensor], torch.Tensor]] = {}
_libraries: list[torch.library.Library] = []


def _eligible(t: Any) -> bool:
    return type(t) is SimTensor and t.is_floating_point() and t.dtype != torch.float64


# `t.to(dtype)` as C++ autocast's `cached_cast` calls it, without the Python layers a
# simulated tensor's `.to()` has for device arguments (there are none here).
_to = torch._C.TensorBase.to


def _cast(t: Any, dtype: torch.dtype) -> Any:
    if not _eligible(t) or t.dtype == dtype:
        return t
    if t.is_leaf and t.requires_grad:
        hit = _cast_cache.get(id(t))
        if hit is not None and hit[0]() is t and hit[1].dtype == dtype:
            return hit[1]
        cast = _to(t, dtype)
        _cast_cache[id(t)] = (weakref.ref(t), cast)
        return cast
    return _to(t, dtype)


def _cast_all(values: Any, dtype: torch.dtype) -> list[Any]:
    """Cast the eligible tensors among `values` and one level of lists (a hand-written
    scan: pytree's is several times slower, on every autocast operator)."""
    out = []
    for value in values:
        if type(value) is SimTensor:
            out.append(_cast(value, dtype))
        elif isinstance(value, (list, tuple)) and any(type(x) is SimTensor for x in value):
            out.append(type(value)(_cast(x, dtype) for x in value))
        else:
            out.append(value)
    return out


def _kernel(op: Any, policy: str) -> Callable[..., Any]:
    def kernel(*args: Any, **kwargs: Any) -> Any:
        with torch._C._ExcludeDispatchKeyGuard(_KEY):
            if policy == "lower":
                dtype: torch.dtype | None = torch.get_autocast_dtype(NAME)
            elif policy == "float32":
                dtype = torch.float32
            else:
                found = [t.dtype for t in tree_flatten((args, kwargs))[0] if _eligible(t)]
                dtype = functools.reduce(torch.promote_types, found) if found else None
            if dtype is not None:
                args = tuple(_cast_all(args, dtype))
                if kwargs:
                    kwargs = dict(zip(kwargs, _cast_all(kwargs.values(), dtype)))
            return op(*args, **kwargs)

    return kernel


def _binary_cross_entropy(*args: Any, **kwargs: Any) -> Any:
    error = RuntimeError(BCE_MESSAGE)
    setattr(error, SIMULATED_ERROR, True)
    raise error


def _register() -> None:
    # torch.library.Library is unannotated.
    fallback = torch.library.Library("_", "IMPL")  # type: ignore[no-untyped-call]
    fallback.fallback(torch.library.fallthrough_kernel, "AutocastPrivateUse1")  # type: ignore[no-untyped-call]
    library = torch.library.Library("aten", "IMPL")  # type: ignore[no-untyped-call]
    _libraries.extend([fallback, library])
    for policy, names in (("lower", LOWER_PRECISION), ("float32", FLOAT32), ("widest", WIDEST)):
        for name in names:
            packet = getattr(torch.ops.aten, name, None)
            if packet is None:
                continue
            for overload in packet.overloads():
                op = getattr(packet, overload)
                schema = op._schema
                if schema.is_mutable or not any("Tensor" in str(a.type) for a in schema.arguments):
                    continue
                library.impl(name if overload == "default" else f"{name}.{overload}", _kernel(op, policy), "AutocastPrivateUse1")  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated
    for overload in torch.ops.aten.binary_cross_entropy.overloads():  # type: ignore[no-untyped-call]  # OpOverloadPacket.overloads is unannotated
        qualified = "binary_cross_entropy" if overload == "default" else f"binary_cross_entropy.{overload}"
        library.impl(qualified, _binary_cross_entropy, "AutocastPrivateUse1")  # type: ignore[no-untyped-call]  # torch.library.Library is unannotated


def _follow_cuda_regions() -> None:
    """`autocast("cuda")` regions also set the simulated backend's autocast state."""
    autocast = torch.amp.autocast_mode.autocast
    # `autocast.__enter__` is unannotated in torch: typed here as what it is.
    enter: Callable[[Any], Any] = autocast.__enter__
    leave = autocast.__exit__
    depth = [0]

    @functools.wraps(enter)
    def __enter__(self: Any) -> Any:
        result = enter(self)
        if self.device == "cuda":
            self._torchlint_previous = (torch.is_autocast_enabled(NAME), torch.get_autocast_dtype(NAME))
            torch.set_autocast_enabled(NAME, self._enabled)
            torch.set_autocast_dtype(NAME, self.fast_dtype)
            depth[0] += 1
        return result

    @functools.wraps(leave)
    def __exit__(self: Any, *exc: Any) -> Any:
        previous = getattr(self, "_torchlint_previous", None)
        if self.device == "cuda" and previous is not None:
            torch.set_autocast_enabled(NAME, previous[0])
            torch.set_autocast_dtype(NAME, previous[1])
            depth[0] -= 1
            if depth[0] == 0:
                _cast_cache.clear()
        return leave(self, *exc)

    autocast.__enter__, autocast.__exit__ = __enter__, __exit__  # type: ignore[method-assign]


def install() -> None:
    _register()
    _follow_cuda_regions()
