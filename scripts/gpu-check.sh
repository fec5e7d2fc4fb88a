#!/usr/bin/env bash
# The GPU check: one prepared run, within 8 minutes by its own budget, for the first minutes
# anyone gets on a machine with an NVIDIA GPU and the CUDA toolkit, a fresh one included. It
#   0. checks what the build needs first and names each missing piece (with the Debian
#      package that has it); STOKER_GPU_INSTALL=1 installs those with apt-get (scripts/
#      install-deps.sh's names, without Slurm, Chromium, Prometheus or the fuzz toolchain),
#   1. builds stoker with CUDA in build-gpu/ (only what the check needs; the benchmarks are
#      not configured, so Google Benchmark is not needed), for the GPU's own architecture,
#   2. runs the `gpu` test family (120 s each): the feeder's ordering faults, H2D from the
#      loader against a plain pinned copy, copy/compute overlap after a warm-up, the trainer's
#      input wait and its loss against the CPU's, mixed-device ranks under mpirun, and, where
#      the Python package is built (it needs only a Python: the package is pure Python over
#      libstoker.so), Python's Loader(to_device='cuda') with the chosen Python's torch,
#   3. runs one short training on one GPU (images) for its input-wait share,
# and writes everything worth keeping to one results file, $build/gpu-check-results.txt
# (the machine, the figures, each test's verdict, what was not exercised, the trainer's
# summary, the tail of a failed step's log), also printed at the end.
# Exit status: 0 passed; 1 the build, a test or the training failed (whether or not a GPU
# was found); 2 the machine lacks what the build needs (named); 3 everything that ran passed
# but no usable GPU was found (the tests skipped).
#   STOKER_GPU_BUILD=dir        build elsewhere (default build-gpu)
#   STOKER_CUDA_ARCH=90         CUDA architectures (default: the first GPU's compute
#                               capability, from nvidia-smi; without a GPU, 90)
#   STOKER_GPU_PYTHON=python3   the Python of the Python gpu tests (default /usr/bin/python3)
#   STOKER_GPU_BENCHMARKS=1     configure the benchmarks too (needs Google Benchmark)
#   STOKER_GPU_BUDGET=480       seconds for the whole check; each step gets what is left
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${STOKER_GPU_BUILD:-build-gpu}
python=${STOKER_GPU_PYTHON:-/usr/bin/python3}
budget=${STOKER_GPU_BUDGET:-480}
mkdir -p "$build"
results=$build/gpu-check-results.txt
log=$build/gpu-check.log
start=$(date +%s)
failed=()  # what failed; any entry means exit 1, whatever else is true
step() { printf '\n== %s (%ss)\n' "$*" "$(($(date +%s) - start))"; }
note() { printf '%s\n' "$*" >>"$results"; }
# Seconds a step may take: its own limit, or what is left of the budget when that is less.
limit() {
  local left=$((budget - ($(date +%s) - start)))
  [ "$left" -lt "$1" ] && echo $((left > 0 ? left : 1)) || echo "$1"
}
# Runs "$@" under a time limit of $1 s, its output in the log; on failure, the log's tail
# goes to the results file, so a failure can be read without the log.
limited() {
  local secs=$1 what=$2
  shift 2
  timeout "$secs" "$@" >>"$log" 2>&1
  local rc=$?
  [ $rc = 0 ] && return 0
  if [ $rc = 124 ]; then note "$what: stopped at its $secs s limit"; else note "$what: failed ($rc)"; fi
  note "-- last lines of $log:"
  tail -n 25 "$log" | sed 's/^/   /' >>"$results"
  return 1
}

{
  echo "stoker gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
  echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} >"$results"
: >"$log"
export PATH=/usr/local/cuda/bin:$PATH

