import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader

from dataset import FolderDataset
from model import ConvDecoder, ConvEncoder


def train_step(encoder, decoder, train_loader, loss_fn, optimizer, device):
    device = "cuda"
    encoder.train()
    decoder.train()

    print(device)

    for batch_idx, (train_img, target_img) in enumerate(train_loader):
        train_img = train_img.to(device)
        target_img = target_img.to(device)

        optimizer.zero_grad()

        enc_output = encoder(train_img)
        dec_output = decoder(enc_output)

        loss = loss_fn(dec_output, target_img)
        loss.backward()

        optimizer.step()

    return loss.item()


if __name__ == "__main__":
    if torch.cuda.is_available():
        device = "cuda"
    else:
        device = "cpu"
    encoder = ConvEncoder()
    decoder = ConvDecoder()
    encoder.to(device)
    decoder.to(device)
    loss_fn = nn.MSELoss()
    autoencoder_params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = optim.Adam(autoencoder_params, lr=1e-3)
    train_loader = DataLoader(FolderDataset("./images"), batch_size=32, shuffle=True, num_workers=4)
    for epoch in range(20):
        train_loss = train_step(encoder, decoder, train_loader, loss_fn, optimizer, device)
        print(f"Epochs = {epoch}, Training Loss : {train_loss}")
