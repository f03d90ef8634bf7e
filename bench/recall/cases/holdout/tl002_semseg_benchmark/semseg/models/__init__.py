from .segformer import SegFormer

__all__ = ['SegFormer']
