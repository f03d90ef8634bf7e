import time
from typing import Any, Dict, List

import torch
from torch.utils.data import DataLoader

from olive.common.utils import tensor_data_to_device
from olive.evaluator.metric import Metric, MetricType, get_latency_config_from_metric
from olive.hardware import Device
from olive.model import PyTorchModel


class OliveEvaluator:
    def evaluate(self, model, data_root, metrics: List[Metric], device: Device = Device.CPU,
                 execution_providers=None) -> Dict[str, Any]:
        results = {}
        for metric in metrics:
            dataloader = metric.user_config.dataloader_func(data_root, metric.user_config.batch_size)
            if metric.type == MetricType.ACCURACY:
                results[metric.name] = self._evaluate_accuracy(model, metric, dataloader, device)
            elif metric.type == MetricType.LATENCY:
                latencies = self._evaluate_latency(model, metric, dataloader, device)
                results[metric.name] = sum(latencies) / len(latencies) * 1000
        return results


class PyTorchEvaluator(OliveEvaluator):
    @staticmethod
    def _device_string_to_torch_device(device: Device):
        return torch.device("cuda") if device == Device.GPU else torch.device(device)

    @torch.no_grad()
    def _evaluate_accuracy(self, model: PyTorchModel, metric: Metric, dataloader: DataLoader,
                           device: Device = Device.CPU):
        session = model.prepare_session(inference_settings=None, device=device)
        torch_device = PyTorchEvaluator._device_string_to_torch_device(device)
        session.to(torch_device)
        correct, total = 0, 0
        for input_data, labels in dataloader:
            input_data = tensor_data_to_device(input_data, torch_device)
            result = session(**input_data) if isinstance(input_data, dict) else session(input_data)
            predictions = result.argmax(dim=-1).cpu()
            correct += (predictions == labels).sum().item()
            total += labels.numel()
        return correct / total

    @torch.no_grad()
    def _evaluate_latency(self, model: PyTorchModel, metric: Metric, dataloader: DataLoader,
                          device: Device = Device.CPU) -> List[float]:
        warmup_num, repeat_test_num, sleep_num = get_latency_config_from_metric(metric)
        session = model.prepare_session(inference_settings=None, device=device)

        input_data, _ = next(iter(dataloader))
        torch_device = PyTorchEvaluator._device_string_to_torch_device(device)
        if torch_device:
            session.to(torch_device)
            input_data = tensor_data_to_device(input_data, torch_device)

        input_is_dict = isinstance(input_data, dict)

        # warm up
        for _ in range(warmup_num):
            if input_is_dict:
                session(**input_data)
            else:
                session(input_data)

        latencies = []
        for _ in range(repeat_test_num):
            t = time.perf_counter()
            if input_is_dict:
                session(**input_data)
            else:
                session(input_data)
            latencies.append(time.perf_counter() - t)
            time.sleep(sleep_num)

        return latencies
