from contextlib import nullcontext

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import GradScaler, autocast


def ce_loss(logits, targets, reduction='none'):
    return F.cross_entropy(logits, targets, reduction=reduction)


def consistency_loss(logits_w, logits_s, T=1.0, p_cutoff=0.95):
    pseudo_label = torch.softmax(logits_w.detach() / T, dim=-1)
    max_probs, max_idx = torch.max(pseudo_label, dim=-1)
    mask = max_probs.ge(p_cutoff).float()
    masked_loss = ce_loss(logits_s, max_idx, reduction='none') * mask
    return masked_loss.mean(), mask.mean()


class FixMatch:
    def __init__(self, net_builder, num_classes, ema_m, T, p_cutoff, lambda_u, num_eval_iter=1000):
        self.num_classes = num_classes
        self.ema_m = ema_m
        self.model = net_builder(num_classes=num_classes)
        self.ema_model = None
        self.num_eval_iter = num_eval_iter
        self.t_fn = T
        self.p_fn = p_cutoff
        self.lambda_u = lambda_u
        self.it = 0
        self.loader_dict = {}

    def set_data_loader(self, loader_dict):
        self.loader_dict = loader_dict

    def set_optimizer(self, optimizer, scheduler=None):
        self.optimizer = optimizer
        self.scheduler = scheduler

    def train(self, args):
        ngpus_per_node = torch.cuda.device_count()
        self.model.train()
        scaler = GradScaler()
        amp_cm = autocast if args.amp else nullcontext

        for (_, x_lb, y_lb), (_, x_ulb_w, x_ulb_s) in zip(self.loader_dict['train_lb'],
                                                          self.loader_dict['train_ulb']):
            if self.it > args.num_train_iter:
                break

            num_lb = x_lb.shape[0]
            num_ulb = x_ulb_w.shape[0]
            x_lb, x_ulb_w, x_ulb_s = x_lb.cuda(args.gpu), x_ulb_w.cuda(args.gpu), x_ulb_s.cuda(args.gpu)
            y_lb = y_lb.cuda(args.gpu)

            inputs = torch.cat((x_lb, x_ulb_w, x_ulb_s))

            with amp_cm():
                logits = self.model(inputs)
                logits_x_lb = logits[:num_lb]
                logits_x_ulb_w, logits_x_ulb_s = logits[num_lb:].chunk(2)
                sup_loss = ce_loss(logits_x_lb, y_lb, reduction='mean')
                unsup_loss, mask = consistency_loss(logits_x_ulb_w, logits_x_ulb_s, self.t_fn, self.p_fn)
                total_loss = sup_loss + self.lambda_u * unsup_loss

            # parameter updates
            if args.amp:
                scaler.scale(total_loss).backward()
                if (args.clip > 0):
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.clip)
                scaler.step(self.optimizer)
                scaler.update()
            else:
                total_loss.backward()
                if (args.clip > 0):
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), args.clip)
                self.optimizer.step()

            self.scheduler.step()
            self.model.zero_grad()

            if self.it % self.num_eval_iter == 0:
                eval_dict = self.evaluate(args=args)
                print(self.it, eval_dict)
            self.it += 1

    @torch.no_grad()
    def evaluate(self, eval_loader=None, args=None):
        self.model.eval()
        if eval_loader is None:
            eval_loader = self.loader_dict['eval']
        total_loss = 0.0
        total_acc = 0.0
        total_num = 0.0
        for _, x, y in eval_loader:
            x, y = x.cuda(args.gpu), y.cuda(args.gpu)
            num_batch = x.shape[0]
            total_num += num_batch
            logits = self.model(x)
            loss = F.cross_entropy(logits, y, reduction='mean')
            total_loss += loss.detach() * num_batch
            total_acc += (logits.argmax(-1) == y).float().sum()
        self.model.train()
        return {'eval/loss': total_loss / total_num, 'eval/top-1-acc': total_acc / total_num}

