import torch
import torch.nn as nn

from torch_struct import LinearChainCRF


class CRFTagger(nn.Module):
    """BiLSTM-CRF tagger whose loss is the CRF's log-partition minus the gold path score."""

    def __init__(self, vocab_size, num_tags, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.lstm = nn.LSTM(hidden, hidden // 2, bidirectional=True, batch_first=True)
        self.emit = nn.Linear(hidden, num_tags)
        self.transition = nn.Parameter(torch.zeros(num_tags, num_tags))

    def forward(self, words, lengths):
        h, _ = self.lstm(self.embed(words))
        emissions = self.emit(h)
        log_potentials = emissions[:, 1:].unsqueeze(-1) + self.transition.unsqueeze(0).unsqueeze(0)
        log_potentials[:, 0] += emissions[:, 0].unsqueeze(-2)
        dist = LinearChainCRF(log_potentials, lengths=lengths)
        return dist.partition


def main():
    device = torch.device("cuda")
    model = CRFTagger(vocab_size=5000, num_tags=9).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(100):
        words = torch.randint(0, 5000, (32, 20), device=device)
        lengths = torch.full((32,), 20, device=device)
        log_z = model(words, lengths)
        loss = log_z.mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
