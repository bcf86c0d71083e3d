# ruff: noqa: W291, W293  (the seed text keeps its trailing spaces byte for byte)
"""The device code blocks of the seed README, kept verbatim apart from the one documented
import change (``import torchx as tx`` -> ``import torchx.devices as tx``)."""

from __future__ import annotations

GPU_SCOPING = """
import torchx.devices as tx

with tx.device_scope(2):
    torch.zeros((3, 6))  # on GPU 2 
    
with tx.device_scope('gpu:2'):
    torch.empty(0).new_ones((3, 6))  # on GPU 2 
    
with tx.device_scope(-1):
    torch.ones((3, 6))  # on CPU
"""

NNX_MODULE = """
import torchx.devices as tx
import torch.nn as nn  # builtin
import torchx.nn as nnx

# use it the same way as nn.Module
class MyModel(nnx.Module):
    def __init__(self):
        self.fc1 = nn.Linear(10, 20)
        self.fc2 = nn.Linear(20, 30)
    
    def forward(self, x):
        return self.fc2(self.fc1(x))
        

with tx.device_scope(3):
    x = torch.zeros((4, 10))  # on GPU 3
    model = MyModel()  # still on CPU
    y = model(x)  # this call automatically transfers model to GPU 3
    print(y)  # shape (4, 30), on GPU 3
"""
