"""Defines the DenseNet network."""
from torch import nn

from vulcanai.models.basenetwork import BaseNetwork


class DenseNet(BaseNetwork):
    def __init__(self, name, in_dim, config, num_classes, **kwargs):
        super(DenseNet, self).__init__(name, config, in_dim=in_dim, num_classes=num_classes, **kwargs)
        layers = []
        prev = in_dim
        for units in config["dense_units"]:
            layers += [nn.Linear(prev, units), nn.BatchNorm1d(units), nn.ReLU(), nn.Dropout(config["dropout"])]
            prev = units
        self.network = nn.Sequential(*layers)
        self.out = nn.Linear(prev, num_classes)

    def forward(self, x):
        return self.out(self.network(x.flatten(1)))
