"""
Base default handler to load torchscript or eager mode [state_dict] models
Also, provides handle method per torch serve custom model specification
"""
import abc
import importlib.util
import logging
import os

import torch

logger = logging.getLogger(__name__)


class BaseHandler(abc.ABC):
    """
    Base default handler to load torchscript or eager mode [state_dict] models
    """

    def __init__(self):
        self.model = None
        self.mapping = None
        self.device = None
        self.initialized = False
        self.context = None
        self.manifest = None

    def initialize(self, context):
        properties = context.system_properties
        self.device = torch.device("cuda:" + str(properties.get("gpu_id"))
                                   if torch.cuda.is_available() else "cpu")
        self.manifest = context.manifest
        model_dir = properties.get("model_dir")
        serialized_file = self.manifest['model']['serializedFile']
        model_pt_path = os.path.join(model_dir, serialized_file)
        model_file = self.manifest['model'].get('modelFile', '')
        if model_file:
            logger.debug('Loading eager model')
            self.model = self._load_pickled_model(model_dir, model_file, model_pt_path)
        else:
            logger.debug('Loading torchscript model')
            self.model = torch.jit.load(model_pt_path, map_location=self.device)
        self.model.to(self.device)
        self.model.eval()
        self.initialized = True

    def _load_pickled_model(self, model_dir, model_file, model_pt_path):
        model_def_path = os.path.join(model_dir, model_file)
        spec = importlib.util.spec_from_file_location("model", model_def_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model_class = getattr(module, module.MODEL_CLASS)
        model = model_class()
        model.load_state_dict(torch.load(model_pt_path, map_location=self.device))
        return model

    def preprocess(self, data):
        return torch.as_tensor(data, device=self.device)

    def inference(self, data, *args, **kwargs):
        marshalled_data = data.to(self.device)
        results = self.model(marshalled_data, *args, **kwargs)
        return results

    def postprocess(self, data):
        return data.tolist()

    def handle(self, data, context):
        data = self.preprocess(data)
        data = self.inference(data)
        data = self.postprocess(data)
        return data
