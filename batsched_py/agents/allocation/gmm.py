"""A Gaussian mixture with diagonal covariances fitted by expectation-maximisation (numpy only):
the thesis' GMM-clustered predictor groups the telemetry into K=3 regimes, one predictor each."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Mixture:
    weights: np.ndarray      # (k,)
    means: np.ndarray        # (k, d)
    variances: np.ndarray    # (k, d)

    def log_likelihoods(self, points: np.ndarray) -> np.ndarray:
        """(n, k): log of weight x density of each point under each component."""
        diff = points[:, None, :] - self.means[None]
        return (np.log(self.weights)[None] - 0.5 * np.sum(np.log(2 * np.pi * self.variances), axis=1)[None]
                - 0.5 * np.sum(diff ** 2 / self.variances[None], axis=2))

    def assign(self, points: np.ndarray) -> np.ndarray:
        """The most likely component of each point."""
        return np.argmax(self.log_likelihoods(points), axis=1)


def fit_mixture(points: np.ndarray, k: int = 3, iterations: int = 100, seed: int = 0,
                floor: float = 1e-6) -> Mixture:
    """EM from ``k`` means seeded as k-means++ does (each next one drawn with probability growing
    with its squared distance to those drawn, so that they fall in different regimes); ``floor``
    keeps variances positive."""
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or len(np.unique(points, axis=0)) < k:
        raise ValueError(f"mixture: {k} components need at least {k} distinct points of shape (n, d)")
    rng = np.random.default_rng(seed)
    seeds = [points[rng.integers(len(points))]]
    while len(seeds) < k:
        far = np.min([np.sum((points - m) ** 2, axis=1) for m in seeds], axis=0)
        seeds.append(points[rng.choice(len(points), p=far / far.sum())])
    mixture = Mixture(np.full(k, 1.0 / k), np.array(seeds), np.tile(points.var(axis=0) + floor, (k, 1)))
    for _ in range(iterations):
        logs = mixture.log_likelihoods(points)
        resp = np.exp(logs - logs.max(axis=1, keepdims=True))
        resp /= resp.sum(axis=1, keepdims=True)
        mass = resp.sum(axis=0) + 1e-12
        means = resp.T @ points / mass[:, None]
        variances = resp.T @ points ** 2 / mass[:, None] - means ** 2 + floor
        mixture = Mixture(mass / len(points), means, np.maximum(variances, floor))
    return mixture
