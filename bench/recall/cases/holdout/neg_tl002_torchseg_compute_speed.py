import time

import numpy as np
import torch

from network import BiSeNet


def compute_speed(model, input_size, device, iteration):
    torch.cuda.set_device(device)
    torch.backends.cudnn.benchmark = True

    model.eval()
    model = model.cuda()

    input = torch.randn(*input_size, device=device)

    for _ in range(50):
        model(input)

    print('=========Speed Testing=========')
    torch.cuda.synchronize()
    time_spent = []
    for _ in range(iteration):
        t_start = time.time()
        with torch.no_grad():
            model(input)
        torch.cuda.synchronize()
        time_spent.append(time.time() - t_start)
    torch.cuda.synchronize()
    elapsed_time = np.sum(time_spent)
    print('Elapsed time: [%.2f s / %d iter]' % (elapsed_time, iteration))
    print('Speed Time: %.2f ms / iter    FPS: %.2f' % (elapsed_time / iteration * 1000, iteration / elapsed_time))
    return elapsed_time


if __name__ == '__main__':
    model = BiSeNet(19, is_training=False, criterion=None, ohem_criterion=None)
    compute_speed(model, (1, 3, 1024, 2048), 0, 1000)
