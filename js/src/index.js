// The `atif` package: typed ATIF (index.d.ts, atif.d.ts) and a small reader that asks the
// `atif` binary, so files are read, validated and reduced to a Shape by the same Rust code as
// the command line.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";

import { atifBinary } from "./binary.js";
import { AtifError } from "./errors.js";

export { AtifError } from "./errors.js";
export { atifBinary, platformPackage } from "./binary.js";

// Trajectories of hundreds of megabytes are valid; the CLI bounds them (--max-input-bytes).
const MAX_BUFFER = 1024 * 1024 * 1024;

/** Runs `atif ARGS` with `input` on standard input; resolves to its stdout, rejects on failure. */
function atif(args, input) {
  return new Promise((resolve, reject) => {
    const child = execFile(
      atifBinary(),
      args,
      { maxBuffer: MAX_BUFFER, env: { NO_COLOR: "1", ...process.env } },
      (err, stdout, stderr) => {
        if (err === null) return resolve(stdout);
        const said = String(stderr).trim() || String(stdout).trim() || err.message;
        reject(new AtifError(said));
      },
    );
    if (input !== undefined) child.stdin.end(input);
  });
}

/**
 * Reads an ATIF trajectory file, validated by `atif validate`: rejects with an AtifError naming
 * the file, the JSON Pointer and what was expected when it is not valid ATIF.
 */
export async function readTrajectory(path) {
  await atif(["validate", "--quiet", String(path)]);
  const text = await readFile(path, "utf8");
  return JSON.parse(text);
}

/** The Shape of a trajectory (an object or a file path), normalised first: what the agent did. */
export async function shape(trajectory, options = {}) {
  const args = ["shape", "--format", "json"];
  if (options.preset) args.push("--preset", options.preset);
  if (typeof trajectory === "string") {
    return JSON.parse(await atif([...args, trajectory]));
  }
  return JSON.parse(await atif([...args, "-"], JSON.stringify(trajectory)));
}

/**
 * Imports an OpenTelemetry trace of an agent run as `atif import --from otel` does, and resolves
 * to the ATIF trajectory: OTLP/JSON (text or bytes, such as what `JsonTraceSerializer` of
 * `@opentelemetry/otlp-transformer` makes of an in-memory exporter's spans), OTLP protobuf bytes,
 * or an `ExportTraceServiceRequest` object. Rejects with an AtifError saying what was wrong.
 */
export async function importTrace(trace) {
  if (trace === undefined || trace === null) {
    throw new AtifError("importTrace: no trace given (the OTLP serializer returned nothing: were any spans finished?)");
  }
  const bytes = typeof trace === "string" || trace instanceof Uint8Array ? trace : JSON.stringify(trace);
  return JSON.parse(await atif(["import", "--from", "otel", "--quiet", "-"], bytes));
}
