import torch
import torch.nn.functional as F


class Detect:
    """Decodes the SSD-style outputs into boxes and class scores (reduced)."""

    def __init__(self, num_classes, bkg_label, cfg):
        self.num_classes = num_classes
        self.background_label = bkg_label
        self.variance = cfg['variance']

    def forward(self, predictions, prior):
        loc, conf = predictions
        loc_data = loc.data
        prior_data = prior.data
        boxes = torch.cat((
            prior_data[:, :2] + loc_data[0, :, :2] * self.variance[0] * prior_data[:, 2:],
            prior_data[:, 2:] * torch.exp(loc_data[0, :, 2:] * self.variance[1])), 1)
        scores = F.softmax(conf[0], dim=-1)
        return boxes, scores


class PriorBox:
    def __init__(self, cfg):
        self.feature_maps = cfg['feature_maps']

    def forward(self):
        n = sum(f * f * 6 for f in self.feature_maps)
        return torch.rand(n, 4)
