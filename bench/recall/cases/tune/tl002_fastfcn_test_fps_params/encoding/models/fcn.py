import torch.nn as nn
import torch.nn.functional as F
import torchvision


class FCNHead(nn.Module):
    def __init__(self, in_channels, out_channels, norm_layer):
        super().__init__()
        inter_channels = in_channels // 4
        self.conv5 = nn.Sequential(nn.Conv2d(in_channels, inter_channels, 3, padding=1, bias=False),
                                   norm_layer(inter_channels), nn.ReLU(), nn.Dropout2d(0.1, False),
                                   nn.Conv2d(inter_channels, out_channels, 1))

    def forward(self, x):
        return self.conv5(x)


class FCN(nn.Module):
    def __init__(self, nclass=150, backbone='resnet50', norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        resnet = getattr(torchvision.models, backbone)()
        self.pretrained = nn.Sequential(resnet.conv1, resnet.bn1, resnet.relu, resnet.maxpool,
                                        resnet.layer1, resnet.layer2, resnet.layer3, resnet.layer4)
        self.head = FCNHead(2048, nclass, norm_layer)

    def forward(self, x):
        imsize = x.size()[2:]
        c4 = self.pretrained(x)
        x = self.head(c4)
        return F.interpolate(x, imsize, mode='bilinear', align_corners=True)
