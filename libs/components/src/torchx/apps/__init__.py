"""Programs that pytorch/torchx 0.7's components run inside a job, at their 0.7 module
paths: ``python -m torchx.apps.utils.copy_main --src A --dst B`` and so on.

Each module has ``parse_args(argv)`` and ``main(argv)``, and runs ``main`` when executed.
"""
