"""
TRAIN GANOMALY

. Example: Run the following command from the terminal.
    run train.py                             \
        --model ganomaly                        \
        --dataset UCSD_Anomaly_Dataset/UCSDped1 \
        --batchsize 32                          \
        --isize 256                         \
        --nz 512                                \
        --ngf 64                               \
        --ndf 64
"""
from lib.data import load_data
from lib.model import Ganomaly
from options import Options


def train():
    opt = Options().parse()
    dataloader = load_data(opt)
    model = Ganomaly(opt, dataloader)
    model.train()


if __name__ == '__main__':
    train()
