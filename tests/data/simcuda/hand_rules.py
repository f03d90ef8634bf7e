"""Each hand-written device rule of the simulator, exercised once: prints one JSON object,
case name -> "ok" or the error raised (type: first line)."""
import json

import torch
import torch.nn.functional as F

cuda = torch.randn(4, 3, device="cuda")
cpu = torch.randn(4, 3)
outcomes = {}


def case(name, func):
    try:
        func()
        outcomes[name] = "ok"
    except Exception as error:  # noqa: BLE001 - the outcome is the point
        outcomes[name] = f"{type(error).__name__}: {str(error).splitlines()[0]}"


# CROSS: copies between devices are allowed
case("copy_ from cpu", lambda: torch.empty(4, 3, device="cuda").copy_(cpu))
case("to cuda and back", lambda: cpu.to("cuda").to("cpu"))
# INDEX: CPU indices into a CUDA tensor are allowed, CUDA indices into a CPU tensor are not
case("cpu index into cuda", lambda: cuda[torch.tensor([0, 2])])
case("cpu mask setitem on cuda", lambda: cuda.clone().__setitem__(torch.tensor([True, False, True, False]), 0.0))
case("cuda index into cpu", lambda: cpu[torch.tensor([0, 2], device="cuda")])
# CONV: input and weight types
case("conv cpu input, cuda weight", lambda: F.conv1d(torch.randn(1, 3, 8), torch.randn(2, 3, 3, device="cuda")))
case("conv cuda input, cpu bias", lambda: F.conv1d(torch.randn(1, 3, 8, device="cuda"), torch.randn(2, 3, 3, device="cuda"), torch.randn(2)))
# FOREACH: each position of the lists on one device; one list may mix devices
case("foreach positions mixed", lambda: torch._foreach_add_([cuda.clone()], [cpu]))
case("foreach one mixed list", lambda: torch._foreach_mul_([cuda.clone(), cpu.clone()], 2.0))
# TI (where.self is a TensorIterator operator marked NoCheck): 0-dim CPU tensors are scalars
case("where with 0-dim cpu", lambda: torch.where(cuda > 0, cuda, torch.tensor(0.0)))
case("where with cpu tensor", lambda: torch.where(cuda > 0, cuda, cpu))
case("add 0-dim cpu", lambda: cuda + torch.tensor(1.0))
case("add cpu tensor", lambda: cuda + cpu)
# STRICT: every positional tensor on one device
case("index_select cpu index", lambda: cuda.index_select(0, torch.tensor([0, 1])))
# COMPOSITE: the decomposition is checked (embedding -> index_select)
case("embedding cpu indices", lambda: F.embedding(torch.tensor([0, 1]), torch.randn(5, 3, device="cuda")))
# ctc_loss accepts CPU lengths (CROSS for its tensor overload)
case(
    "ctc_loss cpu lengths",
    lambda: F.ctc_loss(
        torch.randn(10, 1, 5, device="cuda").log_softmax(2), torch.tensor([[1, 2]]), torch.tensor([10]), torch.tensor([2])
    ),
)
# PINNED: pin_memory() gives a pinned copy (and its views), as a DataLoader's batches
# with pin_memory=True are; other CPU tensors and CUDA ones are not pinned


def pinned_copy():
    pinned = cpu.pin_memory()
    assert pinned.is_pinned() and pinned[1:].is_pinned() and not cpu.is_pinned(), "not pinned"
    assert pinned.pin_memory() is pinned and torch.equal(pinned, cpu), "pinned twice"
    assert not pinned.to("cuda", non_blocking=True).is_pinned(), "cuda pinned"


def pinned_loader_batches():
    data = torch.utils.data.TensorDataset(torch.randn(8, 2), torch.arange(8))
    for pin in (True, False):
        for x, y in torch.utils.data.DataLoader(data, batch_size=4, pin_memory=pin):
            assert x.is_pinned() is pin and y.is_pinned() is pin, f"pin_memory={pin}"


def cuda_loader_batches():
    data = torch.utils.data.TensorDataset(torch.randn(8, 2, device="cuda"), torch.arange(8, device="cuda"))
    for x, y in torch.utils.data.DataLoader(data, batch_size=4, pin_memory=True):
        pass


def cuda_not_pinned():
    assert not cuda.is_pinned() and not cuda.half().is_pinned(), "cuda pinned"


case("pin_memory copy", pinned_copy)
case("pin_memory loader", pinned_loader_batches)
# ... and CUDA tensors cannot be pinned: `_pin_memory` and `empty_cuda` refuse them
case("is_pinned on cuda", cuda_not_pinned)
case("pin_memory on cuda", lambda: cuda.pin_memory())
case("pin_memory on cuda bf16", lambda: cuda.bfloat16().pin_memory())
case("pin_memory loader of cuda tensors", cuda_loader_batches)
case("pin_memory factory on cuda", lambda: torch.zeros(3, device="cuda", pin_memory=True))
case("pin_memory empty_like of cuda", lambda: torch.empty_like(cuda, pin_memory=True))
print(json.dumps(outcomes))
