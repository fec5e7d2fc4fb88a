// Slurm's spank.h for C++: the header has no extern "C" guard of its own.
#pragma once

extern "C" {
#include <slurm/spank.h>
// Slurm 20.11's spank.h carries no version macros (from 21.08 it includes slurm_version.h);
// its slurm.h has them.
#ifndef SLURM_VERSION_NUMBER
#include <slurm/slurm.h>
#define STOKER_SPANK_BEFORE_21_08 1
#endif
}
