// importTrace: an agent's OpenTelemetry spans, kept in memory by the OpenTelemetry JS SDK during
// the test, become its ATIF trajectory through `atif import --from otel`, with no receiver and
// no trace file. The agent is the Vercel AI SDK's (`ai` 5, its legacy `ai.*` attributes) against
// the fake model.
import { createOpenAI } from "@ai-sdk/openai";
import { context, trace } from "@opentelemetry/api";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-node";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";
import { AtifError, importTrace } from "atif";
import { execSync } from "node:child_process";
import { afterAll, beforeAll, expect, test } from "vitest";

import { fakeProvider } from "./support.js";

const exporter = new InMemorySpanExporter();
const tracerProvider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

let provider;
beforeAll(async () => {
  tracerProvider.register();
  provider = await fakeProvider("echo 395");
});
afterAll(async () => {
  provider?.stop();
  await tracerProvider.shutdown();
  trace.disable();
  context.disable();
});

async function runAgent() {
  exporter.reset();
  const shell = tool({
    description: "Run a shell command and return its output",
    inputSchema: jsonSchema({ type: "object", properties: { command: { type: "string" } }, required: ["command"] }),
    execute: async ({ command }) => execSync(command, { encoding: "utf8" }).trim(),
  });
  const { text } = await generateText({
    model: createOpenAI({ baseURL: `${provider.url}/v1`, apiKey: "sk-not-a-key" })("gpt-4.1-mini"),
    prompt: "What is (17 * 23) + 4?",
    tools: { shell },
    stopWhen: stepCountIs(5),
    experimental_telemetry: { isEnabled: true, functionId: "calculator" },
  });
  expect(text).toBe("The command printed: 395");
  return exporter.getFinishedSpans();
}

test("the spans of a test's agent run import to its trajectory, from OTLP/JSON bytes or an object", async () => {
  const spans = await runAgent();
  const bytes = JsonTraceSerializer.serializeRequest(spans);
  const trajectory = await importTrace(bytes);
  expect(trajectory.agent.extra.log_format).toBe("otel");
  expect(trajectory.extra.capture.content).toBe("full");
  expect(trajectory.steps.map((step) => step.source)).toEqual(["user", "agent", "agent"]);
  expect(trajectory.steps[0].message).toBe("What is (17 * 23) + 4?");
  expect(trajectory.steps[1].tool_calls[0]).toMatchObject({ function_name: "shell", arguments: { command: "echo 395" } });
  expect(trajectory.steps[1].observation.results[0].content).toBe("395");
  expect(trajectory.steps[2].message).toBe("The command printed: 395");

  const request = JSON.parse(new TextDecoder().decode(bytes));
  expect(await importTrace(request)).toEqual(trajectory);
});

test("something that is not a trace is refused with an AtifError saying what it was", async () => {
  await expect(importTrace(undefined)).rejects.toThrow(/no trace given/);
  const refused = importTrace("not a trace");
  await expect(refused).rejects.toBeInstanceOf(AtifError);
  await expect(refused).rejects.toThrow(/standard input: line 1 is not JSON/);
});
