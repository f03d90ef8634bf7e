from .SR_model import SRModel


def create_model(opt):
    return SRModel(opt)
