# -*- coding:utf-8 -*-
import os

import torch
import torch.distributed as dist


def use_horovod():
    return os.environ.get("USE_HOROVOD", "false") == "true"


def use_ddp():
    return dist.is_available() and dist.is_initialized()


def is_main_training():
    return not use_ddp() or dist.get_rank() == 0


def cleanup_ddp():
    dist.destroy_process_group()


def init_multi_gpu_training(gpu_id="", solution="ddp", port=29500):
    num_gpu = len(gpu_id.split())
    if num_gpu > 1 and solution == "ddp":
        local_rank = int(os.environ["LOCAL_RANK"])
        torch.cuda.set_device(int(gpu_id.split()[local_rank]))
        dist.init_process_group(backend="nccl", init_method="env://")


def select_model_device(model, use_gpu, gpu_id="", benchmark=False):
    if use_gpu and torch.cuda.is_available():
        torch.backends.cudnn.benchmark = benchmark
        device = torch.device("cuda", torch.cuda.current_device())
        model.to(device)
        return device
    return torch.device("cpu")


def assign_params_dict(default_params, params, support_unknow=False):
    default_params = dict(default_params)
    for key, value in params.items():
        if key in default_params or support_unknow:
            default_params[key] = value
    return default_params
