# deepspeech.pytorch's train.py as of April 2017, reduced (argument list shortened, the
# visdom plots, checkpointing and learning-rate annealing trimmed); the data loader and
# decoder modules are imported as in the repository.
import argparse
import time

import torch
from torch.autograd import Variable
from warpctc_pytorch import CTCLoss

from data.data_loader import AudioDataLoader, SpectrogramDataset
from decoder import ArgMaxDecoder
from model import DeepSpeech

parser = argparse.ArgumentParser(description='DeepSpeech pytorch params')
parser.add_argument('--train_manifest', default='data/train_manifest.csv')
parser.add_argument('--test_manifest', default='data/val_manifest.csv')
parser.add_argument('--batch_size', default=20, type=int)
parser.add_argument('--num_workers', default=4, type=int)
parser.add_argument('--hidden_size', default=400, type=int)
parser.add_argument('--hidden_layers', default=4, type=int)
parser.add_argument('--epochs', default=70, type=int)
parser.add_argument('--cuda', default=True, type=bool)
parser.add_argument('--lr', default=3e-4, type=float)
parser.add_argument('--momentum', default=0.9, type=float)
parser.add_argument('--max_norm', default=400, type=int)


def main():
    args = parser.parse_args()
    labels = "_'ABCDEFGHIJKLMNOPQRSTUVWXYZ "
    audio_conf = dict(sample_rate=16000, window_size=.02, window_stride=.01, window='hamming')

    train_dataset = SpectrogramDataset(audio_conf=audio_conf, manifest_filepath=args.train_manifest, labels=labels)
    test_dataset = SpectrogramDataset(audio_conf=audio_conf, manifest_filepath=args.test_manifest, labels=labels)
    train_loader = AudioDataLoader(train_dataset, batch_size=args.batch_size, num_workers=args.num_workers)
    test_loader = AudioDataLoader(test_dataset, batch_size=args.batch_size, num_workers=args.num_workers)

    model = DeepSpeech(rnn_hidden_size=args.hidden_size, nb_layers=args.hidden_layers, num_classes=len(labels))
    decoder = ArgMaxDecoder(labels)
    if args.cuda:
        model = torch.nn.DataParallel(model).cuda()
    criterion = CTCLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum, nesterov=True)

    for epoch in range(args.epochs):
        model.train()
        end = time.time()
        for i, (data) in enumerate(train_loader):
            inputs, targets, input_percentages, target_sizes = data
            inputs = Variable(inputs)
            target_sizes = Variable(target_sizes)
            targets = Variable(targets)

            if args.cuda:
                inputs = inputs.cuda()

            out = model(inputs)
            out = out.transpose(0, 1)  # TxNxH

            seq_length = out.size(0)
            sizes = Variable(input_percentages.mul_(int(seq_length)).int())

            loss = criterion(out, targets, sizes, target_sizes)
            loss = loss / inputs.size(0)  # average the loss by minibatch

            # compute gradient
            optimizer.zero_grad()
            loss.backward()

            torch.nn.utils.clip_grad_norm(model.parameters(), args.max_norm)
            # SGD step
            optimizer.step()

            if args.cuda:
                torch.cuda.synchronize()

            print('Epoch: [{0}][{1}/{2}]\tTime {3:.3f}\tLoss {4:.4f}'.format(
                (epoch + 1), (i + 1), len(train_loader), time.time() - end, loss.data[0]))
            end = time.time()

        total_cer, total_wer = 0, 0
        for i, (data) in enumerate(test_loader):  # test
            inputs, targets, input_percentages, target_sizes = data

            inputs = Variable(inputs)

            # unflatten targets
            split_targets = []
            offset = 0
            for size in target_sizes:
                split_targets.append(targets[offset:offset + size])
                offset += size

            if args.cuda:
                inputs = inputs.cuda()

            out = model(inputs)
            out = out.transpose(0, 1)  # TxNxH
            seq_length = out.size(0)
            sizes = input_percentages.mul_(int(seq_length)).int()

            decoded_output = decoder.decode(out.data, sizes)
            target_strings = decoder.process_strings(decoder.convert_to_strings(split_targets))
            wer, cer = 0, 0
            for x in range(len(target_strings)):
                wer += decoder.wer(decoded_output[x], target_strings[x]) / float(len(target_strings[x].split()))
                cer += decoder.cer(decoded_output[x], target_strings[x]) / float(len(target_strings[x]))
            total_cer += cer
            total_wer += wer

        wer = total_wer / len(test_loader.dataset)
        cer = total_cer / len(test_loader.dataset)
        print('Validation Summary Epoch: [{0}]\tAverage WER {1:.0f}\tAverage CER {2:.0f}'.format(
            epoch + 1, wer * 100, cer * 100))


if __name__ == '__main__':
    main()
