import argparse
import logging
import os

import torch
import transformers
from torch.nn import CrossEntropyLoss, DataParallel
from torch.utils.data import DataLoader
from transformers import BertTokenizer
from transformers.modeling_gpt2 import GPT2Config, GPT2LMHeadModel
from sklearn.model_selection import train_test_split

from dataset import MyDataset

PAD = '[PAD]'
pad_id = 0
logger = logging.getLogger(__name__)


def setup_train_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--device', default='0,1', type=str, required=False, help='GPUs to use')
    parser.add_argument('--no_cuda', action='store_true')
    parser.add_argument('--model_config', default='config/model_config_dialogue_small.json', type=str)
    parser.add_argument('--vocab_path', default='vocabulary/vocab_small.txt', type=str)
    parser.add_argument('--train_tokenized_path', default='data/train_tokenized.txt', type=str)
    parser.add_argument('--epochs', default=10, type=int)
    parser.add_argument('--batch_size', default=8, type=int)
    parser.add_argument('--lr', default=1.5e-4, type=float)
    parser.add_argument('--warmup_steps', default=2000, type=int)
    parser.add_argument('--gradient_accumulation', default=1, type=int)
    parser.add_argument('--max_grad_norm', default=1.0, type=float)
    parser.add_argument('--num_workers', type=int, default=1)
    return parser.parse_args()


def calculate_loss_and_accuracy(outputs, labels, device):
    logits = outputs[0]
    shift_logits = logits[..., :-1, :].contiguous()
    shift_labels = labels[..., 1:].contiguous().to(device)

    loss_fct = CrossEntropyLoss(ignore_index=pad_id, reduction='sum')
    loss = loss_fct(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))

    _, preds = shift_logits.max(dim=-1)
    not_ignore = shift_labels.ne(pad_id)
    num_targets = not_ignore.long().sum().item()
    correct = ((shift_labels == preds) & not_ignore).float().sum()
    return loss / num_targets, correct / num_targets


def collate_fn(batch):
    max_input_len = max(len(sample) for sample in batch)
    input_ids = [sample + [pad_id] * (max_input_len - len(sample)) for sample in batch]
    return torch.tensor(input_ids, dtype=torch.long)


def train(model, device, train_list, multi_gpu, args):
    train_dataset = MyDataset(train_list)
    train_dataloader = DataLoader(train_dataset, batch_size=args.batch_size, shuffle=True,
                                  num_workers=args.num_workers, collate_fn=collate_fn)
    model.train()
    total_steps = int(len(train_dataset) * args.epochs / args.batch_size / args.gradient_accumulation)
    optimizer = transformers.AdamW(model.parameters(), lr=args.lr, correct_bias=True)
    scheduler = transformers.WarmupLinearSchedule(optimizer, warmup_steps=args.warmup_steps, t_total=total_steps)

    running_loss = 0
    for epoch in range(args.epochs):
        for batch_idx, input_ids in enumerate(train_dataloader):
            input_ids = input_ids.to(device)
            outputs = model.forward(input_ids=input_ids)
            loss, accuracy = calculate_loss_and_accuracy(outputs, labels=input_ids, device=device)
            if multi_gpu:
                loss = loss.mean()
                accuracy = accuracy.mean()
            if args.gradient_accumulation > 1:
                loss = loss / args.gradient_accumulation
                accuracy = accuracy / args.gradient_accumulation
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            if (batch_idx + 1) % args.gradient_accumulation == 0:
                running_loss += loss.item()
                optimizer.step()
                optimizer.zero_grad()
                scheduler.step()
        model_to_save = model.module if hasattr(model, 'module') else model
        model_to_save.save_pretrained(os.path.join('dialogue_model', 'model_epoch{}'.format(epoch + 1)))


def evaluate(model, device, test_list, multi_gpu, args):
    logger.info("start evaluating model")
    model.eval()
    test_dataset = MyDataset(test_list)
    test_dataloader = DataLoader(test_dataset, batch_size=args.batch_size, shuffle=True,
                                 num_workers=args.num_workers, collate_fn=collate_fn)
    with torch.no_grad():
        for batch_idx, input_ids in enumerate(test_dataloader):
            input_ids.to(device)
            outputs = model.forward(input_ids=input_ids)
            loss, accuracy = calculate_loss_and_accuracy(outputs, labels=input_ids, device=device)
            if multi_gpu:
                loss = loss.mean()
                accuracy = accuracy.mean()
            logger.info("evaluate batch {} ,loss {} ,accuracy {}".format(batch_idx, loss, accuracy))
    logger.info("finishing evaluating")


def main():
    args = setup_train_args()
    args.cuda = torch.cuda.is_available() and not args.no_cuda
    device = 'cuda' if args.cuda else 'cpu'
    os.environ["CUDA_VISIBLE_DEVICES"] = args.device

    tokenizer = BertTokenizer(vocab_file=args.vocab_path)
    model_config = GPT2Config.from_json_file(args.model_config)
    model = GPT2LMHeadModel(config=model_config)
    model.resize_token_embeddings(len(tokenizer))
    model.to(device)

    multi_gpu = False
    if args.cuda and torch.cuda.device_count() > 1:
        model = DataParallel(model, device_ids=[int(i) for i in args.device.split(',')])
        multi_gpu = True

    with open(args.train_tokenized_path, "r", encoding="utf8") as f:
        data = f.read()
    data_list = [[int(token) for token in line.split()] for line in data.split("\n")]
    train_list, test_list = train_test_split(data_list, test_size=0.2, random_state=1)

    train(model, device, train_list, multi_gpu, args)
    evaluate(model, device, test_list, multi_gpu, args)


if __name__ == '__main__':
    main()
