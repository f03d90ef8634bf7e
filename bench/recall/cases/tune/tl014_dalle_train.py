import argparse

import torch
from torch.optim import Adam
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

from dalle_pytorch import DALLE, DiscreteVAE
from dalle_pytorch.loader import TextImageDataset

parser = argparse.ArgumentParser()
parser.add_argument('--image_text_folder', type=str, required=True)
parser.add_argument('--epochs', type=int, default=20)
parser.add_argument('--batch_size', type=int, default=4)
parser.add_argument('--distributed', action='store_true')
args = parser.parse_args()

EPOCHS = args.epochs
BATCH_SIZE = args.batch_size
LEARNING_RATE = 3e-4
GRAD_CLIP_NORM = 0.5

if args.distributed:
    torch.distributed.init_process_group(backend='nccl')
    local_rank = torch.distributed.get_rank() % torch.cuda.device_count()
    torch.cuda.set_device(local_rank)

ds = TextImageDataset(args.image_text_folder, text_len=256, image_size=256)
if args.distributed:
    data_sampler = DistributedSampler(ds, num_replicas=torch.distributed.get_world_size(),
                                      rank=torch.distributed.get_rank())
else:
    data_sampler = None

dl = DataLoader(ds, batch_size=BATCH_SIZE, shuffle=not data_sampler, drop_last=True,
                sampler=data_sampler, num_workers=4)

vae = DiscreteVAE(image_size=256, num_layers=3, num_tokens=8192)
dalle = DALLE(dim=512, vae=vae, num_text_tokens=10000, text_seq_len=256, depth=2, heads=8).cuda()
opt = Adam(dalle.parameters(), lr=LEARNING_RATE)

for epoch in range(EPOCHS):
    for i, (text, images) in enumerate(dl):
        text, images = map(lambda t: t.cuda(), (text, images))
        loss = dalle(text, images, return_loss=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(dalle.parameters(), GRAD_CLIP_NORM)
        opt.step()
        opt.zero_grad()
        if i % 10 == 0:
            print(epoch, i, f'loss - {loss.item()}')
