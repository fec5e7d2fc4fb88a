# Debian packages (scripts/package.sh runs `cpack -G DEB` on a build folder):
#   stoker-slurm-plugin  spank_stoker.so in Slurm's plugin folder, and a disabled plugstack
#                        line (/etc/slurm/plugstack.conf.d/stoker.conf, a conffile)
#   stoker               the `stoker` command (stoker's library is linked into it)
#   python3-stoker       the `stoker` Python module in /usr/lib/python3/dist-packages
# Each package is one install component (plugin, cli, python). Files that only the packages
# carry (the conffile, copyright, changelog, the Debian Python folder) are EXCLUDE_FROM_ALL,
# so a plain `cmake --install` installs what it always did.
set(STOKER_PACKAGE_MAINTAINER "stoker packagers <stoker-packagers@example.org>" CACHE STRING
    "The Maintainer field of the Debian packages: the site that builds them")

set(_pkg_dir ${CMAKE_BINARY_DIR}/packaging)
file(MAKE_DIRECTORY ${_pkg_dir})

if(TARGET spank_stoker)
  # The plugin runs only under the Slurm release it was built for (see
  # spank_plugin/slurm_version.hpp): pin that release, from the build's own headers.
  set(_slurm_h ${STOKER_SLURM_INCLUDE_DIR}/slurm/slurm_version.h)
  if(NOT EXISTS ${_slurm_h})  # before 21.08 the version was in slurm.h
    set(_slurm_h ${STOKER_SLURM_INCLUDE_DIR}/slurm/slurm.h)
  endif()
  file(STRINGS ${_slurm_h} _slurm_line REGEX "^#define SLURM_VERSION_NUMBER ")
  string(REGEX MATCH "0x[0-9a-fA-F]+" _slurm_number "${_slurm_line}")
  math(EXPR _slurm_major "(${_slurm_number} >> 16) & 255")
  math(EXPR _slurm_minor "(${_slurm_number} >> 8) & 255")
  math(EXPR _slurm_next "${_slurm_minor} + 1")
  foreach(v _slurm_minor _slurm_next)
    if(${v} LESS 10)
      set(${v} 0${${v}})
    endif()
  endforeach()
  # A plugin-only build (scripts/package.sh --slurm-root, an admin's source build) makes the
  # plugin's package alone, and its version carries the Slurm release, as NVIDIA pyxis's
  # RPM Release does (1.sl2411): 0.1.0+sl2411. Packages for two releases of one stoker
  # version then differ in name and order by Slurm release. The full build keeps 0.1.0, the
  # version of the three packages it makes together.
  set(STOKER_SLURM_TAG sl${_slurm_major}${_slurm_minor})
  if(STOKER_PLUGIN_ONLY)
    set(CPACK_DEBIAN_PACKAGE_VERSION ${PROJECT_VERSION}+${STOKER_SLURM_TAG})
  endif()
  set(_slurm_pkg slurm-wlm-basic-plugins)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_DEPENDS
      "${_slurm_pkg} (>= ${_slurm_major}.${_slurm_minor}), ${_slurm_pkg} (<< ${_slurm_major}.${_slurm_next})")
  if(STOKER_GLIBC_FLOOR)
    # Built against the bullseye sysroot (cmake/toolchain-bullseye.cmake): dpkg-shlibdeps
    # would read this host's newer libc6 and hwloc symbols and ask for them (libc6 >= 2.34,
    # libhwloc15 >= 2.9). The plugin needs what it was linked against: the sysroot's glibc
    # and hwloc, and libgcc_s (libstdc++ is inside it).
    set(CPACK_DEBIAN_PLUGIN_PACKAGE_SHLIBDEPS OFF)
    string(APPEND CPACK_DEBIAN_PLUGIN_PACKAGE_DEPENDS
           ", libc6 (>= ${STOKER_GLIBC_FLOOR}), libgcc-s1, libhwloc15 (>= ${HWLOC_VERSION})")
  endif()
endif()

# /usr/share/doc/<package>/{copyright,changelog.gz} (Debian policy 12.5, 12.7; version
# 0.1.0 has no Debian revision, so the package is native and its changelog is changelog.gz).
# Debian ships them compressed with gzip -9n (no name or time stamp: reproducible).
function(stoker_gzip file)
  execute_process(COMMAND gzip -9nc ${file} OUTPUT_FILE ${_pkg_dir}/${ARGV1} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "gzip failed on ${file}")
  endif()
endfunction()
set(STOKER_DEB_VERSION ${PROJECT_VERSION})
if(CPACK_DEBIAN_PACKAGE_VERSION)
  set(STOKER_DEB_VERSION ${CPACK_DEBIAN_PACKAGE_VERSION})
endif()
configure_file(${CMAKE_SOURCE_DIR}/packaging/changelog.in ${_pkg_dir}/changelog @ONLY)
stoker_gzip(${_pkg_dir}/changelog changelog.gz)
stoker_gzip(${CMAKE_SOURCE_DIR}/packaging/stoker.1 stoker.1.gz)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${CMAKE_SOURCE_DIR}/packaging/changelog.in ${CMAKE_SOURCE_DIR}/packaging/stoker.1)
function(stoker_package_docs component package)
  install(FILES ${CMAKE_SOURCE_DIR}/packaging/copyright ${_pkg_dir}/changelog.gz
          DESTINATION share/doc/${package} COMPONENT ${component} EXCLUDE_FROM_ALL)
endfunction()

