"""Training and testing unbiased learning to rank algorithms."""
import argparse
import json
import os
import sys
import time

import torch
from torch.utils.tensorboard import SummaryWriter

import ultra

parser = argparse.ArgumentParser(description='Pipeline commandline argument')
parser.add_argument("--data_dir", type=str, default="./tests/data/")
parser.add_argument("--model_dir", type=str, default="./tests/tmp_model/")
parser.add_argument("--setting_file", type=str, default="./example/offline_setting/dla_exp_settings.json")
parser.add_argument("--batch_size", type=int, default=256)
parser.add_argument("--max_list_cutoff", type=int, default=0)
parser.add_argument("--max_train_iteration", type=int, default=10000)
parser.add_argument("--steps_per_checkpoint", type=int, default=50)
args = parser.parse_args()


def create_model(exp_settings, data_set):
    model = ultra.utils.find_class(exp_settings['learning_algorithm'])(data_set, exp_settings)
    return model


def train(exp_settings):
    train_set = ultra.utils.read_data(args.data_dir, "train", None, args.max_list_cutoff)
    valid_set = ultra.utils.read_data(args.data_dir, "valid", None, args.max_list_cutoff)
    exp_settings['max_candidate_num'] = max(train_set.rank_list_size, valid_set.rank_list_size)
    exp_settings['selection_bias_cutoff'] = min(exp_settings.get('selection_bias_cutoff', 10),
                                                exp_settings['max_candidate_num'])
    train_set.pad(exp_settings['max_candidate_num'])
    valid_set.pad(exp_settings['max_candidate_num'])

    model = create_model(exp_settings, train_set)

    train_input_feed = ultra.utils.find_class(exp_settings['train_input_feed'])(
        model, args.batch_size, exp_settings['train_input_hparams'])
    valid_input_feed = ultra.utils.find_class(exp_settings['valid_input_feed'])(
        model, args.batch_size, exp_settings['valid_input_hparams'])

    train_writer = SummaryWriter(log_dir=args.model_dir + '/train_log')

    step_time, loss = 0.0, 0.0
    current_step = 0
    previous_losses = []
    best_perf = None
    while True:
        start_time = time.time()
        input_feed, info_map = train_input_feed.get_batch(train_set, check_validation=True)
        step_loss, _, summary = model.train(input_feed)
        step_time += (time.time() - start_time) / args.steps_per_checkpoint
        loss += step_loss / args.steps_per_checkpoint
        current_step += 1
        train_writer.add_scalars("Training at step %s" % model.global_step, summary)

        if current_step % args.steps_per_checkpoint == 0:
            print("global step %d learning rate %.4f step-time %.2f loss "
                  "%.4f" % (model.global_step, model.learning_rate, step_time, loss))
            previous_losses.append(loss)

            def validate_model(data_set, data_input_feed):
                it = 0
                summary_list = []
                batch_size_list = []
                while it < len(data_set.initial_list):
                    input_feed, info_map = data_input_feed.get_next_batch(it, data_set, check_validation=False)
                    _, _, summary = model.validation(input_feed)
                    summary_list.append(summary)
                    batch_size_list.append(len(info_map['input_list']))
                    it += batch_size_list[-1]
                return ultra.utils.merge_Summary(summary_list, batch_size_list)

            valid_summary = validate_model(valid_set, valid_input_feed)
            for key, value in valid_summary.items():
                print(key, value)

            if "objective_metric" in exp_settings:
                value = valid_summary[exp_settings["objective_metric"]]
                if best_perf is None or best_perf < value:
                    checkpoint_path = os.path.join(args.model_dir, "%s.ckpt" % exp_settings['learning_algorithm'])
                    torch.save(model.model.state_dict(), checkpoint_path)
                    best_perf = value

            if loss == float('inf'):
                break

            step_time, loss = 0.0, 0.0
            sys.stdout.flush()

            if args.max_train_iteration > 0 and current_step > args.max_train_iteration:
                break
    train_writer.close()


def main(_):
    exp_settings = json.load(open(args.setting_file))
    train(exp_settings)


if __name__ == "__main__":
    main(sys.argv)
