"""Deterministic generator of the sample capture session (sample_data/) with ground truth."""
