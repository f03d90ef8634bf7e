import math
import os
import pickle as pkl
import time

import numpy as np
import torch
import torch.nn as nn
from torch import optim

import mmd.modules.models as models
import mmd.modules.torch_utils as torch_utils
import mmd.utils.utils as utils


def optimizer_wrapper(model, optim_type, lr, weight_decay):
    """Wrapper for different optimizers"""
    if optim_type == 'adam':
        optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    elif optim_type == 'adadelta':
        optimizer = optim.Adadelta(model.parameters(), lr=lr, weight_decay=weight_decay)
    elif optim_type == 'sgd':
        optimizer = optim.SGD(model.parameters(), lr=lr, weight_decay=weight_decay)
    else:
        raise NotImplementedError("Not avaiable optimizer")
    return optimizer


def evaluate(valid_pkl_path, loss_criterion, model, config, vocab_size, annoyIndex,
             annoyPkl, context_size, use_cuda=False):
    model.eval()
    # with torch.no_grad():
    valid_data = pkl.load(open(valid_pkl_path, 'rb'))
    batch_size = config['data']['batch_size']
    num_valid_batch = int(math.ceil(float(len(valid_data)) / float(batch_size)))
    total_loss = 0.
    n_total_words = 0.
    valid_start = time.time()
    for batch_id in range(num_valid_batch):
        batch_data = valid_data[batch_id * batch_size:(batch_id + 1) * batch_size]
        text_enc_input, text_enc_in_len, image_enc_input, dec_text_input, \
            dec_out_seq, dec_seq_length = utils.get_batch_mmd_data(
                batch_data, config['data']['start_id'], config['data']['end_id'],
                config['data']['pad_id'], config['data']['image_rep_size'], annoyIndex, annoyPkl,
                use_cuda=use_cuda, volatile=True)
        dec_output_prob = model(text_enc_input, image_enc_input, text_enc_in_len,
                                dec_text_input, dec_out_seq, context_size=context_size,
                                teacher_forcing_ratio=1, decode=False, use_cuda=use_cuda)
        loss_val = loss_criterion(dec_output_prob.contiguous().view(-1, vocab_size),
                                  dec_out_seq.view(-1))
        n_total_words += dec_seq_length.float().sum().item()
        total_loss += loss_val.item()
    epoch_loss = total_loss / n_total_words
    valid_elapsed = (time.time() - valid_start) / 60
    print('Valid Loss: Loss: %.6f, Perplexity: %5.4f, Run Time:%5.4f'
          % (epoch_loss, np.exp(epoch_loss), valid_elapsed))


def main(args):
    config = utils.read_json_config(args.config_file_path)
    torch.manual_seed(config['training']['seed'])
    use_cuda = torch.cuda.is_available()
    vocab = pkl.load(open(args.vocab_path, 'rb'))[1]
    vocab_size = len(vocab)
    annoyIndex, annoyPkl = utils.load_annoy(args.annoy_file_path, args.annoy_pkl_path)
    model_type = getattr(models, args.model_type)
    model = model_type(src_vocab_size=vocab_size,
                       tgt_vocab_size=vocab_size,
                       src_emb_dim=config['model']['src_emb_dim'],
                       tgt_emb_dim=config['model']['tgt_emb_dim'],
                       enc_hidden_size=config['model']['enc_hidden_size'],
                       dec_hidden_size=config['model']['dec_hidden_size'],
                       context_hidden_size=config['model']['context_hidden_size'],
                       batch_size=config['data']['batch_size'],
                       image_in_size=config['model']['image_in_size'],
                       dropout_enc=config['model']['dropout_enc'],
                       dropout_dec=config['model']['dropout_dec'],
                       dropout_context=config['model']['dropout_context'],
                       max_decode_len=config['model']['max_decode_len'])
    model = torch_utils.gpu_wrapper(model, use_cuda=use_cuda)
    optimizer = optimizer_wrapper(model, config['training']['optimizer'], config['training']['lr'],
                                  config['training']['lr_decay'])
    losses = []
    loss_criterion = nn.CrossEntropyLoss(ignore_index=config['data']['pad_id'])
    loss_criterion = torch_utils.gpu_wrapper(loss_criterion, use_cuda=use_cuda)
    train_data = pkl.load(open(args.train_pkl_path, 'rb'))

    batch_size = config['data']['batch_size']
    num_train_batch = int(math.ceil(float(len(train_data)) / float(batch_size)))
    for epoch in range(config['training']['num_epochs']):
        total_loss = 0.
        n_total_words = 0.
        epoch_start = time.time()
        for batch_id in range(num_train_batch):
            batch_data = train_data[batch_id * batch_size:(batch_id + 1) * batch_size]
            text_enc_input, text_enc_in_len, image_enc_input, dec_text_input, \
                dec_out_seq, dec_seq_length = utils.get_batch_mmd_data(
                    batch_data, config['data']['start_id'], config['data']['end_id'],
                    config['data']['pad_id'], config['data']['image_rep_size'], annoyIndex, annoyPkl,
                    use_cuda=use_cuda)
            # Forward + Backward + Optimize
            optimizer.zero_grad()
            dec_output_prob = model(text_enc_input, image_enc_input, text_enc_in_len,
                                    dec_text_input, dec_out_seq, context_size=args.context_size,
                                    teacher_forcing_ratio=1, use_cuda=use_cuda)
            loss = loss_criterion(dec_output_prob.contiguous().view(-1, vocab_size),
                                  dec_out_seq.view(-1))
            n_words = dec_seq_length.float().sum().item()
            n_total_words += n_words
            loss.backward()
            optimizer.step()
            # Gradient clipping to avoid exploding gradients
            nn.utils.clip_grad_norm_(model.parameters(), config['training']['clip_grad'])
            batch_loss = loss.item() / n_words
            total_loss += loss.item()
            losses.append(batch_loss)
        epoch_loss = total_loss / n_total_words
        print('Epoch Loss: Epoch [%d], Loss: %.6f, Perplexity: %5.5f, Epoch Time:%5.4f'
              % (epoch + 1, epoch_loss, np.exp(epoch_loss), time.time() - epoch_start))
        if (epoch + 1) % config['training']['evaluate_every'] == 0:
            print("\nEvaluation:")
            evaluate(args.valid_pkl_path, loss_criterion, model, config, vocab_size,
                     annoyIndex, annoyPkl, args.context_size, use_cuda=use_cuda)
        if (epoch + 1) % config['training']['save_every'] == 0:
            torch.save(model.state_dict(), os.path.join(args.model_path,
                                                        'model_params_%d.pkl' % (epoch + 1)))
