"""The package version, in one place: read by pyproject.toml (setuptools dynamic version), by
``kernel_gym.__version__`` and by the verification cache key, without importing anything else."""

__version__ = "0.1.0"
