// Real SDKs driven through the `atif` fixture against the workspace's fake model server: one
// test file per SDK, each a small tool-using agent, recorded, replayed offline (under both
// pools, several workers at once) and checked against its golden; then a changed prompt and an
// extra model call fail each of them with the server's verdict.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { afterAll, beforeAll, expect, test } from "vitest";

import { fakeProvider, scratchProject, vitest } from "./support.js";

const AGENTS = join(import.meta.dirname, "agents");

// test file -> the agent module, and the arguments after the task.
const SDKS = {
  openai: ["openai-chat.mjs", ""],
  anthropic: ["anthropic.mjs", ""],
  "google-genai": ["genai.mjs", ""],
  "vercel-ai-openai": ["vercel-ai.mjs", ', "openai"'],
  "vercel-ai-anthropic": ["vercel-ai.mjs", ', "anthropic"'],
};

const TASK = "What is (17 * 23) + 4?";

/** A test file whose one test runs the agent `runs` times on `task` and checks its golden. */
function testFile([agent, extra], task, runs = 1) {
  return `import { expect } from "vitest";
import { test } from "atif/vitest";
import { run } from ${JSON.stringify(join(AGENTS, agent))};

test("the agent answers with one shell call", async ({ atif }) => {
  for (let i = 0; i < ${runs}; i++) {
    const answer = await run(${JSON.stringify(task)}${extra});
    expect(answer).toContain("395");
  }
  await expect(atif).toMatchGolden();
});
`;
}

/** Every SDK's test file, with `task` and `runs`. */
function testFiles(task, runs) {
  const files = {};
  for (const [name, agent] of Object.entries(SDKS)) files[`tests/${name}.test.js`] = testFile(agent, task, runs);
  return files;
}

const count = (text, needle) => text.split(needle).length - 1;

let provider;
beforeAll(async () => {
  provider = await fakeProvider("echo 395");
});
afterAll(() => provider?.stop());

test("each SDK records, replays offline under threads and forks, and fails on drift and on an extra call", async () => {
  const dir = scratchProject(testFiles(TASK, 1));
  const recorded = await vitest(dir, [], { ATIF_RECORD: "1", ATIF_UPSTREAM: provider.url, ATIF_GOLDEN: "update" });
  expect(recorded.output).toContain("5 passed");
  expect(recorded.code).toBe(0);
  for (const name of Object.keys(SDKS)) {
    const base = `${name}.test__the_agent_answers_with_one_shell_call.json`;
    expect(existsSync(join(dir, "tests", "scripts", base)), base).toBe(true);
    const golden = JSON.parse(readFileSync(join(dir, "tests", "golden", base), "utf8"));
    expect(golden.steps.filter((step) => step.tool_calls?.length === 1), base).toHaveLength(1);
  }

  // Offline (no upstream is named: the scripts answer), several workers at once.
  for (const pool of ["threads", "forks"]) {
    const replayed = await vitest(dir, ["--pool", pool, "--maxWorkers", "3", "--minWorkers", "3"]);
    expect(replayed.output, pool).toContain("5 passed");
    expect(replayed.code, pool).toBe(0);
  }

  const drifted = await vitest(scratchCopy(dir, testFiles("What is 17 * 23?", 1)));
  expect(drifted.code).toBe(1);
  expect(drifted.output).toContain("5 failed");
  expect(count(drifted.output, "was not exact: the agent's model calls differ from the recording")).toBeGreaterThanOrEqual(5);
  expect(drifted.output).toContain("the normalised request changed");
  for (const name of Object.keys(SDKS)) {
    expect(drifted.output).toContain(`re-record the script: ATIF_RECORD=1 npx vitest run tests/${name}.test.js`);
  }

  const extra = await vitest(scratchCopy(dir, testFiles(TASK, 2)));
  expect(extra.code).toBe(1);
  expect(extra.output).toContain("5 failed");
  expect(extra.output.match(/the agent made request #3 to \S+, but the script recorded 2/g)?.length ?? 0).toBeGreaterThanOrEqual(5);

  // A test without its script names the command that records it; recording is refused on CI.
  const fresh = scratchProject(testFiles(TASK, 1));
  const missing = await vitest(fresh, ["tests/openai.test.js"]);
  expect(missing.code).toBe(1);
  expect(missing.output).toContain(
    "the replay script tests/scripts/openai.test__the_agent_answers_with_one_shell_call.json does not exist: record it with `ATIF_RECORD=1 npx vitest run tests/openai.test.js",
  );
  const onCi = await vitest(fresh, ["tests/openai.test.js"], { ATIF_RECORD: "1", CI: "true" });
  expect(onCi.code).toBe(1);
  expect(onCi.output).toContain("ATIF_RECORD is refused on CI (CI=true)");
  expect(existsSync(join(fresh, "tests", "scripts"))).toBe(false);
});

/** A new case holding `dir`'s scripts and goldens, with `files` as its tests. */
function scratchCopy(dir, files) {
  const copy = {};
  for (const sub of ["scripts", "golden"]) {
    for (const name of Object.keys(SDKS)) {
      const base = `tests/${sub}/${name}.test__the_agent_answers_with_one_shell_call.json`;
      copy[base] = readFileSync(join(dir, base), "utf8");
    }
  }
  return scratchProject({ ...copy, ...files });
}
