import os

import torch
import torch.autograd as autograd
import torch.nn.functional as F
import torchvision.utils as tvutils
from torch.utils.data import DataLoader

from datasets.celebahq import CelebaHQ
from models.wrappers import (PerceptualModel, StyleGANDiscriminator, StyleGANEncoder,
                             StyleGANGenerator)


def div_loss_(D, real_x, fake_x, p=2, cuda=False):
    x_ = real_x.requires_grad_(True)
    y_ = D.net(x_)
    grad = autograd.grad(
        outputs=y_,
        inputs=x_,
        grad_outputs=torch.ones_like(y_),
        create_graph=True,
        retain_graph=True,
        only_inputs=True,
    )[0]
    div = (grad * grad).sum(dim=1, keepdim=True).sum(dim=2, keepdim=True).sum(dim=3, keepdim=True)
    return torch.mean(div)


def GAN_loss(scores_out, real=True):
    if real:
        return torch.mean(F.softplus(-scores_out))
    return torch.mean(F.softplus(scores_out))


def training_loop(config, dataset_args, E_lr_args, D_lr_args, opt_args, E_loss_args, D_loss_args,
                  logger=None, image_snapshot_ticks=50, max_epoch=50):
    loss_pix_weight = E_loss_args.loss_pix_weight
    loss_feat_weight = E_loss_args.loss_feat_weight
    loss_adv_weight = E_loss_args.loss_adv_weight
    loss_real_weight = D_loss_args.loss_real_weight
    loss_fake_weight = D_loss_args.loss_fake_weight
    loss_gp_weight = D_loss_args.loss_gp_weight

    train_dataset = CelebaHQ(dataset_args, train=True)
    val_dataset = CelebaHQ(dataset_args, train=False)
    train_dataloader = DataLoader(train_dataset, batch_size=config.train_batch_size, shuffle=True)
    val_dataloader = DataLoader(val_dataset, batch_size=config.test_batch_size, shuffle=False)

    G = StyleGANGenerator(config.model_name, logger, gpu_ids=config.gpu_ids)
    E = StyleGANEncoder(config.model_name, logger, gpu_ids=config.gpu_ids)
    P = PerceptualModel(min_val=G.min_val, max_val=G.max_val, gpu_ids=config.gpu_ids)
    D = StyleGANDiscriminator(config.model_name, logger, gpu_ids=config.gpu_ids)
    G.net.synthesis.eval()
    E.net.train()
    P.net.eval()
    D.net.train()
    encode_dim = [G.num_layers, G.w_space_dim]

    optimizer_E = torch.optim.Adam(E.net.parameters(), lr=E_lr_args.learning_rate, **opt_args)
    optimizer_D = torch.optim.Adam(D.net.parameters(), lr=D_lr_args.learning_rate, **opt_args)
    lr_scheduler_E = torch.optim.lr_scheduler.ExponentialLR(optimizer=optimizer_E, gamma=E_lr_args.decay_rate)
    lr_scheduler_D = torch.optim.lr_scheduler.ExponentialLR(optimizer=optimizer_D, gamma=D_lr_args.decay_rate)

    global_step = 0
    for epoch in range(max_epoch):
        for step, items in enumerate(train_dataloader):
            E.net.train()
            x = items.float().cuda()
            batch_size = x.shape[0]
            z = E.net(x).view(batch_size, *encode_dim)
            x_rec = G.net.synthesis(z)

            # optimizing D
            x_real = D.net(x)
            x_fake = D.net(x_rec.detach())
            loss_real = GAN_loss(x_real, real=True)
            loss_fake = GAN_loss(x_fake, real=False)
            loss_gp = div_loss_(D, x, x_rec.detach(), cuda=config.cuda)
            D_loss = loss_real_weight * loss_real + loss_fake_weight * loss_fake + loss_gp_weight * loss_gp
            D_loss.backward()
            optimizer_D.step()

            # optimizing E
            loss_pix = torch.mean((x - x_rec) ** 2)
            loss_feat = 0.
            if loss_feat_weight:
                x_feat = P.net(x)
                x_rec_feat = P.net(x_rec)
                loss_feat = torch.mean((x_feat - x_rec_feat) ** 2)
            loss_adv = 0.
            if loss_adv_weight:
                x_adv = D.net(x_rec)
                loss_adv = GAN_loss(x_adv, real=True)
            E_loss = loss_pix_weight * loss_pix + loss_feat_weight * loss_feat + loss_adv_weight * loss_adv
            optimizer_E.zero_grad()
            E_loss.backward()
            optimizer_E.step()

            if logger:
                logger.debug(f'Epoch:{epoch:03d}, Step:{step:04d}, D:{D_loss.item():.3f}, E:{E_loss.item():.3f}')

            if step % image_snapshot_ticks == 0:
                E.net.eval()
                for val_step, val_items in enumerate(val_dataloader):
                    x_val = val_items.float().cuda()
                    batch_size_val = x_val.shape[0]
                    x_train = x[:batch_size_val, :, :, :]
                    z_train = E.net(x_train).view(batch_size_val, *encode_dim)
                    x_rec_train = G.net.synthesis(z_train)
                    z_val = E.net(x_val).view(batch_size_val, *encode_dim)
                    x_rec_val = G.net.synthesis(z_val)
                    x_all = torch.cat([x_val, x_rec_val, x_train, x_rec_train], dim=0)
                    if val_step > config.test_save_step:
                        break
                    save_filename = f'epoch_{epoch:03d}_step_{step:04d}_test_{val_step:04d}.png'
                    tvutils.save_image(x_all, os.path.join(config.save_images, save_filename),
                                       nrow=config.test_batch_size, normalize=True)

            global_step += 1
            if (global_step + 1) % E_lr_args.decay_step == 0:
                lr_scheduler_E.step()
            if (global_step + 1) % D_lr_args.decay_step == 0:
                lr_scheduler_D.step()

        save_filepath = os.path.join(config.save_models, f'styleganinv_encoder_epoch_{epoch:03d}')
        torch.save(E.net.module.state_dict(), save_filepath)
