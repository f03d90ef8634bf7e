from . import functional, layers
