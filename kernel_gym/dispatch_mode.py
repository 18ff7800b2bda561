"""A TorchDispatchMode base for the package's tracing modes, without PyTorch's dynamo guard.

PyTorch wraps every ``TorchDispatchMode`` subclass's ``__torch_dispatch__`` in
``torch._dynamo.disable``, which imports ``torch._dynamo`` on the mode's first dispatch: 2.4 CPU s
per process, paid by every published-shape check and reference trace. These modes never run
under ``torch.compile``, so they opt out (the opt-out PyTorch's own ``_should_skip_dynamo``
docstring shows)."""

from __future__ import annotations

from torch.utils._python_dispatch import TorchDispatchMode


class PlainDispatchMode(TorchDispatchMode):
    """``TorchDispatchMode`` whose ``__torch_dispatch__`` is left as written (no dynamo wrapper)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False
