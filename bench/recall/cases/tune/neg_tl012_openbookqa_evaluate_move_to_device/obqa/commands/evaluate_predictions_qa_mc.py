import argparse
import json
import logging
from contextlib import ExitStack
from typing import Any, Dict, Iterable

import torch
import tqdm
from allennlp.common.util import prepare_environment
from allennlp.data import Instance
from allennlp.data.dataset_readers.dataset_reader import DatasetReader
from allennlp.data.iterators import DataIterator
from allennlp.models.archival import load_archive
from allennlp.models.model import Model
from allennlp.nn.util import move_to_device

logger = logging.getLogger(__name__)


def evaluate(model: Model,
             instances: Iterable[Instance],
             data_iterator: DataIterator,
             output_file: str = None,
             eval_type: str = None,
             cuda_device: int = -1) -> Dict[str, Any]:
    model.eval()

    iterator = data_iterator(instances, num_epochs=1)
    logger.info("Iterating over dataset")
    generator_tqdm = tqdm.tqdm(iterator, total=data_iterator.get_num_batches(instances))
    with ExitStack() as stack:
        if output_file is None:
            file_handle = None
        else:
            file_handle = stack.enter_context(open(output_file, 'w'))
        with torch.no_grad():
            for batch in generator_tqdm:
                batch = move_to_device(batch, cuda_device)
                model_output = model(**batch)
                metrics = model.get_metrics()
                if file_handle:
                    id2label = model.vocab.get_index_to_token_vocabulary("labels")
                    _persist_data(file_handle, batch.get("metadata"), model_output, id2label, eval_type)
                description = ', '.join(["%s: %.2f" % (name, value) for name, value in metrics.items()]) + " ||"
                generator_tqdm.set_description(description)

    return model.get_metrics()


def _persist_data(file_handle, metadata, model_output, id2label, eval_type):
    for i, meta in enumerate(metadata):
        probs = model_output["label_probs"][i].cpu().tolist()
        file_handle.write(json.dumps({"id": meta["id"], "label_probs": probs, "eval_type": eval_type}) + "\n")


def evaluate_from_args(args: argparse.Namespace) -> Dict[str, Any]:
    logging.getLogger('allennlp.common.params').disabled = True

    archive = load_archive(args.archive_file, args.cuda_device, args.overrides)
    config = archive.config
    prepare_environment(config)
    model = archive.model
    model.eval()

    dataset_reader = DatasetReader.from_params(config.pop('dataset_reader'))
    evaluation_data_path = args.evaluation_data_file
    logger.info("Reading evaluation data from %s", evaluation_data_path)
    dataset = dataset_reader.read(evaluation_data_path)

    iterator = DataIterator.from_params(config.pop("iterator"))
    iterator.index_with(model.vocab)

    metrics = evaluate(model, dataset, iterator, args.output_file, args.eval_type, args.cuda_device)

    logger.info("Finished evaluating.")
    for key, metric in metrics.items():
        logger.info("%s: %s", key, metric)
    return metrics
