"""Telemetry and the tandem LSTM predictor (Yi, ch. 3: a learned model of the machines).

Telemetry (:func:`record_telemetry`): the round-robin allocator replays a trace on the emulator's
power/temperature model, sampled every ``period`` s per processor: utilisation u, spare cores c,
cores of the jobs placed in the step j (all over the processor's cores), temperature (C), power (W).

Predictors (torch), from the last ``l`` steps of one processor:

- tandem: LSTM1 maps (u, c, j) to the next utilisation; LSTM2 maps (T, P) with that predicted
  utilisation to a dense layer of 100 and 2 outputs, the next temperature and power;
- single: one LSTM over (u, c, j, T, P), then the same dense head;
- GMM-clustered (:func:`train_clustered`, Table 4.1 only): a Gaussian mixture of K=3 components
  (gmm.py) over the windows' mean utilisation, new cores, temperature and power, and one tandem
  predictor per component, each window predicted by its component's.

A saved predictor (``.pt``) holds its kind, ``l``, hidden size, the processor's cores and the
weights; :func:`load_predictor` refuses a missing file, another kind of file, or a processor size that
is not the one it was trained on, in one line.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import numpy as np

from ...models.thermal import ThermalModel, ThermalParams, add_jobs
from ...errors import BatschedError
from .cluster import Cluster, round_robin
from .cluster_jobs import Jobs
from ...workloads.progress import progress as bar
from .gmm import fit_mixture

FEATURES = ("utilisation", "spare", "new_cores", "temperature", "power")
KINDS = ("tandem", "single")


class PredictorError(BatschedError, ValueError):
    """A missing, foreign or mismatched predictor file (named)."""


def record_telemetry(jobs: Jobs, nb_processors: int, params: ThermalParams = ThermalParams(),
                     period: float = 600.0, progress: bool = False) -> np.ndarray:
    """Telemetry of round robin on ``jobs``: array (steps, processors, 5) of FEATURES, scaled to
    about 0-1 (temperature / 100 C, power / busy W)."""
    cluster = Cluster(jobs, nb_processors, params)
    placed = np.zeros(nb_processors)

    def allocate(c: Cluster, cores: int) -> int:
        p = round_robin(c, cores)
        placed[p] += cores
        return p
    steps = int(np.ceil((float(jobs.submit[-1]) + 1) / period))
    out = np.zeros((steps, nb_processors, 5), np.float32)
    for k in bar(range(steps), "telemetry", enabled=progress, every=5000, unit="10-minute steps"):
        cluster.run(allocate, until=(k + 1) * period)
        m = cluster.model
        out[k] = np.stack([m.utilisation, 1 - m.utilisation, placed / params.cores,
                           m.temperature / 100.0, m.power / params.busy], axis=1)
        placed[:] = 0
    return out


def windows(telemetry: np.ndarray, l: int) -> tuple[np.ndarray, np.ndarray]:
    """Inputs (samples, l, 5) and next-step targets (samples, 5) of every processor."""
    steps, n, f = telemetry.shape
    if steps <= l:
        raise PredictorError(f"telemetry of {steps} steps is too short for windows of {l}")
    idx = np.arange(l)[None, :] + np.arange(steps - l)[:, None]
    x = telemetry[idx]                       # (samples, l, n, f)
    y = telemetry[l:]                        # (samples, n, f)
    return x.transpose(0, 2, 1, 3).reshape(-1, l, f), y.reshape(-1, f)


def _torch():
    import torch    # (optional: the rl extra)
    from torch import nn    # (optional: the rl extra)
    return torch, nn


def build(kind: str, hidden: int = 32):
    import torch    # (optional: the rl extra)
    from torch import nn    # (optional: the rl extra)

    class Tandem(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTM(3, hidden, batch_first=True)
            self.u = nn.Linear(hidden, 1)
            self.lstm2 = nn.LSTM(3, hidden, batch_first=True)
            self.head = nn.Sequential(nn.Linear(hidden, 100), nn.ReLU(), nn.Linear(100, 2))

        def forward(self, x):
            h1, _ = self.lstm1(x[:, :, :3])
            u_next = torch.sigmoid(self.u(h1[:, -1]))
            # LSTM2 sees (T, P) with the predicted utilisation in place of the last step's
            u_seq = torch.cat([x[:, 1:, 0:1], u_next[:, None, :]], dim=1)
            h2, _ = self.lstm2(torch.cat([x[:, :, 3:5], u_seq], dim=2))
            return u_next[:, 0], self.head(h2[:, -1])

    class Single(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(5, hidden, batch_first=True)
            self.head = nn.Sequential(nn.Linear(hidden, 100), nn.ReLU(), nn.Linear(100, 2))

        def forward(self, x):
            h, _ = self.lstm(x)
            return None, self.head(h[:, -1])
    if kind not in KINDS:
        raise PredictorError(f"predictor kind {kind!r}: choose {', '.join(KINDS)}")
    return Tandem() if kind == "tandem" else Single()


def _loss(net, x, y):
    torch, nn = _torch()
    u, tp = net(x)
    loss = nn.functional.mse_loss(tp, y[:, 3:5])
    if u is not None:
        loss = loss + nn.functional.mse_loss(u, y[:, 0])
    return loss


def train_predictor(telemetry: np.ndarray, kind: str = "tandem", l: int = 6, hidden: int = 32, epochs: int = 5,
                    batch: int = 256, lr: float = 1e-3, seed: int = 0, cores: int = 24) -> tuple[dict, list[float]]:
    """Train on ``telemetry``; the saved form (see :func:`save_predictor`) and the loss per epoch."""
    return _fit(*windows(telemetry, l), kind, l, hidden, epochs, batch, lr, seed, cores)


def _fit(x_all: np.ndarray, y_all: np.ndarray, kind: str, l: int, hidden: int, epochs: int, batch: int, lr: float,
         seed: int, cores: int) -> tuple[dict, list[float]]:
    torch, _ = _torch()
    torch.manual_seed(seed)
    x, y = torch.from_numpy(x_all), torch.from_numpy(y_all)
    net = build(kind, hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(epochs):
        order, total = torch.randperm(len(x), generator=gen), 0.0
        for i in range(0, len(x), batch):
            b = order[i:i + batch]
            opt.zero_grad()
            loss = _loss(net, x[b], y[b])
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(b)
        losses.append(total / len(x))
    return {"kind": kind, "l": l, "hidden": hidden, "cores": cores, "state": net.state_dict()}, losses


def _regime(x: np.ndarray) -> np.ndarray:
    """What the GMM clusters a window by: its means of utilisation, new cores, temperature, power."""
    return x[:, :, [0, 2, 3, 4]].mean(axis=1)


def train_clustered(telemetry: np.ndarray, k: int = 3, kind: str = "tandem", l: int = 6, hidden: int = 32,
                    epochs: int = 5, batch: int = 256, lr: float = 1e-3, seed: int = 0, cores: int = 24):
    """The GMM-clustered variant: a K-component mixture over the windows' regimes, then one
    predictor per component trained on its windows; (mixture, one saved form per component)."""
    x, y = windows(telemetry, l)
    mixture = fit_mixture(_regime(x), k, seed=seed)
    label = mixture.assign(_regime(x))
    if np.bincount(label, minlength=k).min() == 0:
        raise PredictorError(f"clustered predictor: a component of the {k} holds no window of the telemetry")
    return mixture, [_fit(x[label == c], y[label == c], kind, l, hidden, epochs, batch, lr, seed, cores)[0]
                     for c in range(k)]


def save_predictor(saved: dict, path: "str | Path", leakage_model: str = "linear") -> None:
    """Write ``saved`` to ``path`` with the leakage model of the telemetry it learnt from."""
    torch, _ = _torch()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    torch.save({"batsched_py_predictor": 1, **saved, "leakage_model": leakage_model}, path)


def read_predictor(path: "str | Path", cores: Optional[int] = None, leakage_model: Optional[str] = None):
    """The network and its settings from ``path`` (one-line errors); ``cores`` and ``leakage_model``,
    when given, must be those it was trained on (files without a leakage model learnt the linear one)."""
    torch, _ = _torch()
    file = Path(path)
    if not file.is_file():
        raise PredictorError(f"predictor {path}: no such file")
    try:
        saved = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise PredictorError(f"predictor {path}: not a saved predictor ({type(exc).__name__})") from None
    if not isinstance(saved, dict) or saved.get("batsched_py_predictor") != 1:
        raise PredictorError(f"predictor {path}: not a predictor saved by batsched_py (no predictor marker)")
    if cores is not None and saved["cores"] != cores:
        raise PredictorError(f"predictor {path}: trained on processors of {saved['cores']} cores, "
                             f"these have {cores}")
    trained = saved.setdefault("leakage_model", "linear")
    if leakage_model is not None and trained != leakage_model:
        raise PredictorError(f"predictor {path}: trained on telemetry of the {trained} leakage model, "
                             f"this model has {leakage_model} leakage")
    try:
        net = _network(saved)
    except RuntimeError as exc:
        raise PredictorError(f"predictor {path}: weights do not match a {saved['kind']} predictor "
                             f"({str(exc).splitlines()[0]})") from None
    return net, saved


def _network(saved: dict):
    """The network of a saved form, for inference."""
    net = build(saved["kind"], saved["hidden"])
    net.load_state_dict(saved["state"])
    return net.eval()


def evaluate(net, saved: dict, telemetry: np.ndarray, busy: float) -> dict[str, float]:
    """Table 4.1's figures on ``telemetry``: MAE and RMSE of temperature (C) and power (W), and
    accuracy = 100 - mean absolute percentage error (%)."""
    x, y = windows(telemetry, saved["l"])
    return _errors(_predict(net, x), y, busy)


def evaluate_clustered(mixture, parts: list[dict], telemetry: np.ndarray, busy: float) -> dict[str, float]:
    """:func:`evaluate` for the clustered variant (:func:`train_clustered`'s mixture and saved forms):
    each window predicted by its component's network."""
    x, y = windows(telemetry, parts[0]["l"])
    label = mixture.assign(_regime(x))
    pred = np.zeros((len(x), 2), np.float32)
    for c, part in enumerate(parts):
        if (label == c).any():
            pred[label == c] = _predict(_network(part), x[label == c])
    return _errors(pred, y, busy)


def _predict(net, x: np.ndarray) -> np.ndarray:
    torch, _ = _torch()
    with torch.no_grad():
        _, tp = net(torch.from_numpy(x))
    return tp.numpy()


def _errors(predicted: np.ndarray, y: np.ndarray, busy: float) -> dict[str, float]:
    pred = predicted * [100.0, busy]
    true = y[:, 3:5] * [100.0, busy]
    err = pred - true
    out = {}
    for i, (name, unit) in enumerate((("temperature", "C"), ("power", "W"))):
        out[f"{name}_MAE_{unit}"] = float(np.abs(err[:, i]).mean())
        out[f"{name}_RMSE_{unit}"] = float(np.sqrt((err[:, i] ** 2).mean()))
        out[f"{name}_accuracy_pct"] = float(100 - 100 * np.mean(np.abs(err[:, i]) / np.abs(true[:, i])))
    return out


class PredictedModel:
    """The predictor standing in for :class:`~batsched_py.models.thermal.ThermalModel` (the same
    face): utilisation is known exactly from the jobs; temperature and power are predicted every
    ``period`` s from each processor's last ``l`` steps, and held in between."""

    def __init__(self, net, saved: dict, params: ThermalParams, nb_processors: int, period: float = 600.0):
        torch, _ = _torch()
        self._torch = torch
        self.net, self.l, self.params, self.period = net, saved["l"], params, period
        physics = ThermalModel(params, nb_processors * params.cores)   # for the start: idle steady state
        self.nb_processors, self.inlet, self.rack = nb_processors, physics.inlet, physics.rack
        self._jobs = physics._jobs
        self.busy = physics.busy
        self.temperature = physics.temperature.copy()
        self.power = physics.power.copy()
        self.energy = np.zeros(nb_processors)
        self.degree_seconds = np.zeros(nb_processors)
        self.now = 0.0
        self._placed = np.zeros(nb_processors)
        row = self._row()
        self._history = np.repeat(row[None], self.l, axis=0)       # (l, n, 5)
        self._next = period

    @property
    def utilisation(self) -> np.ndarray:
        return self.busy / self.params.cores

    def _row(self) -> np.ndarray:
        u = self.utilisation
        return np.stack([u, 1 - u, self._placed / self.params.cores, self.temperature / 100.0,
                         self.power / self.params.busy], axis=1).astype(np.float32)

    def _hold(self, t: float) -> None:
        dt = t - self.now
        if dt > 0:
            self.energy += self.power * dt
            self.degree_seconds += self.temperature * dt
            self.now = t

    def advance(self, t: float) -> None:
        while self._next <= t:
            self._hold(self._next)
            x = self._torch.from_numpy(np.ascontiguousarray(self._history.transpose(1, 0, 2)))
            with self._torch.no_grad():
                _, tp = self.net(x)
            tp = tp.numpy()
            self.temperature = tp[:, 0] * 100.0
            self.power = tp[:, 1] * self.params.busy
            self._history = np.concatenate([self._history[1:], self._row()[None]])
            self._placed[:] = 0
            self._next += self.period
        self._hold(t)

    def hosts_changed(self, t: float, intervals, delta: int) -> None:
        self.advance(t)
        for proc, hosts in add_jobs(self._jobs, self.busy, intervals, delta, self.params.cores):
            if delta > 0:
                self._placed[proc] += hosts


def load_predictor(path: "str | Path", params: ThermalParams) -> Callable[[int], PredictedModel]:
    """A factory of predictor-backed models for ``nb_processors`` (for Allocation-v0's backend)."""
    net, saved = read_predictor(path, params.cores, params.leakage_model)
    return lambda nb_processors: PredictedModel(net, saved, params, nb_processors)
