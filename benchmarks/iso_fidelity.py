"""obj2mjcf at the fidelity of ours: for each object, the cheapest of obj2mjcf's decompositions (CoACD's default
concavity threshold and coarser ones) that is at least as close to the mesh as real2sim's collision geometry.

Row ``obj2mjcf=`` of ``bench_simcost``: step time at equal or better fidelity, object by object. A coarser CoACD
threshold gives obj2mjcf fewer hulls (cheaper to step) and a larger Hausdorff distance; of those whose Hausdorff is
no larger than ours, the one of fewest hulls is taken (the default where even that one is farther than ours: then
ours is the closer). So the step time of ours against this row compares each object with obj2mjcf's cheapest
package that is at least as close as ours (or the closest it has), not a cruder ours against a finer peer.
"""

from __future__ import annotations

from pathlib import Path

THRESHOLDS = (0.05, 0.06, 0.07, 0.08, 0.1, 0.15, 0.2, 0.3, 0.4)
"""CoACD concavity thresholds tried, CoACD's default (0.05) first."""


def iso_fidelity_hulls(
    scene_name: str,
    scene,
    ours_mm: list[float],
    default_hulls: dict,
    default_mm: list[float],
    work: Path,
    timeout: float,
) -> dict:
    """Per object: obj2mjcf's hulls of fewest pieces over ``THRESHOLDS`` whose Hausdorff [mm] is at most ours.

    ``default_hulls`` (by body name) and ``default_mm`` are obj2mjcf's at its defaults (threshold 0.05). Returns
    ``hulls`` (body name -> hulls), ``threshold`` and ``hausdorff_mm`` per object, in scene order."""
    from peer_hulls import fidelity, peer_hulls

    from real2sim.scene import sanitize_name

    out: dict = {"hulls": {}, "threshold": [], "hausdorff_mm": []}
    for i, o in enumerate(scene.objects):
        body = sanitize_name(o.name)
        cands = [(THRESHOLDS[0], default_hulls[body], default_mm[i])]
        for t in THRESHOLDS[1:]:
            hs = peer_hulls(scene_name, body, o.mesh, work, timeout, threshold=t)
            if hs is not None:
                cands.append((t, hs, fidelity(_one(scene, o), lambda _o, hs=hs: hs)[0]))
        t, hs, mm = cands[cheapest_within(cands, ours_mm[i])]
        out["hulls"][body] = hs
        out["threshold"].append(t)
        out["hausdorff_mm"].append(mm)
    return out


def cheapest_within(cands: list[tuple[float, list, float]], ours_mm: float) -> int:
    """Index of the candidate ``(threshold, hulls, hausdorff_mm)`` of fewest hulls whose Hausdorff is at most
    ``ours_mm`` (the first, CoACD's default, when none is: the finest obj2mjcf offers); ties: the first."""
    ok = [k for k, c in enumerate(cands) if c[2] <= ours_mm]
    return min(ok, key=lambda k: (len(cands[k][1]), k)) if ok else 0


def _one(scene, o):
    """A scene of the one object ``o`` (``peer_hulls.fidelity`` measures every object of the scene it gets)."""
    from dataclasses import replace

    return replace(scene, objects=(o,))
