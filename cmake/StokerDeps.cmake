# Finds stoker's dependencies. Every one is a Debian package (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc>=2.0)
find_package(nlohmann_json CONFIG REQUIRED)  # header only; stoker_core writes run records
if(NOT STOKER_PLUGIN_ONLY)  # the data path's and the command's
  find_package(JPEG REQUIRED)
  find_package(PNG REQUIRED)  # libpng: PNG images (a PNG named .JPEG included)
  pkg_check_modules(TURBOJPEG REQUIRED IMPORTED_TARGET libturbojpeg)
  find_package(ZLIB REQUIRED)                                   # .tar.gz shards
  pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)      # .tar.zst shards
  pkg_check_modules(WEBP REQUIRED IMPORTED_TARGET libwebp)      # WebP images
  find_package(CLI11 CONFIG REQUIRED)
endif()

# stoker_optional(NAME VAR FOUND): resolves an AUTO|ON|OFF option into VAR.
function(stoker_optional option found out)
  if(${option} STREQUAL "OFF")
    set(${out} OFF PARENT_SCOPE)
  elseif(found)
    set(${out} ON PARENT_SCOPE)
  elseif(${option} STREQUAL "ON")
    message(FATAL_ERROR "${option}=ON but the dependency was not found")
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

# MPI: mpi.h (libopenmpi-dev) at build time; the runtime dlopens libmpi.so.40 at run time.
if(NOT STOKER_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C)
endif()
stoker_optional(STOKER_WITH_MPI "${MPI_C_FOUND}" STOKER_HAVE_MPI)

if(NOT STOKER_WITH_CUDA STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  include(CheckLanguage)
  check_language(CUDA)
  if(CUDAToolkit_FOUND AND CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # A100 (sm_80) and H100/H200 (sm_90) natively, and sm_90 PTX that newer GPUs compile
      # at load time; nvcc's own default (sm_75 in CUDA 13) would JIT on every data-centre GPU.
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90)
    endif()
    enable_language(CUDA)
    set(_cuda_found TRUE)
  endif()
endif()
stoker_optional(STOKER_WITH_CUDA "${_cuda_found}" STOKER_HAVE_CUDA)

# The Python package is pure Python over libstoker.so (runtime/capi): building it needs no
# Python headers; the interpreter names the folder `cmake --install` puts it in, and runs the
# python tests.
if(NOT STOKER_WITH_PYTHON STREQUAL "OFF")
  set(Python3_EXECUTABLE /usr/bin/python3)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_FOUND)
    set(_py_found TRUE)
  endif()
endif()
stoker_optional(STOKER_WITH_PYTHON "${_py_found}" STOKER_HAVE_PYTHON)

# Slurm's headers: the system's (libslurm-dev, slurm-devel), the sysroot's, or the folder
# holding slurm/spank.h that STOKER_SLURM_INCLUDE_DIR names (scripts/package.sh --slurm-root:
# another Slurm release's headers). The plugin is built for that release only.
if(NOT STOKER_WITH_SPANK STREQUAL "OFF")
  find_path(STOKER_SLURM_INCLUDE_DIR slurm/spank.h
            DOC "The folder holding slurm/spank.h and slurm/slurm_version.h")
  if(STOKER_SLURM_INCLUDE_DIR)
    set(_spank_found TRUE)
  endif()
endif()
stoker_optional(STOKER_WITH_SPANK "${_spank_found}" STOKER_HAVE_SPANK)
