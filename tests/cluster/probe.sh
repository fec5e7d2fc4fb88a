#!/bin/sh
# Run as a Slurm task by the cluster tests: prints what the task sees, one
# "<SLURM_PROCID> KEY=VALUE" line each, for cluster_harness.hpp's parse_probe().
p=${SLURM_PROCID:-x}
echo "$p node=${SLURMD_NODENAME:-}"
echo "$p affinity=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)"
env | grep -E '^(STOKER_[A-Z_]*|RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|CUDA_DEVICE_ORDER|CUDA_VISIBLE_DEVICES|SLURM_STEP_GPUS|SLURM_JOB_ID|SLURM_STEP_ID|SLURM_CPU_BIND_LIST|OMP_NUM_THREADS|MKL_NUM_THREADS|OPENBLAS_NUM_THREADS)=' |
  sed "s/^/$p /"
