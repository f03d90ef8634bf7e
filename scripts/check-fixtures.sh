#!/usr/bin/env bash
# Sets up .venv if needed, then runs `torchlint check` on the bundled fixtures.
# Exit status 1 is expected: the fixtures are full of real training bugs.
source "$(dirname "$0")/env.sh" ""
.venv/bin/torchlint check fixtures/ "$@"
