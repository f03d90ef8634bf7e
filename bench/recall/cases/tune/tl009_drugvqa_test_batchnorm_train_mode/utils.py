import numpy as np
import torch
from torch.autograd import Variable

smiles_letters = [c for c in "#%()+-./0123456789=@ABCDEFGHIKLMNOPRSTVXYZ[\\]abcdefgilmnoprstuy"]


def create_variable(tensor):
    return Variable(tensor.cuda())


def letter_to_index(letter, letters):
    return letters.index(letter) if letter in letters else 0


def make_variables(lines, properties, letters):
    sequence_and_length = [[letter_to_index(c, letters) for c in line] for line in lines]
    seq_lengths = torch.LongTensor([len(s) for s in sequence_and_length])
    seq_tensor = torch.zeros((len(sequence_and_length), seq_lengths.max())).long()
    for idx, (seq, seq_len) in enumerate(zip(sequence_and_length, seq_lengths)):
        seq_tensor[idx, :seq_len] = torch.LongTensor(seq)
    target = torch.from_numpy(np.array(properties).astype(np.float64))
    return create_variable(seq_tensor), create_variable(seq_lengths), create_variable(target)
