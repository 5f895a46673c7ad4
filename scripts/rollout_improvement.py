#!/usr/bin/env python3
"""One step of rollout policy improvement for a DeepShutdown agent that sees a rule's advice:
where, on the training days, does leaving the rule for one decision pay, and can the agent learn it?

PPO from the advice clone left the rule faster than it learned anything the validation days
reward (docs/papers/deepshutdown.md).  This asks the question directly, as classification-based
approximate policy iteration does (Lagoudakis & Parr, ICML 2003): on each of ``--days`` training
days the rule (the advice the model was trained with, QB-w20 for the shipped one) plays the whole
day; at ``--points`` decisions drawn among those where something waits or the rule changes its
action, the day is played again with the rule's action replaced by one node more kept off and
by one node fewer, the rule playing the rest of the day.  Each replay's cost is the day's

    energy waste (W·min) + ``--price`` x mean waiting time (min)

(the price of a minute of mean wait in W·min: the slope of QB's waste against its wait on the
validation days, 3,500 by default), so that a departure is labelled better where it saves more
waste than its wait is worth.  The agent is then fitted (cross-entropy) on the departures that
paid, on the rule's action where none did, and on ``--keep`` states of the rule's own days,
each labelled example drawn in proportion to 1 + its gain / the median gain (cost-sensitive:
a departure that pays a lot, once, outweighs many that pay a little the other way).

With ``--rollout agent`` the model itself (deterministic, with its record's options: its shield
too) plays the days and the rest of each replay in the rule's place: the next step of policy
iteration, asking where leaving the improved agent pays (about 4 x the replay time: a network
inference at each decision).  Its own action is the label where no departure pays.

Decisions in the last ``--tail`` minutes of a day are not drawn: energy after the day's end is not
counted, so waking nodes there only looks cheap (an artefact of the 1,440-minute episode).

The future a replay meets is the day's real one (one sample), so the labels are what hindsight
says; the fit averages them over the states that look alike, which is what the agent can know.
With ``--futures K`` each replayed decision also meets K other futures: the day's jobs submitted up
to the decision (all the player has seen), then the jobs another training day of the same group
(``1_``, ..., ``5_``, lyon_good) submits after it.  The player decides exactly as on the real day up
to that step (asserted); the label is the mean over the K + 1 futures (about 1 + 1.5 K x the replays).

Outputs in ``-o``: ``labels.npz`` (observations, the player's action, the waste and the wait each
departure saves, who played: ``--labels`` refits on them at another ``--price`` or ``--margin``),
``improved.zip`` with its record (the model's observation options), ``improvement.json`` (the
command, figures, wall time).  Interrupted (Ctrl-C, SIGTERM), it stops at once, keeps the labels of
the days finished in ``labels.npz``, fits nothing and says so in ``improvement.json`` (``status``).

Usage (the figures of docs/papers/deepshutdown.md)::

    python scripts/rollout_improvement.py --model models/deepshutdown-taurus.zip \\
        -p platforms/taurus_deepshutdown.xml -w TRAINING_DAYS_WITHOUT_VALIDATION -o runs/rollout --days 400 -j 2

then ``batsched-py evaluate --policies 'agent=runs/rollout/improved.zip,...'`` on the validation days.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import shutil
import signal
import sys
import tempfile
import time
import weakref
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
from stable_baselines3 import PPO  # noqa: E402
from stable_baselines3.common.running_mean_std import RunningMeanStd  # noqa: E402
from tqdm import tqdm  # noqa: E402

import batsched_py.envs  # noqa: E402,F401  (registers the environments)
from batsched_py.agents.common.checkpoints import save_agent, save_whole  # noqa: E402
from batsched_py.agents.common.imitation import Demonstrations, clone, discounted  # noqa: E402
from batsched_py.agents.common.loading import trained_with  # noqa: E402
from batsched_py.agents.common.papers import BaselineOptionsError, baseline_maker  # noqa: E402
from batsched_py.agents.common.saved import load_agent  # noqa: E402
from batsched_py.agents.deepshutdown import config as settings  # noqa: E402
from batsched_py.envs.core import workload_files  # noqa: E402
from batsched_py.interrupts import exit_status, interruption, run_command, signals_interrupt  # noqa: E402


def spliced(day: dict, other: dict, t: int) -> dict:
    """The workload ``day`` up to minute ``t`` (its jobs submitted by then: those the decision at step
    ``t`` has seen), then ``other``'s jobs submitted after it (ids and profiles renamed ``f:...``)."""
    jobs = [job for job in day["jobs"] if job["subtime"] <= t]
    later = [dict(job, id=f"f:{job['id']}", profile=f"f:{job['profile']}") for job in other["jobs"] if job["subtime"] > t]
    profiles = dict(day["profiles"])
    profiles.update({f"f:{name}": profile for name, profile in other["profiles"].items()})
    return dict(day, jobs=jobs + later, profiles=profiles, nb_jobs=len(jobs) + len(later), nb_profiles=len(profiles))


