import torch
import torch.nn as nn

from torchnlp.nn import Attention


class Encoder(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.rnn = nn.LSTM(hidden_size, hidden_size)

    def forward(self, source):
        # source: (src_len, batch)
        outputs, hidden = self.rnn(self.embedding(source))
        return outputs, hidden


class AttentionDecoder(nn.Module):
    def __init__(self, vocab_size, hidden_size):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, hidden_size)
        self.rnn = nn.LSTM(hidden_size, hidden_size)
        self.attention = Attention(hidden_size)
        self.out = nn.Linear(hidden_size, vocab_size)

    def forward(self, target, hidden, encoder_outputs):
        # target: (tgt_len, batch); encoder_outputs: (src_len, batch, hidden)
        output, hidden = self.rnn(self.embedding(target), hidden)
        context = encoder_outputs.transpose(0, 1)
        # the attention module takes batch-first queries and contexts
        output, weights = self.attention(output.transpose(0, 1), context)
        return self.out(output), hidden, weights


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, hidden_size=256):
        super().__init__()
        self.encoder = Encoder(src_vocab, hidden_size)
        self.decoder = AttentionDecoder(tgt_vocab, hidden_size)

    def forward(self, source, target):
        encoder_outputs, hidden = self.encoder(source)
        logits, _, _ = self.decoder(target, hidden, encoder_outputs)
        return logits
