"""Shared test helpers (ground truth, synthetic data, baselines)."""
