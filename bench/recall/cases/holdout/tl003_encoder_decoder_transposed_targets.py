import numpy as np
import torch
import torch.nn as nn
import torch.optim as optimizers
from sklearn.utils import shuffle

from layers.torch import Encoder, Decoder
from utils.datasets.small_parallel_enja import load_small_parallel_enja
from utils.preprocessing.sequence import pad_sequences, sort


class EncoderDecoder(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, maxlen=20, device='cpu'):
        super().__init__()
        self.device = device
        self.encoder = Encoder(input_dim, hidden_dim, device=device)
        self.decoder = Decoder(hidden_dim, output_dim, device=device)
        self.maxlen = maxlen
        self.output_dim = output_dim

    def forward(self, source, target=None, use_teacher_forcing=False):
        batch_size = source.size(1)
        len_target_sequences = target.size(0) if target is not None else self.maxlen
        _, states = self.encoder(source)
        y = torch.ones((1, batch_size), dtype=torch.long, device=self.device)
        output = torch.zeros((len_target_sequences, batch_size, self.output_dim), device=self.device)
        for t in range(len_target_sequences):
            out, states = self.decoder(y, states)
            output[t] = out
            y = target[t].unsqueeze(0) if use_teacher_forcing and target is not None else out.max(-1)[1]
        return output


if __name__ == '__main__':
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    (x_train, y_train), (x_test, y_test), (num_x_vocab, num_y_vocab) = load_small_parallel_enja(to_ja=True)
    model = EncoderDecoder(num_x_vocab, 128, num_y_vocab, device=device).to(device)
    criterion = nn.CrossEntropyLoss(reduction='mean', ignore_index=0)
    optimizer = optimizers.Adam(model.parameters(), lr=0.001, betas=(0.9, 0.999), amsgrad=True)

    def compute_loss(label, pred):
        return criterion(pred, label)

    def train_step(x, t, teacher_forcing_rate=0.5):
        use_teacher_forcing = (np.random.rand() < teacher_forcing_rate)
        model.train()
        preds = model(x, t, use_teacher_forcing=use_teacher_forcing)
        loss = compute_loss(t.view(-1), preds.view(-1, preds.size(-1)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss, preds

    epochs = 30
    batch_size = 100
    n_batches = len(x_train) // batch_size
    for epoch in range(epochs):
        train_loss = 0.
        x_train, y_train = shuffle(x_train, y_train)
        for batch in range(n_batches):
            start = batch * batch_size
            end = start + batch_size
            x_train_batch, y_train_batch = sort(x_train[start:end], y_train[start:end])
            x_train_batch = pad_sequences(x_train_batch, padding='post')
            y_train_batch = pad_sequences(y_train_batch, padding='post', value=0)
            x_train_batch = torch.LongTensor(x_train_batch).t()
            y_train_batch = torch.LongTensor(y_train_batch).t()
            x_train_batch = x_train_batch.to(device)
            y_train_batch = y_train_batch.to(device)
            loss, _ = train_step(x_train_batch, y_train_batch)
            train_loss += loss.item()
        print('epoch: {}, loss: {:.3}'.format(epoch + 1, train_loss / n_batches))
