#!/usr/bin/env bash
# The GPU check: one prepared run, under 8 minutes, for the first minutes anyone gets on a
# machine with an NVIDIA GPU and the CUDA toolkit (and the build dependencies:
# scripts/install-deps.sh on Debian). It
#   1. builds stoker with CUDA in build-gpu/ (only what the check needs),
#   2. runs the `gpu` test family: the feeder's ordering faults of issue 27 (archived batches
#      under a 20 ms kernel, release with and without a stream, no context on GPU 0, a failed
#      pin), H2D from the loader against a plain pinned cudaMemcpyAsync of the same bytes,
#      copy/compute overlap, the trainer's input wait and its loss against the CPU's,
#      mixed-device ranks under mpirun, and, where pybind11 is installed, Python's
#      Loader(to_device='cuda') with /usr/bin/python3's torch,
#   3. runs one short training on one GPU (images) for its input-wait share,
# and writes everything worth keeping to one results file, $build/gpu-check-results.txt
# (the figures, each test's verdict, the trainer's summary), also printed at the end.
# Exit status: 0 passed; 1 the build, a test or the training failed (whether or not a GPU
# was found); 3 everything that ran passed but no usable GPU was found (the tests skipped).
#   scripts/gpu-check.sh            STOKER_GPU_BUILD=dir to build elsewhere
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${STOKER_GPU_BUILD:-build-gpu}
mkdir -p "$build"
results=$build/gpu-check-results.txt
log=$build/gpu-check.log
start=$(date +%s)
failed=()  # what failed; any entry means exit 1, whatever else is true
step() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - start))"; }
note() { printf '%s\n' "$*" >>"$results"; }

{
  echo "stoker gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$results"
: >"$log"

step "GPUs"
gpu=yes
if ! nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total \
  --format=csv,noheader >>"$results" 2>>"$log"; then
  gpu=no
  note "GPUs: nvidia-smi found none (the gpu tests will skip)"
fi
tail -n +3 "$results"

step "building with CUDA ($build/)"
export PATH=/usr/local/cuda/bin:$PATH
targets="gpu_tests stoker_train stoker_make_data"
if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_WITH_CUDA=ON \
  -DSTOKER_WITH_PYTHON=AUTO -DSTOKER_WITH_SPANK=OFF \
  -DCMAKE_CUDA_ARCHITECTURES="${STOKER_CUDA_ARCH:-native}" >>"$log" 2>&1; then
  if cmake --build "$build" --target help | grep -q '^stoker_python:'; then
    targets="$targets stoker_python stoker stoker_write_image_kinds"  # the Python gpu tests
  else
    note "no pybind11 here: the Python gpu tests are not built"
  fi
  # shellcheck disable=SC2086
  cmake --build "$build" -j"$(nproc)" --target $targets >>"$log" 2>&1 || failed+=("build")
else
  failed+=("configure")
fi

if [ ${#failed[@]} = 0 ]; then
  step "tests: the gpu family"
  # Each test has 150 s; the family as a whole 330 s, so that the run stays under 8 minutes.
  timeout 330 ctest --test-dir "$build" -L gpu -V --timeout 150 >>"$log" 2>&1 ||
    failed+=("gpu tests (or their 330 s limit)")
  {
    echo "-- figures"
    grep -E '^[0-9]+: \[ figures  \]' "$log" | sed -E 's/^[0-9]+: \[ figures  \] //'
    echo "-- tests"
    grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //'
    grep -E 'tests passed|tests failed' "$log"
  } >>"$results"
  grep -q "skipped 'no CUDA device'" "$log" &&
    note "python gpu tests skipped: /usr/bin/python3's torch sees no CUDA device"
  if grep -q 'no usable GPU' "$log"; then
    gpu=no
    note "$(grep -m1 -o 'no usable GPU.*' "$log")"
  fi
fi

if [ ${#failed[@]} = 0 ] && [ $gpu = yes ]; then
  step "one short training on one GPU (images, 64x64 crops, MLP 12288-2048-8)"
  data=$build/gpu-check-data
  [ -d "$data/images" ] || "$build/runtime/examples/stoker_make_data" images "$data/images" \
    --classes 8 --per-class 512 --width 96 --height 72 >>"$log" 2>&1
  if out=$(timeout 120 env -u STOKER_PLAN_VERSION "$build/runtime/examples/stoker_train" \
    --data "$data/images" --device gpu --size 64 --hidden 2048 --batch-size 256 \
    --epochs 3 2>&1); then
    note "-- training"
    grep -E 'done:|device' <<<"$out" >>"$results"
  else
    failed+=("training")
    printf '%s\n' "$out" >>"$log"
  fi
fi

elapsed=$(($(date +%s) - start))
if [ ${#failed[@]} != 0 ]; then
  verdict="FAILED: $(IFS=,; echo "${failed[*]}")"
  status=1
elif [ $gpu = no ]; then
  verdict="no usable GPU: built, nothing failed, the gpu tests skipped"
  status=3
else
  verdict=passed
  status=0
fi
note "-- gpu-check: $verdict in ${elapsed}s (full log: $log)"
step "results ($results)"
cat "$results"
exit $status
