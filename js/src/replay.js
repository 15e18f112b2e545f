// The record/replay server of one test: started by the worker's harness from the arguments of
// `atif serve`, asked for the captured trajectory, stopped for its verdict.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname } from "node:path";

import { AtifError } from "./errors.js";
import { shown } from "./golden.js";
import { harness } from "./harness.js";

/** A dummy key for each SDK that refuses to start without one; a replay never uses it. */
const DUMMY_KEYS = ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"];

/** Whether a value of `CI` means "on CI": set, and not `0`, `false` (any case) or empty. */
export function isCi(value = process.env.CI) {
  if (value === undefined) return false;
  const trimmed = value.trim();
  return trimmed !== "" && trimmed !== "0" && trimmed.toLowerCase() !== "false";
}

/** Whether `ATIF_RECORD` asks to record: set, and not `0`, `false` or empty. */
export function recordRequested(value = process.env.ATIF_RECORD) {
  return isCi(value);
}

let running = false;

/**
 * Starts the server of one test for `script`; records when `record` is true.
 * Rejects with an AtifError naming the script and the command to run when it cannot start.
 */
export async function startServer({ script, record, upstream, recordCommand }) {
  if (running) {
    throw new AtifError(
      "two tests of one worker asked for an atif server at once (test.concurrent?): the provider " +
        "variables are the process's, so tests that replay run one at a time; drop .concurrent",
    );
  }
  // Taken before the first await, so that a second test started meanwhile is refused too.
  running = true;
  try {
    return await start({ script, record, upstream, recordCommand });
  } catch (err) {
    running = false;
    throw err;
  }
}

async function start({ script, record, upstream, recordCommand }) {
  if (existsSync(script) && statSync(script).isDirectory()) {
    throw new AtifError(`the replay script ${shown(script)} is a directory, not a script file`);
  }
  if (!record && !existsSync(script)) {
    throw new AtifError(
      `the replay script ${shown(script)} does not exist: record it with \`${recordCommand}\` ` +
        "(with ATIF_UPSTREAM=URL to record from a local provider) and commit it",
    );
  }
  if (record) mkdirSync(dirname(script), { recursive: true });
  const args = ["--script", script, record ? "--record" : "--replay"];
  if (record && upstream) args.push("--upstream", upstream);
  const started = await harness().request({
    op: "serve",
    args,
    cwd: process.cwd(),
    home: process.env.HOME ?? homedir(),
  });
  if (started.url === undefined) {
    const details = String(started.stderr ?? "").trim();
    throw new AtifError(
      `atif serve could not start for ${shown(script)} (exited with status ${started.code}):\n${
        details || "(it printed nothing)"
      }`,
    );
  }
  return new Server(script, record, started.url, started.token, upstream);
}

/** The value of the `atif` fixture: the server of one test. */
export class Server {
  constructor(script, recording, url, token, upstream) {
    /** The script this test replays (or records). */
    this.script = script;
    /** True under `ATIF_RECORD=1`. */
    this.recording = recording;
    /** The server's origin, e.g. `http://127.0.0.1:41233` (OpenAI clients add `/v1`). */
    this.url = url;
    this.token = token;
    this.upstream = upstream;
    this.verdict = undefined;
  }

  /** The variables that point each provider's SDK at the server, for this test only. */
  environment() {
    const env = {
      OPENAI_BASE_URL: `${this.url}/v1`,
      ANTHROPIC_BASE_URL: this.url,
      GOOGLE_GEMINI_BASE_URL: this.url,
      ATIF_PROXY_URL: this.url,
      ATIF_PROXY_TOKEN: this.token,
    };
    if (!this.recording || this.upstream) {
      for (const key of DUMMY_KEYS) if (!process.env[key]) env[key] = "atif-replay-dummy-key";
    }
    return env;
  }

  /** The ATIF trajectory the server captured from this test's model traffic so far. */
  async trajectory() {
    if (this.verdict !== undefined) {
      throw new AtifError(
        "the atif server of this test has already stopped (it stops when the test ends): take " +
          "the trajectory inside the test",
      );
    }
    const endpoint = `${this.url}/_atif/trajectory`;
    let reply;
    try {
      // The control endpoints answer only requests that carry the run's token.
      reply = await fetch(endpoint, { headers: { "x-atif-token": this.token } });
    } catch (err) {
      throw new AtifError(`could not read the captured trajectory from ${endpoint}: ${err.message}`);
    }
    const text = await reply.text();
    let document;
    try {
      document = JSON.parse(text);
    } catch (err) {
      throw new AtifError(`${endpoint} did not answer JSON (status ${reply.status}): ${err.message}`);
    }
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
      throw new AtifError(`${endpoint} answered JSON that is not a trajectory object`);
    }
    return document;
  }

  /** Stops the server; resolves to `{ code, message }` (code 0: exact). Later calls repeat it. */
  async stop() {
    if (this.verdict !== undefined) return this.verdict;
    running = false;
    try {
      const stopped = await harness().request({ op: "stop" });
      this.verdict = { code: Number(stopped.code ?? 2), message: String(stopped.stderr ?? "") };
    } catch (err) {
      this.verdict = { code: 2, message: `${err.message}\nthe script ${shown(this.script)} may not have been saved` };
    }
    return this.verdict;
  }
}

// The first line of the server's closing verdict, e.g. `atif replay: replay not exact:`.
const VERDICT_LINE = /^atif \w+: (replay|recording)( not)? exact/;

/** The failure of a test whose replay was not exact, or whose recording failed; none when fine. */
export function verdictFailure(server, verdict, recordCommand) {
  const script = shown(server.script);
  if (server.recording) {
    if (verdict.code === 0) return undefined;
    return `recording ${script} failed (atif serve exit ${verdict.code}):\n${verdict.message.trimEnd() || "(it printed nothing)"}`;
  }
  if (verdict.code === 0) return undefined;
  if (verdict.code !== 1) {
    return `atif serve failed while replaying ${script} (exit ${verdict.code})\n${verdict.message.trimEnd()}`;
  }
  const lines = verdict.message.trimEnd().split("\n");
  const start = lines.findLastIndex((line) => VERDICT_LINE.test(line));
  const summary = (start >= 0 ? lines.slice(start) : lines).join("\n");
  return [
    `the replay of ${script} was not exact: the agent's model calls differ from the recording`,
    summary,
    `if this change is intended, re-record the script: ${recordCommand}`,
  ].join("\n");
}
