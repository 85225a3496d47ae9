#!/bin/sh
# A /loop user's driver script: run the verify loop, then branch on the terminal state /loop names.
# It runs unchanged under allium-loop: the same flags (--verify, --max-iterations, --interval) and the same
# CONVERGED / EXHAUSTED names in the --json output. ALLIUM_LOOP overrides the command (default: allium-loop).
set -u
${ALLIUM_LOOP:-allium-loop} run "take three steps" --verify "sh check.sh" --max-iterations 5 --interval 1 \
  --json > loop-events.ndjson
status=$(sed -n 's/.*"status":"\([A-Z][A-Z]*\)".*/\1/p' loop-events.ndjson | tail -n 1)
case "$status" in
  CONVERGED) echo "loop: CONVERGED"; exit 0 ;;
  EXHAUSTED) echo "loop: EXHAUSTED"; exit 3 ;;
  *) echo "loop: stopped (${status:-no status})"; exit 1 ;;
esac
