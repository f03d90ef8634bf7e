import os
import argparse

import numpy as np
import nibabel as nib
import torch
import torch.nn.functional as F
from torch.utils import data

from torchsrc.datasets import pytorch_loader_allpiece
from torchsrc.models import UNet3D


def saveOneImg(img, path, cate_name, sub_name, surfix):
    filename = '%s-x-%s-x-%s.nii.gz' % (cate_name, sub_name, surfix)
    file = os.path.join(path, filename)
    nib.save(nib.Nifti1Image(img, np.eye(4)), file)


def test_piece(model, test_loader, out_dir, cuda=True):
    model.eval()
    for batch_idx, (data, target, sub_name) in enumerate(test_loader):
        if cuda:
            data = data.cuda()
        pred = model(data)
        lbl_pred = pred.data.max(1)[1].cpu().numpy()[:, :, :].astype('uint8')
        for i in range(len(sub_name)):
            saveOneImg(lbl_pred[i], out_dir, 'seg', sub_name[i], 'pred')


def test_whole(model, test_loader, out_dir, num_classes=133, cuda=True):
    model.eval()
    for batch_idx, (data, sub_name) in enumerate(test_loader):
        if cuda:
            data = data.cuda()
        pred = model(data)
        prob = F.softmax(pred, dim=1)
        seg = prob.data.max(1)[1].cpu().numpy().astype('uint8')
        for i in range(len(sub_name)):
            saveOneImg(seg[i], out_dir, 'whole', sub_name[i], 'seg')


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--piece', default='1_1_1')
    parser.add_argument('--model_path', required=True)
    parser.add_argument('--test_dir', required=True)
    parser.add_argument('--out_dir', required=True)
    args = parser.parse_args()

    model = UNet3D(in_channel=1, n_classes=133)
    model.load_state_dict(torch.load(args.model_path))
    model = model.cuda()

    test_set = pytorch_loader_allpiece(args.test_dir, args.piece)
    test_loader = data.DataLoader(test_set, batch_size=1, shuffle=False, num_workers=1, pin_memory=False)
    test_piece(model, test_loader, args.out_dir)
    test_whole(model, test_loader, args.out_dir)
