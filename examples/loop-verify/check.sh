#!/bin/sh
# The check a /loop setup verifies against: exit 0 when the work is done.
test "$(cat steps.txt 2>/dev/null || echo 0)" -ge 3
