"""Thermal-aware job allocation with deep Q-learning (Yi, "Toward Efficient Compute-Intensive Job
Allocation for Green Data Centers: A Deep Reinforcement Learning Approach", NTU/NSCC).

- jobs.py: the jobs of a trace (SWF or Batsim JSON), each on 1..cores cores of one processor;
- cluster.py: processors running jobs FCFS under the emulator's power/temperature model, and the
  baseline allocators (round robin, greedy consolidation, coolest, online optimiser horizon 1);
- predictor.py: the tandem LSTM predictor of utilisation, then temperature and power;
- dqn.py: the DQN agent (the thesis' network and exploration) and its training.
"""
