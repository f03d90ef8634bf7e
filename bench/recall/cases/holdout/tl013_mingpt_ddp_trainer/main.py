import torch
from torch.distributed import destroy_process_group, init_process_group
from torch.utils.data import random_split

from char_dataset import CharDataset, DataConfig
from model import GPT, GPTConfig, OptimizerConfig, create_optimizer
from trainer import Trainer, TrainerConfig


def ddp_setup():
    init_process_group(backend="nccl")


def get_train_objs(gpt_cfg: GPTConfig, opt_cfg: OptimizerConfig, data_cfg: DataConfig):
    dataset = CharDataset(data_cfg)
    train_len = int(len(dataset) * data_cfg.train_split)
    train_set, test_set = random_split(dataset, [train_len, len(dataset) - train_len])
    gpt_cfg.vocab_size = dataset.vocab_size
    gpt_cfg.block_size = dataset.block_size
    model = GPT(gpt_cfg)
    optimizer = create_optimizer(model, opt_cfg)
    return model, optimizer, train_set, test_set


def main():
    ddp_setup()
    gpt_cfg = GPTConfig(n_layer=8, n_head=8, n_embd=512)
    opt_cfg = OptimizerConfig(learning_rate=3e-4, weight_decay=0.1)
    data_cfg = DataConfig(path="./data/input.txt", block_size=128, train_split=0.9)
    trainer_cfg = TrainerConfig(max_epochs=10, batch_size=216, data_loader_workers=4, grad_norm_clip=1.0,
                                snapshot_path="gpt_snapshot.pt", save_every=3, use_amp=True)
    model, optimizer, train_data, test_data = get_train_objs(gpt_cfg, opt_cfg, data_cfg)
    trainer = Trainer(trainer_cfg, model, optimizer, train_data, test_data)
    trainer.train()
    destroy_process_group()


if __name__ == "__main__":
    main()
