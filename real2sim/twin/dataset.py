"""A LeRobot v3.0 dataset written with pyarrow (no LeRobot needed): ``meta/info.json``, ``meta/stats.json``,
``meta/tasks.parquet``, ``meta/episodes/chunk-000/file-000.parquet`` and ``data/chunk-000/file-000.parquet``, laid out
and typed as LeRobot's own writer lays them out (vectors as fixed-size lists of float32, images as PNG structs)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from real2sim.atomic import dumps_json, write_bytes, write_text

DATA_PATH = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet"
EPISODES_FILE = "meta/episodes/chunk-000/file-000.parquet"
QUANTILES = (0.01, 0.10, 0.50, 0.90, 0.99)
INDEX_FEATURES = ("timestamp", "frame_index", "episode_index", "index", "task_index")


@dataclass(frozen=True)
class EpisodeOut:
    """One episode to write: its feature columns ((N,) or (N, k); images: one PNG per frame) and task."""

    columns: dict[str, object]
    task: str

    @property
    def length(self) -> int:
        return len(self.columns["timestamp"])  # type: ignore[arg-type]


def _hf_feature(spec: dict) -> dict:
    if spec["dtype"] == "image":
        return {"_type": "Image"}
    if list(spec["shape"]) == [1]:
        return {"dtype": spec["dtype"], "_type": "Value"}
    return {
        "feature": {"dtype": spec["dtype"], "_type": "Value"},
        "length": int(spec["shape"][0]),
        "_type": "List",
    }


def _column(values, spec: dict):
    import pyarrow as pa

    if spec["dtype"] == "image":
        return pa.array(
            [{"bytes": b, "path": None} for b in values],
            pa.struct([("bytes", pa.binary()), ("path", pa.string())]),
        )
    arr = np.asarray(values)
    if list(spec["shape"]) == [1]:
        return pa.array(arr.reshape(-1).astype(spec["dtype"]))
    k = int(spec["shape"][0])
    flat = pa.array(arr.reshape(-1, k).astype(spec["dtype"]).reshape(-1))
    return pa.FixedSizeListArray.from_arrays(flat, k)


def _stats(values, spec: dict) -> dict[str, list]:
    """LeRobot's per-feature statistics (min, max, mean, std, count, q01..q99) of one episode or all."""
    if spec["dtype"] == "image":
        pix = np.stack([_decode(b)[::8, ::8] for b in values[:: max(1, len(values) // 100)]]) / 255.0
        a = pix.reshape(-1, 3)
        shape = (3, 1, 1)
    else:
        a = np.asarray(values, float).reshape(len(values), -1)
        shape = (a.shape[1],)
    out = {
        "min": a.min(0), "max": a.max(0), "mean": a.mean(0), "std": a.std(0),
    }  # fmt: skip
    for q in QUANTILES:
        out[f"q{round(q * 100):02d}"] = np.quantile(a, q, axis=0)
    res: dict[str, list] = {k: np.asarray(v).reshape(shape).tolist() for k, v in out.items()}
    integer = spec["dtype"].startswith("int")
    if integer:
        res["min"] = [int(x) for x in np.asarray(res["min"]).reshape(-1)]
        res["max"] = [int(x) for x in np.asarray(res["max"]).reshape(-1)]
    res["count"] = [int(len(values))]
    return res


def _decode(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _parquet(table, path: Path, metadata: dict[bytes, bytes]) -> None:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table.replace_schema_metadata(metadata), buf, compression="snappy")
    write_bytes(path, buf.getvalue())


def write_dataset(
    dest: Path, fps: float, robot_type: str, features: dict, episodes: list[EpisodeOut]
) -> dict:
    """Write ``episodes`` (in order: episode_index 0, 1, ...) as a LeRobot v3.0 dataset; returns its info.json."""
    import pyarrow as pa

    tasks: list[str] = []
    for e in episodes:
        if e.task not in tasks:
            tasks.append(e.task)
    cols: dict[str, list] = {k: [] for k in features}
    ep_rows: dict[str, list] = {}
    start = 0
    for i, e in enumerate(episodes):
        n = e.length
        per = dict(e.columns)
        per.update(
            frame_index=np.arange(n), episode_index=np.full(n, i), index=np.arange(start, start + n),
            task_index=np.full(n, tasks.index(e.task)),
        )  # fmt: skip
        for k in features:
            cols[k].append(per[k])
        row = {"episode_index": i, "tasks": [e.task], "length": n, "data/chunk_index": 0, "data/file_index": 0,
               "dataset_from_index": start, "dataset_to_index": start + n}  # fmt: skip
        for k, spec in features.items():
            for s, v in _stats(per[k], spec).items():
                row[f"stats/{k}/{s}"] = v
        row.update({"meta/episodes/chunk_index": 0, "meta/episodes/file_index": 0})
        for k, v in row.items():
            ep_rows.setdefault(k, []).append(v)
        start += n
    total = start
    joined = {k: (sum((list(v) for v in vs), []) if features[k]["dtype"] == "image" else np.concatenate(vs))
              for k, vs in cols.items()}  # fmt: skip
    data = pa.table({k: _column(joined[k], features[k]) for k in features})
    hf = {"info": {"features": {k: _hf_feature(s) for k, s in features.items()}}}
    _parquet(
        data, dest / DATA_PATH.format(chunk_index=0, file_index=0), {b"huggingface": json.dumps(hf).encode()}
    )
    _parquet(pa.table(ep_rows), dest / EPISODES_FILE, {})
    pandas_meta = {
        "index_columns": ["__index_level_0__"],
        "column_indexes": [{"name": None, "field_name": None, "pandas_type": "unicode", "numpy_type": "object",
                            "metadata": {"encoding": "UTF-8"}}],
        "columns": [
            {"name": "task_index", "field_name": "task_index", "pandas_type": "int64", "numpy_type": "int64",
             "metadata": None},
            {"name": None, "field_name": "__index_level_0__", "pandas_type": "unicode", "numpy_type": "object",
             "metadata": None},
        ],
        "attributes": {}, "creator": {"library": "pyarrow"}, "pandas_version": "2.2.0",
    }  # fmt: skip
    tasks_table = pa.table(
        {"task_index": pa.array(range(len(tasks)), pa.int64()), "__index_level_0__": tasks}
    )
    _parquet(tasks_table, dest / "meta" / "tasks.parquet", {b"pandas": json.dumps(pandas_meta).encode()})
    stats = {k: _stats(joined[k], s) for k, s in features.items()}
    write_text(dest / "meta" / "stats.json", dumps_json(stats))
    info = {
        "codebase_version": "v3.0", "robot_type": robot_type, "total_episodes": len(episodes),
        "total_frames": total, "total_tasks": len(tasks), "chunks_size": 1000, "data_files_size_in_mb": 100,
        "video_files_size_in_mb": 500, "fps": int(round(fps)) if abs(fps - round(fps)) < 1e-9 else fps,
        "splits": {"train": f"0:{len(episodes)}"}, "data_path": DATA_PATH,
        "video_path": None, "features": features,
    }  # fmt: skip
    write_text(dest / "meta" / "info.json", dumps_json(info))
    return info
