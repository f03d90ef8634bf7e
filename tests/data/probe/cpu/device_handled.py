"""A model that moves its input itself: inputs on another device are not a bug here.
Saving the whole moved model must still work under the probe (nothing of the probe may
end up in the pickle)."""
import copy
import io

import torch
from torch import nn


class Moves(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 1)

    def forward(self, x):
        return self.linear(x.to(self.linear.weight.device))


model = Moves().to("meta")
for step in range(3):
    out = model(torch.randn(16, 8))  # line: call
buffer = io.BytesIO()
torch.save(copy.deepcopy(model), buffer)
buffer.seek(0)
restored = torch.load(buffer, weights_only=False)
assert not restored._forward_pre_hooks and not restored._forward_hooks
