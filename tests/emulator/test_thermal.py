"""The processor power/temperature model (models/thermal.py): its closed form (linear leakage) and
its integrator (exponential leakage) against the ODE they solve, and the emulator's outputs with it
on (Batsim's files unchanged, one more file) and off."""
import os

import numpy as np
import pytest

from batsched_py.emulator import EmulatorError, run_engine
from batsched_py.cli.emulate import batsim_args_to_kwargs
from batsched_py.models.thermal import THERMAL_COLUMNS, ThermalModel, ThermalParams

from golden_replay import GOLDEN, Replayer, meta, transcript
from test_golden_replay import csv_differences

PARAMS = ThermalParams()
EXPONENTIAL = ThermalParams(leakage_model="exponential")


def euler(params, t0, u, inlet, seconds, dt=0.05):
    """The ODE tau dT/dt = inlet + R P(u, T) - T and the energy integral, stepped numerically."""
    temp, energy, degrees = t0, 0.0, 0.0
    for _ in range(int(round(seconds / dt))):
        power = params.power(u, temp)
        energy += power * dt
        degrees += temp * dt
        temp += dt * (inlet + params.resistance * power - temp) / params.tau
    return temp, energy, degrees


def test_steady_state_is_the_fixed_point_of_the_ode():
    for u, inlet in [(0.0, 18.0), (0.5, 22.0), (1.0, 27.0)]:
        t = float(PARAMS.steady_state(u, inlet))
        assert inlet + PARAMS.resistance * float(PARAMS.power(u, t)) - t == pytest.approx(0, abs=1e-9)
    # a loaded processor in the warmest rack runs much hotter than an idle one in the coolest
    assert float(PARAMS.steady_state(1.0, 27.0)) - float(PARAMS.steady_state(0.0, 18.0)) > 40


def test_time_constant_and_relaxation_match_the_ode():
    start, u, inlet = 30.0, 0.7, 20.0
    target = float(PARAMS.steady_state(u, inlet))
    tc = PARAMS.time_constant()
    assert tc == pytest.approx(PARAMS.tau / (1 - PARAMS.resistance * PARAMS.leakage))
    temp, energy, degrees = euler(PARAMS, start, u, inlet, tc)
    # after one time constant, 1/e of the initial deviation is left
    assert (temp - target) / (start - target) == pytest.approx(np.exp(-1), rel=1e-3)
    assert float(PARAMS.relax(start, u, inlet, tc)) == pytest.approx(temp, abs=0.01)
    _, closed_energy, closed_degrees = PARAMS.evolve(start, u, inlet, tc)
    assert float(closed_energy) == pytest.approx(energy, rel=1e-4)
    assert float(closed_degrees) == pytest.approx(degrees, rel=1e-4)


def rk4(params, t0, u, inlet, seconds, dt=0.5):
    """The ODE with its energy and degree-seconds integrals, fine classical Runge-Kutta steps."""
    def rate(state):
        power = params.power(u, state[0])
        return np.array([(inlet + params.resistance * power - state[0]) / params.tau, power, state[0]])
    state = np.array([t0, 0.0, 0.0])
    for _ in range(int(round(seconds / dt))):
        k1 = rate(state)
        k2 = rate(state + dt / 2 * k1)
        k3 = rate(state + dt / 2 * k2)
        k4 = rate(state + dt * k3)
        state = state + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return state


@pytest.mark.parametrize("start, u, inlet, seconds", [
    (36.0, 1.0, 27.0, 1000.0),     # a job fills an idle processor of the warmest rack
    (94.0, 0.0, 27.0, 1000.0),     # and leaves
    (30.0, 0.7, 20.0, 45.0),       # an interval shorter than one step
    (50.0, 1.0, 27.0, 20000.0)])   # past the settling: the last step jumps to the end
