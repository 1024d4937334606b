#!/usr/bin/env bash
# Hash what the pipeline writes, to check that a refactor leaves outputs byte-identical:
#   bash scripts/output_hashes.sh OUT_DIR   (run from a checkout; compare two OUT_DIR/hashes.txt with diff)
# Runs the demo with an empty decomposition cache, and reconstructs + exports the real OSD test0 scan from
# ../shared/data; hashes every file written (the output folder's path does not enter any file).
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
cd "$out" && find demo osd0_scene osd0_pkg -type f | LC_ALL=C sort | xargs sha256sum >hashes.txt
echo "$(wc -l <hashes.txt) files hashed: $out/hashes.txt"
