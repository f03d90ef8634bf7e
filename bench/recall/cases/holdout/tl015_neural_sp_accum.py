import torch
from tqdm import tqdm


def train(model, train_set, dev_set, optimizer, args, logger):
    accum_grad_n_steps = args.accum_grad_n_steps
    accum_n_steps = 0
    n_steps = 0
    pbar_epoch = tqdm(total=len(train_set))
    for epoch in range(args.n_epochs):
        model.train()
        for batch_train in train_set:
            loss, observation = model(batch_train, task='all')
            loss.backward()
            loss.detach()  # Truncate the graph
            accum_n_steps += 1
            if accum_n_steps >= accum_grad_n_steps:
                if args.clip_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad_norm)
                optimizer.step()
                optimizer.zero_grad()
                accum_n_steps = 0
                n_steps += 1
            loss_train = loss.item()
            del loss
            pbar_epoch.update(len(batch_train['utt_ids']))
            if n_steps % args.print_step == 0:
                logger.info('step:%d(ep:%.2f) loss:%.3f' % (n_steps, epoch, loss_train))
