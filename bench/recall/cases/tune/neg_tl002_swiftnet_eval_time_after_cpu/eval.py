import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from evaluation.evaluate import evaluate_semseg
from models.semseg import SemsegModel


class Cityscapes(Dataset):
    def __init__(self, n=500):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return {'image': torch.randn(3, 1024, 2048),
                'original_labels': torch.from_numpy(np.random.randint(0, 19, (1024, 2048)))}


model = SemsegModel(num_classes=19).cuda()
model.load_state_dict(torch.load('weights/rn18_single_scale/model_best.pt'))
loader = DataLoader(Cityscapes(), batch_size=1, num_workers=4, pin_memory=True)
iou, acc = evaluate_semseg(model, loader, class_info=None)
print(f'mIoU: {iou:.2f}, pixel accuracy: {acc:.2f}')
