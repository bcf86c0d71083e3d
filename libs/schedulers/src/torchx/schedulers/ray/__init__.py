"""pytorch/torchx 0.7's Ray driver modules: ``ray_common.RayActor`` (one replica to run)
and ``ray_driver`` (runs a list of them on a Ray cluster as one job)."""
