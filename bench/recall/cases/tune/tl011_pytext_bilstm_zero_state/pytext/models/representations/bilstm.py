#!/usr/bin/env python3
# Copyright (c) Facebook, Inc. and its affiliates. All Rights Reserved
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class BiLSTM(nn.Module):
    """
    `BiLSTM` implements a multi-layer bidirectional LSTM representation layer
    preceded by a dropout layer.
    """

    def __init__(self, embed_dim: int, lstm_dim: int = 32, num_layers: int = 1, bidirectional: bool = True,
                 dropout: float = 0.4, pack_sequence: bool = True) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.lstm = nn.LSTM(embed_dim, lstm_dim, num_layers=num_layers, bidirectional=bidirectional,
                            batch_first=True)
        self.lstm_dim = lstm_dim
        self.num_layers = num_layers
        self.representation_dim = lstm_dim * (2 if bidirectional else 1)
        self.pack_sequence = pack_sequence

    def forward(self, embedded_tokens: torch.Tensor, seq_lengths: torch.Tensor,
                states: Optional[Tuple[torch.Tensor, torch.Tensor]] = None) -> Tuple[torch.Tensor, Tuple]:
        """
        Given an input batch of sequential data such as word embeddings, produces
        a bidirectional LSTM representation of the sequential input and new state
        tensors.
        """
        if self.dropout.p > 0.0:
            embedded_tokens = self.dropout(embedded_tokens)

        if states is not None:
            # convert (h0, c0) from (bsz x num_layers*num_directions x nhid) to
            # (num_layers*num_directions x bsz x nhid)
            states = (
                states[0].transpose(0, 1).contiguous(),
                states[1].transpose(0, 1).contiguous(),
            )
        else:
            # We need to pass in states for ONNX export
            bsz = embedded_tokens.size(0)
            num_directions = 2 if self.lstm.bidirectional else 1
            zero_state = torch.zeros(self.num_layers * num_directions, bsz, self.lstm_dim)
            states = (zero_state, zero_state)

        if self.pack_sequence:
            rnn_input = pack_padded_sequence(embedded_tokens, seq_lengths.cpu(), batch_first=True,
                                             enforce_sorted=False)
        else:
            rnn_input = embedded_tokens
        rep, new_state = self.lstm(rnn_input, states)
        if self.pack_sequence:
            rep, _ = pad_packed_sequence(rep, padding_value=0.0, batch_first=True,
                                         total_length=embedded_tokens.size(1))
        # convert states back to (bsz x num_layers*num_directions x nhid) to be
        # used in data parallel model
        new_state = (new_state[0].transpose(0, 1), new_state[1].transpose(0, 1))
        return rep, new_state
