import numpy as np
import torch

from config import cfg
from datasets.SHHB.loading_data import loading_data
from datasets.SHHB.setting import cfg_data
from trainer import Trainer

np.random.seed(cfg.SEED)
torch.manual_seed(cfg.SEED)
torch.cuda.manual_seed(cfg.SEED)

cc_trainer = Trainer(loading_data, cfg_data, pwd='./')
cc_trainer.forward()
