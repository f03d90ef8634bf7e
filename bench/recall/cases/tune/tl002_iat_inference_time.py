import argparse
import time

import torch
from torch.utils.data import DataLoader

from data_loaders.lol import lowlight_loader_new
from model.IAT_main import IAT

parser = argparse.ArgumentParser()
parser.add_argument('--gpu_id', type=str, default=0)
parser.add_argument('--img_val_path', type=str, default='/data/LOL/eval15/low/')
config = parser.parse_args()

device = torch.device('cuda')
val_dataset = lowlight_loader_new(images_path=config.img_val_path, mode='test', normalize=False)
val_loader = DataLoader(val_dataset, batch_size=1, shuffle=False, num_workers=1, pin_memory=True)

model = IAT(type='lol').to(device)
model.load_state_dict(torch.load('best_Epoch_lol.pth'))
model.eval()

total_time = 0.0
with torch.no_grad():
    for i, imgs in enumerate(val_loader):
        low_img, high_img = imgs[0].to(device), imgs[1].to(device)
        start = time.time()
        _, _, enhanced_img = model(low_img)
        end = time.time()
        total_time += end - start
print('average inference time: %.4f s' % (total_time / len(val_loader)))
