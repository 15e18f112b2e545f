#!/usr/bin/env bash
# The instructions (callgrind) that `atif normalize`, `atif check` and `atif import` spend at a
# base revision and at the work tree, and whether the work tree stays within 2% of the base.
#
#   scripts/instructions.sh [BASE]
#
# BASE is any revision; the default, 695335f, is main before issue 22's API work began (the
# Done-when of issue 22: "the same instructions, within 2%, on normalize, check and import").
# The base is exported with `git archive` into target/instructions/SHA/src and built there
# (kept, so a second run builds nothing); the work tree builds into target/release. Both are
# release builds of the `atif` binary. The inputs are generated into a temporary folder removed
# on exit: three trajectories by gen_traj.py (`../shared/tools/gen_traj.py`, or $ATIF_GEN_TRAJ)
# and a Codex rollout of the import bench's shape. Instruction counts do not depend on the
# machine's load, so the columns compare on any machine. Exits 1 when a count grew by more than
# $INSTRUCTIONS_TOLERANCE_PERCENT (default 2). Needs valgrind, python3 and git.
set -euo pipefail

base=${1:-695335f}
root=$(git rev-parse --show-toplevel)
gen=${ATIF_GEN_TRAJ:-$root/../shared/tools/gen_traj.py}
target=${CARGO_TARGET_DIR:-$root/target}
tolerance=${INSTRUCTIONS_TOLERANCE_PERCENT:-2}
cargo=${CARGO:-cargo}
for tool in valgrind python3; do
    command -v "$tool" >/dev/null || { echo "scripts/instructions.sh needs $tool" >&2; exit 2; }
done
[ -f "$gen" ] || { echo "no gen_traj.py at $gen (set ATIF_GEN_TRAJ)" >&2; exit 2; }
sha=$(git -C "$root" rev-parse --short=12 "$base^{commit}")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Builds the `atif` binary of the checkout $1 into the target folder $2.
build() {
    (cd "$1" && CARGO_TARGET_DIR="$2" "$cargo" build --quiet --release --locked -p atif-cli --bin atif)
}

# The instructions callgrind counts for the command "$@" (its output goes to a file).
instructions() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >"$scratch/out" \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# One line per job: its name and its count, for the binary $1.
measure() {
    printf 'normalize %s\n' "$(instructions "$1" normalize "$scratch/run.json")"
    printf 'check %s\n' "$(instructions "$1" check "$scratch/golden.json" "$scratch/other.json")"
    printf 'check-fail %s\n' "$(instructions "$1" check "$scratch/golden.json" "$scratch/changed.json")"
    printf 'import %s\n' "$(instructions "$1" import "$scratch/rollout.jsonl" -o "$scratch/imported.json")"
}

python3 "$gen" --steps 400 --obs-bytes 4000 --subagents 3 >"$scratch/run.json"
# The same run with other ids and times (its check passes), and one whose every step differs.
python3 "$gen" --steps 400 --obs-bytes 4000 --subagents 3 --seed 1 --noise 1 >"$scratch/other.json"
python3 "$gen" --steps 400 --obs-bytes 4000 --subagents 3 --seed 7 --noise 2 >"$scratch/changed.json"
# A Codex 0.40 rollout of about 2 MB, the shape of the import bench's synthetic input.
python3 - "$scratch/rollout.jsonl" <<'EOF'
import json, sys
def line(value):
    return json.dumps(value, separators=(",", ":")) + "\n"
at = "2025-09-25T02:12:24.000Z"
out = [line({"timestamp": "2025-09-25T02:12:23.966Z", "type": "session_meta", "payload": {"id": "s", "cli_version": "0.40.0"}})]
for i in range(400):
    usage = {"input_tokens": 4000, "cached_input_tokens": 3000, "output_tokens": 200}
    out.append(line({"timestamp": at, "type": "event_msg", "payload": {"type": "token_count", "info": {"last_token_usage": usage, "total_token_usage": {"input_tokens": 4000 * (i + 1)}}}}))
    out.append(line({"timestamp": at, "type": "response_item", "payload": {"type": "reasoning", "summary": [{"type": "summary_text", "text": "**Thinking about the next step**"}], "encrypted_content": "g" * 2000}}))
    out.append(line({"timestamp": at, "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"ls\"]}", "call_id": f"call_{i}"}}))
    out.append(line({"timestamp": at, "type": "response_item", "payload": {"type": "function_call_output", "call_id": f"call_{i}", "output": "{\"output\":\"a\\nb\\n\",\"metadata\":{\"exit_code\":0}}" * 20}}))
open(sys.argv[1], "w").write("".join(out))
EOF

base_src="$target/instructions/$sha/src"
if [ ! -f "$base_src/Cargo.toml" ]; then
    rm -rf "$base_src" && mkdir -p "$base_src"
    git -C "$root" archive "$sha" | tar -x -C "$base_src"
fi
echo "building $base ($sha) and the work tree (release)..." >&2
build "$base_src" "$target/instructions/$sha/target"
build "$root" "$target"
"$target/release/atif" normalize "$scratch/run.json" >"$scratch/golden.json"

measure "$target/instructions/$sha/target/release/atif" >"$scratch/base.txt"
measure "$target/release/atif" >"$scratch/head.txt"
paste -d " " "$scratch/base.txt" "$scratch/head.txt" | awk -v tolerance="$tolerance" -v base="$base" '
    BEGIN { printf "%-10s %15s %15s %8s\n", "job", base, "work tree", "ratio" }
    {
        if ($2 == "" || $4 == "" || $2 == 0) { printf "%s: no count\n", $1; failed = 1; next }
        ratio = $4 / $2
        printf "%-10s %15d %15d %8.4f\n", $1, $2, $4, ratio
        if (ratio > 1 + tolerance / 100) { printf "%s: more than %s%% over the base\n", $1, tolerance; failed = 1 }
    }
    END { exit failed }'
