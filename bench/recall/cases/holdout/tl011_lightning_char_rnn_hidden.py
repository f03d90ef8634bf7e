import string

import pytorch_lightning as pl
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

all_letters = string.ascii_letters + " .,;'-"
n_letters = len(all_letters) + 1  # Plus EOS marker


class NamesDataset(Dataset):
    """(category one-hot, input letters, target letters) per name (reconstructed)."""

    def __init__(self, names_by_category):
        self.categories = sorted(names_by_category)
        self.samples = [(c, name) for c in self.categories for name in names_by_category[c]]

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, idx):
        category, name = self.samples[idx]
        category_tensor = torch.zeros(len(self.categories))
        category_tensor[self.categories.index(category)] = 1
        letters = torch.tensor([all_letters.find(ch) for ch in name])
        targets = torch.cat([letters[1:], torch.tensor([n_letters - 1])])
        return category_tensor, letters, targets


class RNN(pl.LightningModule):
    lr = 0.0005

    def __init__(self, input_size, hidden_size, embeding_size, n_categories, n_layers, output_size, p):
        super().__init__()

        self.criterion = nn.CrossEntropyLoss()

        self.n_layers = n_layers
        self.hidden_size = hidden_size

        self.embeding = nn.Embedding(input_size + n_categories, embeding_size)
        self.lstm = nn.LSTM(embeding_size + n_categories, hidden_size, n_layers, dropout=p)
        self.out_fc = nn.Linear(hidden_size, output_size)

        self.dropout = nn.Dropout(p)

    def forward(self, batch_of_category, batch_of_letter, hidden, cell):
        ## letter level operations

        embeding = self.dropout(self.embeding(batch_of_letter))
        category_plus_letter = torch.cat((batch_of_category, embeding), 1)

        #sequence_length = 1
        category_plus_letter = category_plus_letter.unsqueeze(1)

        out, (hidden, cell) = self.lstm(category_plus_letter, (hidden, cell))
        out = self.out_fc(out)
        out = out.squeeze(1)

        return out, (hidden, cell)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
        return [optimizer], [scheduler]

    def training_step(self, batch, batch_idx):
        item_dict = batch
        loss = 0
        batch_of_category = item_dict["category_tensors"]

        # we loop over letters, single batch at the time

        hidden = torch.zeros(self.n_layers, 1, self.hidden_size)
        cell = torch.zeros(self.n_layers, 1, self.hidden_size)

        for t in range(len(item_dict["input_tensors"])):
            batch_of_letter = item_dict["input_tensors"][t]

            prediction, (hidden, cell) = self(batch_of_category, batch_of_letter, hidden, cell)

            loss += self.criterion(prediction, item_dict["target_tensors"][t])

        loss = loss / (t + 1)

        self.log('train_loss', loss)
        return loss


def collate(samples):
    category, letters, targets = samples[0]
    return {"category_tensors": category.unsqueeze(0),
            "input_tensors": [letter.unsqueeze(0) for letter in letters],
            "target_tensors": [target.unsqueeze(0) for target in targets]}


if __name__ == "__main__":
    names = {"English": ["Abbott", "Adams"], "French": ["Abel", "Abraham"]}
    dataset = NamesDataset(names)
    loader = DataLoader(dataset, batch_size=1, shuffle=True, collate_fn=collate)
    model = RNN(input_size=n_letters, hidden_size=128, embeding_size=64, n_categories=len(names),
                n_layers=2, output_size=n_letters, p=0.1)
    trainer = pl.Trainer(gpus=1, max_epochs=10)
    trainer.fit(model, loader)
