/* A SPANK plugin that stands for pyxis and NGC's enroot hook in the cluster tests: loaded
 * before stoker (plugstack.conf.d/a-env-before-stoker.conf sorts first), its task_init sets
 * what an image's environment sets before stoker's task_init runs: a thread count of its own
 * (OMP_NUM_THREADS=7) and the launcher variables with the values Slurm's task has, which
 * stoker sets too (RANK, WORLD_SIZE). Only the thread count is a change. */
#include <slurm/spank.h>
#include <stdint.h>
#include <stdio.h>

SPANK_PLUGIN(env_before_stoker, 1)

int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  uint32_t rank = 0, world = 0;
  char text[32];
  (void)ac;
  (void)av;
  if (spank_get_item(sp, S_TASK_GLOBAL_ID, &rank) == ESPANK_SUCCESS) {
    snprintf(text, sizeof text, "%u", rank);
    spank_setenv(sp, "RANK", text, 1);
  }
  if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &world) == ESPANK_SUCCESS) {
    snprintf(text, sizeof text, "%u", world);
    spank_setenv(sp, "WORLD_SIZE", text, 1);
  }
  spank_setenv(sp, "OMP_NUM_THREADS", "7", 1);
  return 0;
}
