import argparse
import json

import torch

from data_utils.task_def import TaskType
from mt_dnn.batcher import BatchGen
from mt_dnn.inference import eval_model
from mt_dnn.model import MTDNNModel

parser = argparse.ArgumentParser()
parser.add_argument("--prep_input", type=str, required=True)
parser.add_argument("--checkpoint", type=str, required=True)
parser.add_argument("--score", type=str, help="score output path")
parser.add_argument('--with_label', action="store_true")
parser.add_argument('--cuda', type=bool, default=torch.cuda.is_available())
args = parser.parse_args()


def dump(path, data):
    with open(path, 'w') as f:
        json.dump(data, f)


state_dict = torch.load(args.checkpoint)
config = state_dict['config']
config["cuda"] = args.cuda
model = MTDNNModel(config, state_dict=state_dict)
test_data = BatchGen(BatchGen.load(args.prep_input, False, task_type=TaskType.Classification, maxlen=512),
                     batch_size=8, dropout_w=0, gpu=args.cuda, is_train=False)

test_metrics, test_predictions, scores, golds, test_ids = eval_model(model, test_data, metric_meta=[],
                                                                    use_cuda=args.cuda,
                                                                    with_label=args.with_label)
results = {'metrics': test_metrics, 'predictions': test_predictions, 'uids': test_ids, 'scores': scores}
dump(args.score, results)
