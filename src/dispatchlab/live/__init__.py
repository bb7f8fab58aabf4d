"""Live mode: dispatchlab dispatchers driving a real Slurm cluster, and predicting it."""
