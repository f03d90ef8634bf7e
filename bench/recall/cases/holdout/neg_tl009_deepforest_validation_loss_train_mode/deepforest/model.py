import torchvision
from torchvision.models.detection.retinanet import RetinaNet, AnchorGenerator


def create_anchor_generator(sizes=((8, 16, 32, 64, 128, 256, 400),),
                            aspect_ratios=((0.5, 1.0, 2.0),)):
    return AnchorGenerator(sizes=sizes, aspect_ratios=aspect_ratios)


def create_model(num_classes, nms_thresh, score_thresh, backbone=None):
    """RetinaNet on a torchvision ResNet-50 FPN backbone (frozen batch norm, no dropout)."""
    if backbone is None:
        resnet = torchvision.models.detection.retinanet_resnet50_fpn(weights="COCO_V1")
        backbone = resnet.backbone
    model = RetinaNet(backbone=backbone, num_classes=num_classes)
    model.nms_thresh = nms_thresh
    model.score_thresh = score_thresh
    return model
