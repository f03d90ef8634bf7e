import numpy as np

from labelmodels import LearningConfig, NaiveBayes

n, m, k = 100000, 20, 2
votes = np.random.randint(0, k + 1, size=(n, m))

config = LearningConfig()
config.epochs = 10
config.step_schedule = 3
model = NaiveBayes(k, m)
model.estimate_label_model(votes, config=config)
