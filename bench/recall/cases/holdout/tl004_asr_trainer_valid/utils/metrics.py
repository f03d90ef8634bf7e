import Levenshtein as Lev
import torch.nn.functional as F

from utils import constant


def calculate_metrics(pred, gold, input_lengths=None, target_lengths=None, smoothing=0.0, loss_type="ce"):
    pred = pred.reshape(-1, pred.size(2))
    gold = gold.contiguous().view(-1)
    loss = F.cross_entropy(pred, gold, ignore_index=constant.PAD_TOKEN, reduction="mean")
    pred = pred.max(1)[1]
    non_pad_mask = gold.ne(constant.PAD_TOKEN)
    num_correct = pred.eq(gold).masked_select(non_pad_mask).sum().item()
    return loss, num_correct


def calculate_cer(s1, s2):
    return Lev.distance(s1.replace(" ", ""), s2.replace(" ", ""))


def calculate_wer(s1, s2):
    b = set(s1.split() + s2.split())
    word2char = dict(zip(b, range(len(b))))
    w1 = [chr(word2char[w]) for w in s1.split()]
    w2 = [chr(word2char[w]) for w in s2.split()]
    return Lev.distance("".join(w1), "".join(w2))
