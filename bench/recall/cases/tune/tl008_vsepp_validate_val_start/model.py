import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.nn as nn
import torch.nn.init
import torchvision.models as models
from torch.autograd import Variable
from torch.nn.utils.clip_grad import clip_grad_norm
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def l2norm(X):
    norm = torch.pow(X, 2).sum(dim=1, keepdim=True).sqrt()
    return torch.div(X, norm)


class EncoderImageFull(nn.Module):
    def __init__(self, embed_size, finetune=False, cnn_type="vgg19", no_imgnorm=False):
        super(EncoderImageFull, self).__init__()
        self.embed_size = embed_size
        self.no_imgnorm = no_imgnorm
        self.cnn = models.__dict__[cnn_type](pretrained=True)
        for param in self.cnn.parameters():
            param.requires_grad = finetune
        self.fc = nn.Linear(self.cnn.classifier._modules["6"].in_features, embed_size)
        self.cnn.classifier = nn.Sequential(*list(self.cnn.classifier.children())[:-1])

    def forward(self, images):
        features = self.cnn(images)
        features = l2norm(features)
        features = self.fc(features)
        if not self.no_imgnorm:
            features = l2norm(features)
        return features


class EncoderText(nn.Module):
    def __init__(self, vocab_size, word_dim, embed_size, num_layers):
        super(EncoderText, self).__init__()
        self.embed = nn.Embedding(vocab_size, word_dim)
        self.rnn = nn.GRU(word_dim, embed_size, num_layers, batch_first=True)

    def forward(self, x, lengths):
        x = self.embed(x)
        packed = pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.rnn(packed)
        padded = pad_packed_sequence(out, batch_first=True)
        I = torch.LongTensor(lengths).view(-1, 1, 1)
        I = Variable(I.expand(x.size(0), 1, self.embed_size) - 1).cuda()
        out = torch.gather(padded[0], 1, I).squeeze(1)
        return l2norm(out)


class ContrastiveLoss(nn.Module):
    def __init__(self, margin=0, max_violation=False):
        super(ContrastiveLoss, self).__init__()
        self.margin = margin
        self.max_violation = max_violation

    def forward(self, im, s):
        scores = im.mm(s.t())
        diagonal = scores.diag().view(im.size(0), 1)
        d1 = diagonal.expand_as(scores)
        d2 = diagonal.t().expand_as(scores)
        cost_s = (self.margin + scores - d1).clamp(min=0)
        cost_im = (self.margin + scores - d2).clamp(min=0)
        mask = torch.eye(scores.size(0)) > .5
        I = Variable(mask).cuda()
        cost_s = cost_s.masked_fill_(I, 0)
        cost_im = cost_im.masked_fill_(I, 0)
        if self.max_violation:
            cost_s = cost_s.max(1)[0]
            cost_im = cost_im.max(0)[0]
        return cost_s.sum() + cost_im.sum()


class VSE(object):
    """rkiros/uvs model"""

    def __init__(self, opt):
        self.grad_clip = opt.grad_clip
        self.img_enc = EncoderImageFull(opt.embed_size, opt.finetune, opt.cnn_type, opt.no_imgnorm)
        self.txt_enc = EncoderText(opt.vocab_size, opt.word_dim, opt.embed_size, opt.num_layers)
        if torch.cuda.is_available():
            self.img_enc.cuda()
            self.txt_enc.cuda()
            cudnn.benchmark = True
        self.criterion = ContrastiveLoss(margin=opt.margin, max_violation=opt.max_violation)
        params = list(self.txt_enc.parameters())
        params += list(self.img_enc.fc.parameters())
        if opt.finetune:
            params += list(self.img_enc.cnn.parameters())
        self.params = params
        self.optimizer = torch.optim.Adam(params, lr=opt.learning_rate)
        self.Eiters = 0

    def train_start(self):
        """switch to train mode"""
        self.img_enc.train()
        self.txt_enc.train()

    def val_start(self):
        """switch to evaluate mode"""
        self.img_enc.eval()
        self.txt_enc.eval()

    def forward_emb(self, images, captions, lengths, volatile=False):
        images = Variable(images, volatile=volatile)
        captions = Variable(captions, volatile=volatile)
        if torch.cuda.is_available():
            images = images.cuda()
            captions = captions.cuda()
        img_emb = self.img_enc(images)
        cap_emb = self.txt_enc(captions, lengths)
        return img_emb, cap_emb

    def forward_loss(self, img_emb, cap_emb, **kwargs):
        loss = self.criterion(img_emb, cap_emb)
        self.logger.update("Le", loss.data[0], img_emb.size(0))
        return loss

    def train_emb(self, images, captions, lengths, ids=None, *args):
        """One training step given images and captions."""
        self.Eiters += 1
        self.logger.update("Eit", self.Eiters)
        self.logger.update("lr", self.optimizer.param_groups[0]["lr"])

        img_emb, cap_emb = self.forward_emb(images, captions, lengths)

        self.optimizer.zero_grad()
        loss = self.forward_loss(img_emb, cap_emb)

        loss.backward()
        if self.grad_clip > 0:
            clip_grad_norm(self.params, self.grad_clip)
        self.optimizer.step()
