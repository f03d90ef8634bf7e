import torch

USE_CUDA = torch.cuda.is_available()
PAD_TOKEN = 0
SOS_CHAR = '<SOS>'
EOS_CHAR = '<EOS>'
args = None
