# -*- coding:utf-8 -*-
import argparse

import torch

import libs.egs.egs as egs
import libs.support.utils as utils
import libs.training.optim as optim
import libs.training.lr_scheduler as learn_rate_scheduler
import libs.training.trainer as trainer

parser = argparse.ArgumentParser(description="Train an x-vector model with asv-subtools.")
parser.add_argument("--egs-dir", type=str, default="exp/egs/voxceleb1_sequential")
parser.add_argument("--model-dir", type=str, default="exp/standard_xv_baseline_warmR_voxceleb1")
parser.add_argument("--epochs", type=int, default=21)
parser.add_argument("--gpu-id", type=str, default="0 1 2 3")
parser.add_argument("--use-ddp", action="store_true", default=True)
args = parser.parse_args()

utils.init_multi_gpu_training(args.gpu_id, "ddp" if args.use_ddp else "")

egs_params = {"io_status": True}
loader_params = {"use_fast_loader": True, "max_prefetch": 10, "batch_size": 512, "shuffle": True,
                 "num_workers": 2, "pin_memory": False}
model_params = {"extend": False, "SE": False, "training": True, "extracted_embedding": "far"}
optimizer_params = {"name": "adamW", "learn_rate": 0.001, "weight_decay": 3e-1}
lr_scheduler_params = {"name": "warmR", "warmR.T_max": 3, "warmR.T_mult": 2, "warmR.factor": 1.0}

bunch = egs.BaseBunch.get_bunch_from_egsdir(args.egs_dir, egs_params, loader_params)
model_blueprint = utils.create_model_dir(args.model_dir, "subtools/pytorch/model/xvector.py")
model_py = utils.create_model_from_py(model_blueprint)
model = model_py.Xvector(bunch.info.feat_dim, bunch.info.num_targets, **model_params)
optimizer = optim.get_optimizer(model, optimizer_params)
lr_scheduler = learn_rate_scheduler.LRSchedulerWrapper(optimizer, lr_scheduler_params)

package = ({"data": bunch, "model": model, "optimizer": optimizer, "lr_scheduler": lr_scheduler},
           {"model_dir": args.model_dir, "model_blueprint": model_blueprint, "gpu_id": args.gpu_id,
            "epochs": args.epochs, "max_change": 10.})
trainer.SimpleTrainer(package).run()
