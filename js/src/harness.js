// The one `atif harness` process of a test worker: each test's record/replay server and its
// golden checks, asked one JSON line at a time (crates/atif-cli/src/cmd/harness.rs has the
// protocol). Starting an `atif serve` and an `atif check` process per test would cost more than
// the tests; one process per worker, started at its first use, does the same work.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

import { atifBinary } from "./binary.js";
import { AtifError } from "./errors.js";

let shared;

/** This worker's harness, started at the first call. */
export function harness() {
  if (shared === undefined || shared.stopped) shared = new Harness(atifBinary());
  return shared;
}

/** A running `atif harness`, asked one request at a time, in order. */
export class Harness {
  constructor(binary) {
    this.binary = binary;
    this.stopped = false;
    this.stderr = "";
    this.waiting = [];
    this.child = spawn(binary, ["harness"], {
      cwd: process.cwd(),
      // Reports are captured text: no terminal colours in them.
      env: { NO_COLOR: "1", ...process.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.child.on("error", (err) => this.fail(`could not run ${binary}: ${err.message}`));
    this.child.on("exit", (code, signal) => {
      this.fail(
        `the atif harness (${binary} harness) stopped (${signal ?? `exit status ${code}`}); ` +
          `every later atif test of this worker fails:\n${this.stderr.trim() || "(it printed nothing)"}`,
      );
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (text) => {
      // Only the end matters for the message; a chatty harness must not grow memory.
      this.stderr = (this.stderr + text).slice(-20000);
    });
    createInterface({ input: this.child.stdout }).on("line", (line) => this.answer(line));
    // The harness must not keep a worker alive: it ends when its standard input closes, which
    // happens when this process (or worker thread) ends.
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr]) {
      handle.unref?.();
    }
    this.chain = Promise.resolve();
  }

  /** Sends one request; resolves to the harness's answer, as an object. */
  request(message) {
    const asked = this.chain.then(
      () =>
        new Promise((resolve, reject) => {
          if (this.stopped) return reject(new AtifError(this.reason));
          this.waiting.push({ resolve, reject });
          // While a request waits, the harness is what the worker waits for.
          this.child.stdout.ref?.();
          this.child.stdin.write(`${JSON.stringify(message)}\n`);
        }),
    );
    this.chain = asked.catch(() => undefined);
    return asked;
  }

  answer(line) {
    const next = this.waiting.shift();
    if (this.waiting.length === 0) this.child.stdout.unref?.();
    if (next === undefined) return;
    try {
      next.resolve(JSON.parse(line));
    } catch {
      next.reject(new AtifError(`the atif harness answered ${line.slice(0, 200)}, which is not JSON`));
    }
  }

  fail(reason) {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason;
    for (const waiter of this.waiting.splice(0)) waiter.reject(new AtifError(reason));
  }
}
