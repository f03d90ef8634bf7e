"""Layers that run on whatever device their inputs are on."""
