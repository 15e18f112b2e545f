// A small tool-using agent on the official `openai` SDK (Chat Completions).
import { execSync } from "node:child_process";

import OpenAI from "openai";

const SHELL = {
  type: "function",
  function: {
    name: "shell",
    description: "Run a shell command and return its output",
    parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
};

export async function run(task) {
  const client = new OpenAI();
  const messages = [{ role: "user", content: task }];
  for (;;) {
    const reply = await client.chat.completions.create({ model: "gpt-4.1-mini", messages, tools: [SHELL] });
    const message = reply.choices[0].message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content;
    for (const call of message.tool_calls) {
      const { command } = JSON.parse(call.function.arguments);
      messages.push({ role: "tool", tool_call_id: call.id, content: execSync(command, { encoding: "utf8" }).trim() });
    }
  }
}
