"""The red-team corpus as a table: each case builds its bad input in its own folder and says what the user must see.

A case is ``Case(id, build, expect)``: ``build(folder, base)`` writes the inputs into ``folder`` (the working folder of
the command) and returns the command line; ``expect`` is the text the single ``error:`` line must contain (the file or
option at fault and the problem), or ``None`` for a run that must succeed. ``base`` holds what several cases start
from (a scan, a scene, an exported package, the sample logs). ``run_corpus`` runs every case through
``cli_runner`` (a forked ``real2sim`` per case, stdout and stderr at the descriptor, an address-space cap and a time
limit) and returns the problems found, one string per broken rule.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.reliability.red_team_inputs import (
    ROOT,
    SAMPLE,
    Build,
    argv,
    calibrate,
    cloud_file,
    corrupt_laz,
    csv_bytes,
    csv_log,
    csv_rows,
    fifo,
    gap,
    gzip_bomb,
    h5_unequal,
    made,
    mesh_bytes,
    mesh_obj,
    model_file,
    ms,
    noise_images,
    npy,
    npz_unequal,
    obj,
    package,
    package_file,
    pcd,
    photos,
    png_bomb,
    pose,
    poses,
    sample_photos,
    sample_scan,
    scan,
    scene,
    session,
    support,
    tiny_scene,
    with_row,
)


@dataclass(frozen=True)
class Case:
    id: str
    build: Build
    expect: tuple[str, ...] | None
    """Substrings of the one ``error:`` line (None: the run must succeed); ``rc`` is its exit code."""
    rc: int = 1
    warns: tuple[str, ...] = ()
    """Substrings of the warning a successful run must print (accepted, but not without a word)."""
    fsize: int | None = None
    """Largest file [bytes] the command may write (a disk that fills up)."""


BASE_SCENE_POSE = [[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0.05], [0, 0, 0, 1.0]]

CASES: tuple[Case, ...] = (
    # ---- internal errors before: PCD header values, options, scene.json types, poses, sizes
    Case("pcd_viewpoint_short", scan("s.pcd", pcd(50, "VIEWPOINT 1 2\n")), ("s.pcd", "VIEWPOINT")),
    Case("pcd_viewpoint_nan", scan("s.pcd", pcd(50, "VIEWPOINT nan 0 0 1 0 0 0\n")), ("s.pcd", "VIEWPOINT")),
    Case("pcd_width_mismatch", scan("s.pcd", pcd(50, "", width=7)), ("s.pcd", "WIDTH")),
    Case("seed_negative", sample_scan("--seed", "-1"), ("--seed",), rc=2),
    Case("density_inf", sample_scan("--density", "inf"), ("--density",), rc=2),
    Case("voxel_inf", sample_scan("--voxel", "inf"), ("--voxel",), rc=2),
    Case("fifo_scan", fifo, ("scan.ply", "not a regular file")),
    Case("complex_npy", scan("c.npy", npy(np.ones((50, 3), complex))), ("c.npy", "complex")),
    Case(
        "big_endian_as_little",
        scan(
            "b.npy",
            lambda p: np.save(p, np.random.default_rng(0).uniform(0, 1, (200, 3)).astype(">f4").view("<f4")),
        ),
        ("b.npy",),
    ),
    Case(
        "colinear_cloud",
        scan("line.xyz", cloud_file(np.c_[np.linspace(0, 1, 500), np.zeros(500), np.zeros(500)])),
        ("line.xyz",),
    ),
    Case(
        "plane_only_cloud",
        scan(
            "plane.xyz", cloud_file(np.c_[np.random.default_rng(1).uniform(0, 1, (3000, 2)), np.zeros(3000)])
        ),
        None,
        rc=0,
        warns=("plane.xyz", "no objects found"),
    ),
    Case(
        "poses_mirroring",
        poses([[-1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]),
        ("poses.json", "mirror"),
    ),
    Case(
        "poses_scaled",
        poses([[2.0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0], [0, 0, 0, 1]]),
        ("poses.json", "rigid"),
    ),
    Case("corrupt_laz", scan("c.laz", corrupt_laz), ("c.laz",)),
    Case("scene_density_string", scene(obj(density="heavy")), ("scene.json", "density")),
    Case("scene_density_true", scene(obj(density=True)), ("scene.json", "density")),
    Case("scene_mass_string", scene(obj(mass="1kg", density=None)), ("scene.json", "mass")),
    Case("scene_friction_short", scene(obj(friction=[0.5])), ("scene.json", "friction")),
    Case(
        "scene_friction_negative",
        scene(obj(friction=[-0.5, 0.005, 0.0001])),
        ("scene.json", "friction", "-0.5"),
    ),
    Case("scene_friction_string", scene(obj(friction="-0.5")), ("scene.json", "friction")),
    Case("scene_torsional_negative", scene(obj(friction=[0.5, -0.1, 0.0001])), ("scene.json", "friction")),
    Case("scene_friction_huge", scene(obj(friction=[1e9, 0.005, 0.0001])), ("scene.json", "friction")),
    Case("scene_friction_nan", scene(obj(friction=["nan", 0.0, 0.0])), ("scene.json", "friction")),
    Case("scene_rgba_short", scene(obj(rgba=[1, 0])), ("scene.json", "rgba")),
    Case("scene_name_number", scene(obj(name=5)), ("scene.json", "name")),
    Case("scene_name_100k", scene(obj(name="n" * 100_000)), ("scene.json", "name")),
    Case("scene_nested", scene(raw="[" * 100_000), ("scene.json",)),
    Case(
        "scene_reflected",
        scene(pose([[-1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_singular",
        scene(pose([[0.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_last_row",
        scene(pose([[1.0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.05], [1, 1, 1, 5]])),
        ("scene.json", "world_from_object"),
    ),
    Case(
        "scene_scaled_pose",
        scene(pose([[2.0, 0, 0, 0], [0, 2, 0, 0], [0, 0, 2, 0.05], [0, 0, 0, 1]])),
        ("scene.json", "world_from_object"),
    ),
    Case("scene_normal_nan", scene(support(normal=["nan", 0, 1])), ("scene.json", "normal")),
    Case("scene_normal_zero", scene(support(normal=[0, 0, 0])), ("scene.json", "normal")),
    Case("scene_normal_sideways", scene(support(normal=[1, 0, 0])), ("scene.json", "normal")),
    Case("scene_normal_down", scene(support(normal=[0, 0, -1])), ("scene.json", "normal")),
    Case(
        "scene_duplicate_names",
        scene(lambda doc: doc["objects"].append(dict(doc["objects"][0]))),
        ("scene.json", "box"),
    ),
    Case("scene_tiny_mesh", tiny_scene, ("scene.json", "box")),
    Case(
        "mesh_vertex_count_lie",
        mesh_bytes(
            b"ply\nformat binary_little_endian 1.0\nelement vertex 1000000000\nproperty float x\nproperty float y\nproperty float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n"
            + bytes(64)
        ),
        ("box.ply",),
    ),
    Case("mesh_garbage", mesh_bytes(b"\x00\xff" * 100), ("box.ply",)),
    Case("mesh_flat", mesh_obj(lambda t: t.creation.box((0.1, 0.1, 0.0))), ("box",)),
    Case(
        "mesh_open",
        mesh_obj(
            lambda t: t.Trimesh(
                t.creation.box((0.1, 0.1, 0.1)).vertices, t.creation.box((0.1, 0.1, 0.1)).faces[:-2]
            )
        ),
        None,
        rc=0,
        warns=("box", "closed manifold"),
    ),
    Case(
        "mesh_nan",
        mesh_obj(
            lambda t: t.Trimesh(
                t.creation.box((0.1, 0.1, 0.1)).vertices * [1, 1, float("nan")],
                t.creation.box((0.1, 0.1, 0.1)).faces,
                process=False,
            )
        ),
        ("box",),
    ),
    # ---- validate: a hand-edited package, budgets
    Case(
        "validate_friction_negative",
        package(lambda x: x.replace('friction="0.8', 'friction="-0.8', 1)),
        ("friction", "-0.8"),
    ),
    Case(
        "validate_unstable",
        package(lambda x: x.replace('<key name="home"', '<key name="home" qvel="0 0 0 1e200 0 0"')),
        ("pkg", "warnings"),
    ),
    Case("validate_manifest_nested", package_file("export.json", "[" * 100_000), ("export.json",)),
    Case(
        "validate_manifest_types",
        package_file("export.json", '{"name": 5, "objects": "x"}'),
        ("export.json",),
    ),
    Case("validate_model_malformed", package_file("box.xml", "<mujoco><worldbody>"), ("pkg",)),
    Case(
        "validate_not_a_folder", lambda d, b: ((d / "pkg").write_text("x"), ["validate", "pkg"])[1], ("pkg",)
    ),
    Case("validate_samples_huge", package(lambda x: x, "--samples", "1000000000"), ("--samples",)),
    Case("validate_sim_seconds_huge", package(lambda x: x, "--sim-seconds", "1e9"), ("--sim-seconds",)),
    # ---- calibration: options and logs
    Case("calibrate_window_nan", calibrate(None, "--window", "nan"), ("--window",), rc=2),
    Case("calibrate_qvel_weight_nan", calibrate(None, "--qvel-weight", "nan"), ("--qvel-weight",), rc=2),
    Case("calibrate_despike_negative", calibrate(None, "--despike", "-1"), ("--despike",)),
    Case(
        "calibrate_holdout_is_log",
        calibrate(None, "--holdout", str(SAMPLE / "logs" / "excite_00.csv")),
        ("--holdout", "excite_00.csv"),
    ),
    Case("log_npz_unequal", calibrate(npz_unequal), ("log.npz",)),
    Case("log_h5_unequal", calibrate(h5_unequal), ("log.h5",)),
    Case("log_gzip_bomb", calibrate(csv_log("bomb.csv.gz", gzip_bomb)), ("bomb.csv.gz",)),
    Case("log_time_ms", calibrate(csv_log("ms.csv", ms)), ("ms.csv", "time")),
    Case(
        "log_bom",
        calibrate(csv_log("bom.csv", lambda h, r: b"\xef\xbb\xbf" + csv_bytes(h, r))),
        None,
        rc=0,
    ),
    Case("log_gap_100s", calibrate(csv_log("gap.csv", gap)), None, rc=0),
    # ---- photos
    Case("photos_png_bomb", photos(png_bomb), ("img_0.png",)),
    Case("photos_no_overlap", photos(noise_images), ("imgs",)),
    Case("photos_intrinsics_nan", sample_photos("--intrinsics", "nan,1,1,1"), ("--intrinsics",)),
    Case("photos_intrinsics_zero", sample_photos("--intrinsics", "0,0,0,0"), ("--intrinsics",)),
    # ---- sessions
    Case(
        "session_outside_path",
        session('[session]\nname = "s"\n[lidar]\nfiles = ["/etc/hostname"]\n'),
        ("session.toml", "/etc/hostname"),
    ),
    Case("process_stages_empty", session('[session]\nname = "s"\n', None, "--stages", ""), ("--stages",)),
    Case(
        "session_unknown_key",
        session('[session]\nname = "s"\n[lidar]\nunit = "mm"\n'),
        ("session.toml", "'units'"),
    ),
    Case(
        "session_friction_nan",
        session('[session]\nname = "s"\n[objects]\nfriction = nan\n'),
        ("session.toml", "friction"),
    ),
    Case(
        "session_density_negative",
        session('[session]\nname = "s"\n[objects]\ndensity = -5.0\n'),
        ("session.toml", "density"),
    ),
    Case(
        "process_stages_typo",
        session('[session]\nname = "s"\n', None, "--stages", "recn"),
        ("--stages", "'recon'"),
    ),
    # ---- options that are numbers: finite, in range, counts from 0
    Case("export_workers_negative", scene(None, None, "--workers", "-1"), ("--workers",), rc=2),
    Case("calibrate_window_negative", calibrate(None, "--window", "-1"), ("--window",)),
    Case("sensor_origin_nan", sample_scan("--sensor-origin", "nan,0,0"), ("--sensor-origin",), rc=2),
    Case(
        "log_fifo",
        calibrate(lambda d: (os.mkfifo(d / "log.csv"), "log.csv")[1]),
        ("log.csv", "not a regular file"),
    ),
    # ---- more of each class: other readers, options, scene.json fields, sessions
    Case(
        "splat_scale_nan", argv("recon", "splat", "s.ply", "--scale", "nan", "-o", "out"), ("--scale",), rc=2
    ),
    Case(
        "splat_no_y",
        made(
            lambda d: (d / "s.ply").write_bytes(
                b"ply\nformat ascii 1.0\nelement vertex 2\nproperty float x\nend_header\n1\n"
            ),
            "recon",
            "splat",
            "s.ply",
            "-o",
            "out",
        ),
        ("s.ply", "'y'"),
    ),
    Case("poses_missing", sample_scan("--poses", "nope.json"), ("nope.json",)),
    Case(
        "poses_nested",
        made(
            lambda d: (d / "p.json").write_text("[" * 100_000),
            "recon",
            "pointcloud",
            str(SAMPLE / "lidar" / "scan_00.ply"),
            "--poses",
            "p.json",
            "-o",
            "out",
        ),
        ("p.json",),
    ),
    Case("units_km", sample_scan("--units", "km"), ("--units",), rc=2),
    Case(
        "photos_empty_folder",
        made(lambda d: (d / "imgs").mkdir(), "recon", "photos", "imgs", "-o", "out"),
        ("imgs",),
    ),
    Case(
        "photos_not_jpeg",
        photos(lambda f: [(f / f"i{i}.jpg").write_bytes(b"not a jpeg") for i in range(3)]),
        ("i0.jpg",),
    ),
    Case("photos_scale_negative", sample_photos("--scale", "-1"), ("--scale",)),
    Case(
        "photos_known_distance_bad",
        made(
            lambda d: (d / "kd.toml").write_text("[[["),
            "recon",
            "photos",
            str(SAMPLE / "images"),
            "--known-distance",
            "kd.toml",
            "-o",
            "out",
        ),
        ("kd.toml",),
    ),
    Case("export_format_bogus", scene(None, None, "--format", "obj"), ("--format",)),
    Case("export_max_hulls_zero", scene(None, None, "--max-hulls", "0"), ("--max-hulls",)),
    Case(
        "export_fidelity_negative", scene(None, None, "--fidelity-tolerance", "-1"), ("--fidelity-tolerance",)
    ),
    Case(
        "export_scene_is_file",
        made(lambda d: (d / "scene").write_text("x"), "export", "scene", "-o", "out"),
        ("scene",),
    ),
    Case("scene_objects_dict", scene(lambda doc: doc.update(objects={})), ("scene.json", "objects")),
    Case(
        "scene_box_support_negative",
        scene(
            lambda doc: doc.update(support={"type": "box", "pose": np.eye(4).tolist(), "size": [-1, 1, 1]})
        ),
        ("scene.json", "size"),
    ),
    Case("scene_top_level_list", scene(raw="[]"), ("scene.json",)),
    Case("scene_role_bogus", scene(obj(role="flying")), ("scene.json", "role")),
    Case("scene_mass_zero", scene(obj(mass=0)), ("scene.json", "mass")),
    Case("scene_markup_name", scene(obj(name="[bold]x[/]")), None, rc=0),
    Case("model_malformed", model_file("<mujoco><worldbody>"), ("m.xml",)),
    Case("model_empty", model_file(""), ("m.xml",)),
    Case("calibrate_fit_bogus", calibrate(None, "--fit", "bogus"), ("bogus",)),
    Case("calibrate_fit_no_joint", calibrate(None, "--fit", "joint:nothere.damping"), ("nothere",)),
    Case("calibrate_max_windows_zero", calibrate(None, "--max-windows", "0"), ("--max-windows",)),
    Case("calibrate_method_bogus", calibrate(None, "--method", "magic"), ("--method",), rc=2),
    Case("log_inf", calibrate(csv_rows(with_row(10, 1, float("inf")))), ("l.csv", "q_shoulder")),
    Case("log_one_row", calibrate(csv_rows(lambda r: r[:1])), ("l.csv",)),
    Case("log_time_repeats", calibrate(csv_rows(with_row(5, 0, 0.0))), ("l.csv", "time")),
    Case(
        "log_json_nested",
        calibrate(lambda d: ((d / "l.json").write_text("[" * 100_000), "l.json")[1]),
        ("l.json",),
    ),
    Case(
        "log_parquet_garbage",
        calibrate(lambda d: ((d / "l.parquet").write_bytes(b"PAR1xxxxPAR1"), "l.parquet")[1]),
        ("l.parquet",),
    ),
    Case("session_missing", argv("process", "nope", "-o", "out"), ("nope",)),
    Case(
        "session_toml_is_folder",
        made(lambda d: (d / "s" / "session.toml").mkdir(parents=True), "process", "s", "-o", "out"),
        ("session.toml", "not a regular file"),
    ),
    Case(
        "session_files_a_string",
        session('[session]\nname = "s"\n[lidar]\nfiles = "a.ply"\n'),
        ("session.toml", "lidar.files"),
    ),
    Case(
        "session_intrinsics_nan",
        session('[session]\nname = "s"\n[photos]\ndir = "."\nintrinsics = [nan, 1, 1, 1]\n'),
        ("session.toml", "intrinsics"),
    ),
    Case(
        "session_origin_nan",
        session('[session]\nname = "s"\n[lidar]\nsensor_origin = [nan, 0, 0]\n'),
        ("session.toml", "sensor_origin"),
    ),
    Case(
        "ply_count_lie",
        scan(
            "h.ply",
            b"ply\nformat binary_little_endian 1.0\nelement vertex 4000000000\nproperty float x\nproperty float y\nproperty float z\nend_header\n"
            + bytes(120),
        ),
        ("h.ply",),
    ),
    Case("xyz_words", scan("w.xyz", b"a b c\nd e f\n"), ("w.xyz",)),
    Case(
        "npy_shape_lie",
        scan(
            "h.npy",
            lambda p: p.write_bytes(
                b"\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000, 3), }"
                + b" " * 50
                + b"\n"
            ),
        ),
        ("h.npy",),
    ),
    Case("kitti_all_nan", scan("k.bin", np.full((100, 4), np.nan, np.float32).tobytes()), ("k.bin",)),
    Case("e57_garbage", scan("g.e57", b"ASTM-E57" + bytes(100)), ("g.e57",)),
    # ---- the machine: a disk that fills up while the scene is written
    Case("disk_full", sample_scan(), ("out",), fsize=20_000),
    # ---- markup in user text
    Case("markup_in_path", lambda d, b: ["recon", "pointcloud", "a[/]b.ply", "-o", "out"], ("a[/]b.ply",)),
    Case(
        "markup_in_section",
        session('[session]\nname = "s[/]x"\n[robot]\nmodel = "[red]m.xml"\n'),
        ("[red]m.xml",),
    ),
)


def build_base(folder: Path) -> dict[str, Path]:
    """The valid inputs cases start from: the sample scan, a one-box scene and its exported package."""
    import trimesh

    from real2sim.scene import Scene, SceneObject, Support, save_scene

    folder.mkdir(parents=True, exist_ok=True)
    box = SceneObject("box", trimesh.creation.box((0.1, 0.1, 0.1)), np.array(BASE_SCENE_POSE))
    scene = save_scene(Scene(Support(), (box,)), folder / "scene")
    pkg = folder / "package"
    if not pkg.is_dir():
        cmd = [sys.executable, "-m", "real2sim", "-q", "export", str(scene), "-o", str(pkg), "--workers", "1",
               "--no-cache", "--format", "mjcf", "--name", "box"]  # fmt: skip
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, timeout=300)
    return {"scan": SAMPLE / "lidar" / "scan_00.ply", "scene": scene, "package": pkg}


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def run_corpus(
    cases: tuple[Case, ...], work: Path, limit_s: float = 60.0, memory_gb: float = 2.0
) -> tuple[list[str], list[dict]]:
    """Run ``cases`` (inputs built under ``work``) and return (broken rules, raw results)."""
    base = build_base(work / "base")
    tmp = work / "tmp"  # TMPDIR of every run: nothing may be left in it
    tmp.mkdir(exist_ok=True)
    spec, before = [], {}
    for c in cases:
        d = work / c.id
        d.mkdir()
        argv = c.build(d, base)
        before[c.id] = _tree(d)
        spec.append({"id": c.id, "argv": argv, "cwd": str(d), "fsize": c.fsize})
    (work / "spec.json").write_text(json.dumps(spec))
    env = dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=str(ROOT), COLUMNS="200")
    cmd = [sys.executable, "-m", "tests.reliability.cli_runner", str(work / "spec.json"),
           str(work / "results.json"), str(limit_s), str(memory_gb)]  # fmt: skip
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, timeout=limit_s * len(cases) + 120)
    doc = json.loads((work / "results.json").read_text())
    results = [dict(r, parent_rss_mb=doc["parent_rss"] / 2**20) for r in doc["results"]]
    problems = []
    for c, r in zip(cases, results, strict=True):
        d = work / c.id
        lines = r["stderr"].splitlines()
        where = f"{c.id}: rc {r['rc']}, stderr {r['stderr'][-600:]!r}"
        if c.expect is None:
            if r["rc"] != c.rc:
                problems.append(f"{where}: expected success")
            if not all(w in " ".join(r["stderr"].split()) for w in c.warns):
                problems.append(f"{where}: no warning {c.warns}")
            continue
        if r["rc"] != c.rc:
            problems.append(f"{where}: expected exit {c.rc}")
        if len(lines) != 1 or not lines[0].startswith("error: "):
            problems.append(f"{where}: not one error line")
        elif not all(e in lines[0] for e in c.expect):
            problems.append(f"{where}: the line does not name {c.expect}")
        if _tree(d) != before[c.id]:
            problems.append(f"{where}: wrote {sorted(_tree(d) - before[c.id])}")
        if r["seconds"] > limit_s:
            problems.append(f"{where}: over {limit_s} s")
    left = sorted(_tree(tmp))
    if left:
        problems.append(f"left in TMPDIR: {left[:10]}")
    return problems, results
