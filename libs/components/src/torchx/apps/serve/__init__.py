"""``serve``: register a model archive with TorchServe."""
