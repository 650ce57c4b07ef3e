"""torch.nn of the numpy stand-in: only `functional`."""
from . import functional

__all__ = ["functional"]
