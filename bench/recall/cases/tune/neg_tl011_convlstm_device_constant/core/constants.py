from enum import Enum

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class WeightsInitializer(str, Enum):
    Zeros = "zeros"
    He = "he"
    Xavier = "xavier"
