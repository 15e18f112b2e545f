"""A small tool-using agent on the official `anthropic` SDK (Messages, not streamed).

It gives the model one `bash` tool and runs what the model asks for until it answers in text.
The SDK takes its base URL and key from `ANTHROPIC_BASE_URL` and `ANTHROPIC_API_KEY`.
"""

from __future__ import annotations

import subprocess

from anthropic import Anthropic

MODEL = "claude-sonnet-4-5"
BASH_TOOL = {
    "name": "bash",
    "description": "Run a bash command and return what it printed.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "the command line"}},
        "required": ["command"],
    },
}


def run(question: str, *, max_turns: int = 6) -> str:
    """Answers ``question``, running the bash commands the model asks for."""
    client = Anthropic()
    messages: list[dict] = [{"role": "user", "content": question}]
    for _ in range(max_turns):
        reply = client.messages.create(
            model=MODEL, max_tokens=1024, messages=messages, tools=[BASH_TOOL]
        )
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in reply.content]})
        calls = [block for block in reply.content if block.type == "tool_use"]
        if not calls:
            return "".join(block.text for block in reply.content if block.type == "text")
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": call.id, "content": bash(call.input.get("command", ""))}
                    for call in calls
                ],
            }
        )
    raise RuntimeError(f"no answer after {max_turns} model calls")


def bash(command: str) -> str:
    """The tool: runs ``command`` with bash and returns its output."""
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    return (done.stdout + done.stderr).strip()


if __name__ == "__main__":
    print(run("How many words are in 'the quick brown fox'?"))
