"""Model interpretability: torchx ships no interpretability app, since what to inspect
depends on the model.

Write the analysis as your own script (Captum works well for PyTorch models) and run it
with ``torchx run utils.python --script interpret.py`` or as your own component.

This module defines no components; it is where pytorch/torchx documented the above.
"""
