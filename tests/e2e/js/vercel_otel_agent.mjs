// A small Vercel AI SDK agent with a local shell tool, traced through `@ai-sdk/otel` (the GenAI
// semantic conventions), run against the model at BASE_URL (the workspace's fake provider,
// through its Responses route).
//
// Usage: node vercel_otel_agent.mjs BASE_URL TRACE_FILE [--stream]
//
// The OpenTelemetry JS SDK keeps the spans in memory; they are written to TRACE_FILE as one
// OTLP/JSON `ExportTraceServiceRequest`, what an OTLP/HTTP exporter would send, for
// `atif import`.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

import { createOpenAI } from "@ai-sdk/openai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { generateText, jsonSchema, registerTelemetry, stepCountIs, streamText, tool } from "ai";

const [baseUrl, traceFile, ...flags] = process.argv.slice(2);
const stream = flags.includes("--stream");

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
registerTelemetry(new OpenTelemetry({ tracer: provider.getTracer("shell-agent") }));

const bash = tool({
  description: "Runs a shell command and returns what it printed.",
  inputSchema: jsonSchema({
    type: "object",
    properties: { command: { type: "string" } },
    required: ["command"],
  }),
  // A failing command throws: the tool span records the error.
  execute: async ({ command }) => execFileSync("sh", ["-c", command], { encoding: "utf8" }),
});

const options = {
  model: createOpenAI({ baseURL: `${baseUrl}/v1`, apiKey: "atif-e2e" })("fake-model"),
  system: "You run shell commands.",
  prompt: "Say hello using the shell.",
  tools: { bash },
  stopWhen: stepCountIs(5),
  telemetry: { functionId: "shell-agent" },
};
let text;
if (stream) {
  const result = streamText(options);
  for await (const _ of result.textStream);
  text = await result.text;
} else {
  text = (await generateText(options)).text;
}
console.log(text);
await provider.forceFlush();
writeFileSync(traceFile, JsonTraceSerializer.serializeRequest(exporter.getFinishedSpans()));
