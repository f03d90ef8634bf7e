# Reconstructed after the repository's examples/sample.py (argument parsing, checkpoint
# loading and the interactive predictor trimmed): an attention seq2seq with dropout.
import torch
import torchtext

import seq2seq
from seq2seq.trainer import SupervisedTrainer
from seq2seq.models import EncoderRNN, DecoderRNN, Seq2seq
from seq2seq.loss import Perplexity
from seq2seq.dataset import SourceField, TargetField

src = SourceField()
tgt = TargetField()
max_len = 50


def len_filter(example):
    return len(example.src) <= max_len and len(example.tgt) <= max_len


train = torchtext.data.TabularDataset(
    path='data/toy_reverse/train/data.txt', format='tsv',
    fields=[('src', src), ('tgt', tgt)], filter_pred=len_filter)
dev = torchtext.data.TabularDataset(
    path='data/toy_reverse/dev/data.txt', format='tsv',
    fields=[('src', src), ('tgt', tgt)], filter_pred=len_filter)
src.build_vocab(train, max_size=50000)
tgt.build_vocab(train, max_size=50000)

weight = torch.ones(len(tgt.vocab))
pad = tgt.vocab.stoi[tgt.pad_token]
loss = Perplexity(weight, pad)
if torch.cuda.is_available():
    loss.cuda()

hidden_size = 128
encoder = EncoderRNN(len(src.vocab), max_len, hidden_size, input_dropout_p=0.25, dropout_p=0.25,
                     bidirectional=True, variable_lengths=True)
decoder = DecoderRNN(len(tgt.vocab), max_len, hidden_size * 2, dropout_p=0.25, use_attention=True,
                     bidirectional=True, eos_id=tgt.eos_id, sos_id=tgt.sos_id)
seq2seq_model = Seq2seq(encoder, decoder)
if torch.cuda.is_available():
    seq2seq_model.cuda()

for param in seq2seq_model.parameters():
    param.data.uniform_(-0.08, 0.08)

t = SupervisedTrainer(loss=loss, batch_size=32, print_every=50, expt_dir='./experiment')
seq2seq_model = t.train(seq2seq_model, train, num_epochs=6, dev_data=dev, teacher_forcing_ratio=0.5)
