"""The log formats ``read_table`` knows, in the order their suffixes are tried: one line per format, naming the
module and function that read it (imported only when a file of that format is read). A new format is a module in
this folder and one line here."""

from __future__ import annotations

FORMATS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    ((".json", ".json.gz"), "json_log", "read_json_table"),
    ((".csv", ".csv.gz", ".txt"), "csv_log", "read_csv"),
    ((".npz",), "npz_log", "read_npz"),
    ((".parquet",), "columns", "read_parquet"),
    ((".h5", ".hdf5"), "hdf5_log", "read_hdf5"),
    ((".mcap", ".db3"), "rosbag", "read_rosbag"),
)
"""(file name suffixes, module in ``real2sim.calibration.logs``, reader function): a reader takes the path and
returns a ``Table``."""
