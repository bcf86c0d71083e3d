"""Recurrent layers: batch-first, with Keras-style ``return_sequences``/``return_state``."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

from torch import nn

from ._errors import ShapeError
from ._layer import keyword_shapes
from ._modules import RecurrentModule
from ._shapes import Shape, Shapes
from ._torch_layer import TorchLayer

_P = inspect.Parameter


def _params(*extra: tuple[str, Any]) -> tuple[inspect.Parameter, ...]:
    names: list[tuple[str, Any]] = [("hidden_size", _P.empty), ("num_layers", 1), *extra]
    names += [("bias", True), ("dropout", 0.0), ("bidirectional", False)]
    return tuple(_P(n, _P.POSITIONAL_OR_KEYWORD, default=d) for n, d in names)


def check_state(where: str, want: list[Shape], state: Any) -> None:
    """Refuse an ``initial_state`` (its shapes, or one shape) unlike ``want``, the shapes
    of h0 (and c0), None where not known yet."""
    given = [state] if isinstance(state, tuple) else state
    counted = isinstance(given, list) and len(given) == len(want)
    if counted:
        for w, g in zip(want, given, strict=True):
            if (
                not isinstance(g, tuple)
                or len(g) != 3
                or not all(a is None or b is None or a == b for a, b in zip(w, g, strict=True))
            ):
                misfit = g
                break
        else:
            return
    # the expected shapes are written out only for a misfit: this runs on every call
    layout = "(h0, c0), each" if len(want) == 2 else "h0"
    expected = f"{layout} (directions * num_layers, batch, hidden): " + ", ".join(
        f"({w[0]}, {'batch' if w[1] is None else w[1]}, {w[2]})" for w in want
    )
    if not counted:
        raise ShapeError(
            where,
            f"initial_state must be {'a pair (h0, c0)' if len(want) == 2 else 'one tensor h0'}",
            expected=expected,
        )
    raise ShapeError(
        where,
        "initial_state does not fit this layer",
        expected=expected,
        got=misfit if isinstance(misfit, tuple) else None,
        hint="the batch is dimension 1 of a state, as in torch",
    )


class StateCheck:
    """A forward pre-hook on the module a recurrent layer builds, and the one check of a
    run's initial state: every call that runs the module (the layer's own, a Sequential's
    or a Functional's) has it checked against that call's batch."""

    def __init__(self, where: str, want: list[Shape]) -> None:
        self.where = where
        self.want = want  # the state's shapes with the batch left open

    def __call__(self, module: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        state = kwargs.get("initial_state")
        if state is None or not args:
            return
        given = keyword_shapes({"initial_state": state}, False, self.where)["initial_state"]
        batch = args[0].shape[0]
        check_state(self.where, [(w[0], batch, w[2]) for w in self.want], given)


class _Recurrent(TorchLayer):
    """Input ``(batch, time, features)``; ``input_size`` is inferred.

    The output is the last step ``(batch, directions*hidden)``, or every step
    ``(batch, time, directions*hidden)`` with ``return_sequences=True``. With
    ``return_state=True`` the layer returns ``(output, state)`` where ``state`` is
    torch's final hidden state (``(h, c)`` for an LSTM), laid out as torch does:
    ``(directions*num_layers, batch, hidden)``.

    A call may start from ``initial_state=h0`` (``(h0, c0)`` for an LSTM), in that
    same layout, e.g. the state another recurrent layer returned.
    """

    inferred = ("input_size",)
    fixed: ClassVar[dict[str, Any]] = {"batch_first": True}
    extras: ClassVar[dict[str, Any]] = {"return_sequences": False, "return_state": False}
    ndims: ClassVar[tuple[int, ...] | None] = (3,)
    layout = "(batch, time, features)"
    free_axes: ClassVar[tuple[int, ...]] = (1,)
    call_keywords = ("initial_state",)

    def _infer(self, shapes: list[Shape]) -> dict[str, Any]:
        return {"input_size": shapes[0][2]}

    def _wrap(self, native: nn.Module) -> nn.Module:
        assert isinstance(native, nn.RNNBase)
        module = RecurrentModule(native, self.args["return_sequences"], self.args["return_state"])
        module.register_forward_pre_hook(
            StateCheck(self._path(), self._state_shapes(None)), with_kwargs=True
        )
        return module

    def _out_size(self) -> int:
        return int(self.args["hidden_size"])

    def _state_shapes(self, batch: int | None) -> list[Shape]:
        dirs = 2 if self.args["bidirectional"] else 1
        layers = dirs * self.args["num_layers"]
        h: Shape = (layers, batch, self._out_size())
        if isinstance(self, LSTM):
            return [h, (layers, batch, self.args["hidden_size"])]
        return [h]

    def _call_shapes(self, shapes: list[Shape], kwargs: dict[str, Any], out: Shapes) -> Shapes:
        state = kwargs.get("initial_state")
        if state is not None:
            check_state(self._path(), self._state_shapes(shapes[0][0]), state)
        return out

    def _formula(self, shapes: list[Shape]) -> Shapes:
        batch, steps, _ = shapes[0]
        dirs = 2 if self.args["bidirectional"] else 1
        width = dirs * self._out_size()
        out: Shape = (batch, steps, width) if self.args["return_sequences"] else (batch, width)
        if not self.args["return_state"]:
            return out
        h: Shape = (dirs * self.args["num_layers"], batch, self._out_size())
        if isinstance(self, LSTM):
            c: Shape = (dirs * self.args["num_layers"], batch, self.args["hidden_size"])
            return [out, [h, c]]
        return [out, h]


class RNN(_Recurrent):
    torch_cls = nn.RNN
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = _params(("nonlinearity", "tanh"))


class GRU(_Recurrent):
    torch_cls = nn.GRU
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = _params()


class LSTM(_Recurrent):
    torch_cls = nn.LSTM
    params: ClassVar[tuple[inspect.Parameter, ...] | None] = (
        *_params(),
        _P("proj_size", _P.POSITIONAL_OR_KEYWORD, default=0),
    )

    def _out_size(self) -> int:
        return int(self.args["proj_size"] or self.args["hidden_size"])
