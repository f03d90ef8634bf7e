from .segmentation import default_segmentation_loader
from .trainer import DefaultTrainer
