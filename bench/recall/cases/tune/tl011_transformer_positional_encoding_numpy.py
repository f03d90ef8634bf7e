import numpy as np
import torch
from torch import nn


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class PositionalEncoding(nn.Module):
    def __init__(self, embedding_dimension, max_sequence_length):
        super().__init__()
        self.embedding_dimension = embedding_dimension
        self.max_sequence_length = max_sequence_length

    def forward(self, x):
        positional_encoding = np.zeros((self.max_sequence_length, self.embedding_dimension))
        for pos in range(self.max_sequence_length):
            for i in range(0, self.embedding_dimension, 2):
                positional_encoding[pos, i] = np.sin(pos / (10000 ** ((2 * i) / self.embedding_dimension)))
                positional_encoding[pos, i + 1] = np.cos(pos / (10000 ** ((2 * (i + 1)) / self.embedding_dimension)))
        return x + torch.from_numpy(positional_encoding).float()[: x.size(1)]


class LanguageModel(nn.Module):
    def __init__(self, number_of_tokens, max_sequence_length=512, embedding_dimension=512, number_of_layers=6):
        super().__init__()
        self.token_embedding = nn.Embedding(number_of_tokens, embedding_dimension)
        self.positional_encoding = PositionalEncoding(embedding_dimension, max_sequence_length)
        layer = nn.TransformerEncoderLayer(embedding_dimension, 8, batch_first=True)
        self.decoder = nn.TransformerEncoder(layer, number_of_layers)
        self.lm_head = nn.Linear(embedding_dimension, number_of_tokens)

    def forward(self, x):
        h = self.positional_encoding(self.token_embedding(x))
        return self.lm_head(self.decoder(h))


def train(model, data, epochs=100, batch_size=16):
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0001)
    loss_function = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        for i in range(0, len(data), batch_size):
            batch = torch.tensor(data[i:i + batch_size], device=get_device())
            logits = model(batch[:, :-1])
            loss = loss_function(logits.reshape(-1, logits.size(-1)), batch[:, 1:].reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    model = LanguageModel(number_of_tokens=1000).to(get_device())
    train(model, [[1] * 33] * 64)
