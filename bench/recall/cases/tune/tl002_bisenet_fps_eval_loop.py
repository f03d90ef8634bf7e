# The reporter's FPS measurement from the BiSeNet thread, inside the repository's
# multi-scale evaluation helper (reduced; the model factory and dataset are imported).
import time

import numpy as np
import torch
import torch.nn.functional as F

from lib.models import model_factory
from lib.get_dataloader import get_data_loader


@torch.no_grad()
def eval_model(net, dl, n_classes, scales=(1.0,)):
    net.eval()
    hist = torch.zeros(n_classes, n_classes).cuda().detach()
    fps = [0, 0.0]
    for i, (imgs, label) in enumerate(dl):
        label = label.squeeze(1).cuda()
        N, H, W = label.shape
        probs = torch.zeros((N, n_classes, H, W), dtype=torch.float32).cuda().detach()
        for scale in scales:
            sH, sW = int(scale * H), int(scale * W)
            im_sc = F.interpolate(imgs, size=(sH, sW), mode='bilinear', align_corners=True)
            im_sc = im_sc.cuda()
            a = time.time()
            logits = net(im_sc)[0]
            b = time.time()
            fps[1] += (b - a)  # Total time-consuming
            fps[0] += 1  # Total inferences
            logits = F.interpolate(logits, size=(H, W), mode='bilinear', align_corners=True)
            probs += torch.softmax(logits, dim=1)
        preds = torch.argmax(probs, dim=1)
        keep = label != 255
        hist += torch.bincount(
            label[keep] * n_classes + preds[keep],
            minlength=n_classes ** 2
        ).view(n_classes, n_classes)
    ious = hist.diag() / (hist.sum(dim=0) + hist.sum(dim=1) - hist.diag())
    print('fps: {:.2f}'.format(fps[0] / fps[1]))
    return ious.mean().item()


def main():
    net = model_factory['bisenetv2'](19)
    net.load_state_dict(torch.load('model_final_v2_city.pth', map_location='cpu'))
    net.cuda()
    dl = get_data_loader('./datasets/cityscapes', 1, mode='val')
    miou = eval_model(net, dl, 19)
    print('mIOU: {:.4f}'.format(np.round(miou, 4)))


if __name__ == '__main__':
    main()
