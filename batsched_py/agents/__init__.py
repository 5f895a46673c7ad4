"""Learning agents, one folder per paper (Stable-Baselines3's layout), a shared ``common/``:

- ``deepshutdown/``: PPO with an LSTM over the observation window (Shutdown-v0);
- ``deepscheduling/``: PPO with three GRU encoders (Scheduling-v0), optionally action masking;
- ``common/``: training (vectorised envs, checkpoints, resume, TensorBoard, run records), saved
  agents as policies (``load_agent``), evaluation over days (``evaluate``).

An agent is a policy plus its training: once trained, it runs as a scheduler by name
(``deepshutdown``, ``deepscheduling``) on the emulator or a real Batsim.
"""
