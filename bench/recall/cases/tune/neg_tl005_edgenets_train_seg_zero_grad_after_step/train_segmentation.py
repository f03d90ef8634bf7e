import torch
from torch.utils.data import DataLoader

from data_loader.segmentation.voc import VOCSegmentation
from loss_fns.segmentation_loss import SegmentationLoss
from model.segmentation.espnetv2 import espnetv2_seg
from utilities.train_eval_seg import train_seg, val_seg
from utilities.utils import save_checkpoint


def main(args):
    device = "cuda" if torch.cuda.device_count() > 0 else "cpu"
    train_dataset = VOCSegmentation(root=args.data_path, train=True, crop_size=args.crop_size)
    val_dataset = VOCSegmentation(root=args.data_path, train=False, crop_size=args.crop_size)
    seg_classes = len(train_dataset.CLASSES)

    model = espnetv2_seg(args)
    criterion = SegmentationLoss(n_classes=seg_classes, loss_type="ce", device=device,
                                 ignore_idx=255, class_wts=None)
    if device == "cuda":
        model = torch.nn.DataParallel(model)
        model = model.cuda()
        criterion = criterion.cuda()

    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, weight_decay=4e-5)
    train_loader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                              pin_memory=True, num_workers=args.workers)
    val_loader = DataLoader(val_dataset, batch_size=args.batch_size, shuffle=False,
                            pin_memory=True, num_workers=args.workers)

    best_miou = 0.0
    for epoch in range(args.epochs):
        for param_group in optimizer.param_groups:
            param_group["lr"] = args.lr * (1 - epoch / args.epochs) ** 0.9
        miou_train, train_loss = train_seg(model, train_loader, optimizer, criterion, seg_classes,
                                           epoch, device=device)
        miou_val, val_loss = val_seg(model, val_loader, criterion, seg_classes, device=device)
        is_best = miou_val > best_miou
        best_miou = max(miou_val, best_miou)
        save_checkpoint({"epoch": epoch + 1, "state_dict": model.state_dict(), "best_miou": best_miou},
                        is_best, args.savedir)
