from .encoders import FrozenEncoder


def embed_all(loader):
    encoder = FrozenEncoder(16)
    encoder.eval()
    return [encoder(x) for x in loader]
