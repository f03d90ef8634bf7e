import pandas as pd

from snsynth.pytorch.nn import PATECTGAN

data = pd.read_csv("PUMS.csv")
categorical_columns = ["sex", "educ", "race", "married"]

synth = PATECTGAN(epsilon=3.0, batch_size=500, cuda=True)
synth.train(data, categorical_columns=categorical_columns)
