"""The layer examples of the product README, run as written (plus ``import torch``)."""

from __future__ import annotations

import torch
from torch import nn

import torchx.layers as L


def test_single_linear_layer() -> None:
    x = torch.zeros((16, 10))  # batch size 16, input feature size 10
    model = L.Linear(20)  # output feature size 20
    y = model(x)  # model weight and bias are lazily instantiated when you invoke it
    assert y.size() == (16, 20)
    native = model.native_module()
    assert type(native) is nn.Linear
    assert (native.in_features, native.out_features) == (10, 20)


def test_sequential_cnn() -> None:
    model = L.Sequential(
        L.Conv2d(20, kernel_size=5, stride=2, padding=1),
        L.ReLU(),
        L.Conv2d(30, kernel_size=7),  # just tell me the output channel size
        L.BatchNorm2d(),  # input channel dim is inferred
        L.ReLU(),
        L.Conv2d(40, kernel_size=3),
        L.BatchNorm2d(),
        L.ReLU(),
        L.Flatten(),  # output dim after flatten is calculated by TorchX
        L.Linear(80),  # just tell me the hidden size!
        L.ReLU(),
        L.Linear(10),
    )

    x = torch.randn((8, 3, 32, 32))
    y = model(x)
    assert y.size() == (8, 10)
    # the same parameters as the hand-written nn.Sequential, including Linear(1960, 80)
    assert model[9].native_module().in_features == 1960
    hand = nn.Sequential(
        nn.Conv2d(3, 20, kernel_size=5, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(20, 30, kernel_size=7),
        nn.BatchNorm2d(30),
        nn.ReLU(),
        nn.Conv2d(30, 40, kernel_size=3),
        nn.BatchNorm2d(40),
        nn.ReLU(),
        nn.Flatten(),
        nn.Linear(1960, 80),
        nn.ReLU(),
        nn.Linear(80, 10),
    )
    hand.load_state_dict(model.state_dict())
    model.eval()
    hand.eval()
    assert torch.equal(hand(x), model(x))


def _diamond(first_channels: int, extra_hidden: bool) -> tuple[L.Functional, torch.Tensor]:
    # input image shape: (batch_size, channel, H, W)
    xp_input = L.Placeholder((8, 3, 32, 32))

    # definition and connectivity right next to each other!
    # layers take a placeholder and return another placeholder
    xp = L.Conv2d(first_channels, kernel_size=5, stride=2)(xp_input)
    branch1 = L.Conv2d(30, kernel_size=7, padding=2)(xp)  # no need to specify input channel
    branch2 = L.Conv2d(30, kernel_size=5, padding=1)(xp)
    xp = branch1 * branch2
    xp = xp.flatten()
    xp = L.Linear(80)(xp)  # no need to calculate the flattened shape
    if extra_hidden:
        xp = L.Linear(50)(xp)  # added line: Linear layer of 50 hidden units
    xp = L.Linear(10)(xp)

    # `inputs` and `outputs` keywords can each take a single placeholder,
    # a list, or even a dict of placeholders.
    # this defines the signature of model.__call__()
    model = L.Functional(inputs=xp_input, outputs=xp)

    # model is now fully instantiated, we can give it real tensors
    x = torch.randn((8, 3, 32, 32))
    return model, x


def test_functional_diamond() -> None:
    model, x = _diamond(10, extra_hidden=False)
    y = model(x)
    assert y.size() == (8, 10)
    assert model.linear.in_features == 4320  # "4320 is a non-trivial calculate!"
    assert sum(p.numel() for p in model.parameters()) == 760 + 14730 + 7530 + 345680 + 810


def test_functional_diamond_edits() -> None:
    wider, x = _diamond(20, extra_hidden=False)
    assert wider(x).size() == (8, 10)
    assert wider.conv2d_1.in_channels == 20
    deeper, x = _diamond(10, extra_hidden=True)
    assert deeper(x).size() == (8, 10)
    assert [deeper.linear_1.in_features, deeper.linear_1.out_features] == [80, 50]


def test_functional_model_inside_a_plain_module() -> None:
    model, x = _diamond(10, extra_hidden=False)

    class Wrapper(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = model
            self.head = nn.Linear(10, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out: torch.Tensor = self.head(self.body(x))
            return out

    wrapper = Wrapper()
    assert wrapper(x).shape == (8, 2)
    assert len(list(wrapper.parameters())) == len(list(model.parameters())) + 2


def test_spec_round_trip_of_the_seed_cnn() -> None:
    model = L.Sequential(
        L.Conv2d(20, kernel_size=5, stride=2, padding=1), L.ReLU(), L.Flatten(), L.Linear(10)
    )
    spec = model.to_spec()
    again = L.Sequential.from_spec(spec)
    assert again.to_spec() == spec
    x = torch.randn(2, 3, 32, 32)
    assert again(x).shape == (2, 10)
