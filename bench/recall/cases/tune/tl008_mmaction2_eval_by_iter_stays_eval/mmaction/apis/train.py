import torch
from mmcv.parallel import MMDataParallel

from mmaction.datasets import build_dataloader, build_dataset
from mmcv_runner.epoch_based_runner import EpochBasedRunner
from mmcv_runner.eval_hook import EvalHook


def train_model(model, dataset, cfg, validate=False):
    data_loaders = [build_dataloader(dataset, videos_per_gpu=cfg.data.videos_per_gpu,
                                     workers_per_gpu=cfg.data.workers_per_gpu, dist=False)]
    model = MMDataParallel(model.cuda(cfg.gpu_ids[0]), device_ids=cfg.gpu_ids)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.optimizer.lr, momentum=0.9, weight_decay=1e-4)
    runner = EpochBasedRunner(model, optimizer=optimizer, work_dir=cfg.work_dir, max_epochs=cfg.total_epochs)
    if validate:
        val_dataset = build_dataset(cfg.data.val, dict(test_mode=True))
        val_dataloader = build_dataloader(val_dataset, videos_per_gpu=1, workers_per_gpu=cfg.data.workers_per_gpu,
                                          dist=False, shuffle=False)
        # evaluation = dict(by_epoch=False, interval=1000, metrics=['top_k_accuracy'])
        eval_cfg = dict(cfg.get('evaluation', {}))
        runner.register_hook(EvalHook(val_dataloader, **eval_cfg))
    runner.run(data_loaders, cfg.workflow, cfg.total_epochs)
