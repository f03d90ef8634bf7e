import pandas as pd
import torch
import torch.nn as nn

import tez


class TabularDataset:
    def __init__(self, features, targets):
        self.features = features
        self.targets = targets

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, item):
        return {
            "x": torch.tensor(self.features[item], dtype=torch.float),
            "targets": torch.tensor(self.targets[item], dtype=torch.float),
        }


class TabularModel(tez.Model):
    def __init__(self, num_features):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_features, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 1))

    def fetch_optimizer(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x, targets=None):
        out = self.net(x).squeeze(-1)
        if targets is not None:
            loss = nn.MSELoss()(out, targets)
            return out, loss, {}
        return out, 0, {}


if __name__ == "__main__":
    df = pd.read_csv("train.csv")
    features = df.drop("target", axis=1).values
    targets = df.target.values
    train_dataset = TabularDataset(features[:-1000], targets[:-1000])
    valid_dataset = TabularDataset(features[-1000:], targets[-1000:])
    model = TabularModel(num_features=features.shape[1])
    model.fit(train_dataset, valid_dataset, device="cuda", epochs=20, train_bs=128, accumulation_steps=1)
