// The plugin's C boundary. Every SPANK callback runs its C++ body in plugin.cpp's guarded(),
// which catches every exception (none may cross into srun, sbatch or slurmstepd) and turns it
// into Slurm's status and one logged line. The line is composed here, without Slurm, so that
// unit tests read what the user sees.
#pragma once

#include <exception>
#include <string>
#include <string_view>

namespace stoker::spank {

// The line logged (slurm_error) for an exception that escaped `callback` ("init",
// "task_init", "--stoker-workers"). A stoker::Error that names its input is printed as it
// is: "stoker: --stoker-workers=abc: expected auto or a whole number from 1 to 1024", the
// line sbatch shows the user. Anything else is named by its callback: "stoker: init: ...".
std::string boundary_line(std::string_view callback, const std::exception& e);

}  // namespace stoker::spank
