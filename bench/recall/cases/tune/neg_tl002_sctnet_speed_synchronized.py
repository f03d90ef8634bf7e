# SCTNet speed/torch_speed.py (trimmed), the speed test copied from PIDNet/STDC/DDRNet.
import argparse
import time

import torch
import torch.backends.cudnn as cudnn

from mmseg.models import build_segmentor
from mmcv import Config

torch.backends.cudnn.enabled = True
cudnn.benchmark = True


def parse_args():
    parser = argparse.ArgumentParser(description="Speed Measurement")
    parser.add_argument("--config", default="configs/sctnet/cityscapes/sctnet-b_seg100_8x2_160k_cityscapes.py")
    parser.add_argument("--type", default="sctnet-b-seg100")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    cfg = Config.fromfile(args.config)
    device = torch.device("cuda")
    segmentor = build_segmentor(cfg.model, train_cfg=None, test_cfg=cfg.get("test_cfg"))
    segmentor.forward = segmentor.forward_dummy
    segmentor = segmentor.to(device)
    segmentor.eval()

    input = torch.randn(1, 3, 1024, 2048).cuda()
    with torch.no_grad():
        for _ in range(10):
            segmentor(input)

        iterations = None
        while True:
            if iterations is None:
                elapsed_time = 0
                iterations = 100
                while elapsed_time < 1:
                    torch.cuda.synchronize()
                    torch.cuda.synchronize()
                    t_start = time.time()
                    for _ in range(iterations):
                        segmentor(input)
                    torch.cuda.synchronize()
                    torch.cuda.synchronize()
                    elapsed_time = time.time() - t_start
                    iterations *= 2
                FPS = iterations / elapsed_time
                iterations = int(FPS * 6)
            break

        print("=========Speed Testing=========")
        torch.cuda.synchronize()
        torch.cuda.synchronize()
        t_start = time.time()
        for _ in range(iterations):
            segmentor(input)
        torch.cuda.synchronize()
        torch.cuda.synchronize()
        elapsed_time = time.time() - t_start
        latency = elapsed_time / iterations * 1000
    torch.cuda.empty_cache()
    FPS = 1000 / latency
    print(f"{args.type}: latency {latency:.2f} ms, FPS {FPS:.2f}")
