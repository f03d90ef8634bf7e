"""What dispatch works out once per operator, and the allocator events it sends, checked
against a fresh start: prints one JSON object of findings."""
import gc
import json

import torch

from torchlint.runtime_probe.simcuda import tensor

cuda = torch.randn(4, 3, device="cuda")
cpu = torch.randn(4, 3)
findings = {}


def error_of(func):
    try:
        func()
    except RuntimeError as error:
        return str(error)
    return "no error"


# The same mixed-device operators (TensorIterator's rule, the generated wrapper's), with
# their entries never made, and after same-device calls of the same operators made them.
mixed = {"add": lambda: cuda + cpu, "mm": lambda: cuda @ cpu.t()}
same = {"add": lambda: cuda + cuda, "mm": lambda: cuda @ cuda.t()}
for name in mixed:
    tensor._OPS.clear()
    findings[f"{name} mixed first"] = error_of(mixed[name])
    tensor._OPS.clear()
    findings[f"{name} same device first"] = type(same[name]()).__name__
    findings[f"{name} mixed after same device"] = error_of(mixed[name])
    findings[f"{name} same device after mixed"] = type(same[name]()).__name__
# In-place and out= return the caller's own tensor, however often the operator ran.
target = cuda.clone()
findings["in-place is self"] = all(target.add_(cuda) is target for _ in range(3))
out = torch.empty(4, 3, device="cuda")
findings["out= is out"] = all(torch.add(cuda, cuda, out=out) is out for _ in range(3))
# A storage is freed when its last tensor dies: views, and the graph's saved tensors.
mib = 1 << 20
base = torch.cuda.memory_allocated()
x = torch.empty(mib // 4, device="cuda")
view = x.view(64, -1).t()
del x
gc.collect()
findings["view keeps its base"] = torch.cuda.memory_allocated() - base == mib
del view
gc.collect()
findings["freed with the last view"] = torch.cuda.memory_allocated() == base
w = torch.randn(mib // 4, device="cuda", requires_grad=True)
base = torch.cuda.memory_allocated()
y = w.exp()  # exp saves its result for backward
loss = y.sum()
del y
gc.collect()
findings["saved result stays allocated"] = torch.cuda.memory_allocated() - base >= mib
del loss
gc.collect()
findings["freed with the graph"] = torch.cuda.memory_allocated() == base
stats = torch.cuda.memory_stats()
findings["active is allocated"] = all(
    stats[f"{active}.{pool}.{kind}"] == stats[f"{allocated}.{pool}.{kind}"]
    for active, allocated in (("active", "allocation"), ("active_bytes", "allocated_bytes"))
    for pool in ("all", "small_pool", "large_pool")
    for kind in ("current", "peak", "allocated", "freed")
)
print(json.dumps(findings))
