import torch


def train_one_epoch(params, model, optimizer, scheduler, train_dl, scaler, tb_writer=None):
    model.train()
    tot_loss = 0.0
    for batch_idx, batch in enumerate(train_dl):
        params.batch_idx_train += 1
        video = batch["video"].to(params.device)
        targets = batch["targets"].to(params.device)
        with torch.cuda.amp.autocast(enabled=params.use_fp16):
            loss = model(video, targets)

        scaler.scale(loss).backward()

        # scaler.unscale_(optimizer)

        grad_norm = torch.nn.utils.clip_grad_norm_(
            model.parameters(),
            max_norm=1.0  # Common value for Conformers
        )

        scheduler.step_batch(params.batch_idx_train)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

        tot_loss += loss.detach().item()
        if batch_idx % params.log_interval == 0:
            print(f"batch {batch_idx}, loss {loss.item():.4f}, grad norm {grad_norm:.2f}")
    return tot_loss / (batch_idx + 1)


def run(params, model, optimizer, scheduler, train_dl):
    scaler = torch.cuda.amp.GradScaler(enabled=params.use_fp16, init_scale=1.0)
    model.to(params.device)
    for epoch in range(params.start_epoch, params.num_epochs + 1):
        scheduler.step_epoch(epoch - 1)
        train_one_epoch(params, model, optimizer, scheduler, train_dl, scaler)
