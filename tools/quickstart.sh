#!/usr/bin/env bash
# Set up .venv (core + torch: all the quickstart needs) and run the quickstart league:
# a PPO learner, a PSRO solver and scripted agents on Kuhn poker. Under 3 minutes on 2 cores;
# ends with a leaderboard table and leaderboard.{md,csv,json} + PNG plots in runs/quickstart.
# Rerunning resumes (or re-shows) the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
ARENA_SETUP=core bash tools/setup.sh
.venv/bin/arena league configs/quickstart.yaml "$@"
