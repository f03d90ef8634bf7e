from .cls_head import ClsHead

__all__ = ["ClsHead"]
