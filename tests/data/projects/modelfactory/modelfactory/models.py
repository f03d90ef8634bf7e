import torchvision


def build_model(num_classes, device):
    model = torchvision.models.resnet18(num_classes=num_classes)
    model.to(device)
    return model


def build_cpu_model(num_classes):
    return torchvision.models.resnet18(num_classes=num_classes)
