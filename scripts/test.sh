#!/usr/bin/env bash
# Sets up .venv with the test, probe and lsp extras if needed, then runs the test suite.
source "$(dirname "$0")/env.sh" "test,probe,lsp"
# `pytest` (not `python -m pytest`) so that the installed package is what gets tested.
.venv/bin/pytest "$@"
