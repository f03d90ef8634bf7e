import time

import numpy as np
import torch

from network import MyNetwork


def test_speed():
    sum_time = list()
    model = MyNetwork(30).cuda()
    for i in range(50):
        data = torch.randn(1, 3, 768, 768).cuda()
        torch.cuda.synchronize()
        torch.cuda.synchronize()
        start = time.perf_counter()
        output = model(data)
        # torch.cuda.synchronize()
        end = time.perf_counter()
        print(end - start)
        if i >= 10:
            sum_time.append(end - start)
    print('mean time: ', np.mean(sum_time), 'FPS: ', 1 / np.mean(sum_time))


if __name__ == '__main__':
    test_speed()
