from operations.matmul import MatMul
from operations.softmax import Softmax

__all__ = ["MatMul", "Softmax"]
