import argparse
import os

import numpy as np
import torch

import datasets.crowd as crowd
from models import vgg19

parser = argparse.ArgumentParser(description='Test ')
parser.add_argument('--device', default='0', help='assign device')
parser.add_argument('--crop-size', type=int, default=512)
parser.add_argument('--model-path', type=str, default='pretrained_models/model_qnrf.pth')
parser.add_argument('--data-path', type=str, default='data/QNRF-Train-Val-Test')
parser.add_argument('--dataset', type=str, default='qnrf')
args = parser.parse_args()

if __name__ == '__main__':
    os.environ['CUDA_VISIBLE_DEVICES'] = args.device.strip()
    device = torch.device('cuda')
    dataset = crowd.Crowd_qnrf(os.path.join(args.data_path, 'test'), args.crop_size, 8, method='val')
    dataloader = torch.utils.data.DataLoader(dataset, 1, shuffle=False, num_workers=1, pin_memory=True)

    model = vgg19()
    model.to(device)
    model.load_state_dict(torch.load(args.model_path, device))
    image_errs = []
    for inputs, count, name in dataloader:
        inputs = inputs.to(device)
        assert inputs.size(0) == 1, 'the batch size should equal to 1'
        with torch.set_grad_enabled(False):
            outputs, _ = model(inputs)
        img_err = count[0].item() - torch.sum(outputs).item()
        image_errs.append(img_err)

    image_errs = np.array(image_errs)
    mse = np.sqrt(np.mean(np.square(image_errs)))
    mae = np.mean(np.abs(image_errs))
    print('{}: mae {}, mse {}\n'.format(args.model_path, mae, mse))