def test_exponential_leakage_follows_a_fine_step_solution_of_its_ode(start, u, inlet, seconds):
    temp, energy, degrees = rk4(EXPONENTIAL, start, u, inlet, seconds)
    got = EXPONENTIAL.evolve(start, u, inlet, seconds)
    assert float(got[0]) == pytest.approx(temp, abs=0.01)
    assert float(got[1]) == pytest.approx(energy, rel=1e-4)
    assert float(got[2]) == pytest.approx(degrees, rel=1e-4)


def test_exponential_steady_state_and_time_constant():
    for u, inlet in [(0.0, 18.0), (0.5, 22.0), (1.0, 27.0)]:
        t = float(EXPONENTIAL.steady_state(u, inlet))
        assert inlet + EXPONENTIAL.resistance * float(EXPONENTIAL.power(u, t)) - t == pytest.approx(0, abs=1e-9)
        assert float(EXPONENTIAL.relax(t, u, inlet, 5000.0)) == pytest.approx(t, abs=1e-9)
    # a small deviation fades with the local time constant, longer where leakage is steeper
    target = float(EXPONENTIAL.steady_state(1.0, 27.0))
    tc = EXPONENTIAL.time_constant(target)
    assert tc > PARAMS.time_constant() > EXPONENTIAL.time_constant(float(EXPONENTIAL.steady_state(0.0, 18.0)))
    left = (float(EXPONENTIAL.relax(target - 0.01, 1.0, 27.0, tc)) - target) / -0.01
    assert left == pytest.approx(np.exp(-1), rel=1e-3)
    # the same leakage as the linear model at the reference and 50 K above it, more beyond
    assert float(EXPONENTIAL.leak(25.0)) == 0 and float(EXPONENTIAL.leak(75.0)) == pytest.approx(20.0)
    assert float(EXPONENTIAL.leak(90.0)) > float(PARAMS.leak(90.0)) > 0


def test_exponential_leakage_tends_to_the_linear_model():
    nearly = ThermalParams(leakage_model="exponential", leakage_growth=1e-7)
    u, inlet = np.array([0.0, 0.4, 1.0]), np.array([18.0, 22.0, 27.0])
    assert np.allclose(nearly.steady_state(u, inlet), PARAMS.steady_state(u, inlet), atol=1e-4)
    for a, b in zip(nearly.evolve(np.full(3, 40.0), u, inlet, 700.0), PARAMS.evolve(np.full(3, 40.0), u, inlet, 700.0)):
        assert np.allclose(a, b, rtol=1e-5)


def test_with_exponential_leakage_the_rack_that_runs_the_load_matters():
    # one full and one idle processor: linear leakage draws the same whichever rack runs the load,
    # exponential leakage less when the cool rack runs it
    def drawn(params, u):
        return float(params.power(u, params.steady_state(u, [18.0, 27.0])).sum())
    assert drawn(PARAMS, [1, 0]) == pytest.approx(drawn(PARAMS, [0, 1]))
    assert drawn(EXPONENTIAL, [0, 1]) - drawn(EXPONENTIAL, [1, 0]) > 10


def test_power_is_concave_in_utilisation():
    # two half-loaded processors draw more than one full and one idle (Fan et al.'s model)
    assert 2 * float(PARAMS.power(0.5, 40)) > float(PARAMS.power(1.0, 40) + PARAMS.power(0.0, 40))
    assert float(PARAMS.power(0.0, PARAMS.reference)) == PARAMS.idle
    assert float(PARAMS.power(1.0, PARAMS.reference)) == PARAMS.busy


def test_model_follows_job_starts_and_ends_per_processor():
    params = ThermalParams(cores=4, racks=2)
    model = ThermalModel(params, 8)          # two processors, one per rack
    assert list(model.inlet) == [18.0, 27.0]
    model.hosts_changed(0.0, [(0, 1)], 1)    # 2 of processor 0's 4 cores
    assert list(model.utilisation) == [0.5, 0.0]
    model.advance(100 * params.tau)
    assert model.temperature[0] == pytest.approx(float(params.steady_state(0.5, 18.0)))
    model.hosts_changed(100 * params.tau, [(0, 1)], -1)
    assert list(model.busy) == [0, 0]


