// `toMatchGolden`, shared by the vitest and jest integrations: which golden a test owns, the
// check through `atif check`, and the failure message the runner prints.
import { join } from "node:path";

import { AtifError } from "./errors.js";
import { actualFile, checkGolden, goldenPath, shown } from "./golden.js";
import { baseName } from "./names.js";

/** Which test owns each golden checked in this worker: two checks of one file fail. */
const claims = new Map();

/**
 * The matcher for `runner` (`"vitest"` or `"jest"`): `testNames(state)` gives the running
 * test's file and names from the matcher's `this`.
 */
export function goldenMatcher(runner, testNames) {
  return async function toMatchGolden(received, options = {}) {
    if (this.isNot) {
      throw new AtifError("toMatchGolden() cannot be negated: a golden says what the run must match");
    }
    if (options === null || typeof options !== "object") {
      throw new AtifError(`toMatchGolden() takes an options object, not ${JSON.stringify(options)}`);
    }
    const { file, names, fullName } = testNames(this);
    const golden = goldenPath(join(process.cwd(), "tests", "golden"), baseName(file, names), options.name);
    const owner = claims.get(golden);
    if (owner !== undefined && owner !== `${file}::${fullName}`) {
      throw new AtifError(`the golden ${shown(golden)} is already checked by ${owner}; give this check its own name: toMatchGolden({ name: "..." })`);
    }
    claims.set(golden, `${file}::${fullName}`);
    const trajectory = typeof received?.trajectory === "function" ? await received.trajectory() : received;
    const actual = actualFile(trajectory, baseName(file, [...names, ...(options.name ? [options.name] : [])]));
    const updateCommand = runCommand(runner, "ATIF_GOLDEN=update", file, fullName);
    const outcome = await checkGolden({ golden, actual, updateCommand, options });
    if (!outcome.pass && runner === "vitest") throw goldenError(outcome.message);
    return { pass: outcome.pass, message: () => outcome.message };
  };
}

/**
 * vitest's failure: the report without its unified diff as the message, which vitest also
 * prints in its list of failed tests, and the diff as the error's `diff`, which it prints once,
 * under the message.
 */
function goldenError(report) {
  const lines = report.split("\n");
  const start = lines.findIndex((line) => line.startsWith("unified diff"));
  const end = lines.findIndex((line, at) => at > start && line.startsWith("golden: "));
  if (start < 0 || end < 0) return new GoldenMismatch(report);
  const error = new GoldenMismatch([...lines.slice(0, start), ...lines.slice(end)].join("\n"));
  error.diff = lines.slice(start, end).join("\n");
  return error;
}

/** A run that does not match its golden. */
export class GoldenMismatch extends Error {
  constructor(message) {
    super(message);
    this.name = "GoldenMismatch";
  }
}

/** The command that runs one test again with `variable` set, e.g. to accept its change. */
export function runCommand(runner, variable, file, fullName) {
  const pattern = fullName.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const program = runner === "jest" ? "npx jest" : "npx vitest run";
  return `${variable} ${program} ${quote(shown(file))} -t ${quote(`^${pattern}$`)}`;
}

function quote(word) {
  return /^[A-Za-z0-9_./=:-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
