# The maintainer's FPS measurement from the light-weight-refinenet thread, filled in with
# the repository's model factory (the numbers of warm-up and measured runs are the answer's
# placeholders made concrete).
import time

import numpy as np
import torch

from models.resnet import rf_lw50

n_warm_ups = 10
n_measurements = 100

model = rf_lw50(num_classes=21, pretrained=False).cuda().eval()

# warm-up
with torch.no_grad():
    for _ in range(n_warm_ups):
        inputs = torch.randn(1, 3, 512, 512).cuda()
        outputs = model(inputs)

# measuring
times = []
with torch.no_grad():
    for _ in range(n_measurements):
        start = time.time()
        inputs = torch.randn(1, 3, 512, 512).cuda()
        outputs = model(inputs)
        torch.cuda.synchronize()
        times.append(time.time() - start)

print("Avg time: {:.5f}s".format(np.mean(times)))
print("FPS: {:.1f}".format(1.0 / np.mean(times)))
