from tez.model import Model
