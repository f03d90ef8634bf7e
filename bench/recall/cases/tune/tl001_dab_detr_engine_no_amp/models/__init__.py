import torch
from torch import nn


class DABDETR(nn.Module):
    """Stand-in for the DAB-DETR detector: a backbone, a transformer and two heads."""

    def __init__(self, num_classes=91, num_queries=300, hidden_dim=256):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, hidden_dim, 7, stride=16, padding=3), nn.ReLU())
        self.transformer = nn.Transformer(hidden_dim, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                                          dropout=0.1, batch_first=True)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.bbox_embed = nn.Linear(hidden_dim, 4)

    def forward(self, samples, targets=None):
        src = self.backbone(samples).flatten(2).transpose(1, 2)
        tgt = self.query_embed.weight.unsqueeze(0).repeat(src.shape[0], 1, 1)
        hs = self.transformer(src, tgt)
        return {'pred_logits': self.class_embed(hs), 'pred_boxes': self.bbox_embed(hs).sigmoid()}


class SetCriterion(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight_dict = {'loss_ce': 1.0, 'loss_bbox': 5.0}

    def forward(self, outputs, targets):
        logits = outputs['pred_logits']
        loss_ce = logits.logsumexp(-1).mean()
        loss_bbox = outputs['pred_boxes'].abs().mean()
        return {'loss_ce': loss_ce, 'loss_bbox': loss_bbox}


class PostProcess(nn.Module):
    @torch.no_grad()
    def forward(self, outputs, target_sizes):
        scores, labels = outputs['pred_logits'].softmax(-1)[..., :-1].max(-1)
        return [{'scores': s, 'labels': l, 'boxes': b}
                for s, l, b in zip(scores, labels, outputs['pred_boxes'])]


def build_dab_detr(args):
    return DABDETR(), SetCriterion(), {'bbox': PostProcess()}
