"""A small tool-using agent on the official `openai` SDK, for the tests against the real model.

It asks for the weather in Paris and the sum of 2 and 3, and makes the model call its two tools
in turn, each forced by a named `tool_choice`: `get_weather`, then `add`. The model samples the
arguments. A wrong argument gets an error result and the same tool is asked for again, at most
3 times. Then the model answers in a few words, without tools.

It prints one line per model call (the tool called, its arguments, and the result the agent sent
back), then the answer. With --strict it exits 1 when three attempts at `add` failed, so that the
exit status is the run's pass/fail outcome for `atif live`; without it, 0.

Usage: weather_agent.py [--stream] [--strict] [--no-answer] [--prompt plain|named] [--null-content]

--no-answer leaves out the last call, the answer in words (the live runs need only the calls).

--prompt named spells out the arguments of `add` (a prompt edit that changes the retry rate).
--null-content sends the assistant's tool-call messages with `"content": null`, which the
OpenAI API accepts and llama-cpp-python's server refuses with 422 (a quirk the tests record).
The base URL comes from the environment that `atif record` / `atif replay` set
(OPENAI_BASE_URL).
"""

import argparse
import json
import sys

MAX_ATTEMPTS = 3
MAX_TOKENS = 32
TEMPERATURE = 0.8
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The current weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "Add two numbers",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
            },
        },
    },
]
PROMPTS = {
    "plain": "What is the weather in Paris? Then add 2 and 3.",
    "named": "What is the weather in Paris (city: Paris)? Then add two numbers: a is 2 and b is 3.",
}


def get_weather(arguments):
    city = arguments.get("city")
    if not isinstance(city, str) or "paris" not in city.lower():
        return False, f"error: get_weather needs the city Paris, got {json.dumps(arguments)}"
    return True, "Sunny, 21 C"


def add(arguments):
    a, b = arguments.get("a"), arguments.get("b")
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    if not numbers or sorted([a, b]) != [2, 3]:
        return False, f"error: add needs the numbers a=2 and b=3, got {json.dumps(arguments)}"
    return True, str(a + b)


def complete(client, request, stream):
    """One model call: the text and the first tool call (id, name, arguments text)."""
    if not stream:
        message = client.chat.completions.create(**request).choices[0].message
        calls = message.tool_calls or []
        call = (calls[0].id, calls[0].function.name, calls[0].function.arguments) if calls else None
        return message.content or "", call
    content, call_id, name, arguments = "", None, None, ""
    for chunk in client.chat.completions.create(**request, stream=True):
        for choice in chunk.choices:
            content += choice.delta.content or ""
            for delta in choice.delta.tool_calls or []:
                call_id = delta.id or call_id
                # llama-cpp-python repeats the function's name in every delta of a call (the
                # OpenAI API sends it once): a name is set, never appended.
                if delta.function and delta.function.name:
                    name = delta.function.name
                arguments += (delta.function and delta.function.arguments) or ""
    return content, ((call_id, name, arguments) if name else None)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--stream", action="store_true")
    parser.add_argument("--strict", action="store_true")
    parser.add_argument("--no-answer", action="store_true")
    parser.add_argument("--prompt", choices=sorted(PROMPTS), default="plain")
    parser.add_argument("--null-content", action="store_true")
    args = parser.parse_args()
    return run(args.stream, args.strict, not args.no_answer, args.prompt, args.null_content)


def run(stream=False, strict=False, answer=True, prompt="plain", null_content=False):
    """Runs the agent once and returns its exit status (for tests that import it)."""
    from openai import APIStatusError, OpenAI

    client = OpenAI(max_retries=0)
    try:
        passed = run_agent(client, stream, answer, PROMPTS[prompt], null_content)
    except APIStatusError as err:
        if not null_content:
            raise
        # The refusal is what this mode is for: print it as the server sent it.
        print("refused", err.status_code, json.dumps(err.body, sort_keys=True), flush=True)
        return 0
    return 0 if passed or not strict else 1


def run_agent(client, stream, answer, prompt, null_content):
    """The tool loop; whether `add` got the right numbers."""
    messages = [{"role": "user", "content": prompt}]
    passed = False
    for tool, check in (("get_weather", get_weather), ("add", add)):
        for _ in range(MAX_ATTEMPTS):
            request = dict(
                model="gemma-3-270m",
                messages=messages,
                tools=TOOLS,
                tool_choice={"type": "function", "function": {"name": tool}},
                max_tokens=MAX_TOKENS,
                temperature=TEMPERATURE,
            )
            _, call = complete(client, request, stream)
            call_id, name, text = call or ("call_missing", tool, "")
            try:
                arguments = json.loads(text)
                ok, result = check(arguments) if isinstance(arguments, dict) else (False, "")
            except json.JSONDecodeError:
                ok, result = False, ""
            if not result:
                result = f"error: {tool} needs a JSON object of arguments, got {text!r}"
            print(f"{tool} {text} -> {result}", flush=True)
            content = None if null_content else ""
            messages.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}
            ]})
            messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
            if ok:
                passed = passed or tool == "add"
                break
    if answer:
        request = dict(model="gemma-3-270m", messages=messages, max_tokens=16, temperature=TEMPERATURE)
        text, _ = complete(client, request, stream)
        print("final", json.dumps(text), flush=True)
    return passed


if __name__ == "__main__":
    sys.exit(main())
