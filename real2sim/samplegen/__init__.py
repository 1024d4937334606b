"""Deterministic generator of the sample capture session (sample_data/) with ground truth.

``python -m real2sim.samplegen -o sample_data [--seed 0]`` or ``generate(SampleGenCfg(out_dir=...))``.
"""
