#!/usr/bin/env python3
"""A torchrun worker in the torchrun template's test (run_templates.sh): prints the worker's
stoker plan, one line, then runs the template's training script (TRAIN_SCRIPT) as torchrun
would have, with the same arguments.

  torchrun-worker: rank R/W local L/N node NODE cpus CPUS source SOURCE
"""
import os
import runpy
import sys

import stoker

plan = stoker.plan()
# One write per line: torchrun runs workers unbuffered (python -u), and print() writes the
# text and its newline apart, so the lines of the node's workers could interleave.
sys.stdout.write(f"torchrun-worker: rank {os.environ['RANK']}/{os.environ['WORLD_SIZE']} "
                 f"local {plan.local_rank}/{plan.local_size} "
                 f"node {os.environ.get('SLURMD_NODENAME', '?')} cpus {plan.cpus} "
                 f"source {plan.reason('source')}\n")
sys.stdout.flush()
script = os.environ["TRAIN_SCRIPT"]
sys.argv = [script] + sys.argv[1:]
runpy.run_path(script, run_name="__main__")
