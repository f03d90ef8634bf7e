import time

import torch
from accelerate import Accelerator
from transformers import AutoModelForCausalLM, get_linear_schedule_with_warmup


def training_function(kwargs: dict):
    config = kwargs["config"]
    accelerator = Accelerator(gradient_accumulation_steps=config["gradient_accumulation_steps"],
                              mixed_precision="bf16")
    model = AutoModelForCausalLM.from_pretrained(config["model_name"], torch_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=config["lr"])
    train_dataloader = kwargs["train_dataloader"]
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=100,
                                                   num_training_steps=config["num_epochs"] * len(train_dataloader))
    model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, lr_scheduler)

    for epoch in range(config["num_epochs"]):
        s_epoch = time.time()
        model.train()
        loss_sum = torch.tensor(0.0).to(accelerator.device)
        for step, batch in enumerate(train_dataloader):
            with accelerator.accumulate(model):
                s_fwd = time.time()
                outputs = model(**batch)
                loss = outputs.loss
                loss_sum += loss
                e_fwd = time.time()
                fwd_time = e_fwd - s_fwd
                s_bwd = time.time()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()
                e_bwd = time.time()
                bwd_time = e_bwd - s_bwd
            if accelerator.is_main_process:
                accelerator.print(f"[epoch {epoch} step {step}] loss: {loss.item()} "
                                  f"fwd {fwd_time:.2f}s bwd {bwd_time:.2f}s")
        aggregated_loss = torch.mean(accelerator.gather(loss_sum[None])).item()
        accelerator.print(f"epoch {epoch} avg loss {aggregated_loss / len(train_dataloader)} "
                          f"time {time.time() - s_epoch:.1f}s")
