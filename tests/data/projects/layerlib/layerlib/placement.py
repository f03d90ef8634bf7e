def place_like(tensor, other):
    return tensor.to(other)
