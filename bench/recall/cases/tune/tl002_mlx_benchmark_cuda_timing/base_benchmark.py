from time import time

from config import USE_MLX

if USE_MLX:
    import mlx.core as mx

import torch


class BaseBenchmark:
    """
    Base class for benchmarking different operations or layers.
    """

    def __init__(self, **kwargs):
        self.device = None
        self.y = []
        self.args_str = " ".join([f"{k[:3]}={v}" for k, v in kwargs.items()])
        self.kwargs = kwargs

    def compute_inputs(self, framework, device=None):
        dims = []
        for d in ["dim1", "dim2", "dim3"]:
            if d in self.kwargs:
                dim = self.kwargs[d].split("x")
                dims.append([int(i) for i in dim])

        if framework == "mlx":
            self.inputs = [mx.random.normal(dim).astype(mx.float32) for dim in dims]
        else:
            self.inputs = [
                torch.randn(dim, device=device, dtype=torch.float32) for dim in dims
            ]

    def additional_preprocessing(self, framework=None):
        pass

    def forward_mlx(self, **kwargs):
        raise NotImplementedError

    def forward_torch(self, **kwargs):
        raise NotImplementedError

    def run(self, framework, device=None, **kwargs) -> float:
        """
        Runs the benchmark and measures the duration of a forward pass.
        """
        self.compute_inputs(framework, device)
        self.additional_preprocessing(framework)

        if framework == "mlx":
            forward_fn = self.forward_mlx
        elif framework == "torch":
            self.device = device
            forward_fn = self.forward_torch
        else:
            raise ValueError("Invalid framework.")

        # The first measure is dropped: it is usually slower because of the cold start.
        duration = [self._measure_runtime(forward_fn, **kwargs) for _ in range(2)][1]
        return duration * 1000

    def _measure_runtime(self, fn, **kwargs) -> float:
        tic = time()
        fn(**kwargs)

        duration = time() - tic

        return duration

    def sync_mps_if_needed(self):
        """
        Call this function after every torch implementation to ensure
        the mps execution has finished.
        """
        if self.device == torch.device("mps"):
            torch.mps.synchronize()
