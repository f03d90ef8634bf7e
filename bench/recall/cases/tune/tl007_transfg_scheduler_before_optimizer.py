import logging

import numpy as np
import torch
from tqdm import tqdm

from models.modeling import CONFIGS, VisionTransformer
from utils.data_utils import get_loader
from utils.scheduler import WarmupCosineSchedule, WarmupLinearSchedule

logger = logging.getLogger(__name__)


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def setup(args):
    config = CONFIGS[args.model_type]
    config.split = args.split
    config.slide_step = args.slide_step
    model = VisionTransformer(config, args.img_size, zero_head=True, num_classes=200,
                              smoothing_value=args.smoothing_value)
    model.load_from(np.load(args.pretrained_dir))
    model.to(args.device)
    return args, model


def valid(args, model, test_loader, global_step):
    model.eval()
    all_preds, all_label = [], []
    for step, batch in enumerate(test_loader):
        batch = tuple(t.to(args.device) for t in batch)
        x, y = batch
        with torch.no_grad():
            logits = model(x)
            preds = torch.argmax(logits, dim=-1)
        all_preds.append(preds.cpu().numpy())
        all_label.append(y.cpu().numpy())
    return (np.concatenate(all_preds) == np.concatenate(all_label)).mean()


def train(args, model):
    train_loader, test_loader = get_loader(args)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.learning_rate, momentum=0.9,
                                weight_decay=args.weight_decay)
    t_total = args.num_steps
    if args.decay_type == "cosine":
        scheduler = WarmupCosineSchedule(optimizer, warmup_steps=args.warmup_steps, t_total=t_total)
    else:
        scheduler = WarmupLinearSchedule(optimizer, warmup_steps=args.warmup_steps, t_total=t_total)

    model.zero_grad()
    losses = AverageMeter()
    global_step, best_acc = 0, 0
    while True:
        model.train()
        epoch_iterator = tqdm(train_loader, desc="Training (X / X Steps) (loss=X.X)", dynamic_ncols=True)
        for step, batch in enumerate(epoch_iterator):
            batch = tuple(t.to(args.device) for t in batch)
            x, y = batch
            loss, logits = model(x, y)
            loss = loss.mean()
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps
            loss.backward()

            if (step + 1) % args.gradient_accumulation_steps == 0:
                losses.update(loss.item() * args.gradient_accumulation_steps)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
                scheduler.step()
                optimizer.step()
                optimizer.zero_grad()
                global_step += 1

                epoch_iterator.set_description(
                    "Training (%d / %d Steps) (loss=%2.5f)" % (global_step, t_total, losses.val))
                if global_step % args.eval_every == 0:
                    accuracy = valid(args, model, test_loader, global_step)
                    best_acc = max(best_acc, accuracy)
                    model.train()
                if global_step % t_total == 0:
                    break
        losses = AverageMeter()
        if global_step % t_total == 0:
            break
    logger.info("Best Accuracy: \t%f", best_acc)
