// What the package's tests share: a scratch project per case (inside the project the tests run
// in, so it resolves `atif`, vitest and the SDKs from there), the runners as real processes,
// and the workspace's fake model server.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

const require = createRequire(join(process.cwd(), "package.json"));

/** A fresh folder under `cases/` of the project, holding `files` (relative path -> text). */
export function scratchProject(files) {
  mkdirSync(join(process.cwd(), "cases"), { recursive: true });
  const dir = mkdtempSync(join(process.cwd(), "cases", "case-"));
  writeFiles(dir, files);
  return dir;
}

export function writeFiles(dir, files) {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Runs `command args` in `cwd`; resolves to its exit status and everything it printed. */
export function run(command, args, { cwd, env = {} }) {
  const base = { ...process.env };
  // The case decides these, never the environment the suite itself runs in.
  for (const name of ["ATIF_RECORD", "ATIF_UPSTREAM", "ATIF_GOLDEN", "CI", "VITEST", "VITEST_POOL_ID", "VITEST_WORKER_ID", "NODE_OPTIONS", "TEST"]) {
    delete base[name];
  }
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: { ...base, NO_COLOR: "1", ...env } });
    let output = "";
    child.stdout.on("data", (text) => (output += text));
    child.stderr.on("data", (text) => (output += text));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output }));
  });
}

/** `vitest run ARGS` in a case folder. */
export function vitest(cwd, args = [], env = {}) {
  const bin = join(dirname(require.resolve("vitest/package.json")), "vitest.mjs");
  return run(process.execPath, [bin, "run", ...args], { cwd, env });
}

/** `jest ARGS` in a case folder, with Node's ECMAScript-module support that jest needs. */
export function jest(cwd, args = [], env = {}) {
  const bin = join(dirname(require.resolve("jest/package.json")), "bin", "jest.js");
  return run(process.execPath, ["--experimental-vm-modules", bin, ...args], { cwd, env });
}

/**
 * Starts the workspace's fake model server (`$ATIF_FAKE_PROVIDER`), whose shell tool call runs
 * `command`; resolves to its origin and a stop function.
 */
export function fakeProvider(command) {
  const binary = process.env.ATIF_FAKE_PROVIDER;
  if (!binary) throw new Error("set ATIF_FAKE_PROVIDER to the atif-fake-provider binary (cargo build -p atif-fake-provider)");
  const child = spawn(binary, ["--command", command], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    createInterface({ input: child.stdout }).once("line", (line) => {
      const url = line.replace("listening on ", "").trim();
      resolve({ url, stop: () => child.kill() });
    });
  });
}
