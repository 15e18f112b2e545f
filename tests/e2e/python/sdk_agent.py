"""A small tool-using agent on an official Python SDK, for the record/replay end-to-end tests.

It asks the model to run a command, runs the shell tool the model calls, sends the result
back, and prints every object the SDK parsed (responses, stream chunks and events) as one
sorted JSON line each, then the final text. A replay is faithful when this output is the same
as under the live recording.

Usage: sdk_agent.py SDK [--stream] [--prompt TEXT] [--extra-call] [--threads N]
SDK is one of openai-chat, openai-responses, anthropic, gemini. The base URL comes from the
environment that `atif record` / `atif replay` set (OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
GOOGLE_GEMINI_BASE_URL).

With --threads N, N agents run at once, each with its own prompt and a tool that prints its
own marker (atif-e2e-agent-I); only their final texts are printed, in agent order, so the
output shows whether each agent got its own replies.
"""

import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The shell command"}},
    "required": ["command"],
}
MAX_TURNS = 4


QUIET = False
TOOL_OUTPUT = None


def emit(kind, obj, exclude=None):
    if QUIET:
        return
    dumped = obj.model_dump(mode="json", exclude=exclude) if hasattr(obj, "model_dump") else obj
    print(kind, json.dumps(dumped, sort_keys=True), flush=True)


def run_tool(arguments):
    if TOOL_OUTPUT is not None:
        return TOOL_OUTPUT()
    command = arguments["command"]
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    return done.stdout


def openai_chat(args):
    from openai import OpenAI

    client = OpenAI(max_retries=0)
    tools = [{"type": "function", "function": {"name": "bash", "description": "Run a shell command", "parameters": SCHEMA}}]
    messages = [{"role": "user", "content": args.prompt}]
    for _ in range(MAX_TURNS):
        request = dict(model="fake-model", messages=messages, tools=tools)
        if args.stream:
            content, calls = "", {}
            for chunk in client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}):
                emit("chunk", chunk)
                for choice in chunk.choices:
                    content += choice.delta.content or ""
                    for call in choice.delta.tool_calls or []:
                        slot = calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
                        slot["id"] = call.id or slot["id"]
                        slot["name"] += (call.function and call.function.name) or ""
                        slot["arguments"] += (call.function and call.function.arguments) or ""
            calls = [calls[idx] for idx in sorted(calls)]
        else:
            completion = client.chat.completions.create(**request)
            emit("completion", completion)
            message = completion.choices[0].message
            content = message.content or ""
            calls = [{"id": c.id, "name": c.function.name, "arguments": c.function.arguments} for c in message.tool_calls or []]
        if not calls:
            return content
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]})
        for call in calls:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": run_tool(json.loads(call["arguments"]))})
    raise SystemExit("no final answer")


def openai_responses(args):
    from openai import OpenAI

    client = OpenAI(max_retries=0)
    tools = [{"type": "function", "name": "bash", "description": "Run a shell command", "parameters": SCHEMA}]
    items = [{"role": "user", "content": args.prompt}]
    for _ in range(MAX_TURNS):
        request = dict(model="fake-model", input=items, tools=tools)
        if args.stream:
            response = None
            for event in client.responses.create(**request, stream=True):
                emit("event", event)
                if event.type == "response.completed":
                    response = event.response
        else:
            response = client.responses.create(**request)
            emit("response", response)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        for call in calls:
            items.append({"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": call.arguments})
            items.append({"type": "function_call_output", "call_id": call.call_id, "output": run_tool(json.loads(call.arguments))})
    raise SystemExit("no final answer")


def anthropic(args):
    from anthropic import Anthropic

    client = Anthropic(max_retries=0)
    tools = [{"name": "bash", "description": "Run a shell command", "input_schema": SCHEMA}]
    messages = [{"role": "user", "content": args.prompt}]
    emit("count", client.messages.count_tokens(model="claude-fake", messages=messages, tools=tools))
    for _ in range(MAX_TURNS):
        request = dict(model="claude-fake", max_tokens=1024, messages=messages, tools=tools)
        if args.stream:
            with client.messages.stream(**request) as stream:
                for event in stream:
                    emit("event", event)
                message = stream.get_final_message()
        else:
            message = client.messages.create(**request)
        emit("message", message)
        calls = [block for block in message.content if block.type == "tool_use"]
        if not calls:
            return "".join(block.text for block in message.content if block.type == "text")
        messages.append({"role": "assistant", "content": [block.model_dump(mode="json") for block in message.content]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": run_tool(call.input)} for call in calls]})
    raise SystemExit("no final answer")


def gemini(args):
    from google import genai
    from google.genai import types

    client = genai.Client(
        api_key=os.environ.get("GEMINI_API_KEY", "atif-fake-key"),
        http_options=types.HttpOptions(base_url=os.environ["GOOGLE_GEMINI_BASE_URL"]),
    )
    declaration = types.FunctionDeclaration(name="run_shell_command", description="Run a shell command", parameters_json_schema=SCHEMA)
    config = types.GenerateContentConfig(
        tools=[types.Tool(function_declarations=[declaration])],
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
    )
    contents = [types.Content(role="user", parts=[types.Part(text=args.prompt)])]
    hidden = {"sdk_http_response"}
    for _ in range(MAX_TURNS):
        request = dict(model="gemini-2.5-flash", contents=contents, config=config)
        parts = []
        if args.stream:
            for chunk in client.models.generate_content_stream(**request):
                emit("chunk", chunk, exclude=hidden)
                parts += chunk.candidates[0].content.parts or []
        else:
            response = client.models.generate_content(**request)
            emit("response", response, exclude=hidden)
            parts = response.candidates[0].content.parts or []
        calls = [part.function_call for part in parts if part.function_call]
        if not calls:
            return "".join(part.text or "" for part in parts)
        contents.append(types.Content(role="model", parts=parts))
        contents.append(types.Content(role="user", parts=[
            types.Part.from_function_response(name=call.name, response={"output": run_tool(call.args)}) for call in calls]))
    raise SystemExit("no final answer")


AGENTS = {"openai-chat": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic, "gemini": gemini}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("sdk", choices=sorted(AGENTS))
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--prompt", default="Run the scripted command and tell me what it printed.")
    parser.add_argument("--extra-call", action="store_true", help="ask the model once more after the final answer")
    parser.add_argument("--threads", type=int, default=0, help="run this many agents at once")
    args = parser.parse_args()
    if args.threads:
        return run_threads(args)
    final = AGENTS[args.sdk](args)
    print("final", json.dumps(final), flush=True)
    if args.extra_call:
        args.prompt += " Anything else?"
        print("extra", json.dumps(AGENTS[args.sdk](args)), flush=True)


def run_threads(args):
    import threading

    global QUIET, TOOL_OUTPUT
    QUIET = True
    local = threading.local()
    TOOL_OUTPUT = lambda: f"atif-e2e-agent-{local.idx}\n"

    def one(idx):
        local.idx = idx
        mine = argparse.Namespace(**vars(args))
        mine.prompt = f"Agent {idx}: run the scripted command."
        return AGENTS[args.sdk](mine)

    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        finals = list(pool.map(one, range(args.threads)))
    for idx, final in enumerate(finals):
        print("agent", idx, json.dumps(final), flush=True)


if __name__ == "__main__":
    sys.exit(main())