def group(day: str) -> str:
    """A DeepShutdown day's group: its name up to ``train`` (``1_`` ... ``5_``; lyon_good's: none)."""
    return Path(day).name.split("train")[0]


class Replays:
    """One worker's days: the rule (or, with ``agent``, that saved agent) plays a day, then replays it
    with one decision changed."""

    def __init__(self, platform: str, days: list[str], env_kwargs: dict, teacher: str, teacher_options: dict,
                 agent: str | None = None):
        self.env = gym.make(settings.ENV, platform=platform, workloads=days, **env_kwargs).unwrapped
        if agent is None:
            self.player = baseline_maker(settings, teacher, teacher_options)
        else:
            saved = load_agent(agent, "shutdown")
            self.player = lambda: saved
        self._futures = 0
        self._folder: Path | None = None

    def future(self, day: str, other: str, t: int) -> str:
        """A file holding ``spliced(day, other, t)``; each under a name of its own (the environment
        keeps its time-shifted copy of a day by name)."""
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="rollout-futures-"))
            weakref.finalize(self, shutil.rmtree, self._folder, True)
        self._futures += 1
        path = self._folder / f"{Path(day).stem}@{t}+{Path(other).stem}#{self._futures}.json"
        path.write_text(json.dumps(spliced(json.loads(Path(day).read_text()), json.loads(Path(other).read_text()), t)))
        return str(path)

    def saved_by(self, day: str, t: int, actions: list[int], others: list[int]) -> np.ndarray:
        """What each of ``others`` in place of the player's action at step ``t`` saves (waste, wait: the
        day's less the replay's) on ``day``; the player must play ``actions`` up to ``t`` there."""
        base, _, played, _, _ = self.play(day, record=True)
        if played[:t + 1] != actions[:t + 1]:
            raise AssertionError(f"{day}: the player's decisions before step {t} depend on the future")
        return np.stack([base - self.play(day, change=(t, other)) for other in others])

    def play(self, day: str, change: tuple[int, int] | None = None, record: bool = False):
        """The day's energy waste and mean waiting time with the player (the rule, or the agent)
        playing (its action at step ``change[0]`` replaced by ``change[1]``); with ``record``, also its
        observations, actions, rewards and the steps where a departure may matter (something queued,
        or the player changing its action)."""
        obs, _ = self.env.reset(seed=0, options={"workload": day})
        player = self.player()
        player.bind(self.env.scheduler)
        seen, actions, rewards, open_steps = [], [], [], []
        step, done = 0, False
        while not done:
            action = int(player(obs))
            if record:
                if len(self.env.scheduler.queue) or (actions and action != actions[-1]):
                    open_steps.append(step)
                seen.append(obs)
                actions.append(action)
            if change is not None and step == change[0]:
                action = change[1]
            obs, reward, terminated, truncated, info = self.env.step(action)
            if record:
                rewards.append(float(reward))
            step += 1
            done = terminated or truncated
        figures = np.array([info["energy_waste"], info["waiting_time"]], float)
        return (figures, seen, actions, rewards, open_steps) if record else figures


_worker: Replays | None = None


def _start(*args) -> None:
    global _worker
    # (the parent stops the workers: a Ctrl-C to the process group must not end them midway with a traceback)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    torch.set_num_threads(1)
    _worker = Replays(*args)


