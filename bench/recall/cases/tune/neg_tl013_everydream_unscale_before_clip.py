"""
Copyright [2022-2023] Victor C Hall

Fine-tunes a Stable Diffusion unet (and optionally its text encoder) with the diffusers
components; trimmed to the training loop.
"""
import argparse
import math

import torch
import torch.nn.functional as F
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from torch.cuda.amp import GradScaler, autocast
from transformers import CLIPTextModel

from data.every_dream import EveryDreamBatch, build_torch_dataloader


def get_model_prediction_and_target(batch, unet, text_encoder, vae, noise_scheduler, args):
    with torch.no_grad():
        with autocast(enabled=args.amp):
            pixel_values = batch["image"].to(memory_format=torch.contiguous_format).to(unet.device)
            latents = vae.encode(pixel_values, return_dict=False)
        latent = latents[0]
        latents = latent.sample() * 0.18215

    noise = torch.randn_like(latents)
    bsz = latents.shape[0]
    timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device)
    timesteps = timesteps.long()

    cuda_caption = batch["tokens"].to(text_encoder.device)
    encoder_hidden_states = text_encoder(cuda_caption, output_hidden_states=True)
    encoder_hidden_states = encoder_hidden_states.last_hidden_state

    noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)
    target = noise

    with autocast(enabled=args.amp):
        model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample
    return model_pred, target


def main(args):
    device = torch.device(f"cuda:{args.gpuid}")
    unet = UNet2DConditionModel.from_pretrained(args.resume_ckpt, subfolder="unet").to(device)
    text_encoder = CLIPTextModel.from_pretrained(args.resume_ckpt, subfolder="text_encoder").to(device)
    vae = AutoencoderKL.from_pretrained(args.resume_ckpt, subfolder="vae").to(device, dtype=torch.float16)
    noise_scheduler = DDPMScheduler.from_pretrained(args.resume_ckpt, subfolder="scheduler")

    if args.disable_textenc_training:
        params_to_train = unet.parameters()
    else:
        params_to_train = list(unet.parameters()) + list(text_encoder.parameters())
    optimizer = torch.optim.AdamW(params_to_train, lr=args.lr, betas=(0.9, 0.999), weight_decay=0.010)
    lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, (step + 1) / 250))

    scaler = GradScaler(
        enabled=args.amp,
        init_scale=2**17.5,
        growth_factor=2,
        backoff_factor=1.0 / 2,
        growth_interval=25,
    )

    train_batch = EveryDreamBatch(data_root=args.data_root, batch_size=args.batch_size)
    train_dataloader = build_torch_dataloader(train_batch, batch_size=args.batch_size)

    unet.train()
    text_encoder.train() if not args.disable_textenc_training else text_encoder.eval()

    global_step = 0
    epoch_len = math.ceil(len(train_batch) / args.batch_size)
    for epoch in range(args.max_epochs):
        for step, batch in enumerate(train_dataloader):
            model_pred, target = get_model_prediction_and_target(batch, unet, text_encoder, vae,
                                                                 noise_scheduler, args)

            with autocast(enabled=args.amp):
                loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")

            del target, model_pred

            scaler.scale(loss).backward()

            if args.clip_grad_norm is not None:
                scaler.unscale_(optimizer)
                if not args.disable_unet_training:
                    torch.nn.utils.clip_grad_norm_(parameters=unet.parameters(), max_norm=args.clip_grad_norm)
                if not args.disable_textenc_training:
                    torch.nn.utils.clip_grad_norm_(parameters=text_encoder.parameters(), max_norm=args.clip_grad_norm)

            scaler.step(optimizer)
            scaler.update()
            lr_scheduler.step()
            optimizer.zero_grad(set_to_none=True)

            if step % args.log_step == 0:
                print(f"epoch {epoch} step {step}/{epoch_len} loss {loss.item():.4f}")
            global_step += 1


if __name__ == "__main__":
    argparser = argparse.ArgumentParser(description="EveryDream2 Training options")
    argparser.add_argument("--amp", action="store_true", default=True)
    argparser.add_argument("--batch_size", type=int, default=2)
    argparser.add_argument("--clip_grad_norm", type=float, default=None,
                           help="Clip gradient norm (def: disabled) (ex: 1.5), useful if loss=nan?")
    argparser.add_argument("--data_root", type=str, default="input")
    argparser.add_argument("--disable_textenc_training", action="store_true", default=False)
    argparser.add_argument("--disable_unet_training", action="store_true", default=False)
    argparser.add_argument("--gpuid", type=int, default=0)
    argparser.add_argument("--log_step", type=int, default=25)
    argparser.add_argument("--lr", type=float, default=None)
    argparser.add_argument("--max_epochs", type=int, default=300)
    argparser.add_argument("--resume_ckpt", type=str, required=True)
    main(argparser.parse_args())
