import os

USE_MLX = os.environ.get("USE_MLX", "0") == "1"
