// `toMatchGolden` in vitest and jest: a missing golden, `ATIF_GOLDEN=update`, a behaviour change
// reported as `atif check` reports it, the pending file for `atif golden review` (none on CI),
// and the options, which are `atif check`'s flags.
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

import { expect, test } from "vitest";

import { jest, scratchProject, vitest, writeFiles } from "./support.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

/** A vitest test file comparing the fixture `run` with its golden, with `options`. */
function vitestFile(run, options = "") {
  return `import { readFileSync } from "node:fs";
import { expect, test } from "vitest";
import "atif/vitest-setup";

test("calculator", async () => {
  const trajectory = JSON.parse(readFileSync(${JSON.stringify(join(FIXTURES, run))}, "utf8"));
  await expect(trajectory).toMatchGolden(${options});
});
`;
}

const GOLDEN = "tests/golden/calc.test__calculator.json";

test("vitest: missing, created, changed with its report and pending file, banded by options", async () => {
  const dir = scratchProject({
    "tests/calc.test.js": vitestFile("calculator-run.json"),
    "tests/banded.test.js": vitestFile("calculator-run.json"),
  });
  const missing = await vitest(dir);
  expect(missing.code).toBe(1);
  expect(missing.output).toContain(GOLDEN);
  expect(missing.output).toContain("ATIF_GOLDEN=update npx vitest run tests/calc.test.js -t '^calculator$'");
  const created = await vitest(dir, [], { ATIF_GOLDEN: "update" });
  expect(created.output).toContain("2 passed");
  const golden = readFileSync(join(dir, GOLDEN), "utf8");

  // The regressed run makes one more model call; a band on the counts lets it pass.
  writeFiles(dir, {
    "tests/calc.test.js": vitestFile("calculator-regressed.json"),
    "tests/banded.test.js": vitestFile(
      "calculator-regressed.json",
      `{ sequence: "superset", llmCallsBand: "1", stepBand: "1", compareContent: false, tokenBand: "60%" }`,
    ),
    "tests/unknown.test.js": vitestFile("calculator-run.json", `{ colour: "blue" }`),
  });
  const failed = await vitest(dir);
  expect(failed.code).toBe(1);
  expect(failed.output).toContain("2 failed | 1 passed");
  expect(failed.output).toContain("agent behaviour changed");
  expect(failed.output).toContain("llm_calls: 3 -> 4");
  expect(failed.output).toContain("what moved, step by step:");
  expect(count(failed.output, "unified diff")).toBe(1);
  expect(failed.output).toContain("if this change is intended: ATIF_GOLDEN=update npx vitest run tests/calc.test.js");
  expect(failed.output).toContain("toMatchGolden() got the unknown option colour");
  expect(existsSync(join(dir, `${GOLDEN}.new`))).toBe(true);
  expect(readFileSync(join(dir, GOLDEN), "utf8")).toBe(golden);

  // On CI a failing check writes nothing.
  rmSync(join(dir, `${GOLDEN}.new`));
  const onCi = await vitest(dir, ["tests/calc.test.js"], { CI: "true" });
  expect(onCi.code).toBe(1);
  expect(onCi.output).toContain("llm_calls: 3 -> 4");
  expect(existsSync(join(dir, `${GOLDEN}.new`))).toBe(false);
});

test("jest: the setup file registers the same matcher, with the same golden and report", async () => {
  const jestFile = (run) => `import { readFileSync } from "node:fs";
test("calculator", async () => {
  const trajectory = JSON.parse(readFileSync(${JSON.stringify(join(FIXTURES, run))}, "utf8"));
  await expect(trajectory).toMatchGolden();
});
`;
  const config = JSON.stringify({ testEnvironment: "node", transform: {}, setupFilesAfterEnv: ["atif/jest-setup"] });
  const dir = scratchProject({ "jest.config.json": config, "tests/calc.test.mjs": jestFile("calculator-run.json") });
  const created = await jest(dir, ["--config", "jest.config.json"], { ATIF_GOLDEN: "update" });
  expect(created.output).toContain("1 passed");
  expect(existsSync(join(dir, GOLDEN))).toBe(true);
  writeFiles(dir, { "tests/calc.test.mjs": jestFile("calculator-regressed.json") });
  const failed = await jest(dir, ["--config", "jest.config.json"]);
  expect(failed.code).toBe(1);
  expect(failed.output).toContain("llm_calls: 3 -> 4");
  expect(failed.output).toContain("ATIF_GOLDEN=update npx jest tests/calc.test.mjs -t '^calculator$'");
  expect(existsSync(join(dir, `${GOLDEN}.new`))).toBe(true);
});

const count = (text, needle) => text.split(needle).length - 1;
