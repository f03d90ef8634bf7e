import torch
import torch.nn as nn
import torch.nn.functional as F


class cnn_reg(nn.Module):
    """3D CNN regressing the interface score of a docking conformation (reconstructed)."""

    def __init__(self, input_shape):
        super().__init__()
        self.convlayer_000 = nn.Conv3d(input_shape[0], 4, kernel_size=2)
        self.convlayer_001 = nn.MaxPool3d((2, 2, 2))
        self.convlayer_002 = nn.Conv3d(4, 5, kernel_size=2)
        self.convlayer_003 = nn.MaxPool3d((2, 2, 2))
        size = self._get_conv_output(input_shape)
        self.fclayer_000 = nn.Linear(size, 84)
        self.dropout = nn.Dropout(0.5)
        self.fclayer_001 = nn.Linear(84, 1)

    def _get_conv_output(self, shape):
        inp = torch.rand(1, *shape)
        out = self._forward_features(inp)
        return out.data.view(1, -1).size(1)

    def _forward_features(self, x):
        x = F.relu(self.convlayer_000(x))
        x = self.convlayer_001(x)
        x = F.relu(self.convlayer_002(x))
        x = self.convlayer_003(x)
        return x

    def forward(self, x):
        x = self._forward_features(x)
        x = x.view(x.size(0), -1)
        x = F.relu(self.fclayer_000(x))
        x = self.dropout(x)
        return self.fclayer_001(x)
