from .label_model import LearningConfig
from .naive_bayes import NaiveBayes

__all__ = ["LearningConfig", "NaiveBayes"]