def label_day(task: tuple[str, int, int, int, int, list[str], int]) -> dict:
    """A day's labelled states: ``points`` open decisions (none in the last ``tail`` steps), each with
    the waste and the mean wait that keeping one node more off, and one fewer, saves (the rule's day
    less the replay's, averaged with those of ``futures`` other futures, their days drawn from ``pool``;
    NaN: outside the action space), then ``keep`` of the rule's own states (NaN)."""
    day, points, keep, tail, seed, pool, futures = task
    assert _worker is not None
    rng = np.random.default_rng(seed)
    base, seen, actions, rewards, open_steps = _worker.play(day, record=True)
    top = _worker.env.action_space.n - 1
    open_steps = [t for t in open_steps if t < len(actions) - tail]
    drawn = sorted(rng.choice(open_steps, min(points, len(open_steps)), replace=False).tolist()) if open_steps else []
    kept = sorted(rng.choice(len(actions), min(keep, len(actions)), replace=False).tolist())
    steps = drawn + kept
    # (each future's: the day's own first)
    by_future = np.full((len(steps), 1 + futures, 2, 2), np.nan)
    for i, t in enumerate(drawn):
        others = [(j, other) for j, other in enumerate((actions[t] + 1, actions[t] - 1)) if 0 <= other <= top]
        where = [j for j, _ in others]
        by_future[i, 0, where] = [base - _worker.play(day, change=(t, other)) for _, other in others]
        for k, other_day in enumerate(rng.choice(pool, futures, replace=False) if futures else [], 1):
            by_future[i, k, where] = _worker.saved_by(_worker.future(day, str(other_day), t), t, actions,
                                                      [a for _, a in others])
    saved = by_future.mean(axis=1)      # (a departure is replayed in every future or in none: NaN)
    returns = np.asarray(discounted(rewards, settings.HYPERPARAMETERS["gamma"]))
    return {"day": Path(day).name, "figures": base, "obs": np.stack([seen[t] for t in steps]),
            "actions": np.asarray([actions[t] for t in steps], np.int64), "saved": saved, "by_future": by_future,
            "returns": returns[steps].astype(np.float32), "running": np.cumsum(rewards)[steps]}


def labelled(actions: np.ndarray, gains: np.ndarray, margin: float) -> tuple[np.ndarray, np.ndarray, dict]:
    """Each state's label and weight, and figures: at a replayed decision (a row of ``gains`` not
    all NaN) the departure with the larger gain when it exceeds ``margin``, else the rule's action,
    weighted 1 + |that gain| / the median |gain|; elsewhere the rule's action, weight 1."""
    replayed = ~np.all(np.isnan(gains), axis=1)
    best = np.zeros(len(actions))
    step = np.zeros(len(actions), np.int64)
    rows = np.nan_to_num(gains[replayed], nan=-np.inf)
    j = rows.argmax(axis=1)
    best[replayed] = rows[np.arange(len(rows)), j]
    step[replayed] = np.where(j == 0, 1, -1)
    pays = replayed & (best > margin)
    labels = np.where(pays, actions + step, actions)
    # (where no departure pays, how much staying with the rule saved: the smaller loss, if any)
    size = np.where(pays, best, np.where(replayed, np.maximum(-best, 0.0), 0.0))
    scale = float(np.median(size[replayed & (size > 0)])) if np.any(replayed & (size > 0)) else 1.0
    figures = {"labelled_states": int(len(actions)), "replayed_decisions": int(replayed.sum()),
               "departures_that_pay": int(pays.sum()), "median_gain_w_min": scale}
    return labels, 1.0 + size / scale, figures


