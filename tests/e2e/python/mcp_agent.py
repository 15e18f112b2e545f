"""A small agent on the official `mcp` SDK (client side) and the `openai` SDK: it starts one
MCP server through the command line it is given, offers the model that server's tools, runs
each tool call through the MCP session, and prints every tool result and the final answer.

    python mcp_agent.py [--prompt TEXT] TOOL SERVER_CMD [ARGS...]
    python mcp_agent.py [--prompt TEXT] TOOL --http NAME

TOOL is the one tool offered to the model; --prompt changes the user's message (a prompt
change, for hybrid recordings). With `--http NAME`, the server is a Streamable-HTTP
one that the record/replay server fronts (`atif record --mcp NAME=URL`), at
$ATIF_PROXY_URL/mcp/NAME.

Otherwise the server gets this process's whole environment
(the SDK passes only a few variables unless told), so a relay started as the server finds the
record/replay server of `atif record` and `atif replay` through ATIF_PROXY_URL and
ATIF_PROXY_TOKEN.
"""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from openai import OpenAI


PROMPT = "Read the notes file and tell me what it says."


async def run(prompt: str, tool: str, command: list[str]) -> None:
    if command[0] == "--http":
        url = f"{os.environ['ATIF_PROXY_URL']}/mcp/{command[1]}"
        async with streamable_http_client(url) as (read, write):
            await converse(prompt, tool, read, write)
        return
    params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        await converse(prompt, tool, read, write)


async def converse(prompt: str, tool: str, read, write) -> None:
    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        tools = [
            {"type": "function", "function": {"name": t.name, "description": t.description or "", "parameters": t.input_schema}}
            for t in listed.tools
            if t.name == tool
        ]
        client = OpenAI()
        messages = [{"role": "user", "content": prompt}]
        for _ in range(4):
            reply = client.chat.completions.create(model="gpt-fake", messages=messages, tools=tools)
            message = reply.choices[0].message
            if not message.tool_calls:
                print("final", json.dumps(message.content))
                return
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls:
                result = await session.call_tool(call.function.name, json.loads(call.function.arguments or "{}"))
                text = "".join(part.text for part in result.content if part.type == "text")
                print("tool", call.function.name, json.dumps(text))
                messages.append({"role": "tool", "tool_call_id": call.id, "content": text})


if __name__ == "__main__":
    argv = sys.argv[1:]
    prompt = PROMPT
    if argv[:1] == ["--prompt"]:
        prompt, argv = argv[1], argv[2:]
    asyncio.run(run(prompt, argv[0], argv[1:]))
