import argparse
from collections import defaultdict

import torch

from operations import MatMul, Softmax


def run_processes(operations, iterations, device):
    times = defaultdict(dict)
    for op in operations:
        op_name = type(op).__name__ + " / " + op.args_str
        durations = [op.run(framework="torch", device=device) for _ in range(iterations)]
        times[op_name][str(device)] = sum(durations) / iterations
    return times


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()

    device = torch.device("cuda" if torch.cuda.is_available() else "mps")
    operations = [
        MatMul(dim1="1000x64x1024", dim2="1000x1024x64"),
        Softmax(dim1="64x1000000"),
    ]
    for name, by_device in run_processes(operations, args.iterations, device).items():
        print(name, by_device)
