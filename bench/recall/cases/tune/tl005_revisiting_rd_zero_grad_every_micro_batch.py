import argparse
import os

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

from dataset import MVTecDataset_train, MVTecDataset_test, get_data_transforms
from model.resnet import wide_resnet50_2
from model.de_resnet import de_wide_resnet50_2
from model.multi_scale_projection import MultiProjectionLayer
from utils.utils_test import evaluation_multi_proj
from utils.losses import global_cosine_hm, loss_fucntion, loss_concat


def setup_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    torch.backends.cudnn.deterministic = True


def train(_class_, root='./mvtec/', ckpt_path='./checkpoints/', ifgeom=None):
    print(_class_)
    epochs = 200
    image_size = 256
    batch_size = 16
    accumulation_steps = 2
    proj_lr = 0.001
    distill_lr = 0.005
    weight_proj = 0.2

    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    data_transform, gt_transform = get_data_transforms(image_size, image_size)

    train_path = os.path.join(root, _class_, 'train')
    test_path = os.path.join(root, _class_)
    train_data = MVTecDataset_train(root=train_path, transform=data_transform)
    test_data = MVTecDataset_test(root=test_path, transform=data_transform, gt_transform=gt_transform)
    train_dataloader = DataLoader(train_data, batch_size=batch_size, shuffle=True)
    test_dataloader = DataLoader(test_data, batch_size=1, shuffle=False)

    encoder, bn = wide_resnet50_2(pretrained=True)
    encoder = encoder.to(device)
    bn = bn.to(device)
    encoder.eval()
    decoder = de_wide_resnet50_2(pretrained=False)
    decoder = decoder.to(device)
    proj_layer = MultiProjectionLayer(base=64).to(device)

    optimizer_proj = torch.optim.Adam(list(proj_layer.parameters()), lr=proj_lr, betas=(0.5, 0.999))
    optimizer_distill = torch.optim.Adam(list(decoder.parameters()) + list(bn.parameters()), lr=distill_lr,
                                         betas=(0.5, 0.999))

    best_score = 0
    for epoch in range(epochs):
        bn.train()
        proj_layer.train()
        decoder.train()
        loss_proj_running = 0
        loss_distill_running = 0
        total_loss_running = 0

        for i, (img, img_noise, _) in enumerate(train_dataloader):
            img = img.to(device)
            img_noise = img_noise.to(device)
            inputs = encoder(img)
            inputs_noise = encoder(img_noise)

            (feature_space_noise, feature_space) = proj_layer(inputs, features_noise=inputs_noise)

            L_proj = loss_concat(feature_space_noise, feature_space)

            outputs = decoder(bn(feature_space))
            L_distill = loss_fucntion(inputs, outputs)
            loss = L_distill + weight_proj * L_proj

            optimizer_proj.zero_grad()
            optimizer_distill.zero_grad()
            loss.backward()
            if (i + 1) % accumulation_steps == 0:
                optimizer_proj.step()
                optimizer_distill.step()

            total_loss_running += loss.detach().cpu().item()
            loss_proj_running += L_proj.detach().cpu().item()
            loss_distill_running += L_distill.detach().cpu().item()

        print('epoch [{}/{}], loss:{:.4f}'.format(epoch + 1, epochs, total_loss_running))

        if (epoch + 1) % 10 == 0:
            auroc_px, auroc_sp, aupro_px = evaluation_multi_proj(encoder, proj_layer, bn, decoder,
                                                                  test_dataloader, device)
            print('Pixel Auroc:{:.3f}, Sample Auroc:{:.3f}, Pixel Aupro:{:.3}'.format(auroc_px, auroc_sp, aupro_px))
            if (auroc_px + auroc_sp + aupro_px) / 3 > best_score:
                best_score = (auroc_px + auroc_sp + aupro_px) / 3
                torch.save({'proj': proj_layer.state_dict(), 'decoder': decoder.state_dict(),
                            'bn': bn.state_dict()}, os.path.join(ckpt_path, 'wres50_' + _class_ + '.pth'))
    return best_score


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--save_folder', default='./RD++_checkpoint_result', type=str)
    args = parser.parse_args()
    setup_seed(111)
    item_list = ['carpet', 'grid', 'leather', 'tile', 'wood', 'bottle', 'cable', 'capsule',
                 'hazelnut', 'metal_nut', 'pill', 'screw', 'toothbrush', 'transistor', 'zipper']
    for i in item_list:
        train(i, ckpt_path=args.save_folder)