def own_future(by_future: np.ndarray, price: float, margin: float) -> dict:
    """How much the labels rest on each day's own future: among the departures replayed in other
    futures too and worth something in one of them, the share that pays (gains more than ``margin``)
    on the day's own future exactly where it pays on the mean of the others."""
    gains = by_future[..., 0] + price * by_future[..., 1]         # (state, future, departure)
    if gains.shape[1] < 2:
        return {}
    own, others = gains[:, 0], gains[:, 1:].mean(axis=1)
    worth = ~np.isnan(own) & np.any(gains != 0, axis=1)
    return {"departures_worth_something": int(worth.sum()),
            "own_future_agrees": float(np.mean((own > margin)[worth] == (others > margin)[worth])) if worth.any() else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, required=True,
                        help="a DeepShutdown agent trained with advice (a PPO .zip with its record beside it)")
    parser.add_argument("-p", "--platform", type=Path, required=True)
    parser.add_argument("-w", "--workloads", type=Path, nargs="+", required=True,
                        help="training days (files or folders; keep the validation days out)")
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument("--days", type=int, default=400, help="days drawn from -w (default 400)")
    parser.add_argument("--points", type=int, default=10, help="decisions replayed a day (default 10)")
    parser.add_argument("--keep", type=int, default=60, help="the rule's own states kept a day (default 60)")
    parser.add_argument("--tail", type=int, default=60, help="decisions at the day's end never drawn (default 60)")
    parser.add_argument("--price", type=float, default=3500.0, help="W·min a minute of mean wait costs (default 3500)")
    parser.add_argument("--margin", type=float, default=0.0, help="a departure is labelled only when it gains more "
                        "than this (W·min; default 0)")
    parser.add_argument("--epochs", type=int, default=4, help="fitting epochs (default 4)")
    parser.add_argument("--learning-rate", type=float, default=3e-4)
    parser.add_argument("--rollout", choices=("rule", "agent"),
                        help="who plays the days and the replays: the model's advice rule (the default) or the model "
                        "itself (the next step of policy iteration); with --labels, the labels' own")
    parser.add_argument("--labels", type=Path, help="the labels.npz of an earlier run: fit on them, replay nothing "
                        "(another --margin, --epochs)")
    parser.add_argument("--futures", type=int, default=0, help="other futures each replayed decision meets: the "
                        "rest of other training days of its group (default 0: the day's own only)")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name in ("days", "points", "epochs", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name}: {getattr(args, name)} is not a positive number")
    if args.keep < 0 or args.tail < 0 or args.price < 0 or args.margin < 0 or args.futures < 0:
        parser.error("--keep, --tail, --price, --margin and --futures are at least 0")
    torch.set_num_threads(1)
    try:
        env_kwargs = trained_with(str(args.model), settings.TRAINED_OPTIONS)
        model = PPO.load(str(args.model), device="cpu")
    except (ValueError, OSError) as exc:
        parser.error(f"--model {args.model}: {exc}")
    teacher = env_kwargs.get("advice")
    if not teacher:
        parser.error(f"--model {args.model}: its record names no advice (train it with --env "
                     "'{\"advice\": ...}'): there is no rule to improve on")
    teacher_options = env_kwargs.get("advice_options", {})
    try:
        baseline_maker(settings, teacher, teacher_options)
    except BaselineOptionsError as exc:
        parser.error(f"the model's advice {teacher} {json.dumps(teacher_options)}: {exc}")
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.time()
    record: dict = {"command": sys.argv, "model": str(args.model), "rule": teacher, "rule_options": teacher_options,
                    "rollout": args.rollout or "rule", "futures": args.futures, "status": "running"}
    agent = str(args.model) if args.rollout == "agent" else None

    def save_record() -> None:
        record["wall_s"] = round(time.time() - started, 1)
        save_whole(args.out / "improvement.json", lambda part: part.write_text(json.dumps(record, indent=1) + "\n"))

    if args.labels:
        try:
            with np.load(args.labels) as saved:
                data = {k: saved[k] for k in ("obs", "actions", "saved", "returns", "running", "days")}
                player = str(saved["rollout"]) if "rollout" in saved.files else "rule"   # (labels before --rollout)
                futures = int(saved["futures"]) if "futures" in saved.files else 0     # (and before --futures)
                if "by_future" in saved.files:
                    data["by_future"] = saved["by_future"]
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"--labels {args.labels}: not a labels.npz of this script ({exc})")
        if args.rollout not in (None, player):
            parser.error(f"--rollout {args.rollout}: the days of --labels {args.labels} were played by the {player}")
        record.update(rollout=player, futures=futures)
        if data["obs"].shape[1:] != model.observation_space.shape:
            parser.error(f"--labels {args.labels}: observations {data['obs'].shape[1:]}, but {args.model} was "
                         f"trained on {model.observation_space.shape}")
        record.update(labels=str(args.labels), days=len(set(data["days"].tolist())))
        return fit(model, data, args, env_kwargs, record, save_record)
    pool = [str(d) for d in workload_files(args.workloads)]
    rng = np.random.default_rng(args.seed)
    days = sorted(rng.choice(pool, min(args.days, len(pool)), replace=False).tolist())
    record["days"] = len(days)
    try:        # (here, so that a bad platform or day is named once, not by each worker)
        shape = Replays(str(args.platform), days, env_kwargs, teacher, teacher_options, agent).env.observation_space.shape
    except (ValueError, TypeError, OSError) as exc:
        parser.error(f"the environment ({args.platform}, {json.dumps(env_kwargs)}): {exc}")
    if shape != model.observation_space.shape:
        parser.error(f"{args.model} was trained on observations {model.observation_space.shape}; the environment "
                     f"gives {shape}")
    done: list[dict] = []
    groups = {g: [d for d in pool if group(d) == g] for g in {group(d) for d in days}}
    for d in days:
        if len(groups[group(d)]) <= args.futures:
            parser.error(f"--futures {args.futures}: -w holds {len(groups[group(d)]) - 1} other days of {d}'s group")
    tasks = [(d, args.points, args.keep, args.tail, args.seed * 100_000 + i, [o for o in groups[group(d)] if o != d],
              args.futures) for i, d in enumerate(days)]
    workers = multiprocessing.get_context("fork").Pool(
        args.jobs, _start, (str(args.platform), days, env_kwargs, teacher, teacher_options, agent))
    stopped = None
    with signals_interrupt():
        try:
            for result in tqdm(workers.imap_unordered(label_day, tasks), total=len(tasks), unit="day",
                               desc="replaying", file=sys.stderr):
                done.append(result)
            workers.close()
        except KeyboardInterrupt as exc:
            stopped = exc
            record["status"] = (f"{interruption(exc)} after {len(done)} of {len(days)} days: their labels are "
                                "in labels.npz, nothing was fitted")
        finally:
            workers.terminate()
            workers.join()
    done.sort(key=lambda d: d["day"])
    if not done:
        record["status"] = record["status"] if stopped else "no day labelled"
        save_record()
        return exit_status(stopped) if stopped else 1
    data = {k: np.concatenate([d[k] for d in done]) for k in ("obs", "actions", "saved", "by_future", "returns", "running")}
    data["days"] = np.asarray([d["day"] for d in done])
    data["rollout"] = np.asarray(record["rollout"])
    data["futures"] = np.asarray(args.futures)
    save_whole(args.out / "labels.npz", lambda part: np.savez_compressed(part.open("wb"), **data))
    # (the days as played without a change: by the rule, or by the agent with --rollout agent)
    record[f"{record['rollout']}_waste_w_min"], record[f"{record['rollout']}_wait_min"] = np.mean(
        [d["figures"] for d in done], axis=0).tolist()
    if stopped:
        save_record()
        print(f"rollout_improvement: {record['status']}", file=sys.stderr, flush=True)
        return exit_status(stopped)
    return fit(model, data, args, env_kwargs, record, save_record)


