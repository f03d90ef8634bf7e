import argparse
import os

import torch
from PIL import Image
from torchvision.transforms import functional as F

from defaults import get_default_cfg
from models.seqnet import SeqNet
from utils.utils import resume_from_ckpt


def main(args):
    cfg = get_default_cfg()
    if args.cfg_file:
        cfg.merge_from_file(args.cfg_file)
    cfg.freeze()
    device = torch.device(cfg.DEVICE)

    print("Creating model")
    model = SeqNet(cfg)
    model.to(device)
    model.eval()
    resume_from_ckpt(args.ckpt, model)

    query_img = [F.to_tensor(Image.open("demo_imgs/query.jpg").convert("RGB")).to(device)]
    query_target = [{"boxes": torch.tensor([[0, 0, 466, 943]]).to(device)}]
    query_feat = model(query_img, query_target)[0]

    gallery_img_paths = sorted(os.listdir("demo_imgs/gallery"))
    for gallery_img_path in gallery_img_paths:
        print(f"Processing {gallery_img_path}")
        gallery_img = F.to_tensor(Image.open(os.path.join("demo_imgs/gallery", gallery_img_path)).convert("RGB"))
        gallery_img = gallery_img.to(device)
        gallery_output = model([gallery_img])[0]
        detections = gallery_output["boxes"]
        gallery_feats = gallery_output["embeddings"]
        similarities = gallery_feats.mm(query_feat.view(-1, 1)).squeeze()
        print(detections[similarities.argmax()])


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Train a person search network.")
    parser.add_argument("--cfg", dest="cfg_file", help="Path to configuration file.")
    parser.add_argument("--ckpt", required=True, help="Path to checkpoint to resume or evaluate.")
    args = parser.parse_args()
    main(args)
