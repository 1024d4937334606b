"""Registration of several scans of one scene into one frame.

Given poses (JSON ``{file: world_from_sensor}`` or ``bun.conf``-style ``bmesh <file> tx ty tz qx qy qz qw``) are
used as they are. Otherwise every pair of scans is aligned globally (FPFH features + RANSAC) and refined by
point-to-plane ICP; pairs with enough overlap become edges of a pose graph, which Open3D optimises with the first
scan as the anchor. A scan with no good edge to the others is reported by name (``StageError``), never dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim import physics
from real2sim.errors import InputError, StageError


def quat_xyzw_to_matrix(q: np.ndarray) -> np.ndarray:
    """(3, 3) rotation of an ``x y z w`` quaternion (normalised first); not ``real2sim.transforms``: see
    docs/DECISIONS.md, Recon."""
    x, y, z, w = np.asarray(q, dtype=np.float64) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def read_poses(path: str | Path) -> dict[str, np.ndarray]:
    """``{file name: world_from_scan 4x4}`` from a JSON file or a ``bun.conf``-style file.

    ``bun.conf`` lines ``bmesh <file> tx ty tz qx qy qz qw`` place a scan as ``p_world = R(q)^T p + t`` (the
    convention of the Stanford scanning repository's files, where the stored quaternion is the conjugate).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "poses file not found")
    text = path.read_text(encoding="utf-8", errors="replace")
    out: dict[str, np.ndarray] = {}
    if path.suffix.lower() == ".json" or text.lstrip().startswith("{"):
        try:
            d = json.loads(text)
            for k, v in d.items():
                # rigid and right-handed: a scale or a mirror would distort the scan (rounded files: 1e-4)
                out[Path(k).name] = physics.rigid(v, f"pose of {k!r}", tol=1e-4)
        except RecursionError:
            raise InputError(path, "malformed poses JSON (nested too deeply)") from None
        except (json.JSONDecodeError, ValueError, TypeError, AttributeError) as exc:
            raise InputError(
                path, f"malformed poses JSON ({exc}); expected {{file: 4x4 world_from_sensor}}"
            ) from None
        return out
    for ln, line in enumerate(text.splitlines(), 1):
        tok = line.split()
        if not tok or tok[0] != "bmesh":
            continue
        if len(tok) != 9:
            raise InputError(path, f"line {ln}: expected 'bmesh <file> tx ty tz qx qy qz qw'")
        try:
            t = np.array([float(x) for x in tok[2:5]])
            q = np.array([float(x) for x in tok[5:9]])
        except ValueError:
            raise InputError(path, f"line {ln}: non-numeric pose") from None
        if not (np.all(np.isfinite(np.r_[t, q])) and abs(np.linalg.norm(q) - 1.0) < 1e-3):
            raise InputError(
                path, f"line {ln}: the pose must be finite with a unit quaternion, got {tok[2:]}"
            )
        m = np.eye(4)
        m[:3, :3] = quat_xyzw_to_matrix(q).T
        m[:3, 3] = t
        out[Path(tok[1]).name] = m
    if not out:
        raise InputError(
            path, "no poses found (JSON {file: 4x4} or 'bmesh <file> tx ty tz qx qy qz qw' lines)"
        )
    return out


@dataclass(frozen=True, eq=False)
class Registration:
    """``world_from_scan`` per scan (the first scan is the world frame) and each scan's best pair fitness."""

    world_from_scan: tuple[np.ndarray, ...]
    fitness: tuple[float, ...]


def _prep(points: np.ndarray, voxel: float):
    import open3d as o3d

    pc = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(points))
    pc = pc.voxel_down_sample(voxel)
    pc.estimate_normals(o3d.geometry.KDTreeSearchParamHybrid(radius=2.5 * voxel, max_nn=30))
    # open3d's generated stubs make ``indices`` required; it defaults to every point
    feat = o3d.pipelines.registration.compute_fpfh_feature(  # pyright: ignore[reportCallIssue]
        pc, o3d.geometry.KDTreeSearchParamHybrid(radius=5 * voxel, max_nn=100)
    )
    return pc, feat


def _pair(src, dst, fs, fd, voxel: float, seed: int) -> tuple[np.ndarray, float, np.ndarray]:
    import open3d as o3d

    reg = o3d.pipelines.registration
    o3d.utility.random.seed(seed)
    ransac = reg.registration_ransac_based_on_feature_matching(
        src, dst, fs, fd, True, 1.5 * voxel,
        reg.TransformationEstimationPointToPoint(False), 3,
        [reg.CorrespondenceCheckerBasedOnEdgeLength(0.9), reg.CorrespondenceCheckerBasedOnDistance(1.5 * voxel)],
        reg.RANSACConvergenceCriteria(50000, 0.999),
    )  # fmt: skip
    T = ransac.transformation
    for dist in (2.0 * voxel, 1.0 * voxel, 0.5 * voxel):
        icp = reg.registration_icp(
            src,
            dst,
            dist,
            T,
            reg.TransformationEstimationPointToPlane(),
            reg.ICPConvergenceCriteria(max_iteration=60),
        )
        T = icp.transformation
    info = reg.get_information_matrix_from_point_clouds(src, dst, 0.5 * voxel, T)
    return np.asarray(T), float(icp.fitness), info


