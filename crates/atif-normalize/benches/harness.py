#!/usr/bin/env python3
"""The Python normalisation harness the Rust crate is measured against.

It does what the design this crate comes from does, the straightforward way:
json.load, normalise (the default contract of docs/normalization.md), json.dumps(indent=2,
sort_keys=True, ensure_ascii=False), SHA-256.

Usage:
  harness.py FILE            print the canonical normalised text (to compare with `atif normalize`)
  harness.py --time FILE [N] time N end-to-end runs (default 5); print the best wall and CPU times
"""
import hashlib
import json
import re
import sys
import time

VOLATILE = {"session_id", "timestamp", "generation_id", "cost_usd", "total_cost_usd"}
ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,16}")
NEVER_TOUCHED = {"schema_version", "model_name"}


def mask(value):
    if isinstance(value, str):
        return ADDRESS.sub("0xADDR", value)
    if isinstance(value, list):
        return [mask(v) for v in value]
    if isinstance(value, dict):
        return {k: mask(v) for k, v in value.items()}
    return value


def scrub(value):
    if isinstance(value, str):
        return ADDRESS.sub("0xADDR", value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            if child is None or key in VOLATILE:
                continue
            if key in NEVER_TOUCHED and isinstance(child, str):
                pass
            elif key == "tool_calls" and isinstance(child, list):
                child = [scrub_call(c) if isinstance(c, dict) else scrub(c) for c in child]
            else:
                child = scrub(child)
            out[key] = child
        if out.get("extra") == {}:
            del out["extra"]
        return out
    return value


def scrub_call(call):
    arguments = call.get("arguments")
    out = scrub({k: v for k, v in call.items() if k != "arguments"})
    if arguments is not None:
        out["arguments"] = mask(arguments)
    return out


def normalize(traj):
    subs = traj.pop("subagent_trajectories", None)
    traj.pop("trajectory_id", None)
    mapping = {}
    subs_out = None
    if isinstance(subs, list):
        keyed = []
        for sub in subs:
            old = sub.get("trajectory_id")
            norm = normalize(dict(sub))
            keyed.append((json.dumps(norm, indent=2, sort_keys=True, ensure_ascii=False), old, norm))
        keyed.sort(key=lambda k: k[0])
        subs_out = []
        for i, (_, old, norm) in enumerate(keyed, 1):
            mapping.setdefault(old, f"subagent_{i}")
            norm["trajectory_id"] = f"subagent_{i}"
            subs_out.append(norm)
    calls = {}

    def renumber(old):
        return calls.setdefault(old, f"call_{len(calls) + 1}")

    for step in traj.get("steps", []):
        for call in step.get("tool_calls") or []:
            if isinstance(call.get("tool_call_id"), str):
                call["tool_call_id"] = renumber(call["tool_call_id"])
        for result in (step.get("observation") or {}).get("results") or []:
            if isinstance(result.get("source_call_id"), str):
                result["source_call_id"] = renumber(result["source_call_id"])
            for ref in result.get("subagent_trajectory_ref") or []:
                if ref.get("trajectory_id") in mapping:
                    ref["trajectory_id"] = mapping[ref["trajectory_id"]]
    out = scrub(traj)
    if subs_out is not None:
        out["subagent_trajectories"] = subs_out
    return out


def end_to_end(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    text = json.dumps(normalize(doc), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def main():
    if sys.argv[1] == "--time":
        runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
        best = best_cpu = float("inf")
        for _ in range(runs):
            start, start_cpu = time.perf_counter(), time.process_time()
            end_to_end(sys.argv[2])
            best = min(best, time.perf_counter() - start)
            best_cpu = min(best_cpu, time.process_time() - start_cpu)
        print(f"{best:.4f} s wall, {best_cpu:.4f} s CPU")
    else:
        sys.stdout.write(end_to_end(sys.argv[1])[0])


if __name__ == "__main__":
    main()
