"""To run:

python -m apps.sft.main --config apps/sft/llama3_8b.yaml
"""

import sys

import torch
import torchtitan.experiments.forge.train_spec as forge_train_spec
from omegaconf import DictConfig, OmegaConf
from torchtitan.components.loss import LossFunction
from torchtitan.components.lr_scheduler import LRSchedulersContainer
from torchtitan.components.optimizer import OptimizersContainer
from torchtitan.distributed import ParallelDims, utils as dist_utils
from torchtitan.experiments.forge.engine import ForgeEngine
from torchtitan.experiments.forge.job_config import ForgeJobConfig
from tqdm import tqdm

from forge.data.datasets.packed import PackedDataset, TextPacker
from forge.data.datasets.sft_dataset import AlpacaToMessages, sft_iterable_dataset
from forge.data.tokenizer import HuggingFaceModelTokenizer
from forge.data.collate import collate_packed


class ForgeSFTRecipe(ForgeEngine):
    job_config: ForgeJobConfig
    train_spec: forge_train_spec.ForgeTrainSpec
    parallel_dims: ParallelDims
    model: list[torch.nn.Module]
    loss_fn: LossFunction
    optimizer: OptimizersContainer
    lr_scheduler: LRSchedulersContainer
    checkpointer: object
    tokenizer: object
    train_dataloader: object
    metric_logging: object

    def __init__(self, job_config: ForgeJobConfig):
        self.current_step = 0
        self.num_training_steps = job_config.training.steps
        self.gradient_accumulation_steps = 1
        super().__init__(job_config)

    def setup(self):
        self.train_dataloader = self.setup_data()
        self.checkpointer.load(step=self.current_step)

    def setup_data(self):
        tokenizer = HuggingFaceModelTokenizer(
            tokenizer_json_path="/tmp/Llama-3.1-8B-Instruct/tokenizer.json",
            tokenizer_config_json_path="/tmp/Llama-3.1-8B-Instruct/tokenizer_config.json",
            generation_config_path="/tmp/Llama-3.1-8B-Instruct/generation_config.json",
        )
        dataset = sft_iterable_dataset(model_transform=tokenizer, message_transform=AlpacaToMessages(),
                                       path="yahma/alpaca-cleaned", split="train")
        packer = TextPacker(padding_idx=0)
        dataset = PackedDataset(dataset=dataset, packer=packer, target_tokens_per_pack=1024)
        return torch.utils.data.DataLoader(dataset, batch_size=8, collate_fn=collate_packed)

    def forward_backward(self, input_dict: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
        model_parts = self.model_parts
        inputs = input_dict["tokens"]
        optional_context_parallel_ctx = (
            dist_utils.create_context_parallel_ctx(
                cp_mesh=self.world_mesh["cp"],
                cp_buffers=[inputs, labels] + [m.freqs_cis for m in model_parts],
                cp_seq_dims=[1, 1] + [0 for _ in model_parts],
                cp_no_restore_buffers={inputs, labels},
                cp_rotate_method=self.job_config.parallelism.context_parallel_rotate_method,
            )
            if self.parallel_dims.cp_enabled
            else None
        )
        with self.train_context(optional_context_parallel_ctx):
            assert len(model_parts) == 1
            with self.maybe_enable_amp:
                pred = model_parts[0](inputs)
                loss = self.loss_fn(pred, labels)
            del pred
            loss.backward()
        return loss

    def train_step(self, batch) -> None:
        labels = batch.pop("labels")
        loss = self.forward_backward(batch, labels)
        self.pbar.update(1)
        self.pbar.set_description(f"{self.current_step}|Loss: {loss}")

        self.optimizers.step()
        self.lr_schedulers.step()

    def train(self) -> None:
        dataloader = iter(self.train_dataloader)
        self.pbar = tqdm(initial=0, total=self.num_training_steps, desc=f"{self.current_step}")

        while self.current_step < self.num_training_steps:
            batch = next(dataloader)
            for k, v in batch.items():
                batch[k] = v.cuda()
            self.train_step(batch)
            self.current_step += 1
            self.checkpointer.save(curr_step=self.current_step, last_step=self.current_step == self.num_training_steps)
        self.pbar.close()

    def cleanup(self) -> None:
        if self.checkpointer:
            self.checkpointer.close()


def recipe_main(cfg: DictConfig) -> None:
    job_config = ForgeJobConfig().to_dict()
    cfg = OmegaConf.merge(job_config, cfg)
    recipe = ForgeSFTRecipe(cfg)
    recipe.setup()
    recipe.train()
    recipe.cleanup()


if __name__ == "__main__":
    recipe_main(OmegaConf.load(sys.argv[sys.argv.index("--config") + 1]))
