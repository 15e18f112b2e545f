// docs/typescript.md runs as written: its TypeScript files (each block names its path on its
// first line) make a project whose tests record against the fake model, replay offline and
// match their goldens (one of them the agent's OpenTelemetry trace, imported), and whose files
// type-check against the package's declarations.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

import { afterAll, beforeAll, expect, test } from "vitest";

import { fakeProvider, run, scratchProject, vitest } from "./support.js";

const PAGE = join(process.cwd(), "docs", "typescript.md");

/** The page's ```ts blocks, by the path their first line names (`// tests/agent.ts`). */
function pageFiles() {
  const files = {};
  const blocks = readFileSync(PAGE, "utf8").matchAll(/^( *)```ts\n([\s\S]*?)^\1```$/gm);
  for (const [, indent, body] of blocks) {
    const text = body
      .split("\n")
      .map((line) => line.slice(indent.length))
      .join("\n");
    const path = /^\/\/ (\S+)\n/.exec(text)?.[1];
    if (path === undefined) throw new Error(`a ts block of ${PAGE} names no file on its first line:\n${text}`);
    files[path] = text;
  }
  return files;
}

let provider;
beforeAll(async () => {
  provider = await fakeProvider("echo 395");
});
afterAll(() => provider?.stop());

test("the page's agent and test record, replay and match their golden, and type-check", async () => {
  const files = pageFiles();
  expect(Object.keys(files).sort()).toEqual(["tests/agent.test.ts", "tests/agent.ts", "tests/read.test.ts", "tests/trace.test.ts"]);
  const dir = scratchProject({
    ...files,
    "tsconfig.json": JSON.stringify({
      compilerOptions: { module: "esnext", moduleResolution: "bundler", target: "es2022", strict: true, noEmit: true, skipLibCheck: true, types: [] },
      include: ["tests"],
    }),
  });
  const recorded = await vitest(dir, ["tests/agent.test.ts", "tests/trace.test.ts"], { ATIF_RECORD: "1", ATIF_UPSTREAM: provider.url, ATIF_GOLDEN: "update", OPENAI_API_KEY: "sk-not-a-key" });
  expect(recorded.output).toContain("2 passed");
  // The trace's golden is the imported trajectory: the local tool's real output is in it.
  const traced = JSON.parse(readFileSync(join(dir, "tests/golden/trace.test__the_agent_s_trace_matches_its_golden.json"), "utf8"));
  expect(traced.agent.extra.log_format).toBe("otel");
  expect(traced.steps[1].observation.results[0].content).toBe("395");
  const replayed = await vitest(dir);
  expect(replayed.output).toContain("3 passed");
  expect(replayed.code).toBe(0);

  const require = createRequire(join(process.cwd(), "package.json"));
  const tsc = join(dirname(require.resolve("typescript/package.json")), "bin", "tsc");
  const checked = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir });
  expect(checked.output).toBe("");
  expect(checked.code).toBe(0);
});
