"""A custom operator with a CUDA kernel only, as a CUDA extension registers it."""
import torch

library = torch.library.Library("torchlint_test", "DEF")
library.define("scale(Tensor x) -> Tensor")
library.impl("scale", lambda x: x * 2, "CUDA")
x = torch.ones(3, device="cuda")
torch.ops.torchlint_test.scale(x)
