"""Thermal-aware job allocation with deep Q-learning (Yi, "Toward Efficient Compute-Intensive Job
Allocation for Green Data Centers: A Deep Reinforcement Learning Approach", NTU/NSCC).

- mdp.py: the decision points inside a Batsim scheduler (which processor takes the job) and its MDP;
- env.py: ``Allocation-v0``, model-based episodes over the cluster model (the rl extra);
- cluster.py, cluster_jobs.py: processors running jobs FCFS under the emulator's power/temperature
  model, the baseline allocators (round robin, greedy consolidation, coolest, online optimiser
  horizon 1), and the jobs of a trace (SWF or Batsim JSON), each on 1..cores cores of one processor;
- predictor.py, gmm.py: the tandem LSTM predictor of utilisation, then temperature and power;
- dqn.py: the DQN agent (the thesis' network and exploration) and its training; saved.py: a saved DQN;
- scheduler.py: the ``thermal-allocation`` and ``dqn-allocation`` schedulers.
"""