step "preflight"
missing=()  # "what (Debian package)"
packages=()
# A tool counts when it is a runnable file (bash's command -v also names a found file that
# cannot be run).
have_tool() { local p; p=$(command -v "$1" 2>/dev/null) && [ -f "$p" ] && [ -x "$p" ]; }
need_tool() { have_tool "$1" || { missing+=("$2 ($3)"); packages+=("$3"); }; }
have_header() {
  local d
  for d in ${CPATH:+${CPATH//:/ }} /usr/include /usr/local/include /usr/include/x86_64-linux-gnu \
    /usr/include/aarch64-linux-gnu; do
    [ -e "$d/$1" ] && return 0
  done
  return 1
}
need_header() { have_header "$1" || { missing+=("$2 ($3)"); packages+=("$3"); }; }
need_pc() { pkg-config --exists "$1" 2>/dev/null || { missing+=("$2 ($3)"); packages+=("$3"); }; }
check_deps() {
  missing=()
  packages=()
  need_tool cmake "cmake 3.25 or later" cmake
  if have_tool cmake; then
    v=$(cmake --version | head -n1 | awk '{print $3}')
    [ "$(printf '%s\n3.25\n' "$v" | sort -V | head -n1)" = 3.25 ] ||
      missing+=("cmake 3.25 or later (this one is $v: pip install cmake, or Kitware's apt)")
  fi
  need_tool ninja "ninja" ninja-build
  need_tool pkg-config "pkg-config" pkg-config
  need_tool g++ "a C++20 compiler (g++ 12 or later)" g++
  need_tool nvcc "nvcc, the CUDA toolkit (or NVIDIA's in /usr/local/cuda)" nvidia-cuda-toolkit
  need_pc hwloc "hwloc 2" libhwloc-dev
  need_pc libturbojpeg "libturbojpeg" libturbojpeg0-dev
  need_header jpeglib.h "libjpeg" libjpeg62-turbo-dev
  need_pc libpng "libpng" libpng-dev
  need_pc libwebp "libwebp" libwebp-dev
  need_pc libzstd "libzstd" libzstd-dev
  need_header zlib.h "zlib" zlib1g-dev
  need_header CLI/CLI.hpp "CLI11" libcli11-dev
  need_header nlohmann/json.hpp "nlohmann-json" nlohmann-json3-dev
  need_header gtest/gtest.h "GoogleTest" libgtest-dev
  need_header gmock/gmock.h "GoogleMock" libgmock-dev
  [ "${STOKER_GPU_BENCHMARKS:-0}" = 1 ] &&
    need_header benchmark/benchmark.h "Google Benchmark (STOKER_GPU_BENCHMARKS=1)" libbenchmark-dev
}
check_deps
if [ ${#missing[@]} != 0 ] && [ "${STOKER_GPU_INSTALL:-0}" = 1 ] && command -v apt-get >/dev/null; then
  note "installing: ${packages[*]}"
  limited "$(limit 240)" "apt-get install" sh -c \
    "apt-get update && apt-get install -y --no-install-recommends ${packages[*]}" && check_deps
fi
if [ ${#missing[@]} != 0 ]; then
  note "-- preflight: the build needs what is missing here:"
  printf '   %s\n' "${missing[@]}" >>"$results"
  note "   (Debian/Ubuntu: apt-get install ${packages[*]}, or STOKER_GPU_INSTALL=1 as root)"
fi
# nvcc accepts only the host compilers its release knows: a newer GCC is refused at once.
if have_tool nvcc; then
  probe=$build/preflight.cu
  printf '__global__ void k() {}\nint main() { k<<<1, 1>>>(); return 0; }\n' >"$probe"
  if ! timeout 120 nvcc ${CUDAHOSTCXX:+-ccbin "$CUDAHOSTCXX"} -o "$build/preflight" "$probe" \
    >>"$log" 2>&1; then
    missing+=("an nvcc that accepts the host compiler ($(g++ -dumpfullversion 2>/dev/null)): \
set CUDAHOSTCXX to a supported g++")
    note "-- preflight: nvcc cannot compile with this host compiler (log: $log)"
  fi
fi

step "machine"
gpu=yes
gpus=0
if query=$(nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,memory.total \
  --format=csv,noheader 2>>"$log") && [ -n "$query" ]; then
  note "GPUs (index, name, bus id, driver, memory):"
  printf '%s\n' "$query" | sed 's/^/   /' >>"$results"
  gpus=$(printf '%s\n' "$query" | wc -l)
  # Fields an older driver may not know: asked apart, so that they cannot hide the GPU.
  note "   compute capability, PCIe generation now/max, width now/max: $(nvidia-smi \
    --query-gpu=compute_cap,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max \
    --format=csv,noheader 2>&1 | tr '\n' ';')"
else
  gpu=no
  note "GPUs: nvidia-smi found none (the gpu tests will skip)"
fi
note "nvcc: $(nvcc --version 2>/dev/null | grep -o 'release [^,]*, V[0-9.]*' || echo none)"
note "host compiler: $(g++ --version 2>/dev/null | head -n1)"
mpi=none
command -v mpirun >/dev/null && mpi=$(mpirun --version 2>&1 | head -n1)
note "cmake: $(cmake --version 2>/dev/null | head -n1); MPI: $mpi"
note "python: $python: $("$python" -c 'import sys
try:
    import torch
    cuda = torch.cuda.is_available()
    print(sys.version.split()[0], "torch", torch.__version__, "built for CUDA", torch.version.cuda,
          "is_available", cuda, "devices", torch.cuda.device_count() if cuda else 0)
except ImportError as e:
    print(sys.version.split()[0], "no torch:", e)' 2>&1 | tail -n1)"
arch=${STOKER_CUDA_ARCH:-}
if [ -z "$arch" ] && [ $gpu = yes ]; then
  arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d '. ')
fi
# CMake's "native" fails where no GPU is seen: without one, the H200's sm_90 the check is
# meant for (one architecture builds fastest).
[ -z "$arch" ] && arch=90 && note "no GPU to ask for its architecture: building for 90"
note "CUDA architectures: $arch"
tail -n +3 "$results"

if [ ${#missing[@]} = 0 ]; then
  step "building with CUDA ($build/)"
  targets="gpu_tests stoker_train stoker_make_data"
  benchmarks=OFF
  [ "${STOKER_GPU_BENCHMARKS:-0}" = 1 ] && benchmarks=ON
  if limited "$(limit 180)" configure cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSTOKER_WITH_CUDA=ON -DSTOKER_WITH_PYTHON=AUTO -DSTOKER_WITH_SPANK=OFF \
    -DSTOKER_BUILD_BENCHMARKS=$benchmarks -DPython3_EXECUTABLE="$python" \
    -DCMAKE_CUDA_ARCHITECTURES="$arch"; then
    grep -m1 -o 'stoker_train: NCCL.*\|stoker_train: no NCCL.*' "$log" >>"$results" ||
      note "NCCL: not found at configure (the trainer reduces over MPI only)"
    if cmake --build "$build" --target help | grep -q '^stoker_python:'; then
      targets="$targets stoker_python stoker stoker_write_image_kinds"  # the Python gpu tests
    else
      note "no Python package (no $python?): the Python gpu tests are not built"
    fi
    # shellcheck disable=SC2086
    limited "$(limit "$budget")" build cmake --build "$build" -j"$(nproc)" --target $targets ||
      failed+=("build")
  else
    failed+=("configure")
  fi
fi

if [ ${#missing[@]} = 0 ] && [ ${#failed[@]} = 0 ]; then
  step "tests: the gpu family"
  limited "$(limit 330)" "gpu tests" ctest --test-dir "$build" -L gpu -V --timeout 120 ||
    failed+=("gpu tests")
  {
    echo "-- figures"
    grep -E '^[0-9]+: \[ figures  \]' "$log" | sed -E 's/^[0-9]+: \[ figures  \] //'
    echo "-- tests"
    grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$log" | sed -E 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: //'
    grep -E 'tests passed|tests failed' "$log"
  } >>"$results"
  grep -q "skipped 'no CUDA device" "$log" &&
    note "python gpu tests skipped: $(grep -m1 -o "skipped 'no CUDA device[^']*'" "$log")"
  if grep -q 'no usable GPU' "$log"; then
    gpu=no
    note "$(grep -m1 -o 'no usable GPU.*' "$log")"
  fi
fi
note "-- not exercised here:"
[ "$gpus" -lt 2 ] &&
  note "   NCCL across GPUs and the two-GPU tests (context on GPU 0, pinning's device): $gpus GPU(s)"
note "   a rank killed mid-allreduce (the trainer's NCCL error path): never run by this check"

if [ ${#missing[@]} = 0 ] && [ ${#failed[@]} = 0 ] && [ $gpu = yes ]; then
  step "one short training on one GPU (images, 64x64 crops, MLP 12288-2048-8)"
  data=$build/gpu-check-data
  [ -d "$data/images" ] || "$build/runtime/examples/stoker_make_data" images "$data/images" \
    --classes 8 --per-class 512 --width 96 --height 72 >>"$log" 2>&1
  if out=$(timeout "$(limit 120)" env -u STOKER_PLAN_VERSION "$build/runtime/examples/stoker_train" \
    --data "$data/images" --device gpu --size 64 --hidden 2048 --batch-size 256 \
    --epochs 3 2>&1); then
    note "-- training"
    grep -E 'done:|device' <<<"$out" >>"$results"
  else
    failed+=("training")
    printf '%s\n' "$out" >>"$log"
    note "-- training failed; its last lines:"
    tail -n 15 <<<"$out" | sed 's/^/   /' >>"$results"
  fi
fi

elapsed=$(($(date +%s) - start))
if [ ${#missing[@]} != 0 ]; then
  verdict="not run: the build needs what is missing (see preflight)"
  status=2
elif [ ${#failed[@]} != 0 ]; then
  verdict="FAILED: $(IFS=,; echo "${failed[*]}")"
  status=1
elif [ $gpu = no ]; then
  verdict="no usable GPU: built, nothing failed, the gpu tests skipped"
  status=3
else
  verdict=passed
  status=0
fi
note "-- gpu-check: $verdict in ${elapsed}s of a ${budget}s budget (full log: $log)"
step "results ($results)"
cat "$results"
exit $status
