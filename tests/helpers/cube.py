"""The ContactNets cube as the contact tests model it: a free box above a plane (``table`` takes extra attributes
of the plane geom), and the map of the toss CSVs' columns."""

from pathlib import Path

import pytest

CUBE = """<mujoco model="cube">
  <worldbody>
    <geom name="table" type="plane" size="0 0 1"{table}/>
    <body name="cube" pos="0 0 0.2">
      <freejoint/>
      <geom name="cube_geom" type="box" size="0.0524 0.0524 0.0524" mass="0.37"/>
    </body>
  </worldbody>
</mujoco>
"""
MAP = """time = "t"
[bodies.cube]
pos = ["x", "y", "z"]
quat = ["qw", "qx", "qy", "qz"]
linvel = ["vx", "vy", "vz"]
angvel = ["wx", "wy", "wz"]
angvel_frame = "body"
"""


def tosses(shared_data: Path) -> Path:
    """The folder of the shared cube tosses (the test is skipped when the shared data is absent)."""
    d = shared_data / "object_logs" / "contactnets_cube" / "tosses"
    if not d.is_dir():
        pytest.skip(f"{d} not present")
    return d


def toss_folder(shared_data: Path, into: Path, picked: slice) -> Path:
    """``into``, a new folder of links to the tosses ``picked`` out of the name-sorted list: a log folder to fit."""
    into.mkdir()
    for f in sorted(tosses(shared_data).glob("*.csv"))[picked]:
        (into / f.name).symlink_to(f)
    return into
