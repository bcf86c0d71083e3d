import torch

# The test tensors are tiny; one intra-op thread avoids oversubscribing a shared CPU.
torch.set_num_threads(1)
