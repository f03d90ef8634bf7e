import functools
import os

import texar.torch as tx
import torch
import torch.nn.functional as F

import config_data
import config_classifier

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def main():
    model = tx.modules.BERTClassifier(**config_classifier.__dict__).to(device)
    num_train_steps = int(config_data.num_train_data / config_data.train_batch_size * config_data.max_train_epoch)
    num_warmup_steps = int(num_train_steps * config_data.warmup_proportion)
    optim = tx.core.BertAdam(model.parameters(), betas=(0.9, 0.999), eps=1e-6, lr=2e-5)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optim, functools.partial(lambda s: min(1.0, (s + 1) / max(num_warmup_steps, 1))))
    train_dataset = tx.data.RecordData(hparams=config_data.train_hparam, device=device)
    eval_dataset = tx.data.RecordData(hparams=config_data.eval_hparam, device=device)
    iterator = tx.data.DataIterator({"train": train_dataset, "eval": eval_dataset})

    def _compute_loss(logits, labels):
        return F.cross_entropy(logits.view(-1, model.num_classes), labels.view(-1), reduction='mean')

    def _train_epoch():
        iterator.switch_to_dataset("train")
        model.train()
        for batch in iterator:
            optim.zero_grad()
            input_ids = batch["input_ids"]
            segment_ids = batch["segment_ids"]
            labels = batch["label_ids"]
            input_length = (1 - (input_ids == 0).int()).sum(dim=1)
            logits, _ = model(input_ids, input_length, segment_ids)
            loss = _compute_loss(logits, labels)
            loss.backward()
            optim.step()
            scheduler.step()
            step = scheduler.last_epoch

            dis_steps = config_data.display_steps
            if dis_steps > 0 and step % dis_steps == 0:
                print(f"step: {step}; loss: {loss}")

            eval_steps = config_data.eval_steps
            if eval_steps > 0 and step % eval_steps == 0:
                _eval_epoch()

    @torch.no_grad()
    def _eval_epoch():
        iterator.switch_to_dataset("eval")
        model.eval()
        cum_acc = 0.0
        nsamples = 0
        for batch in iterator:
            input_ids = batch["input_ids"]
            segment_ids = batch["segment_ids"]
            labels = batch["label_ids"]
            batch_size = input_ids.size()[0]
            input_length = (1 - (input_ids == 0).int()).sum(dim=1)
            logits, preds = model(input_ids, input_length, segment_ids)
            accu = tx.evals.accuracy(labels, preds)
            cum_acc += accu.item() * batch_size
            nsamples += batch_size
        print(f"eval accu: {cum_acc / nsamples}; nsamples: {nsamples}")

    for _ in range(config_data.max_train_epoch):
        _train_epoch()


if __name__ == "__main__":
    main()