def test_bad_parameters_and_platforms_are_refused():
    with pytest.raises(EmulatorError, match="not a whole number of 24-core processors"):
        ThermalModel(PARAMS, 100)
    with pytest.raises(EmulatorError, match="thermal runaway"):
        ThermalParams(resistance=1.0, leakage=2.0)
    with pytest.raises(EmulatorError, match="cores must be a positive integer"):
        ThermalParams(cores=0)
    with pytest.raises(EmulatorError, match="leakage_model 'cubic': choose linear or exponential"):
        ThermalParams(leakage_model="cubic")
    with pytest.raises(EmulatorError, match="leakage_growth must be in"):
        ThermalParams(leakage_model="exponential", leakage_growth=0)
    with pytest.raises(EmulatorError, match="leakage_growth must be in"):
        ThermalParams(leakage_growth=-1)           # (refused even where the linear model ignores it)
    with pytest.raises(EmulatorError, match="leakage must be at least 0 W/K"):
        ThermalParams(leakage_model="exponential", leakage=-0.1)
    # 0.5 W/K is stable when linear, runs away when exponential
    ThermalParams(leakage=0.5)
    with pytest.raises(EmulatorError, match="at inlet 27 C has no steady state \\(thermal runaway\\)"):
        ThermalParams(leakage_model="exponential", leakage=0.5)


def replay(case, prefix, thermal):
    rep = Replayer(transcript(case))
    cwd = os.getcwd()
    os.chdir(GOLDEN / case)
    try:
        kwargs = batsim_args_to_kwargs(meta(case)["batsim_args"] + ["-e", str(prefix)])
        run_engine(exchange=rep, **{**kwargs, "thermal": thermal})
    finally:
        os.chdir(cwd)
    return rep


@pytest.mark.golden
@pytest.mark.parametrize("case, leakage", [("energy_bf-e128-hpc250-E", "linear"), ("easy_bf-e128-hpc250", "linear"),
                                           ("easy_bf-e128-hpc250", "exponential")])
def test_outputs_unchanged_with_the_model_on_and_its_file_absent_when_off(case, leakage, tmp_path, golden_dir):
    on = tmp_path / "on"
    rep = replay(case, on, ThermalParams(cores=16, leakage_model=leakage))   # 128 hosts: 8 processors
    assert rep.first_difference() is None
    assert not csv_differences(case, on)
    rows = (tmp_path / "on_thermal.csv").read_text().splitlines()
    assert rows[0] == THERMAL_COLUMNS
    data = np.array([[float(x) for x in r.split(",")] for r in rows[1:]])
    times = np.unique(data[:, 0])
    assert times[0] == 0 and np.allclose(np.diff(times), 600) and len(data) == 8 * len(times)
    assert data[:, 3].max() > 0                       # jobs ran: some processor was used
    assert (data[:, 4] > 18).all() and (data[:, 5] >= 60 - 1).all()
    off = tmp_path / "off"
    replay(case, off, None)
    assert not (tmp_path / "off_thermal.csv").exists()


def test_the_command_line_turns_it_on():
    on = batsim_args_to_kwargs(["-p", "p.xml", "-w", "w.json", "--thermal", "16"])
    assert on["thermal"] == ThermalParams(cores=16)
    assert batsim_args_to_kwargs(["-p", "p.xml", "-w", "w.json"])["thermal"] is None
    exponential = batsim_args_to_kwargs(["-p", "p.xml", "-w", "w.json", "--thermal", "16", "--thermal-leakage",
                                         "exponential"])
    assert exponential["thermal"] == ThermalParams(cores=16, leakage_model="exponential")
    with pytest.raises(EmulatorError, match="--thermal-leakage needs --thermal"):
        batsim_args_to_kwargs(["-p", "p.xml", "-w", "w.json", "--thermal-leakage", "exponential"])
