from torchnlp.nn.attention import Attention

__all__ = ["Attention"]
