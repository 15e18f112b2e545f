// Comparing a trajectory with its golden file through `atif check`, with the CLI's options.
import { mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, isAbsolute, resolve } from "node:path";

import { AtifError } from "./errors.js";
import { harness } from "./harness.js";
import { sanitize } from "./names.js";

/** Each option of `toMatchGolden` and the `atif check` flag it gives, by kind. */
const FLAGS = {
  preset: ["--preset", "string"],
  tokenTolerance: ["--token-tolerance", "number"],
  compareContent: ["--no-content", "content"],
  volatile: ["--volatile", "strings"],
  selectors: ["--selector", "strings"],
  masks: ["--mask", "strings"],
  keepSubagentOrder: ["--keep-subagent-order", "flag"],
  secretPatterns: ["--secret-pattern", "strings"],
  maxInputBytes: ["--max-input-bytes", "string"],
  sequence: ["--sequence", "string"],
  arguments: ["--arguments", "string"],
  argumentsFor: ["--arguments-for", "strings"],
  numberTolerance: ["--number-tolerance", "number"],
  stepBand: ["--step-band", "string"],
  llmCallsBand: ["--llm-calls-band", "string"],
  tokenBand: ["--token-band", "string"],
};

/** The `atif check` flags of `options` (the options of `toMatchGolden`, without `name`). */
export function checkArgs(options = {}) {
  const args = [];
  for (const [key, value] of Object.entries(options)) {
    if (key === "name" || value === undefined || value === null) continue;
    const known = FLAGS[key];
    if (known === undefined) {
      throw new AtifError(
        `toMatchGolden() got the unknown option ${key}; it takes name, ${Object.keys(FLAGS).join(", ")}`,
      );
    }
    const [flag, kind] = known;
    args.push(...flagArgs(key, flag, kind, value));
  }
  return args;
}

function flagArgs(key, flag, kind, value) {
  switch (kind) {
    case "string":
      if (typeof value !== "string" && typeof value !== "number") {
        throw new AtifError(`toMatchGolden({ ${key} }) takes a string, not ${JSON.stringify(value)}`);
      }
      return [flag, String(value)];
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) {
        throw new AtifError(`toMatchGolden({ ${key} }) takes a number such as 0.1, not ${JSON.stringify(value)}`);
      }
      return [flag, String(value)];
    case "strings": {
      const values = typeof value === "string" ? [value] : value;
      if (!Array.isArray(values) || !values.every((item) => typeof item === "string")) {
        throw new AtifError(`toMatchGolden({ ${key} }) takes a string or an array of strings, not ${JSON.stringify(value)}`);
      }
      return values.flatMap((item) => [flag, item]);
    }
    default: {
      if (typeof value !== "boolean") {
        throw new AtifError(`toMatchGolden({ ${key} }) takes true or false, not ${JSON.stringify(value)}`);
      }
      // `compareContent: false` is `--no-content`; `keepSubagentOrder: true` is its flag.
      const on = kind === "content" ? !value : value;
      return on ? [flag] : [];
    }
  }
}

/** Where a test's golden lives: `<goldenDir>/<base>[__<name>].json`. */
export function goldenPath(goldenDir, base, name) {
  const stem = name === undefined ? base : `${base}__${sanitize(name)}`;
  return join(goldenDir, `${stem}.json`);
}

let scratch;

/** A file holding `trajectory` (an object, or a path to a file), for `atif check` to read. */
export function actualFile(trajectory, stem) {
  if (typeof trajectory === "string" || trajectory instanceof URL) {
    const path = resolve(trajectory instanceof URL ? trajectory.pathname : trajectory);
    let file = false;
    try {
      file = statSync(path).isFile();
    } catch {
      file = false;
    }
    if (!file) throw new AtifError(`the trajectory file ${path} does not exist (toMatchGolden was given it)`);
    return path;
  }
  if (trajectory === null || typeof trajectory !== "object" || Array.isArray(trajectory)) {
    throw new AtifError(
      `toMatchGolden() compares a trajectory (an object, a path, or the atif fixture), not ${
        Array.isArray(trajectory) ? "an array" : typeof trajectory
      }`,
    );
  }
  scratch ??= mkdtempSync(join(tmpdir(), "atif-actual-"));
  const path = join(scratch, `${stem}.json`);
  writeFileSync(path, JSON.stringify(trajectory));
  return path;
}

/**
 * Runs `atif check GOLDEN ACTUAL` in the worker's harness. Resolves to `{ pass, message }`:
 * `pass` is false on a behaviour change or a missing golden, with `atif check`'s report.
 * Rejects with an AtifError when the check could not run (exit 2).
 */
export async function checkGolden({ golden, actual, updateCommand, options = {} }) {
  const args = ["atif", "check", shown(golden), actual, "--update-command", updateCommand];
  args.push(...checkArgs(options));
  const done = await harness().request({ op: "check", args });
  const stdout = String(done.stdout ?? "").trimEnd();
  const stderr = String(done.stderr ?? "").trimEnd();
  if (done.code === 0) return { pass: true, message: stdout };
  if (done.code === 1) return { pass: false, message: [stdout, stderr].filter(Boolean).join("\n") };
  throw new AtifError(
    `atif check could not compare with the golden ${shown(golden)} (exit ${done.code}):\n${
      stderr || stdout || "(it printed nothing)"
    }`,
  );
}

/** A path relative to the working directory when it is inside it, so messages stay short. */
export function shown(path) {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
