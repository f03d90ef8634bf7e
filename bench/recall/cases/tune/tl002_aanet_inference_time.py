import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader

import dataloader
import nets
from dataloader import transforms

parser = argparse.ArgumentParser()
parser.add_argument('--data_dir', default='data/SceneFlow', type=str)
parser.add_argument('--batch_size', default=1, type=int)
parser.add_argument('--num_workers', default=0, type=int)
parser.add_argument('--img_height', default=576, type=int)
parser.add_argument('--img_width', default=960, type=int)
parser.add_argument('--max_disp', default=192, type=int)
parser.add_argument('--count_time', action='store_true')
parser.add_argument('--num_images', default=100, type=int)
args = parser.parse_args()


def main():
    torch.backends.cudnn.benchmark = True
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

    test_transform = transforms.Compose([transforms.ToTensor()])
    test_data = dataloader.StereoDataset(data_dir=args.data_dir, mode='test', transform=test_transform)
    test_loader = DataLoader(dataset=test_data, batch_size=args.batch_size, shuffle=False,
                             num_workers=args.num_workers, pin_memory=True, drop_last=False)

    aanet = nets.AANet(args.max_disp).to(device)
    if torch.cuda.device_count() > 1:
        aanet = torch.nn.DataParallel(aanet)
    aanet.eval()

    inference_time = 0
    num_imgs = 0
    for i, sample in enumerate(test_loader):
        if args.count_time and i == args.num_images:
            break
        left = sample['left'].to(device)
        right = sample['right'].to(device)

        ori_height, ori_width = left.size()[2:]
        if ori_height < args.img_height or ori_width < args.img_width:
            top_pad = args.img_height - ori_height
            right_pad = args.img_width - ori_width
            left = F.pad(left, (0, right_pad, top_pad, 0))
            right = F.pad(right, (0, right_pad, top_pad, 0))

        # Warpup
        if i == 0 and args.count_time:
            with torch.no_grad():
                for _ in range(10):
                    aanet(left, right)

        num_imgs += left.size(0)

        with torch.no_grad():
            time_start = time.perf_counter()
            pred_disp = aanet(left, right)[-1]  # [B, H, W]
            inference_time += time.perf_counter() - time_start

        for b in range(pred_disp.size(0)):
            disp = pred_disp[b].detach().cpu().numpy()
            np.save('disp_%d_%d.npy' % (i, b), disp)

    print('=> Mean inference time for %d images: %.3fs' % (num_imgs, inference_time / num_imgs))


if __name__ == '__main__':
    main()
