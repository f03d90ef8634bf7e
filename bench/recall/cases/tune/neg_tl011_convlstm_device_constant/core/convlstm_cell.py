from typing import Tuple, Union

import torch
from torch import nn


class BaseConvLSTMCell(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Tuple],
                 padding: Union[int, Tuple, str], activation: str, frame_size: Tuple, weights_initializer=None):
        super().__init__()
        self.activation = torch.tanh if activation == "tanh" else torch.relu
        self.conv = nn.Conv2d(in_channels + out_channels, 4 * out_channels, kernel_size, padding=padding)
        self.W_ci = nn.parameter.Parameter(torch.zeros(out_channels, *frame_size))
        self.W_co = nn.parameter.Parameter(torch.zeros(out_channels, *frame_size))
        self.W_cf = nn.parameter.Parameter(torch.zeros(out_channels, *frame_size))

    def forward(self, X, prev_h, prev_cell):
        conv_output = self.conv(torch.cat([X, prev_h], dim=1))
        i_conv, f_conv, c_conv, o_conv = torch.chunk(conv_output, chunks=4, dim=1)
        input_gate = torch.sigmoid(i_conv + self.W_ci * prev_cell)
        forget_gate = torch.sigmoid(f_conv + self.W_cf * prev_cell)
        new_cell = forget_gate * prev_cell + input_gate * self.activation(c_conv)
        output_gate = torch.sigmoid(o_conv + self.W_co * new_cell)
        new_h = output_gate * self.activation(new_cell)
        return new_h, new_cell
