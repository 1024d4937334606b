#!/usr/bin/env bash
# Set up real2sim on a fresh Debian machine: system packages, a virtual environment in .venv, the package.
# Usage: bash scripts/setup.sh          # runtime (what `real2sim demo` needs)
#        bash scripts/setup.sh --dev    # plus test tools and the optional file-format extras
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

# open3d needs libusb; MuJoCo's headless rendering needs EGL (Mesa); pycolmap/open3d need OpenMP.
sys_pkgs=(libusb-1.0-0 libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri libgomp1 libglib2.0-0)
if command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${sys_pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if ! python3 -c "import ensurepip, venv" >/dev/null 2>&1; then missing+=(python3-venv); fi
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" != 0 ] && sudo="sudo"
    echo "setup: installing system packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q --progress-bar off -e ".${extras}"
echo "setup: done (.venv/bin/real2sim)"
