# Reconstructed: a small object-discovery training loop around the package's SlotAttention.
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from slot_attention.slot_attention import SlotAttention


class SlotEncoder(nn.Module):
    def __init__(self, dim=64, num_slots=7):
        super().__init__()
        self.cnn = nn.Sequential(
            nn.Conv2d(3, dim, 5, padding=2), nn.ReLU(),
            nn.Conv2d(dim, dim, 5, padding=2), nn.ReLU(),
        )
        self.slot_attn = SlotAttention(num_slots=num_slots, dim=dim, iters=3)
        self.decoder = nn.Linear(dim, 3 * 16 * 16)

    def forward(self, images):
        features = self.cnn(images).flatten(2).transpose(1, 2)
        slots = self.slot_attn(features)
        recon = self.decoder(slots).view(images.size(0), -1, 3, 16, 16).sum(1)
        return recon


def main():
    device = torch.device('cuda')
    images = torch.rand(512, 3, 16, 16)
    loader = DataLoader(TensorDataset(images), batch_size=32, shuffle=True)

    model = SlotEncoder().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=4e-4)

    for epoch in range(10):
        model.train()
        for (batch,) in loader:
            batch = batch.to(device)
            optimizer.zero_grad()
            recon = model(batch)
            loss = nn.functional.mse_loss(recon, batch)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


if __name__ == '__main__':
    main()
