// The `atif` package's API: typed ATIF and a reader that asks the `atif` binary.
export * from "./atif.js";
import type { Trajectory } from "./atif.js";

/** An error of the atif package, with a message that names the file and what to do. */
export declare class AtifError extends Error {
  constructor(message: string);
}

/** What the agent did, in a handful of numbers and lists (docs/normalization.md). */
export interface Shape {
  step_count: number;
  sources: string[];
  llm_calls: number;
  functions: string[];
  tool_errors: string[];
  subagents: unknown[];
  models: string[];
  crashed: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  content_hash: string;
  [key: string]: unknown;
}

/**
 * Reads an ATIF trajectory file, validated by `atif validate`; rejects with an AtifError that
 * names the file, the JSON Pointer and what was expected when it is not valid ATIF.
 */
export declare function readTrajectory(path: string): Promise<Trajectory>;

/** The Shape of a trajectory (an object or a file path), normalised first. */
export declare function shape(
  trajectory: Trajectory | string,
  options?: { preset?: string },
): Promise<Shape>;

/** The path of the `atif` binary: `$ATIF_BIN`, else the one of this platform's package. */
export declare function atifBinary(): string;

/** The npm package holding the binary for a platform, e.g. `@atif/cli-linux-x64`. */
export declare function platformPackage(platform?: string, arch?: string): string;

/**
 * Imports an OpenTelemetry trace of an agent run as `atif import --from otel` does and resolves
 * to the trajectory: OTLP/JSON text or bytes (what `JsonTraceSerializer.serializeRequest` of
 * `@opentelemetry/otlp-transformer` returns for an in-memory exporter's spans), OTLP protobuf
 * bytes, or an `ExportTraceServiceRequest` object. Rejects with an AtifError when it is none.
 */
export declare function importTrace(
  trace: Uint8Array | string | object | undefined,
): Promise<Trajectory>;
