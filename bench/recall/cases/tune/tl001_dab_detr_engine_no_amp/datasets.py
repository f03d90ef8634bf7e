import torch
from torch.utils.data import Dataset


class CocoDetection(Dataset):
    """Stand-in for the COCO detection dataset (reconstructed)."""

    def __init__(self, image_set, size=800):
        self.image_set = image_set
        self.size = size

    def __len__(self):
        return 1000

    def __getitem__(self, idx):
        image = torch.rand(3, self.size, self.size)
        target = {'boxes': torch.rand(4, 4), 'labels': torch.randint(0, 91, (4,)),
                  'orig_size': torch.tensor([self.size, self.size])}
        return image, target


def build_dataset(image_set, args):
    return CocoDetection(image_set)
