import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torchvision import datasets, models, transforms

data_dir = "flower_photos/"
train_dir = data_dir + "train/"
test_dir = data_dir + "test/"
classes = ["daisy", "dandelion", "roses", "sunflowers", "tulips"]

data_transform = transforms.Compose([transforms.RandomResizedCrop(224), transforms.ToTensor()])
train_data = datasets.ImageFolder(train_dir, transform=data_transform)
test_data = datasets.ImageFolder(test_dir, transform=data_transform)

batch_size = 20
num_workers = 0
train_loader = torch.utils.data.DataLoader(train_data, batch_size=batch_size, num_workers=num_workers, shuffle=True)
test_loader = torch.utils.data.DataLoader(test_data, batch_size=batch_size, num_workers=num_workers, shuffle=True)

train_on_gpu = torch.cuda.is_available()

vgg16 = models.vgg16(pretrained=True)
for param in vgg16.features.parameters():
    param.requires_grad = False

n_inputs = vgg16.classifier[6].in_features
last_layer = nn.Linear(n_inputs, len(classes))
vgg16.classifier[6] = last_layer

if train_on_gpu:
    vgg16.cuda()

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(vgg16.classifier.parameters(), lr=0.001)

n_epochs = 2

for epoch in range(1, n_epochs + 1):
    train_loss = 0.0
    for batch_i, (data, target) in enumerate(train_loader):
        if train_on_gpu:
            data, target = data.cuda(), target.cuda()
        output = vgg16(data)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
        train_loss += loss.item()

        if batch_i % 20 == 19:
            print("Epoch %d, Batch %d loss: %.16f" % (epoch, batch_i + 1, train_loss / 20))
            train_loss = 0.0

test_loss = 0.0
class_correct = list(0.0 for i in range(5))
class_total = list(0.0 for i in range(5))

vgg16.eval()
for data, target in test_loader:
    if train_on_gpu:
        data, target = data.cuda(), target.cuda()
    output = vgg16(data)
    loss = criterion(output, target)
    test_loss += loss.item() * data.size(0)
    _, pred = torch.max(output, 1)
    correct_tensor = pred.eq(target.data.view_as(pred))
    correct = np.squeeze(correct_tensor.numpy()) if not train_on_gpu else np.squeeze(correct_tensor.cpu().numpy())
    for i in range(len(target)):
        label = target.data[i]
        class_correct[label] += correct[i].item()
        class_total[label] += 1

print("Test Loss: {:.6f}".format(test_loss / len(test_data)))
