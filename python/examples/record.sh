#!/usr/bin/env bash
# Re-records the examples' replay scripts and goldens against the workspace's fake provider
# (crates/atif-fake-provider), in the venv where `pip install ./python` put the plugin.
# Usage: python/examples/record.sh   (after `cargo build -p atif-fake-provider`)
set -euo pipefail
cd "$(dirname "$0")"
fake="${ATIF_FAKE_PROVIDER:-../../target/debug/atif-fake-provider}"
python="${PYTHON:-python}"

# record TEST_FILE COMMAND: the fake model calls the agent's shell tool with COMMAND once.
record() {
  local output pid url
  output="$(mktemp)"
  "$fake" --command "$2" >"$output" &
  pid=$!
  until [ -s "$output" ]; do sleep 0.1; done
  url="$(head -n 1 "$output")"
  url="${url#listening on }"
  local status=0
  "$python" -m pytest -p no:cacheprovider --atif-record --atif-update --atif-upstream "$url" "$1" \
    || status=$?
  kill "$pid"
  rm -f "$output"
  return "$status"
}

record tests/test_calculator_agent.py 'echo $((17 * 23 + 4))'
record tests/test_word_count_agent.py "echo 'the quick brown fox' | wc -w"
