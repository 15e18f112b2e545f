// The vitest integration: the `atif` fixture (each test's replay server) and `toMatchGolden`.
import { expect, test as base } from "vitest";

import { AtifError } from "./errors.js";
import { goldenMatcher, runCommand } from "./matcher.js";
import { baseName } from "./names.js";
import { isCi, recordRequested, startServer, verdictFailure } from "./replay.js";

import { join } from "node:path";

/** The running test's file, its suites' names then its own, and vitest's full name. */
function taskNames(task) {
  const names = [];
  for (let at = task; at !== undefined && at.type !== "file" && at.name; at = at.suite) {
    if (at.file !== undefined && at === at.file) break;
    names.unshift(at.name);
  }
  return { file: task.file.filepath, names, fullName: names.join(" ") };
}

/**
 * Cuts the SDK's errors that carry a refusal of the server down to their first line: the
 * verdict that follows gives the refusal in full, with the request's diff, so it is said once.
 */
function shortenRefusals(errors, verdict) {
  const refusals = verdict
    .split("\n")
    .filter((line) => line.startsWith("- ") && line.length > 12)
    .map((line) => line.slice(2, 82));
  for (const error of errors) {
    const message = typeof error?.message === "string" ? error.message : "";
    if (refusals.some((refusal) => message.includes(refusal))) {
      const first = message.split("\n")[0];
      error.message = `${first} (the replay server refused this request; its verdict below has the diff)`;
    }
  }
}

/** vitest's `toMatchGolden`: the golden of the test that runs the assertion. */
export const toMatchGolden = goldenMatcher("vitest", (state) => {
  if (state.task) return taskNames(state.task);
  const names = String(state.currentTestName ?? "").split(" > ");
  return { file: state.testPath, names, fullName: names.join(" ") };
});

expect.extend({ toMatchGolden });

/**
 * vitest's `test` with the `atif` fixture: a test that names it replays its model calls from
 * `tests/scripts/<file>__<test>.json`, with the provider variables pointed at the server for
 * that test only, and fails with the server's verdict when the replay is not exact.
 */
export const test = base.extend({
  // biome-ignore lint: vitest reads the fixture's dependencies from the destructuring.
  atif: async ({ task }, use) => {
    const { file, names, fullName } = taskNames(task);
    const record = recordRequested();
    if (record && isCi()) {
      throw new AtifError(
        `ATIF_RECORD is refused on CI (CI=${process.env.CI}): recording calls the live model and ` +
          "rewrites committed scripts; record locally, review the script's diff and commit it",
      );
    }
    const script = join(process.cwd(), "tests", "scripts", `${baseName(file, names)}.json`);
    const recordCommand = runCommand("vitest", "ATIF_RECORD=1", file, fullName);
    const upstream = process.env.ATIF_UPSTREAM || undefined;
    const server = await startServer({ script, record, upstream, recordCommand });
    const saved = {};
    for (const [name, value] of Object.entries(server.environment())) {
      saved[name] = process.env[name];
      process.env[name] = value;
    }
    try {
      await use(server);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const verdict = await server.stop();
    const failure = verdictFailure(server, verdict, recordCommand);
    if (failure === undefined) return;
    shortenRefusals(task.result?.errors ?? [], verdict.message);
    throw new AtifError(failure);
  },
});

export const it = test;
export { AtifError };
