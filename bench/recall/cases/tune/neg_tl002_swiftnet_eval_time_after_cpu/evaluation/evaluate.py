import contextlib
import time

import numpy as np
import torch
from tqdm import tqdm


def compute_errors(conf_mat, class_info, verbose=True):
    num_correct = conf_mat.trace()
    num_classes = conf_mat.shape[0]
    total_size = conf_mat.sum()
    avg_pixel_acc = num_correct / total_size * 100.0
    TPFN = conf_mat.sum(1)
    TPFP = conf_mat.sum(0)
    FN = TPFN - conf_mat.diagonal()
    FP = TPFP - conf_mat.diagonal()
    class_iou = np.zeros(num_classes)
    for i in range(num_classes):
        TP = conf_mat[i, i]
        class_iou[i] = (TP / (TP + FP[i] + FN[i])) * 100.0 if (TP + FP[i] + FN[i]) > 0 else 0.0
    return avg_pixel_acc, class_iou.mean()


def evaluate_semseg(model, data_loader, class_info, observers=()):
    time_arr = []
    model.eval()
    managers = [torch.no_grad()] + list(observers)
    with contextlib.ExitStack() as stack:
        for ctx_mgr in managers:
            stack.enter_context(ctx_mgr)
        conf_mat = np.zeros((model.num_classes, model.num_classes), dtype=np.uint64)
        for step, batch in tqdm(enumerate(data_loader), total=len(data_loader)):
            t0 = time.time()
            batch['original_labels'] = batch['original_labels'].numpy().astype(np.uint32)
            logits, additional = model.do_forward(batch, batch['original_labels'].shape[1:3])
            pred = torch.argmax(logits.data, dim=1).byte().cpu().numpy().astype(np.uint32)
            time_arr.append(time.time() - t0)
            for o in observers:
                o(pred, batch, additional)
            conf_mat += np.bincount(
                batch['original_labels'].reshape(-1).astype(np.int64) * model.num_classes + pred.reshape(-1),
                minlength=model.num_classes ** 2).reshape(model.num_classes, model.num_classes).astype(np.uint64)
        print('fps: %.2f' % (1.0 / np.mean(time_arr[10:])))
        pixel_acc, iou_acc = compute_errors(conf_mat, class_info, verbose=True)
    model.train()
    return iou_acc, pixel_acc