def fit(model, data: dict, args, env_kwargs: dict, record: dict, save_record) -> int:
    """Fit the agent on the labelled states and save it (improved.zip)."""
    gains = data["saved"][..., 0] + args.price * data["saved"][..., 1]
    labels, weights, figures = labelled(data["actions"], gains, args.margin)
    record.update(figures, price_w_min_per_min=args.price, margin_w_min=args.margin)
    if "by_future" in data:
        record.update(own_future(data["by_future"], args.price, args.margin))
    obs, returns, running = data["obs"], data["returns"], data["running"]
    # cost-sensitive: each labelled state drawn in proportion to its weight
    picks = np.random.default_rng(args.seed).choice(len(labels), len(labels), p=weights / weights.sum())
    rms = RunningMeanStd(shape=())
    rms.update(running)
    demos = Demonstrations(obs[picks], labels[picks], returns[picks], running[picks], len(set(data["days"])), 0.0)
    fitted = clone(model, demos, epochs=args.epochs, learning_rate=args.learning_rate,
                return_scale=float(np.sqrt(rms.var + 1e-8)), seed=args.seed,
                report=lambda line: print(line, file=sys.stderr, flush=True))
    save_agent(args.out / "improved.zip", lambda part: model.save(str(part)), env_kwargs,
               made_by=f"scripts/rollout_improvement.py from {args.model} (improvement.json)")
    record.update({"status": "finished", "fit_accuracy": fitted["accuracy"]})
    save_record()
    print(f"rollout_improvement: {figures['departures_that_pay']} of {figures['replayed_decisions']} replayed "
          f"decisions pay to leave {record['rule'] if record['rollout'] == 'rule' else 'the agent'}; fitted on {len(labels)} states "
          f"(accuracy {fitted['accuracy']:.3f}) -> "
          f"{args.out / 'improved.zip'}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    run_command("rollout_improvement", main)
