"""Bug: `forward` makes the LSTM's initial state without `device=`, on the CPU."""
import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 32)
        self.lstm = nn.LSTM(32, 64, batch_first=True)
        self.head = nn.Linear(64, 10)

    def forward(self, tokens):
        h0 = torch.zeros(1, tokens.size(0), 64)
        c0 = torch.zeros(1, tokens.size(0), 64)
        out, _ = self.lstm(self.embed(tokens), (h0, c0))  # line: bug
        return self.head(out)


model = Tagger().cuda()
optimizer = torch.optim.Adam(model.parameters())
for step in range(3):
    tokens = torch.randint(0, 100, (4, 12), device="cuda")
    loss = model(tokens).logsumexp(-1).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