HYPOTHESES = 4
"""Global registrations (RANSAC seeds, each refined by ICP) tried per scan pair."""


def _same(a: np.ndarray, b: np.ndarray, voxel: float) -> bool:
    """Whether two rigid transforms agree within 2 degrees and one voxel."""
    d = np.linalg.inv(a) @ b
    angle = np.degrees(np.arccos(np.clip((np.trace(d[:3, :3]) - 1) / 2, -1.0, 1.0)))
    return bool(angle < 2.0 and np.linalg.norm(d[:3, 3]) < voxel)


def _confident_pair(src, dst, fs, fd, voxel: float, seed: int) -> tuple[np.ndarray, float, np.ndarray, bool]:
    """The best of ``HYPOTHESES`` registrations of ``src`` onto ``dst``, and whether another one reproduces it.

    A scene with repeated or symmetric parts (a table top, a row of boxes) aligns well in several ways; the
    overlap fraction cannot tell them apart, but independent RANSAC runs then land on different alignments. A
    pair counts only when its best alignment is found at least twice.
    """
    hyps = [_pair(src, dst, fs, fd, voxel, seed + k) for k in range(HYPOTHESES)]
    best = max(range(len(hyps)), key=lambda k: (hyps[k][1], -k))
    T, fit, info = hyps[best]
    agree = sum(_same(T, h[0], voxel) for h in hyps)
    return T, fit, info, agree >= 2


def register_scans(
    scans: list[np.ndarray], names: list[str], *, voxel: float, min_fitness: float, seed: int
) -> Registration:
    """Global registration of ``scans`` (each (N, 3) in its own frame) into the first scan's frame."""
    import open3d as o3d

    reg = o3d.pipelines.registration
    n = len(scans)
    if n == 1:
        return Registration((np.eye(4),), (1.0,))
    if voxel <= 0:
        allp = np.concatenate(scans)
        voxel = float(np.linalg.norm(allp.max(axis=0) - allp.min(axis=0))) / 60
    prepped = [_prep(s, voxel) for s in scans]
    edges = []
    best = np.zeros(n)
    unsure = np.zeros(n, bool)
    for i in range(n):
        for j in range(i + 1, n):
            T, fit, info, sure = _confident_pair(
                prepped[j][0], prepped[i][0], prepped[j][1], prepped[i][1], voxel, seed
            )
            if fit >= min_fitness and not sure:
                unsure[[i, j]] = True
                continue
            best[i] = max(best[i], fit)
            best[j] = max(best[j], fit)
            if fit >= min_fitness:
                edges.append((i, j, T, fit, info))  # T: scan_i_from_scan_j
    # initial poses: maximum-fitness spanning tree from scan 0
    poses: list[np.ndarray | None] = [None] * n
    poses[0] = np.eye(4)
    tree_edges: set = {None}
    for _ in range(n):
        cand = [(f, i, j, T) for i, j, T, f, _ in edges if (poses[i] is None) != (poses[j] is None)]
        if not cand:
            break
        f, i, j, T = max(cand, key=lambda c: c[0])
        tree_edges.add((i, j))
        if poses[i] is not None:
            poses[j] = poses[i] @ T
        else:
            poses[i] = poses[j] @ np.linalg.inv(T)
    tree_edges.discard(None)
    missing = [names[k] for k in range(n) if poses[k] is None]
    if missing:
        ambiguous = [m for m in missing if unsure[names.index(m)]]
        why = (
            f"{', '.join(ambiguous)} fit the other scans in more than one way"
            if ambiguous
            else f"best overlap {', '.join(f'{best[names.index(m)]:.2f}' for m in missing)}, need {min_fitness}"
        )
        raise StageError(
            f"could not register {', '.join(missing)} to the other scans with confidence ({why}): "
            "these scans need poses (--poses, or poses in session.toml)"
        )
    graph = reg.PoseGraph()
    for P in poses:
        graph.nodes.append(reg.PoseGraphNode(np.asarray(P)))
    for i, j, T, _, info in edges:
        graph.edges.append(reg.PoseGraphEdge(j, i, T, info, uncertain=(i, j) not in tree_edges))
    reg.global_optimization(
        graph,
        reg.GlobalOptimizationLevenbergMarquardt(),
        reg.GlobalOptimizationConvergenceCriteria(),
        reg.GlobalOptimizationOption(
            max_correspondence_distance=voxel, edge_prune_threshold=0.25, reference_node=0
        ),
    )
    out = [np.asarray(graph.nodes[k].pose) for k in range(n)]
    anchor = np.linalg.inv(out[0])
    # rounded to 1e-10 so the poses (and the scene's bytes) are the same on every run
    return Registration(tuple(np.round(anchor @ P, 10) + 0.0 for P in out), tuple(float(b) for b in best))
