import time

import torch
import torch.nn as nn
from torch.autograd import Variable


class CBR(nn.Module):
    def __init__(self, nIn, nOut, kSize, stride=1):
        super().__init__()
        padding = int((kSize - 1) / 2)
        self.conv = nn.Conv2d(nIn, nOut, (kSize, kSize), stride=stride, padding=(padding, padding), bias=False)
        self.bn = nn.BatchNorm2d(nOut, eps=1e-03)
        self.act = nn.PReLU(nOut)

    def forward(self, input):
        return self.act(self.bn(self.conv(input)))


class ESPNet_Encoder(nn.Module):
    def __init__(self, classes=20):
        super().__init__()
        self.level1 = CBR(3, 16, 3, 2)
        self.level2 = CBR(16, 64, 3, 2)
        self.level3 = CBR(64, 128, 3, 2)
        self.classifier = nn.Conv2d(128, classes, 1)

    def forward(self, input):
        return self.classifier(self.level3(self.level2(self.level1(input))))


model = ESPNet_Encoder(classes=20).cuda(0)
model.eval()
for idx in range(300):
    input = Variable(torch.rand([3, 512, 1024]).unsqueeze(0), requires_grad=False).cuda(0)
    start_time = time.time()
    out = model(input)
    torch.cuda.synchronize()
    time_taken = time.time() - start_time
    print("Run-Time: %.4f s" % time_taken)
