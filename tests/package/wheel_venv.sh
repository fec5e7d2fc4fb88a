#!/usr/bin/env bash
# The wheel in a fresh venv (ctest package.wheel_venv): installed with pip when this machine
# has it (python3-pip installs a local file offline: --no-index --no-deps), else unpacked by
# wheel_install.py; then `import stoker` and stoker.plan() work, torch is not imported, the
# bundled libraries are the ones loaded (not this machine's libhwloc), no libstdc++ is (the
# library's own is static and hidden), and the `stoker` entry point and `python -m stoker`
# run `plan --json`.
#
#   wheel_venv.sh DIR    DIR holds the wheel (package.wheel's output folder)
#
# The venv has no system site packages: the module imports without numpy (only a Loader's
# batches need it; the wheel's `loader` extra names it). Exit 77 when a tool is missing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
whl=$(ls "$1"/stoker-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || { echo "SKIP: no wheel in $1 (package.wheel makes it)"; exit 77; }
# The Python the build's extension is for (Debian's; a python3 first on PATH may be another).
python3=${STOKER_PYTHON:-/usr/bin/python3}
"$python3" -c 'import venv' 2>/dev/null || { echo "SKIP: $python3 has no venv module"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$python3" -m venv --without-pip "$tmp/venv"
py=$tmp/venv/bin/python
if "$python3" -m pip --version >/dev/null 2>&1; then
  how="pip"
  "$python3" -m pip --python "$py" install --quiet --no-index --no-deps --no-cache-dir "$whl"
else
  how="wheel_install.py (no pip here)"
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
  "$python3" "$here/wheel_install.py" "$whl" "$site" "$tmp/venv/bin" "$py" >/dev/null
fi
echo "installed $(basename "$whl") with $how"

# A plan outside Slurm, in a clean environment: nothing of the build or the host's Slurm
# (PYTHONPATH, STOKER_*, SLURM_*) may stand in for the installed package.
run() { env -i PATH=/usr/bin:/bin HOME="$tmp" "$@"; }
run "$py" -I - "$tmp/venv" <<'EOF'
import sys
import stoker
venv = sys.argv[1]
assert stoker.__file__.startswith(venv), f"stoker came from {stoker.__file__}, not the venv"
assert "torch" not in sys.modules, "import stoker imported torch"
plan = stoker.plan()
assert plan.workers >= 0, plan
maps = open("/proc/self/maps").read()
assert "/libmpi" not in maps, "import stoker loaded libmpi (MPI is loaded only when wanted)"
for lib in ("libhwloc", "libjpeg"):
    paths = {l.split()[-1] for l in maps.splitlines() if f"/{lib}" in l}
    assert paths and all("/stoker.libs/" in p for p in paths), f"{lib} loaded from {paths}"
# The wheel's libstoker.so holds its libstdc++ (static and hidden): none is loaded for it.
assert "libstdc++" not in maps, "a libstdc++ is loaded with libstoker.so"
print(f"import stoker and stoker.plan() work: {plan.workers} workers")
EOF
for cmd in "$tmp/venv/bin/stoker" "$py -m stoker"; do
  # shellcheck disable=SC2086  # "$py -m stoker" is two words on purpose
  run $cmd plan --json >"$tmp/plan.json"
  "$python3" -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/plan.json" \
    || { echo "FAIL: '$cmd plan --json' did not print JSON"; cat "$tmp/plan.json"; exit 1; }
  echo "'${cmd#"$tmp"/}' plan --json works"
done

# Where Open MPI is installed (Debian's here), the wheel, which bundles no MPI, loads it at
# run time: STOKER_MPI=1 makes stoker start MPI (PMIX_RANK alone, as under srun --mpi=pmix,
# asks for none); alone, Open MPI starts as a singleton. libmpi must come from the machine's
# Open MPI, not from the wheel.
if [ -d /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 ]; then
  out=$(run STOKER_MPI=1 PMIX_RANK=0 timeout 60 "$py" -I -c 'import stoker
if stoker.built_with_mpi:
    w = stoker._stoker.world()
    assert w["mpi"] and w["world_size"] == 1, w
    maps = open("/proc/self/maps").read()
    assert "/stoker.libs/libmpi" not in maps, "libmpi came from the wheel"
    assert "/libmpi.so.40" in maps, "no libmpi.so.40 loaded"
print("MPI" if stoker.built_with_mpi else "no MPI in this build")' 2>&1) \
    || { echo "FAIL: MPI from the wheel with the machine's Open MPI:"; echo "$out" | tail -n 20
         exit 1; }
  echo "MPI_Init_thread from the wheel with the machine's Open MPI: ${out##*$'\n'}"
fi
