import time

import torch

from models.experimental import attempt_load
from utils.datasets import LoadImages
from utils.general import non_max_suppression


def time_synchronized():
    # pytorch-accurate time
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return time.time()


def detect(weights, source, img_size=640, conf_thres=0.25, iou_thres=0.45, device='cuda'):
    model = attempt_load(weights, map_location=device)
    model.eval()
    dataset = LoadImages(source, img_size=img_size)
    for path, img, im0s, vid_cap in dataset:
        img = torch.from_numpy(img).to(device)
        img = img.float() / 255.0
        if img.ndimension() == 3:
            img = img.unsqueeze(0)

        # Inference
        t1 = time_synchronized()
        with torch.no_grad():
            pred = model(img, augment=False)[0]

        # Apply NMS
        pred = non_max_suppression(pred, conf_thres, iou_thres)
        t2 = time_synchronized()
        print(f'{path}: Done. ({t2 - t1:.3f}s)')
