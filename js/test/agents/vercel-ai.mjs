// A small tool-using agent on the Vercel AI SDK (`ai`), with the OpenAI (Responses) or the
// Anthropic provider.
import { execSync } from "node:child_process";

import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, jsonSchema, stepCountIs, tool } from "ai";

const shell = tool({
  description: "Run a shell command and return its output",
  inputSchema: jsonSchema({ type: "object", properties: { command: { type: "string" } }, required: ["command"] }),
  execute: async ({ command }) => execSync(command, { encoding: "utf8" }).trim(),
});

function model(provider) {
  // The providers read the base URL from the variables the atif fixture sets, for this test.
  if (provider === "anthropic") return createAnthropic({ baseURL: `${process.env.ANTHROPIC_BASE_URL}/v1` })("claude-sonnet-4-5");
  return createOpenAI({ baseURL: process.env.OPENAI_BASE_URL })("gpt-4.1-mini");
}

export async function run(task, provider = "openai") {
  const { text } = await generateText({ model: model(provider), prompt: task, tools: { shell }, stopWhen: stepCountIs(5) });
  return text;
}
