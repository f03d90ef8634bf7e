import pandas as pd
import torch

from chronos import ChronosPipeline

pipeline = ChronosPipeline.from_pretrained("amazon/chronos-t5-small", device_map="cuda",
                                           torch_dtype=torch.bfloat16)
df = pd.read_csv("https://raw.githubusercontent.com/AileenNielsen/TimeSeriesAnalysisWithPython/master/data/AirPassengers.csv")
forecast = pipeline.predict(torch.tensor(df["#Passengers"]), prediction_length=12, num_samples=20)
print(forecast.shape)
