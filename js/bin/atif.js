#!/usr/bin/env node
// The `atif` command of node_modules/.bin: runs the binary of this platform's package.
import { spawnSync } from "node:child_process";

import { atifBinary } from "../src/binary.js";

let binary;
try {
  binary = atifBinary();
} catch (err) {
  process.stderr.write(`atif: ${err.message}\n`);
  process.exit(2);
}
const done = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (done.error) {
  process.stderr.write(`atif: could not run ${binary}: ${done.error.message}\n`);
  process.exit(2);
}
if (done.signal) {
  process.kill(process.pid, done.signal);
}
process.exit(done.status ?? 1);
