import torch
import torch.nn as nn
from torch.utils.data import DataLoader

from convlstm import ConvLSTM
from moving_mnist import MovingMNIST

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Forecaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.convlstm = ConvLSTM(input_dim=1, hidden_dim=[64, 64], kernel_size=(3, 3), num_layers=2,
                                 batch_first=True)
        self.head = nn.Conv2d(64, 1, kernel_size=1)

    def forward(self, frames):
        layer_outputs, _ = self.convlstm(frames)
        return torch.sigmoid(self.head(layer_outputs[0][:, -1]))


def main(epochs=20):
    model = Forecaster().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.BCELoss()
    loader = DataLoader(MovingMNIST(root="data", train=True), batch_size=16, shuffle=True, num_workers=4)
    for epoch in range(epochs):
        model.train()
        for frames, target in loader:
            frames, target = frames.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(frames), target)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
