import torch

from olive.hardware import Device


class PyTorchModel:
    def __init__(self, model_path=None, model_loader=None, name=None):
        self.model_path = model_path
        self.model_loader = model_loader
        self.name = name

    def load_model(self) -> torch.nn.Module:
        if self.model_loader is not None:
            return self.model_loader(self.model_path)
        return torch.load(self.model_path)

    def prepare_session(self, inference_settings=None, device: Device = Device.CPU):
        return self.load_model().eval()
