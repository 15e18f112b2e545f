// A small tool-using agent on the official `@anthropic-ai/sdk` (Messages, streamed).
import { execSync } from "node:child_process";

import Anthropic from "@anthropic-ai/sdk";

const SHELL = {
  name: "bash",
  description: "Run a shell command and return its output",
  input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
};

export async function run(task) {
  const client = new Anthropic();
  const messages = [{ role: "user", content: task }];
  for (;;) {
    const reply = await client.messages.stream({ model: "claude-sonnet-4-5", max_tokens: 1024, messages, tools: [SHELL] }).finalMessage();
    messages.push({ role: "assistant", content: reply.content });
    const calls = reply.content.filter((block) => block.type === "tool_use");
    if (calls.length === 0) return reply.content.filter((block) => block.type === "text").map((block) => block.text).join("");
    messages.push({
      role: "user",
      content: calls.map((call) => ({ type: "tool_result", tool_use_id: call.id, content: execSync(call.input.command, { encoding: "utf8" }).trim() })),
    });
  }
}
