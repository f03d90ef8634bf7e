import json
import os

import torch
from asteroid.masknn import TDConvNet
from asteroid.models import BaseEncoderMaskerDecoder
from asteroid_filterbanks import make_enc_dec


class TasNet(BaseEncoderMaskerDecoder):
    def __init__(self, fb_conf, mask_conf):
        encoder, decoder = make_enc_dec("free", **fb_conf)
        masker = TDConvNet(in_chan=encoder.n_feats_out, **mask_conf)
        super().__init__(encoder, masker, decoder)


def make_model_and_optimizer(conf):
    model = TasNet(conf["filterbank"], conf["masknet"])
    optimizer = torch.optim.Adam(model.parameters(), lr=conf["optim"]["lr"])
    return model, optimizer


def load_best_model(train_conf, exp_dir):
    """Load best model after training."""
    model, _ = make_model_and_optimizer(train_conf)
    with open(os.path.join(exp_dir, "best_k_models.json"), "r") as f:
        best_k = json.load(f)
    best_model_path = min(best_k, key=best_k.get)
    checkpoint = torch.load(best_model_path, map_location="cpu")
    state = {k.replace("model.", "", 1): v for k, v in checkpoint["state_dict"].items()}
    model.load_state_dict(state)
    model.eval()
    return model
