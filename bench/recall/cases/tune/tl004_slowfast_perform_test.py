import numpy as np
import torch

import slowfast.utils.distributed as du
import slowfast.utils.logging as logging
from slowfast.datasets import loader
from slowfast.models import build_model
from slowfast.utils.meters import TestMeter

logger = logging.get_logger(__name__)


def perform_test(test_loader, model, test_meter, cfg):
    # Enable eval mode.
    model.eval()

    test_meter.iter_tic()

    for cur_iter, (inputs, labels, video_idx, meta) in enumerate(test_loader):
        # Transferthe data to the current GPU device.
        if isinstance(inputs, (list,)):
            for i in range(len(inputs)):
                inputs[i] = inputs[i].cuda(non_blocking=True)
        else:
            inputs = inputs.cuda(non_blocking=True)

        # Transfer the data to the current GPU device.
        labels = labels.cuda()
        video_idx = video_idx.cuda()

        # Perform the forward pass.
        preds = model(inputs)

        # Gather all the predictions across all the devices to perform ensemble.
        if cfg.NUM_GPUS > 1:
            preds, labels, video_idx = du.all_gather([preds, labels, video_idx])

        test_meter.iter_toc()
        # Update and log stats.
        test_meter.update_stats(preds.detach().cpu(), labels.detach().cpu(), video_idx.detach().cpu())
        test_meter.log_iter_stats(cur_iter)
        test_meter.iter_tic()

    # Log epoch stats and print the final testing results.
    test_meter.finalize_metrics()
    test_meter.reset()


def test(cfg):
    du.init_distributed_training(cfg)
    np.random.seed(cfg.RNG_SEED)
    torch.manual_seed(cfg.RNG_SEED)
    model = build_model(cfg)
    test_loader = loader.construct_loader(cfg, "test")
    test_meter = TestMeter(len(test_loader.dataset) // (cfg.TEST.NUM_ENSEMBLE_VIEWS * cfg.TEST.NUM_SPATIAL_CROPS),
                           cfg.TEST.NUM_ENSEMBLE_VIEWS * cfg.TEST.NUM_SPATIAL_CROPS, cfg.MODEL.NUM_CLASSES,
                           len(test_loader))
    perform_test(test_loader, model, test_meter, cfg)