set(CPACK_COMPONENTS_ALL "")
if(TARGET stoker)  # not in a plugin-only build (STOKER_PLUGIN_ONLY)
  list(APPEND CPACK_COMPONENTS_ALL cli)
  stoker_package_docs(cli stoker)
  install(FILES ${_pkg_dir}/stoker.1.gz DESTINATION share/man/man1 COMPONENT cli EXCLUDE_FROM_ALL)
  # Prometheus console pages for a job's and a node's input health (docs/admin-guide.md,
  # "Which jobs starve their GPUs"): the admin copies them into Prometheus's consoles folder.
  install(FILES ${CMAKE_SOURCE_DIR}/consoles/stoker-job.html ${CMAKE_SOURCE_DIR}/consoles/stoker-node.html
                ${CMAKE_SOURCE_DIR}/consoles/stoker.lib ${CMAKE_SOURCE_DIR}/consoles/grafana-stoker.json
          DESTINATION share/doc/stoker/examples/consoles COMPONENT cli EXCLUDE_FROM_ALL)
  set(CPACK_DEBIAN_CLI_PACKAGE_NAME stoker)
  set(CPACK_DEBIAN_CLI_PACKAGE_SECTION admin)
  set(CPACK_COMPONENT_CLI_DESCRIPTION
      "Slurm-aware input pipelines for GPU training: the stoker command
  stoker plans each Slurm task's data loader (cores near its GPU, workers,
  prefetch depth, memory budget) from the node's hwloc topology and the
  admin's profiles. The `stoker` command previews plans (also for other node
  types from hwloc XML), lists the admin's profiles, shows and draws a node's
  topology, benchmarks the loader and checks a node for common input-pipeline
  problems (stoker doctor).")
endif()

if(TARGET spank_stoker)
  # The plugstack line, shipped disabled: the admin guide's example file with its
  # `optional` line commented out, without profiles= (the built-in profiles work as they are).
  file(READ ${CMAKE_SOURCE_DIR}/sbatch_templates/admin/plugstack.conf.d/stoker.conf _plugstack)
  string(FIND "${_plugstack}" "# `optional`" _body_at)
  string(SUBSTRING "${_plugstack}" ${_body_at} -1 _body)
  string(REGEX REPLACE "\noptional [^\n]*" "\n#optional ${STOKER_SLURM_PLUGIN_DIR}/spank_stoker.so enable=opt-in"
         _body "${_body}")
  file(WRITE ${_pkg_dir}/stoker.conf
       "# stoker's SPANK plugin (package stoker-slurm-plugin), shipped disabled. To enable it,\n"
       "# remove the '#' before `optional` on the last line, on every compute node and login\n"
       "# host (srun and sbatch check the --stoker flags at submit time). Slurm reads this file\n"
       "# again at each job launch: no daemon restart. Example profiles:\n"
       "# /usr/share/doc/stoker-slurm-plugin/examples/stoker.conf; `stoker plan --list` (package\n"
       "# stoker) shows the profiles in use.\n"
       "#\n"
       "${_body}")
  install(FILES ${_pkg_dir}/stoker.conf DESTINATION /etc/slurm/plugstack.conf.d
          COMPONENT plugin EXCLUDE_FROM_ALL)
  file(WRITE ${_pkg_dir}/conffiles "/etc/slurm/plugstack.conf.d/stoker.conf\n")
  install(FILES ${CMAKE_SOURCE_DIR}/sbatch_templates/admin/stoker.conf
          DESTINATION share/doc/stoker-slurm-plugin/examples COMPONENT plugin EXCLUDE_FROM_ALL)
  stoker_package_docs(plugin stoker-slurm-plugin)

  list(APPEND CPACK_COMPONENTS_ALL plugin)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_NAME stoker-slurm-plugin)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_SECTION admin)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_CONTROL_EXTRA ${_pkg_dir}/conffiles)
  set(CPACK_DEBIAN_PLUGIN_PACKAGE_SUGGESTS stoker)
  set(CPACK_COMPONENT_PLUGIN_DESCRIPTION
      "Slurm SPANK plugin that tunes each task's input pipeline
The stoker plugin reads what each Slurm task was granted (CPU mask, GPUs,
memory), finds with hwloc the NUMA node and NIC nearest the task's GPU, binds
the task there and exports a loader plan (workers, prefetch depth, pinned
memory budget) from the admin's profiles and the user's --stoker flags.

Built for Slurm ${_slurm_major}.${_slurm_minor}. The plugstack line in
/etc/slurm/plugstack.conf.d/stoker.conf is shipped disabled.")
endif()

if(TARGET stoker_python)
  # The module's own install rules for this component are in runtime/python/CMakeLists.txt.
  stoker_package_docs(python python3-stoker)
  list(APPEND CPACK_COMPONENTS_ALL python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-stoker)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  # Pure Python over libstoker.so (ctypes): any CPython 3 from 3.9 on; numpy and torch are
  # imported only when used.
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "python3 (>= 3.9)")
  set(CPACK_DEBIAN_PYTHON_PACKAGE_RECOMMENDS "python3-numpy, python3-torch")
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION
      "Slurm-aware input pipelines for GPU training: Python module
The `stoker` module gives PyTorch jobs the plan that the stoker Slurm plugin
exported (DataLoader settings: workers, prefetch, pinned memory, worker CPU
pinning), or stoker's own C++ loader: persistent NUMA-pinned worker threads,
an adaptive prefetch ring and a distributed sampler with resumable state.")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "${STOKER_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${STOKER_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # name_version_arch.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)   # Depends on the libraries' packages (dpkg-shlibdeps)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_STRIP_FILES ON)
# Install with DESTDIR, so absolute destinations (Slurm's plugin folder, /etc) land in the
# package and never on this host.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)
set(CPACK_PACKAGE_DIRECTORY ${CMAKE_BINARY_DIR}/packages)
include(CPack)
