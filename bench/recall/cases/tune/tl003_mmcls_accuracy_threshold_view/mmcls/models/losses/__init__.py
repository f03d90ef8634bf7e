from .accuracy import Accuracy, accuracy

__all__ = ["Accuracy", "accuracy"]
