#!/usr/bin/env bash
# The GPU check, for a machine with an NVIDIA GPU and the CUDA toolkit (and the build
# dependencies: scripts/install-deps.sh on Debian). In under 5 minutes it
#   1. builds stoker with CUDA in build-gpu/ (only what the check needs),
#   2. runs the `gpu` test label: feeder bandwidth vs a plain pinned cudaMemcpyAsync,
#      copy/compute overlap, the trainer's input wait on the image pipeline, the errors,
#      and, where pybind11 is installed, Python's Loader(to_device='cuda') with
#      /usr/bin/python3's torch (tests/python/test_gpu_loader.py),
#   3. runs one short training on one GPU,
# and prints the figures. Exit status: 0 passed; 1 a test failed; 3 no usable GPU here.
#   scripts/gpu-check.sh            STOKER_GPU_BUILD=dir to build elsewhere
set -euo pipefail
cd "$(dirname "$0")/.."
build=${STOKER_GPU_BUILD:-build-gpu}
step() { printf '\n== %s\n' "$*"; }
start=$(date +%s)

step "GPUs"
if ! nvidia-smi -L; then
  echo "gpu-check: nvidia-smi found no GPU; the gpu tests would only skip" >&2
  exit 3
fi

step "building with CUDA ($build/)"
export PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOKER_WITH_CUDA=ON \
  -DSTOKER_WITH_PYTHON=AUTO -DSTOKER_WITH_SPANK=OFF -DCMAKE_CUDA_ARCHITECTURES=native >/dev/null
targets="gpu_tests stoker_train stoker_make_data"
if cmake --build "$build" --target help | grep -q '^stoker_python:'; then
  targets="$targets stoker_python stoker stoker_write_image_kinds"  # python.gpu_loader
else
  echo "gpu-check: no pybind11 here: the Python GPU test is not built" >&2
fi
# shellcheck disable=SC2086
cmake --build "$build" -j"$(nproc)" --target $targets

step "tests: label gpu"
log=$build/gpu-check.log
rc=0
ctest --test-dir "$build" -L gpu -V --timeout 240 >"$log" 2>&1 || rc=$?
grep -E '^[0-9]+: \[ figures  \]|Skipped|tests passed|tests failed|\(Failed\)' "$log" |
  sed -E 's/^[0-9]+: //' || true
if grep -q "skipped 'no CUDA device'" "$log"; then
  echo "gpu-check: python.gpu_loader skipped: /usr/bin/python3's torch sees no CUDA device" >&2
fi
if grep -q 'no usable GPU' "$log"; then
  echo "gpu-check: the tests found no usable GPU:" >&2
  grep -m1 'no usable GPU' "$log" >&2
  exit 3
fi

step "one short training on one GPU (images, 64x64 crops, MLP 12288-2048-8)"
data=$build/gpu-check-data
[ -d "$data/images" ] || "$build/runtime/examples/stoker_make_data" images "$data/images" \
  --classes 8 --per-class 512 --width 96 --height 72
env -u STOKER_PLAN_VERSION "$build/runtime/examples/stoker_train" --data "$data/images" \
  --device gpu --size 64 --hidden 2048 --batch-size 256 --epochs 3 || rc=1

echo
echo "gpu-check: $([ $rc = 0 ] && echo passed || echo FAILED) in $(( $(date +%s) - start ))s" \
  "(full test log: $log)"
exit $([ $rc = 0 ] && echo 0 || echo 1)
