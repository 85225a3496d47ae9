#!/usr/bin/env bash
# Runs the 50 MB output conformance test of one adapter N times while four busy loops load the CPU, and prints
# one line per run and the pass count. Usage: tools/reliability/huge-output-under-load.sh [runs] [adapter]
# (defaults: 5, opencode). Each busy loop is killed by its pid at the end, whatever happens.
set -u
runs="${1:-5}"
adapter="${2:-opencode}"
cd "$(dirname "$0")/../../packages/agents" || exit 1
loads=()
for _ in 1 2 3 4; do
  node -e 'for(;;);' &
  loads+=("$!")
done
trap 'kill "${loads[@]}" 2>/dev/null' EXIT
passed=0
for n in $(seq 1 "$runs"); do
  out=$(npx vitest run "src/${adapter}-agent.test.ts" -t "50 MB" 2>&1)
  if grep -q "Tests .*1 passed" <<<"$out"; then
    passed=$((passed + 1))
    echo "run $n: pass"
  else
    echo "run $n: FAIL"
    grep -E "AssertionError|Received" <<<"$out" | head -4
  fi
done
echo "${adapter} 50 MB output under load: ${passed}/${runs} passed"
