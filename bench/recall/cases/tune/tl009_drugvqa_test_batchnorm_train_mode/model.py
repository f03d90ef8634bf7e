import torch
import torch.nn as nn
import torch.nn.functional as F


def conv3x3(in_channels, out_channels, stride=1):
    return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1, bias=False)


class ResidualBlock(nn.Module):
    def __init__(self, in_channels, out_channels, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(in_channels, out_channels, stride)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.elu = nn.ELU(inplace=True)
        self.conv2 = conv3x3(out_channels, out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.downsample = downsample

    def forward(self, x):
        residual = x
        out = self.elu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample:
            residual = self.downsample(x)
        return self.elu(out + residual)


class DrugVQA(nn.Module):
    def __init__(self, args, block):
        super().__init__()
        self.batch_size = args['batch_size']
        self.lstm_hid_dim = args['lstm_hid_dim']
        self.r = args['r']
        self.type = args['task_type']
        self.in_channels = args['in_channels']
        self.embeddings = nn.Embedding(args['n_chars_smi'], args['emb_dim'])
        self.lstm = nn.LSTM(args['emb_dim'], self.lstm_hid_dim, 2, batch_first=True, bidirectional=True,
                            dropout=args['dropout'])
        self.linear_first = nn.Linear(2 * self.lstm_hid_dim, args['d_a'])
        self.linear_second = nn.Linear(args['d_a'], args['r'])
        self.conv = conv3x3(1, self.in_channels)
        self.bn = nn.BatchNorm2d(self.in_channels)
        self.elu = nn.ELU(inplace=False)
        self.layer1 = self.make_layer(block, args['cnn_channels'], args['cnn_layers'])
        self.linear_final = nn.Linear(2 * self.lstm_hid_dim + args['cnn_channels'], 1)
        self.hidden_state = self.init_hidden()

    def make_layer(self, block, out_channels, blocks, stride=1):
        downsample = None
        if (stride != 1) or (self.in_channels != out_channels):
            downsample = nn.Sequential(conv3x3(self.in_channels, out_channels, stride=stride),
                                       nn.BatchNorm2d(out_channels))
        layers = [block(self.in_channels, out_channels, stride, downsample)]
        self.in_channels = out_channels
        for i in range(1, blocks):
            layers.append(block(out_channels, out_channels))
        return nn.Sequential(*layers)

    def init_hidden(self):
        return (torch.zeros(4, self.batch_size, self.lstm_hid_dim).cuda(),
                torch.zeros(4, self.batch_size, self.lstm_hid_dim).cuda())

    def l2_matrix_norm(self, m):
        return torch.sum(torch.sum(torch.sum(m ** 2, 1), 1) ** 0.5).type(torch.DoubleTensor)

    def forward(self, x1, x2):
        smile_embed = self.embeddings(x1)
        outputs, self.hidden_state = self.lstm(smile_embed, self.hidden_state)
        sentence_att = F.softmax(self.linear_second(torch.tanh(self.linear_first(outputs))), 2)
        sentence_att = sentence_att.transpose(1, 2)
        sentence_embed = (sentence_att @ outputs).mean(1)
        pic = self.elu(self.bn(self.conv(x2)))
        pic = self.layer1(pic)
        pic_emb = torch.mean(pic, (2, 3))
        sscomplex = torch.cat([sentence_embed, pic_emb], dim=1)
        return torch.sigmoid(self.linear_final(sscomplex)), sentence_att
