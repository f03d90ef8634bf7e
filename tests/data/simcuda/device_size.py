"""Checks the simulated device's size against argv[1], then mixes devices (a TL101)."""
import sys

import torch

assert torch.cuda.get_device_properties(0).total_memory == int(sys.argv[1]), torch.cuda.get_device_properties(0).total_memory
assert torch.cuda.mem_get_info()[1] == int(sys.argv[1])
torch.ones(2, device="cuda") + torch.ones(2)  # line: bug
