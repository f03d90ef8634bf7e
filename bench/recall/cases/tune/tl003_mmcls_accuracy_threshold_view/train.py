import torch
import torch.nn as nn
import torchvision

from mmcls.models.heads import ClsHead


class ImageClassifier(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        backbone = torchvision.models.resnet18()
        backbone.fc = nn.Identity()
        self.backbone = backbone
        self.head = ClsHead(512, num_classes)

    def forward_train(self, img, gt_label):
        return self.head.forward_train(self.backbone(img), gt_label)


def main():
    device = torch.device("cuda")
    model = ImageClassifier().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    dataset = torchvision.datasets.FakeData(size=1024, transform=torchvision.transforms.ToTensor())
    loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    for epoch in range(10):
        model.train()
        for img, label in loader:
            img, label = img.to(device), label.to(device)
            losses = model.forward_train(img, label)
            optimizer.zero_grad()
            losses['loss'].backward()
            optimizer.step()
        print(epoch, losses['accuracy'])


if __name__ == "__main__":
    main()
