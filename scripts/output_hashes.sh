#!/usr/bin/env bash
# Hash what the pipeline writes, to check that a refactor leaves outputs byte-identical:
#   bash scripts/output_hashes.sh OUT_DIR   (run from a checkout; compare two OUT_DIR/hashes.txt with diff)
# Runs the demo with an empty decomposition cache, reconstructs + exports the real OSD test0 scan and fits the
# ContactNets cube's contact on its first 40 tosses from ../shared/data; hashes every file written (the output
# folder's path does not enter any file).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$1
rm -rf "$out" && mkdir -p "$out" && out=$(cd "$out" && pwd)
py=${PYTHON:-$root/.venv/bin/python}
scan=${SCAN:-$root/../shared/data/pointclouds/osd_tabletop/test0.pcd}
export REAL2SIM_CACHE="$out/cache"
cd "$root"
"$py" -m real2sim -q demo -o "$out/demo" >"$out/demo.log" 2>&1
"$py" -m real2sim -q recon pointcloud "$scan" -o "$out/osd0_scene" >"$out/osd0.log" 2>&1
"$py" -m real2sim -q export "$out/osd0_scene" -o "$out/osd0_pkg" >>"$out/osd0.log" 2>&1
tosses=$root/../shared/data/object_logs/contactnets_cube/tosses
mkdir -p "$out/cube/tosses"
for f in $(ls "$tosses"/*.csv | LC_ALL=C sort | head -40); do ln -s "$f" "$out/cube/tosses/"; done
"$py" - "$out/cube" <<'PY'
import sys
from pathlib import Path

from tests.helpers.cube import CUBE, MAP

d = Path(sys.argv[1])
(d / "cube.xml").write_text(CUBE.format(table=""))
(d / "map.toml").write_text(MAP)
PY
"$py" -m real2sim -q calibrate "$out/cube/cube.xml" --log "$out/cube/tosses" --map "$out/cube/map.toml" \
  --fit geom:cube_geom.friction --fit geom:cube_geom.solref -o "$out/cube_fit" >"$out/cube.log" 2>&1
cd "$out" && find demo osd0_scene osd0_pkg cube_fit -type f | LC_ALL=C sort | xargs sha256sum >hashes.txt
echo "$(wc -l <hashes.txt) files hashed: $out/hashes.txt"
