"""Action-value approximators for Perez et al.'s SARSA: an echo state network (ESN) and its
feed-forward variant, both with linear readouts fitted by ridge regression (numpy only; reservoirpy
is not needed for a 100-neuron reservoir).

ESN: 100 sigmoid neurons, reservoir weights with 10% connectivity scaled to spectral radius 0.9,
state ``x_t = sigmoid(W_in u_t + W x_{t-1} + b)``; features ``[x_t, u_t, 1]``, one linear readout per
action.  The feed-forward variant is the same random sigmoid layer without the recurrent weights
(W = 0): no memory of earlier observations.
"""
from __future__ import annotations

from typing import Any

import numpy as np

KINDS = ("esn", "ff")


class Reservoir:
    def __init__(self, n_inputs: int, kind: str = "esn", neurons: int = 100, connectivity: float = 0.1,
                 spectral_radius: float = 0.9, input_scale: float = 1.0, seed: int = 0):
        if kind not in KINDS:
            raise ValueError(f"approximator {kind!r}: choose one of {', '.join(KINDS)}")
        if not isinstance(neurons, int) or neurons < 1:
            raise ValueError(f"neurons: {neurons!r} is not a positive integer")
        if not 0 < connectivity <= 1:
            raise ValueError(f"connectivity: {connectivity!r} is not in (0, 1]")
        rng = np.random.default_rng(seed)
        self.kind = kind
        self.w_in = rng.uniform(-input_scale, input_scale, (neurons, n_inputs))
        self.bias = rng.uniform(-0.5, 0.5, neurons)
        w = np.zeros((neurons, neurons))
        if kind == "esn":
            w = rng.normal(0.0, 1.0, (neurons, neurons)) * (rng.random((neurons, neurons)) < connectivity)
            radius = max(abs(np.linalg.eigvals(w))) if w.any() else 0.0
            if radius > 0:
                w *= spectral_radius / radius
        self.w = w
        self.state = np.zeros(neurons)

    def reset(self) -> None:
        self.state = np.zeros_like(self.state)

    def features(self, u: np.ndarray) -> np.ndarray:
        """Advance the reservoir with input ``u``; the readout's features."""
        u = np.asarray(u, float).reshape(-1)
        self.state = 1.0 / (1.0 + np.exp(-(self.w_in @ u + self.w @ self.state + self.bias)))
        return np.concatenate([self.state, u, [1.0]])

    def arrays(self) -> dict[str, Any]:
        return {"w_in": self.w_in, "w": self.w, "bias": self.bias}

    @classmethod
    def from_arrays(cls, kind: str, arrays: Any) -> "Reservoir":
        r = cls.__new__(cls)
        r.kind, r.w_in, r.w, r.bias = kind, arrays["w_in"], arrays["w"], arrays["bias"]
        r.state = np.zeros(len(r.bias))
        return r


class Readout:
    """One linear readout per action, refitted by ridge regression on a batch of targets."""

    def __init__(self, n_features: int, n_actions: int, ridge: float = 1e-2):
        self.weights = np.zeros((n_actions, n_features))
        self.ridge = ridge

    def values(self, phi: np.ndarray) -> np.ndarray:
        return self.weights @ phi

    def fit(self, phis: np.ndarray, actions: np.ndarray, targets: np.ndarray) -> None:
        eye = self.ridge * np.eye(phis.shape[1])
        for a in np.unique(actions):
            x, y = phis[actions == a], targets[actions == a]
            self.weights[a] = np.linalg.solve(x.T @ x + eye, x.T @ y)
