"""Learn the coefficients on task vectors for a dataset with a few shots."""

import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from src.args import parse_arguments
from src.datasets.common import get_dataloader, maybe_dictionarize
from src.datasets.registry import get_dataset
from src.eval import eval_single_dataset
from src.heads import get_classification_head
from src.modeling import ImageEncoder, ImageClassifier
from src.task_vectors import NonLinearTaskVector
from src.utils import cosine_lr
from src.composition import WeightedImageEncoder


def main(args):
    pool = ["Cars", "DTD", "EuroSAT", "GTSRB", "MNIST", "RESISC45", "SUN397", "SVHN"]
    task_vectors = [
        NonLinearTaskVector(f"{args.save}/{dataset}Val/zeroshot.pt", f"{args.save}/{dataset}Val/finetuned.pt")
        for dataset in pool
    ]

    image_encoder = ImageEncoder(args)
    image_encoder = WeightedImageEncoder(image_encoder, task_vectors, blockwise=args.blockwise_coef)
    classification_head = get_classification_head(args, args.target_dataset)
    model = ImageClassifier(image_encoder, classification_head)
    model.freeze_head()
    model = model.cuda()

    dataset = get_dataset(args.target_dataset, model.val_preprocess, location=args.data_location,
                          batch_size=args.batch_size)
    data_loader = get_dataloader(dataset, is_train=True, args=args, image_encoder=None)
    num_batches = len(data_loader)

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=args.wd)
    scheduler = cosine_lr(optimizer, args.lr, 0, args.epoch * num_batches // args.num_grad_accumulation)
    scaler = torch.cuda.amp.GradScaler()

    for epoch in range(args.epoch):
        model.train()
        for i, batch in enumerate(data_loader):
            start_time = time.time()
            step = (i + epoch * num_batches) // args.num_grad_accumulation

            batch = maybe_dictionarize(batch)
            inputs = batch["images"].cuda()
            labels = batch["labels"].cuda()

            with torch.autocast(device_type="cuda", dtype=torch.float16):
                logits = model(inputs)
                loss = F.cross_entropy(logits, labels)

            scaler.scale(loss).backward()

            if (i + 1) % args.num_grad_accumulation == 0:
                scheduler(step)
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()

            if i % args.print_every == 0:
                print(f"Train Epoch: {epoch} [{i}/{num_batches}]\tLoss: {loss.item():.6f}\t"
                      f"Time {time.time() - start_time:.3f}", flush=True)

        model.eval()
        with torch.no_grad():
            metrics = eval_single_dataset(model.image_encoder, args.target_dataset, args)
        print(f"Epoch {epoch}: top-1 {metrics['top1']:.4f}")

    return model.image_encoder.coef.data


if __name__ == "__main__":
    args = parse_arguments()
    main(args)
