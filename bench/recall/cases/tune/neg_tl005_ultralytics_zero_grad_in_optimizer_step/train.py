import torch

from ultralytics.cfg import get_cfg
from ultralytics.data import build_dataloader, build_yolo_dataset
from ultralytics.engine.trainer import BaseTrainer
from ultralytics.nn.tasks import DetectionModel


def main():
    args = get_cfg("ultralytics/cfg/default.yaml", overrides={"data": "coco128.yaml", "epochs": 100, "batch": 16})
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    model = DetectionModel("yolov8n.yaml", nc=80)
    dataset = build_yolo_dataset(args, "datasets/coco128/images/train2017", args.batch, mode="train")
    train_loader = build_dataloader(dataset, args.batch, args.workers, shuffle=True, rank=-1)
    trainer = BaseTrainer(args, model, train_loader, device)
    trainer._do_train()


if __name__ == "__main__":
    main()
