from typing import Optional, Tuple, Union

import torch
from torch import nn

from core.constants import DEVICE, WeightsInitializer
from core.convlstm_cell import BaseConvLSTMCell


class ConvLSTM(nn.Module):
    """The ConvLSTM implementation (Shi et al., 2015)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple],
                 padding: Union[int, Tuple, str], activation: str, frame_size: Tuple,
                 weights_initializer: Optional[str] = WeightsInitializer.Zeros) -> None:
        super().__init__()
        self.ConvLSTMCell = BaseConvLSTMCell(in_channels, out_channels, kernel_size, padding,
                                             activation, frame_size, weights_initializer)
        self.out_channels = out_channels

    def forward(self, X: torch.Tensor, h: Optional[torch.Tensor] = None,
                cell: Optional[torch.Tensor] = None) -> torch.Tensor:
        batch_size, _, seq_len, height, width = X.size()

        # Initialize output
        output = torch.zeros(
            (batch_size, self.out_channels, seq_len, height, width)
        ).to(DEVICE)

        # Initialize hidden state
        h = torch.zeros((batch_size, self.out_channels, height, width)).to(DEVICE)

        # Initialize cell input
        cell = torch.zeros((batch_size, self.out_channels, height, width)).to(DEVICE)

        for time_step in range(seq_len):
            h, cell = self.ConvLSTMCell(X[:, :, time_step], h, cell)
            output[:, :, time_step] = h  # type: ignore

        return output
