# For a build against an older glibc (cmake/toolchain-bullseye.cmake sets STOKER_GLIBC_FLOOR):
# GCC 12's libstdc++.a, linked statically there, references two glibc symbols that glibc 2.31
# lacks. cmake/sysroot/glibc_shim.c defines both, hidden, and every target links its object
# (an OBJECT library: its object file is always linked, where an archive member would be
# passed over before libstdc++.a, which g++ adds last, asks for it).
if(NOT STOKER_GLIBC_FLOOR)
  return()
endif()
add_library(stoker_glibc_shim OBJECT ${CMAKE_CURRENT_LIST_DIR}/sysroot/glibc_shim.c)
link_libraries(stoker_glibc_shim)
message(STATUS "stoker: built for glibc ${STOKER_GLIBC_FLOOR} and later (sysroot ${CMAKE_SYSROOT})")
