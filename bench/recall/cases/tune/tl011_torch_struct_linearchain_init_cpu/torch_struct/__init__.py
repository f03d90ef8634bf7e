from .distributions import LinearChainCRF

__all__ = ["LinearChainCRF"]
