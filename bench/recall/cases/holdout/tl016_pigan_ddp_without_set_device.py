# pi-GAN's train.py reduced (checkpoint loading and saving, the learning-rate curriculum,
# the R1 and position penalties, sample images, FID evaluation and EMA trimmed; the
# generator, discriminator, SIREN, dataset and curriculum modules are imported).
import argparse
import os

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel as DDP

from generators import generators
from discriminators import discriminators
from siren import siren
import datasets
import curriculums


def setup(rank, world_size, port):
    os.environ['MASTER_ADDR'] = 'localhost'
    os.environ['MASTER_PORT'] = port

    # initialize the process group
    dist.init_process_group("gloo", rank=rank, world_size=world_size)


def cleanup():
    dist.destroy_process_group()


def z_sampler(shape, device, dist):
    if dist == 'gaussian':
        z = torch.randn(shape, device=device)
    elif dist == 'uniform':
        z = torch.rand(shape, device=device) * 2 - 1
    return z


def train(rank, world_size, opt):
    torch.manual_seed(0)

    setup(rank, world_size, opt.port)
    device = torch.device(rank)

    curriculum = getattr(curriculums, opt.curriculum)
    metadata = curriculums.extract_metadata(curriculum, 0)

    SIREN = getattr(siren, metadata['model'])
    scaler = torch.cuda.amp.GradScaler()

    generator = getattr(generators, metadata['generator'])(SIREN, metadata['latent_dim']).to(device)
    discriminator = getattr(discriminators, metadata['discriminator'])().to(device)

    generator_ddp = DDP(generator, device_ids=[rank], find_unused_parameters=True)
    discriminator_ddp = DDP(discriminator, device_ids=[rank], find_unused_parameters=True, broadcast_buffers=False)
    generator = generator_ddp.module
    discriminator = discriminator_ddp.module

    optimizer_G = torch.optim.Adam(generator_ddp.parameters(), lr=metadata['gen_lr'], betas=metadata['betas'], weight_decay=metadata['weight_decay'])
    optimizer_D = torch.optim.Adam(discriminator_ddp.parameters(), lr=metadata['disc_lr'], betas=metadata['betas'], weight_decay=metadata['weight_decay'])

    generator.set_device(device)

    torch.manual_seed(rank)
    dataloader, CHANNELS = datasets.get_dataset_distributed(metadata['dataset'], world_size, rank, **metadata)

    for _ in range(opt.n_epochs):
        for i, (imgs, r_pos) in enumerate(dataloader):
            generator_ddp.train()
            discriminator_ddp.train()
            alpha = min(1, discriminator.step / metadata['fade_steps'])
            real_imgs = imgs.to(device, non_blocking=True)

            # TRAIN DISCRIMINATOR
            with torch.cuda.amp.autocast():
                with torch.no_grad():
                    z = z_sampler((real_imgs.shape[0], metadata['latent_dim']), device=device, dist=metadata['z_dist'])
                    gen_imgs, gen_positions = generator_ddp(z, **metadata)
                r_preds, _, r_pred_pos = discriminator_ddp(real_imgs, alpha, **metadata)
                g_preds, g_pred_latent, g_pred_position = discriminator_ddp(gen_imgs, alpha, **metadata)
                d_loss = torch.nn.functional.softplus(g_preds).mean() + torch.nn.functional.softplus(-r_preds).mean()

            optimizer_D.zero_grad()
            scaler.scale(d_loss).backward()
            scaler.unscale_(optimizer_D)
            torch.nn.utils.clip_grad_norm_(discriminator_ddp.parameters(), metadata['grad_clip'])
            scaler.step(optimizer_D)

            # TRAIN GENERATOR
            z = z_sampler((imgs.shape[0], metadata['latent_dim']), device=device, dist=metadata['z_dist'])
            with torch.cuda.amp.autocast():
                gen_imgs, gen_positions = generator_ddp(z, **metadata)
                g_preds, g_pred_latent, g_pred_position = discriminator_ddp(gen_imgs, alpha, **metadata)
                g_loss = torch.nn.functional.softplus(-g_preds).mean()
            scaler.scale(g_loss).backward()

            scaler.unscale_(optimizer_G)
            torch.nn.utils.clip_grad_norm_(generator_ddp.parameters(), metadata.get('grad_clip', 0.3))
            scaler.step(optimizer_G)
            scaler.update()
            optimizer_G.zero_grad()

            discriminator.step += 1
            generator.step += 1
        discriminator.epoch += 1
        generator.epoch += 1

    cleanup()


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument("--n_epochs", type=int, default=3000)
    parser.add_argument('--curriculum', type=str, required=True)
    parser.add_argument('--port', type=str, default='12355')
    opt = parser.parse_args()
    num_gpus = len(os.environ['CUDA_VISIBLE_DEVICES'].split(','))
    mp.spawn(train, args=(num_gpus, opt), nprocs=num_gpus, join=True)
