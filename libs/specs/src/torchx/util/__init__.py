"""Small helpers that component tooling written for pytorch/torchx imports."""
