"""Training: torchx ships no training loop, since every model's differs.

Run your own training script with a generic component:

- one process: ``torchx run utils.python --script train.py -- --epochs 3``
  (or ``utils.python --c "..."`` for a short inline program);
- distributed: ``torchx run dist.ddp -j 2x4 --script train.py`` (torchrun on every node);
- your own component: a typed function returning ``torchx.specs.AppDef``, run as
  ``torchx run path/to/file.py:fn``.

This module defines no components; it is where pytorch/torchx documented the above.
"""
