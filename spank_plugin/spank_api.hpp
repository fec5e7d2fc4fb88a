// Slurm's spank.h for C++: the header has no extern "C" guard of its own.
#pragma once

extern "C" {
#include <slurm/spank.h>
}
