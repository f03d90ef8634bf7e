"""`.view()` on a transposed tensor that cannot be viewed: the script crashes."""
import torch

features = torch.randn(4, 6)
flat = features.transpose(0, 1).view(-1)  # line: view
print(flat.shape)
