"""
This file is for models creation, which consults options
and creates each encoder and decoder accordingly.
"""
import torch
import torch.nn as nn


class RNNEncoder(nn.Module):
    def __init__(self, vocab_size, emb_size, hidden_size, num_layers, dropout):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTM(emb_size, hidden_size, num_layers, dropout=dropout)

    def forward(self, src, lengths=None):
        emb = self.embeddings(src.squeeze(-1))
        memory_bank, encoder_final = self.rnn(emb)
        return encoder_final, memory_bank, lengths


class InputFeedRNNDecoder(nn.Module):
    def __init__(self, vocab_size, emb_size, hidden_size, num_layers, dropout):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTM(emb_size, hidden_size, num_layers, dropout=dropout)
        self.dropout = nn.Dropout(dropout)
        self.state = None

    def init_state(self, encoder_final):
        self.state = encoder_final

    def detach_state(self):
        self.state = tuple(s.detach() for s in self.state)

    def forward(self, tgt, memory_bank, memory_lengths=None):
        emb = self.embeddings(tgt.squeeze(-1))
        dec_outs, self.state = self.rnn(emb, self.state)
        return self.dropout(dec_outs), {"std": dec_outs}


class NMTModel(nn.Module):
    def __init__(self, encoder, decoder):
        super(NMTModel, self).__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, tgt, lengths, bptt=False):
        tgt = tgt[:-1]  # exclude last target from inputs
        enc_state, memory_bank, lengths = self.encoder(src, lengths)
        if bptt is False:
            self.decoder.init_state(enc_state)
        dec_out, attns = self.decoder(tgt, memory_bank, memory_lengths=lengths)
        return dec_out, attns


def build_model(model_opt, opt, fields, checkpoint):
    src_vocab = len(fields["src"].vocab)
    tgt_vocab = len(fields["tgt"].vocab)
    encoder = RNNEncoder(src_vocab, model_opt.src_word_vec_size, model_opt.enc_rnn_size,
                         model_opt.enc_layers, model_opt.dropout)
    decoder = InputFeedRNNDecoder(tgt_vocab, model_opt.tgt_word_vec_size, model_opt.dec_rnn_size,
                                  model_opt.dec_layers, model_opt.dropout)
    model = NMTModel(encoder, decoder)
    model.generator = nn.Sequential(nn.Linear(model_opt.dec_rnn_size, tgt_vocab), nn.LogSoftmax(dim=-1))
    device = torch.device("cuda" if opt.gpu_ranks else "cpu")
    model.to(device)
    return model
