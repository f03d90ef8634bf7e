import time
import torch.backends.cudnn as cudnn
import torch.optim
import torch.utils.data
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence
from models import Encoder, DecoderWithAttention
from datasets import CaptionDataset
from utils import AverageMeter, accuracy, clip_gradient
from nltk.translate.bleu_score import corpus_bleu

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
cudnn.benchmark = True

epochs = 120
batch_size = 32
decoder_lr = 4e-4
encoder_lr = 1e-4
grad_clip = 5.
alpha_c = 1.
print_freq = 100
word_map = {'<start>': 1, '<end>': 2, '<pad>': 0}


def main(data_folder, data_name):
    decoder = DecoderWithAttention(attention_dim=512, embed_dim=512, decoder_dim=512,
                                   vocab_size=len(word_map), dropout=0.5)
    decoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, decoder.parameters()),
                                         lr=decoder_lr)
    encoder = Encoder()
    encoder.fine_tune(True)
    encoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, encoder.parameters()),
                                         lr=encoder_lr)
    decoder = decoder.to(device)
    encoder = encoder.to(device)
    criterion = nn.CrossEntropyLoss().to(device)

    train_loader = torch.utils.data.DataLoader(CaptionDataset(data_folder, data_name, 'TRAIN'),
                                               batch_size=batch_size, shuffle=True, pin_memory=True)
    val_loader = torch.utils.data.DataLoader(CaptionDataset(data_folder, data_name, 'VAL'),
                                             batch_size=batch_size, shuffle=True, pin_memory=True)

    best_bleu4 = 0.
    for epoch in range(epochs):
        train(train_loader, encoder, decoder, criterion, encoder_optimizer, decoder_optimizer, epoch)
        recent_bleu4 = validate(val_loader, encoder, decoder, criterion)
        best_bleu4 = max(recent_bleu4, best_bleu4)


def train(train_loader, encoder, decoder, criterion, encoder_optimizer, decoder_optimizer, epoch):
    decoder.train()  # train mode (dropout and batchnorm is used)
    encoder.train()
    losses = AverageMeter()
    for i, (imgs, caps, caplens) in enumerate(train_loader):
        imgs = imgs.to(device)
        caps = caps.to(device)
        caplens = caplens.to(device)

        imgs = encoder(imgs)
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)
        targets = caps_sorted[:, 1:]
        scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        targets, _ = pack_padded_sequence(targets, decode_lengths, batch_first=True)

        loss = criterion(scores, targets)
        loss += alpha_c * ((1. - alphas.sum(dim=1)) ** 2).mean()

        decoder_optimizer.zero_grad()
        if encoder_optimizer is not None:
            encoder_optimizer.zero_grad()
        loss.backward()

        if grad_clip is not None:
            clip_gradient(decoder_optimizer, grad_clip)
            if encoder_optimizer is not None:
                clip_gradient(encoder_optimizer, grad_clip)

        decoder_optimizer.step()
        if encoder_optimizer is not None:
            encoder_optimizer.step()

        losses.update(loss.item(), sum(decode_lengths))
        if i % print_freq == 0:
            print('Epoch: [{0}][{1}/{2}]\tLoss {loss.val:.4f} ({loss.avg:.4f})'.format(
                epoch, i, len(train_loader), loss=losses))


def validate(val_loader, encoder, decoder, criterion):
    decoder.eval()  # eval mode (no dropout or batchnorm)
    if encoder is not None:
        encoder.eval()

    losses = AverageMeter()
    top5accs = AverageMeter()
    references = list()
    hypotheses = list()

    for i, (imgs, caps, caplens, allcaps) in enumerate(val_loader):
        imgs = imgs.to(device)
        caps = caps.to(device)
        caplens = caplens.to(device)

        # Forward prop.
        if encoder is not None:
            imgs = encoder(imgs)
        scores, caps_sorted, decode_lengths, alphas, sort_ind = decoder(imgs, caps, caplens)

        targets = caps_sorted[:, 1:]
        scores_copy = scores.clone()
        scores, _ = pack_padded_sequence(scores, decode_lengths, batch_first=True)
        targets, _ = pack_padded_sequence(targets, decode_lengths, batch_first=True)

        loss = criterion(scores, targets)
        loss += alpha_c * ((1. - alphas.sum(dim=1)) ** 2).mean()

        losses.update(loss.item(), sum(decode_lengths))
        top5accs.update(accuracy(scores, targets, 5), sum(decode_lengths))

        allcaps = allcaps[sort_ind]
        for j in range(allcaps.shape[0]):
            img_caps = allcaps[j].tolist()
            references.append([[w for w in c if w not in {word_map['<start>'], word_map['<pad>']}]
                               for c in img_caps])

        _, preds = torch.max(scores_copy, dim=2)
        preds = preds.tolist()
        hypotheses.extend([p[:decode_lengths[j]] for j, p in enumerate(preds)])

    bleu4 = corpus_bleu(references, hypotheses)
    print('\n * LOSS - {loss.avg:.3f}, TOP-5 ACCURACY - {top5.avg:.3f}, BLEU-4 - {bleu}\n'.format(
        loss=losses, top5=top5accs, bleu=bleu4))
    return bleu4


if __name__ == '__main__':
    main('/media/ssd/caption data', 'coco_5_cap_per_img_5_min_word_freq')
