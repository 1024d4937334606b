"""CLI spelling and output: ``--fit`` as comma lists and repeats; native libraries print nothing of their own."""

from __future__ import annotations

import numpy as np
import trimesh

from real2sim.cli.calibrate import command as calibrate
from real2sim.export.objects.repair import repair_mesh
from real2sim.stdio import native_output_silenced


def _params(*fit: str) -> dict:
    args = ["model.xml", "--log", "a.csv", "--map", "m.toml", "-o", "out", *fit]
    return calibrate.make_context("calibrate", args).params


def test_fit_takes_comma_lists_and_repeats():
    assert _params("--fit", "joint:*.damping")["fit"] == ("joint:*.damping",)
    both = ("joint:*.damping", "joint:*.armature", "delay:*")
    assert _params("--fit", "joint:*.damping,joint:*.armature", "--fit", "delay:*")["fit"] == both
    assert _params("--fit", "joint:*.damping, joint:*.armature,delay:*")["fit"] == both
    assert _params("--fit", "joint:*.damping", "--fit", "joint:*.armature", "--fit", "delay:*")["fit"] == both


def test_native_output_is_silenced_at_the_descriptor(capfd):
    import ctypes
    import os

    libc = ctypes.CDLL(None)
    with native_output_silenced():
        os.write(1, b"native stdout\n")
        os.write(2, b"native stderr\n")
        libc.printf(b"native buffered\n")  # sits in the C stdio buffer (a file is fully buffered)
    libc.fflush(None)
    print("ours")
    out, err = capfd.readouterr()
    assert out == "ours\n" and err == ""


def test_meshfix_prints_nothing(capfd):
    m = trimesh.creation.icosphere(2)
    rng = np.random.default_rng(0)
    soup = trimesh.Trimesh(
        m.vertices, np.vstack([m.faces, rng.integers(0, len(m.vertices), (60, 3))]), process=False
    )
    try:
        repair_mesh(soup, "object 'soup'")
    except Exception:  # refusing the soup is fine; printing is not
        pass
    out, err = capfd.readouterr()
    assert "MeshFix" not in out + err and out == ""


def test_recon_meshfix_prints_nothing(capfd):
    from real2sim.recon.meshing.surface import ensure_closed

    m = trimesh.creation.icosphere(2)
    rng = np.random.default_rng(0)
    soup = trimesh.Trimesh(
        m.vertices, np.vstack([m.faces, rng.integers(0, len(m.vertices), (60, 3))]), process=False
    )
    try:
        ensure_closed(soup)
    except Exception:  # refusing the soup is fine; printing is not
        pass
    out, err = capfd.readouterr()
    assert out == "" and err == ""
