"""A small tool-using agent on the official `openai` SDK: Chat Completions, streamed.

It answers a question by letting the model run shell commands through one `shell` tool, until
the model answers in text. Nothing in it knows about atif: the SDK takes its base URL and key
from `OPENAI_BASE_URL` and `OPENAI_API_KEY`, which is all a replay needs.
"""

from __future__ import annotations

import json
import subprocess

from openai import OpenAI

MODEL = "gpt-4.1-mini"
SYSTEM = "You are a careful assistant. Compute with the shell tool rather than in your head."
SHELL_TOOL = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "Run a POSIX shell command and return what it printed.",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "the command line"}},
            "required": ["command"],
        },
    },
}


def run(question: str, *, max_turns: int = 6) -> str:
    """Answers ``question``, running the shell commands the model asks for."""
    client = OpenAI()
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": question},
    ]
    for _ in range(max_turns):
        text, calls = _complete(client, messages)
        messages.append(_assistant_message(text, calls))
        if not calls:
            return text
        for call in calls:
            arguments = json.loads(call["function"]["arguments"] or "{}")
            output = shell(arguments.get("command", ""))
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    raise RuntimeError(f"no answer after {max_turns} model calls")


def shell(command: str) -> str:
    """The tool: runs ``command`` with `sh -c` and returns its output."""
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, timeout=30)
    return (done.stdout + done.stderr).strip()


def _complete(client: OpenAI, messages: list[dict]) -> tuple[str, list[dict]]:
    """One streamed model call: the text and the tool calls, put together from the chunks."""
    stream = client.chat.completions.create(
        model=MODEL,
        messages=messages,
        tools=[SHELL_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    )
    text: list[str] = []
    calls: dict[int, dict] = {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta
        if delta.content:
            text.append(delta.content)
        for part in delta.tool_calls or []:
            call = calls.setdefault(
                part.index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if part.id:
                call["id"] = part.id
            if part.function and part.function.name:
                call["function"]["name"] += part.function.name
            if part.function and part.function.arguments:
                call["function"]["arguments"] += part.function.arguments
    return "".join(text), [calls[index] for index in sorted(calls)]


def _assistant_message(text: str, calls: list[dict]) -> dict:
    message: dict = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    return message


if __name__ == "__main__":
    print(run("What is (17 * 23) + 4?"))
