import math

import torch
from torch_geometric.utils import to_dense_adj


class DConv(torch.nn.Module):
    """Diffusion convolution over K hops of the forward and backward random walks (reduced)."""

    def __init__(self, in_channels, out_channels, K, bias=True):
        super().__init__()
        assert K > 0
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.weight = torch.nn.Parameter(torch.Tensor(2, K, in_channels, out_channels))
        self.bias = torch.nn.Parameter(torch.Tensor(out_channels)) if bias else None
        self.K = K
        stdv = 1.0 / math.sqrt(out_channels)
        torch.nn.init.uniform_(self.weight, -stdv, stdv)
        if self.bias is not None:
            torch.nn.init.uniform_(self.bias, -stdv, stdv)

    def forward(self, X, edge_index, edge_weight):
        adj_mat = to_dense_adj(edge_index, edge_attr=edge_weight)[0]
        deg_out = adj_mat.sum(dim=1).clamp(min=1e-6)
        deg_in = adj_mat.sum(dim=0).clamp(min=1e-6)
        walk_out = adj_mat / deg_out.unsqueeze(1)
        walk_in = adj_mat.t() / deg_in.unsqueeze(1)
        H = X @ self.weight[0][0] + X @ self.weight[1][0]
        Tx_out, Tx_in = X, X
        for k in range(1, self.K):
            Tx_out = walk_out @ Tx_out
            Tx_in = walk_in @ Tx_in
            H = H + Tx_out @ self.weight[0][k] + Tx_in @ self.weight[1][k]
        if self.bias is not None:
            H = H + self.bias
        return H


class DCRNN(torch.nn.Module):
    r"""An implementation of the Diffusion Convolutional Gated Recurrent Unit."""

    def __init__(self, in_channels: int, out_channels: int, K: int, bias: bool = True):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.K = K
        self.bias = bias
        self.conv_x_z = DConv(in_channels + out_channels, out_channels, K, bias)
        self.conv_x_r = DConv(in_channels + out_channels, out_channels, K, bias)
        self.conv_x_h = DConv(in_channels + out_channels, out_channels, K, bias)

    def _set_hidden_state(self, X, H):
        if H is None:
            H = torch.zeros(X.shape[0], self.out_channels)
        return H

    def _calculate_update_gate(self, X, edge_index, edge_weight, H):
        Z = torch.cat([X, H], dim=1)
        return torch.sigmoid(self.conv_x_z(Z, edge_index, edge_weight))

    def _calculate_reset_gate(self, X, edge_index, edge_weight, H):
        R = torch.cat([X, H], dim=1)
        return torch.sigmoid(self.conv_x_r(R, edge_index, edge_weight))

    def _calculate_candidate_state(self, X, edge_index, edge_weight, H, R):
        H_tilde = torch.cat([X, H * R], dim=1)
        return torch.tanh(self.conv_x_h(H_tilde, edge_index, edge_weight))

    def forward(self, X: torch.FloatTensor, edge_index: torch.LongTensor, edge_weight: torch.FloatTensor = None,
                H: torch.FloatTensor = None) -> torch.FloatTensor:
        H = self._set_hidden_state(X, H)
        Z = self._calculate_update_gate(X, edge_index, edge_weight, H)
        R = self._calculate_reset_gate(X, edge_index, edge_weight, H)
        H_tilde = self._calculate_candidate_state(X, edge_index, edge_weight, H, R)
        H = Z * H + (1 - Z) * H_tilde
        return H
