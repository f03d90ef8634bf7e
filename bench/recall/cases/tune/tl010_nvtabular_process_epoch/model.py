import torch


class Model(torch.nn.Module):
    def __init__(self, embedding_table_shapes, num_continuous, emb_dropout, layer_hidden_dims,
                 layer_dropout_rates):
        super().__init__()
        self.embeddings = torch.nn.ModuleList(
            [torch.nn.Embedding(n, d) for n, d in embedding_table_shapes.values()])
        emb_dim = sum(d for _, d in embedding_table_shapes.values())
        self.emb_drop = torch.nn.Dropout(emb_dropout)
        dims = [emb_dim + num_continuous] + layer_hidden_dims
        layers = []
        for d_in, d_out, p in zip(dims[:-1], dims[1:], layer_dropout_rates):
            layers += [torch.nn.Linear(d_in, d_out), torch.nn.ReLU(), torch.nn.Dropout(p)]
        self.layers = torch.nn.Sequential(*layers)
        self.out = torch.nn.Linear(dims[-1], 1)

    def forward(self, x_cat, x_cont):
        emb = torch.cat([e(x_cat[:, i]) for i, e in enumerate(self.embeddings)], dim=1)
        x = torch.cat([self.emb_drop(emb), x_cont], dim=1)
        return self.out(self.layers(x)).squeeze(-1)
