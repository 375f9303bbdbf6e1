"""placelint: static analysis of TensorFlow device placement and parallelism."""

__version__ = "0.1.0"
