# Builds stoker with the host's GCC 12 against the Debian 11 (bullseye) sysroot that
# scripts/sysroot.sh makes, so that the result needs glibc 2.31 and nothing newer: the SPANK
# plugin for any Slurm release (scripts/package.sh --slurm-root), the static libraries and the
# `stoker` command (docs/architecture.md, "Builds for older glibc").
#   cmake -S . -B build-bullseye -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-bullseye.cmake \
#         -DSTOKER_BUILD_TESTS=OFF -DSTOKER_WITH_PYTHON=OFF -DSTOKER_WITH_CUDA=OFF
# The sysroot: STOKER_SYSROOT (the environment's, or -D), default /var/cache/stoker/sysroot-bullseye.
# The traps this file answers (../shared/notes/debian-roots.md):
# - the sysroot's own lib folders and -rpath-link come first, so ld never falls back to the
#   host's glibc (scripts/sysroot.sh has made the root's absolute links relative), and its
#   start files (-B: GCC takes the host's crt1.o otherwise);
# - -pthread: in glibc 2.31 the thread functions are still in libpthread;
# - libstdc++ static and hidden (-static-libstdc++, --exclude-libs,ALL): the host's libstdc++
#   is newer than any the target has, and a copy already in the process (torch's, srun's) must
#   not be interposed on ours nor ours on it. libgcc_s stays dynamic: GCC 12's libgcc_eh.a
#   needs _dl_find_object (GLIBC_2.35);
# - GCC 12's libstdc++.a needs __libc_single_threaded (2.32) and arc4random (2.36):
#   cmake/StokerGlibcFloor.cmake links a hidden shim into every target (STOKER_GLIBC_FLOOR).
# --exclude-libs,ALL hides every symbol that comes from a static archive: a shared library's
# exported API must be compiled into it (object files), not only taken from stoker_core.a.
if(NOT STOKER_SYSROOT)
  if(DEFINED ENV{STOKER_SYSROOT})
    set(STOKER_SYSROOT "$ENV{STOKER_SYSROOT}")
  else()
    set(STOKER_SYSROOT /var/cache/stoker/sysroot-bullseye)
  endif()
endif()
if(NOT EXISTS "${STOKER_SYSROOT}/.stoker-sysroot")
  message(FATAL_ERROR "${STOKER_SYSROOT} is not a complete sysroot: run scripts/sysroot.sh")
endif()
# try_compile projects read this file again: pass the sysroot on to them.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES STOKER_SYSROOT)

set(CMAKE_SYSROOT "${STOKER_SYSROOT}")
set(CMAKE_C_COMPILER gcc)
set(CMAKE_CXX_COMPILER g++)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${STOKER_SYSROOT}")
set(ENV{PKG_CONFIG_LIBDIR}
    "${STOKER_SYSROOT}/usr/lib/x86_64-linux-gnu/pkgconfig:${STOKER_SYSROOT}/usr/share/pkgconfig")

# MPI: only mpi.h is used (libmpi is loaded at run time). FindMPI would ask the host's mpicc
# for its folders; the sysroot's Open MPI is named instead.
set(MPI_SKIP_COMPILER_WRAPPER TRUE)
set(MPI_C_HEADER_DIR "${STOKER_SYSROOT}/usr/lib/x86_64-linux-gnu/openmpi/include")
set(MPI_C_LIB_NAMES mpi)
set(MPI_mpi_LIBRARY "${STOKER_SYSROOT}/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so")

set(_dirs "${STOKER_SYSROOT}/usr/lib/x86_64-linux-gnu;${STOKER_SYSROOT}/lib/x86_64-linux-gnu")
# -B: the start files (crt1.o, Scrt1.o, crti.o, crtn.o) from the sysroot. GCC looks for them in
# its own ../../../x86_64-linux-gnu (the host's glibc) before the sysroot, and glibc 2.34's
# crt1.o leaves running the static constructors to __libc_start_main, which 2.31's does not:
# an executable linked with it ran main() with none of its static objects constructed.
set(_link " -B${STOKER_SYSROOT}/usr/lib/x86_64-linux-gnu/")
foreach(d IN LISTS _dirs)
  string(APPEND _link " -L${d}")
endforeach()
list(JOIN _dirs ":" _rpath_link)
string(APPEND _link " -Wl,-rpath-link,${_rpath_link} -pthread -static-libstdc++ -Wl,--exclude-libs,ALL")
foreach(kind EXE SHARED MODULE)
  set(CMAKE_${kind}_LINKER_FLAGS_INIT "${_link}")
endforeach()
set(CMAKE_C_FLAGS_INIT "-pthread")
set(CMAKE_CXX_FLAGS_INIT "-pthread")

# The newest glibc the build may need: cmake/StokerGlibcFloor.cmake adds the shim for it, and
# tests/reach/glibc_floor.sh checks every binary against it.
set(STOKER_GLIBC_FLOOR 2.31)
