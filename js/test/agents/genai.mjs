// A small tool-using agent on the official `@google/genai` SDK (Gemini).
import { execSync } from "node:child_process";

import { GoogleGenAI } from "@google/genai";

const SHELL = {
  name: "run_shell_command",
  description: "Run a shell command and return its output",
  parameters: { type: "OBJECT", properties: { command: { type: "STRING" } }, required: ["command"] },
};

export async function run(task) {
  const client = new GoogleGenAI({ apiKey: process.env.GEMINI_API_KEY, httpOptions: { baseUrl: process.env.GOOGLE_GEMINI_BASE_URL } });
  const contents = [{ role: "user", parts: [{ text: task }] }];
  for (;;) {
    const reply = await client.models.generateContent({ model: "gemini-2.5-flash", contents, config: { tools: [{ functionDeclarations: [SHELL] }] } });
    const calls = reply.functionCalls ?? [];
    contents.push(reply.candidates[0].content);
    if (calls.length === 0) return reply.text;
    contents.push({
      role: "user",
      parts: calls.map((call) => ({ functionResponse: { name: call.name, id: call.id, response: { output: execSync(call.args.command, { encoding: "utf8" }).trim() } } })),
    });
  }
}
