import argparse
import os

import numpy as np
import soundfile as sf
import torch
import yaml
from asteroid.data.wham_dataset import WhamDataset
from asteroid.losses import PITLossWrapper, pairwise_neg_sisdr
from asteroid.metrics import get_metrics
from asteroid.utils import tensors_to_device
from tqdm import tqdm

from model import load_best_model

parser = argparse.ArgumentParser()
parser.add_argument("--test_dir", type=str, required=True)
parser.add_argument("--task", type=str, required=True)
parser.add_argument("--use_gpu", type=int, default=0)
parser.add_argument("--exp_dir", default="exp/tmp")

COMPUTE_METRICS = ["si_sdr", "sdr", "sir", "sar", "stoi"]


def main(conf):
    model = load_best_model(conf["train_conf"], conf["exp_dir"])
    if conf["use_gpu"]:
        model.cuda()
    model_device = next(model.parameters()).device
    test_set = WhamDataset(conf["test_dir"], conf["task"], sample_rate=conf["sample_rate"], nondefault_nsrc=None)
    loss_func = PITLossWrapper(pairwise_neg_sisdr, pit_from="pw_mtx")

    series_list = []
    torch.no_grad().__enter__()
    for idx in tqdm(range(len(test_set))):
        mix, sources = tensors_to_device(test_set[idx], device=model_device)
        est_sources = model(mix[None, None])
        loss, reordered_sources = loss_func(est_sources, sources[None], return_est=True)
        mix_np = mix[None].cpu().data.numpy()
        sources_np = sources.cpu().data.numpy()
        est_sources_np = reordered_sources.squeeze(0).cpu().data.numpy()
        utt_metrics = get_metrics(mix_np, sources_np, est_sources_np, sample_rate=conf["sample_rate"],
                                  metrics_list=COMPUTE_METRICS)
        series_list.append(utt_metrics)
    print({k: np.mean([m[k] for m in series_list]) for k in series_list[0]})


if __name__ == "__main__":
    args = parser.parse_args()
    arg_dic = dict(vars(args))
    with open(os.path.join(args.exp_dir, "conf.yml")) as f:
        train_conf = yaml.safe_load(f)
    arg_dic["sample_rate"] = train_conf["data"]["sample_rate"]
    arg_dic["train_conf"] = train_conf
    main(arg_dic)
