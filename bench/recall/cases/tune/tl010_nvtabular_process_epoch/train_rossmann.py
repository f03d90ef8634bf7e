import torch

from model import Model
from utils import process_epoch
from loader import get_loaders

train_loader, valid_loader = get_loaders("./data", batch_size=65536)
model = Model(embedding_table_shapes={"Store": (1116, 16)}, num_continuous=16,
              emb_dropout=0.04, layer_hidden_dims=[1000, 500], layer_dropout_rates=[0.001, 0.01]).to("cuda")
optimizer = torch.optim.Adam(model.parameters(), lr=0.001)

for epoch in range(25):
    train_loss, y_pred, y = process_epoch(train_loader, model, train=True, optimizer=optimizer,
                                          amp=True, device="cuda")
    valid_loss, y_pred, y = process_epoch(valid_loader, model, train=False, device="cuda")
    print(f"Epoch {epoch:02d}. Train loss: {train_loss:.4f}. Valid loss: {valid_loss:.4f}.")
