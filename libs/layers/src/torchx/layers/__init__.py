"""Keras-style layers with shape inference that build plain PyTorch modules.

Construct a layer with only what cannot be inferred (``L.Linear(20)``); its input
size is read from the first tensor or :class:`Placeholder` it is called on.
"""

from ._activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from ._attention import MultiheadAttention, TransformerDecoderLayer, TransformerEncoderLayer
from ._conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ._embedding import Embedding, EmbeddingBag
from ._errors import ShapeError, SpecError
from ._functional import Functional
from ._lambda import Lambda, register_lambda, registered_lambdas
from ._layer import SPEC_FORMAT_VERSION, Layer, TorchLayer
from ._linear import Bilinear, Identity, Linear
from ._merge import Add, Average, Concat, Maximum, Minimum, Multiply, Subtract
from ._norm import (
    BatchNorm1d,
    BatchNorm2d,
    BatchNorm3d,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LayerNorm,
    LocalResponseNorm,
    RMSNorm,
)
from ._padding import (
    CircularPad1d,
    CircularPad2d,
    CircularPad3d,
    ConstantPad1d,
    ConstantPad2d,
    ConstantPad3d,
    ReflectionPad1d,
    ReflectionPad2d,
    ReflectionPad3d,
    ReplicationPad1d,
    ReplicationPad2d,
    ReplicationPad3d,
    ZeroPad1d,
    ZeroPad2d,
    ZeroPad3d,
)
from ._placeholder import Placeholder, concat, stack
from ._pooling import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    AvgPool1d,
    AvgPool2d,
    AvgPool3d,
    FractionalMaxPool2d,
    FractionalMaxPool3d,
    LPPool1d,
    LPPool2d,
    LPPool3d,
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
)
from ._recurrent import GRU, LSTM, RNN
from ._reshape import Flatten, Permute, Reshape, Unflatten, View
from ._resize import PixelShuffle, PixelUnshuffle, Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from ._sequential import Sequential
from ._spec import from_spec, load_spec, save_spec
from ._summary import summary
from ._time_distributed import TimeDistributed

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "GRU", "LSTM", "RNN", "SELU", "SPEC_FORMAT_VERSION",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "Add", "AlphaDropout", "Average", "AvgPool1d",
    "AvgPool2d", "AvgPool3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "Concat", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
    "Embedding", "EmbeddingBag", "FeatureAlphaDropout", "Flatten", "FractionalMaxPool2d",
    "FractionalMaxPool3d", "Functional", "GroupNorm", "Hardshrink", "Hardsigmoid",
    "Hardswish", "Hardtanh", "Identity", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "Lambda", "Layer", "LayerNorm", "LeakyReLU", "Linear",
    "LocalResponseNorm", "LogSigmoid", "LogSoftmax", "MaxPool1d", "MaxPool2d", "MaxPool3d",
    "Maximum", "Minimum", "Mish", "MultiheadAttention", "Multiply", "PReLU", "Permute",
    "PixelShuffle", "PixelUnshuffle", "Placeholder", "RMSNorm", "RReLU", "ReLU", "ReLU6",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
    "ReplicationPad2d", "ReplicationPad3d", "Reshape", "Sequential", "ShapeError", "SiLU",
    "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign",
    "SpecError", "Subtract", "Tanh", "Tanhshrink", "Threshold", "TimeDistributed",
    "TorchLayer", "TransformerDecoderLayer", "TransformerEncoderLayer", "Unflatten",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d", "View", "ZeroPad1d",
    "ZeroPad2d", "ZeroPad3d", "concat", "from_spec", "load_spec", "register_lambda",
    "registered_lambdas", "save_spec", "stack", "summary",
]
