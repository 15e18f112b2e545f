// The package as installed from its tarballs: the binary on node_modules/.bin, the reader, and
// the errors a user meets.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

import { AtifError, readTrajectory, shape } from "atif";
import { describe, expect, test } from "vitest";

import { scratchProject } from "./support.js";

const FIXTURES = join(import.meta.dirname, "fixtures");
const RUN = join(FIXTURES, "calculator-run.json");

test("npm puts atif on node_modules/.bin, running the platform package's binary", () => {
  const manifest = JSON.parse(readFileSync(join(process.cwd(), "node_modules", "atif", "package.json"), "utf8"));
  const version = execFileSync(join(process.cwd(), "node_modules", ".bin", "atif"), ["--version"], { encoding: "utf8" });
  expect(version.trim()).toBe(`atif ${manifest.version}`);
});

describe("readTrajectory", () => {
  test("reads a valid trajectory with its types", async () => {
    const trajectory = await readTrajectory(RUN);
    expect(trajectory.schema_version).toBe("ATIF-v1.7");
    expect(trajectory.steps).toHaveLength(5);
  });

  test("rejects an invalid one naming the file, the JSON Pointer and what was expected", async () => {
    const dir = scratchProject({ "bad.json": JSON.stringify({ schema_version: "ATIF-v1.7", session_id: "s", agent: { name: "a", version: "1" }, steps: [{ step_id: "one", source: "user", message: "hi" }] }) });
    const error = await readTrajectory(join(dir, "bad.json")).catch((err) => err);
    expect(error).toBeInstanceOf(AtifError);
    expect(error.message).toContain("bad.json");
    expect(error.message).toContain("/steps/0/step_id");
  });
});

test("shape gives the Shape of a file and of an object, as atif shape does", async () => {
  const fromFile = await shape(RUN);
  expect(fromFile.llm_calls).toBe(3);
  expect(fromFile.functions).toEqual(["multiply", "add", "return_result"]);
  const fromObject = await shape(JSON.parse(readFileSync(RUN, "utf8")));
  expect(fromObject).toEqual(fromFile);
});
