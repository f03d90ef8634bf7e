import numpy as np
import torch
import torch.nn as nn

from nasbench_pytorch.model.base_ops import OP_MAP, ConvBnRelu
from nasbench_pytorch.model.model_spec import ModelSpec


def Projection(in_channels, out_channels):
    return ConvBnRelu(in_channels, out_channels, 1)


class Placeholder(torch.nn.Module):
    def forward(self, x):
        return x


class Cell(nn.Module):
    def __init__(self, spec, in_channels, out_channels, vertex_channels):
        super(Cell, self).__init__()
        self.dev_param = nn.Parameter(torch.empty(0))
        self.matrix = spec.matrix
        self.num_vertices = np.shape(self.matrix)[0]
        self.vertex_channels = vertex_channels
        self.vertex_op = nn.ModuleList([Placeholder()])
        for t in range(1, self.num_vertices - 1):
            self.vertex_op.append(OP_MAP[spec.ops[t]](self.vertex_channels[t], self.vertex_channels[t]))
        self.input_op = nn.ModuleList([Placeholder()])
        for t in range(1, self.num_vertices):
            if self.matrix[0, t]:
                self.input_op.append(Projection(in_channels, self.vertex_channels[t]))
            else:
                self.input_op.append(Placeholder())
        self.last_inop = self.input_op[self.num_vertices - 1]

    def forward(self, x):
        tensors = [x]
        out_concat = []
        for t, (inmod, outmod) in enumerate(zip(self.input_op, self.vertex_op)):
            if 0 < t < (self.num_vertices - 1):
                fan_in = []
                for src in range(1, t):
                    if self.matrix[src, t]:
                        fan_in.append(tensors[src][:, :self.vertex_channels[t]])
                if self.matrix[0, t]:
                    fan_in.append(inmod(x))
                # perform operation on node
                vertex_input = torch.zeros_like(fan_in[0]).to(self.dev_param.device)
                for val in fan_in:
                    vertex_input += val
                vertex_output = outmod(vertex_input)
                tensors.append(vertex_output)
                if self.matrix[t, self.num_vertices - 1]:
                    out_concat.append(tensors[t])
        if not out_concat:
            outputs = self.last_inop(tensors[0])
        else:
            outputs = out_concat[0] if len(out_concat) == 1 else torch.cat(out_concat, 1)
            if self.matrix[0, self.num_vertices - 1]:
                outputs = outputs + self.last_inop(tensors[0])
        return outputs


class Network(nn.Module):
    def __init__(self, spec, vertex_channels, num_labels=10, in_channels=3, stem_out_channels=128):
        super(Network, self).__init__()
        self.layers = nn.ModuleList([ConvBnRelu(in_channels, stem_out_channels, 3, 1, 1)])
        self.layers.append(Cell(spec, stem_out_channels, stem_out_channels, vertex_channels))
        self.classifier = nn.Linear(stem_out_channels, num_labels)

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.classifier(torch.mean(x, (2, 3)))


if __name__ == "__main__":
    device = torch.device("cuda")
    spec = ModelSpec(np.array([[0, 1, 1], [0, 0, 1], [0, 0, 0]]), ["input", "conv3x3-bn-relu", "output"])
    net = Network(spec, vertex_channels=[128, 128, 128]).to(device)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.025, momentum=0.9)
    for step in range(10):
        inputs = torch.randn(8, 3, 32, 32, device=device)
        loss = net(inputs).logsumexp(1).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
