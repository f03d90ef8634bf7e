# VGRNN_prediction.py's training loop reduced (reconstructed around the issue: the VGRNN
# model, the graph utilities and the evaluation helpers are imported, the data loading
# is shortened).
import pickle

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from model import VGRNN
from utils import get_roc_scores, mask_edges_prd, sparse_to_tuple

seed = 123
np.random.seed(seed)
torch.manual_seed(seed)

with open('data/enron10/adj_time_list.pickle', 'rb') as handle:
    adj_time_list = pickle.load(handle)
with open('data/enron10/adj_orig_dense_list.pickle', 'rb') as handle:
    adj_orig_dense_list = pickle.load(handle, encoding='bytes')

outs = mask_edges_prd(adj_time_list)
train_edges_l = outs[0]
pos_edges_l, false_edges_l = outs[1], outs[2]

edge_idx_list = []
for i in range(len(train_edges_l)):
    edge_idx_list.append(torch.tensor(np.transpose(train_edges_l[i]), dtype=torch.long))

h_dim, z_dim, n_layers, clip = 32, 16, 1, 10
learning_rate = 1e-2
seq_len = len(train_edges_l)
num_nodes = adj_orig_dense_list[seq_len - 1].shape[0]
x_dim = num_nodes
eps = 1e-10
conv_type = 'GCN'
x_in = torch.stack([torch.eye(num_nodes)] * seq_len)

model = VGRNN(x_dim, h_dim, z_dim, n_layers, eps, conv=conv_type, bias=True)
optimizer = optim.Adam(model.parameters(), lr=learning_rate)

seq_start, seq_end = 0, seq_len - 3
tst_after = 0

for k in range(1000):
    optimizer.zero_grad()
    kld_loss, nll_loss, _, _, hidden_st = model(x_in[seq_start:seq_end],
                                                edge_idx_list[seq_start:seq_end],
                                                adj_orig_dense_list[seq_start:seq_end])
    loss = kld_loss + nll_loss
    loss.backward()
    optimizer.step()

    nn.utils.clip_grad_norm(model.parameters(), clip)

    if k > tst_after:
        _, _, enc_means, pri_means, _ = model(x_in[seq_end:seq_len],
                                              edge_idx_list[seq_end:seq_len],
                                              adj_orig_dense_list[seq_end:seq_len],
                                              hidden_st)
        auc_scores_prd, ap_scores_prd = get_roc_scores(pos_edges_l[seq_end:seq_len],
                                                       false_edges_l[seq_end:seq_len],
                                                       adj_orig_dense_list[seq_end:seq_len],
                                                       pri_means)

    print('epoch: ', k)
    print('kld_loss =', kld_loss.mean().item())
    print('nll_loss =', nll_loss.mean().item())
    print('loss =', loss.mean().item())
    if k > tst_after:
        print('prd_auc_mean', np.mean(np.array(auc_scores_prd)))
        print('prd_ap_mean', np.mean(np.array(ap_scores_prd)))
