import torch
import torch.nn as nn
import torch.nn.functional as F

from image_encoder import ImageEncoderViT
from mask_decoder import MaskDecoder


class SAM(nn.Module):
    def __init__(self, inp_size=1024, encoder_mode=None, loss='iou', device='cuda'):
        super().__init__()
        self.device = torch.device(device)
        self.image_encoder = ImageEncoderViT(img_size=inp_size, **encoder_mode)
        self.mask_decoder = MaskDecoder(transformer_dim=256)
        self.criterionBCE = nn.BCEWithLogitsLoss()
        self.optimizer = None

    def set_input(self, input, gt_mask):
        self.input = input.to(self.device)
        self.gt_mask = gt_mask.to(self.device)

    def forward(self):
        self.features = self.image_encoder(self.input)
        low_res_masks = self.mask_decoder(self.features)
        self.pred_mask = F.interpolate(low_res_masks, self.input.shape[-2:], mode="bilinear")

    def infer(self, input):
        features = self.image_encoder(input)
        low_res_masks = self.mask_decoder(features)
        return F.interpolate(low_res_masks, input.shape[-2:], mode="bilinear")

    def backward_G(self):
        self.loss_G = self.criterionBCE(self.pred_mask, self.gt_mask)
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer.zero_grad()
        self.backward_G()
        self.optimizer.step()
