"""A root-level package that the recipes import."""
