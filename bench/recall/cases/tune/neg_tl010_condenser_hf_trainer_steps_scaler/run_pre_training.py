import logging
import os
import sys

from transformers import (AutoConfig, AutoTokenizer, BertForMaskedLM, DataCollatorForWholeWordMask,
                          HfArgumentParser, TrainingArguments, set_seed)

from arguments import DataTrainingArguments, ModelArguments
from data import CondenserCollator
from modeling import CondenserForPretraining
from trainer import CondenserPreTrainer as Trainer

logger = logging.getLogger(__name__)


def main():
    parser = HfArgumentParser((ModelArguments, DataTrainingArguments, TrainingArguments))
    model_args, data_args, training_args = parser.parse_args_into_dataclasses()
    set_seed(training_args.seed)

    train_set = __import__('datasets').load_dataset('json', data_files=data_args.train_path,
                                                    block_size=2 ** 25)['train']
    tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path, use_fast=False)
    config = AutoConfig.from_pretrained(model_args.model_name_or_path)
    model = CondenserForPretraining.from_pretrained(model_args, data_args, training_args)

    data_collator = CondenserCollator(tokenizer=tokenizer, max_seq_length=data_args.max_seq_length)
    trainer = Trainer(model=model, args=training_args, train_dataset=train_set, tokenizer=tokenizer,
                      data_collator=data_collator)
    model.trainer = trainer
    if training_args.do_train:
        trainer.train(model_path=model_args.model_name_or_path
                      if os.path.isdir(model_args.model_name_or_path) else None)
        trainer.save_model()


if __name__ == "__main__":
    main()
