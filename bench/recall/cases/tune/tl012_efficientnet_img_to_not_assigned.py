# The reporter's inference snippet from the EfficientNet-PyTorch thread, with the README's label printing.
import json

import torch
from PIL import Image
from torchvision import transforms

from efficientnet_pytorch import EfficientNet

device = torch.device('cuda:0')

model = EfficientNet.from_pretrained('efficientnet-b0')

tfms = transforms.Compose([
    transforms.Resize(224),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
])
img = tfms(Image.open('img.png')).unsqueeze(0)
img.to(device)
model.to(device)

labels_map = json.load(open('examples/simple/labels_map.txt'))
labels_map = [labels_map[str(i)] for i in range(1000)]

model.eval()
with torch.no_grad():
    outputs = model(img)

print('-----')
for idx in torch.topk(outputs, k=5).indices.squeeze(0).tolist():
    prob = torch.softmax(outputs, dim=1)[0, idx].item()
    print('{label:<75} ({p:.2f}%)'.format(label=labels_map[idx], p=prob * 100))
