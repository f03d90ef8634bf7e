"""torchlint: a static checker and runtime probe for PyTorch training code."""

__version__ = "0.1.0"

__all__ = ["__version__", "check_source", "check_paths", "Config", "Finding"]


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    # Keep `import torchlint` cheap: the API pulls in LibCST only when used.
    if name in ("check_source", "check_paths"):
        from torchlint import api

        return getattr(api, name)
    if name == "Config":
        from torchlint.config import Config

        return Config
    if name == "Finding":
        from torchlint.finding import Finding

        return Finding
    raise AttributeError(name)
