"""A one-call agent for live runs against the real model, on Python's standard library alone.

The user says where they live and where their sister lives, and asks for the weather where they
live. The agent makes one model call, forcing the `get_weather` tool (a named `tool_choice`), with
a short answer budget (7 tokens: enough for `{"city": "Paris"}`) at temperature 1. The model
samples the city. The run passes when the city is Paris, and the exit status says so (0 or 1),
which `atif live` takes as the run's outcome.

Usage: where_agent.py [--prompt vague|clear]

--prompt vague (the default) makes the model infer the city from "where I live"; --prompt clear
names it, a prompt edit that lifts the pass rate.

Every run of one prompt sends the same request, so a server that answers requests one at a time
from one seeded chain (llama-cpp-python started with --seed) gives the same set of answers to a
batch of runs whatever order they arrive in: parallel runs stay reproducible.
The base URL comes from the environment that `atif live` sets (OPENAI_BASE_URL).
It speaks the OpenAI Chat Completions API with `urllib` rather than the `openai` SDK (which the
other agents use): importing the SDK costs more CPU than the model call, and dozens of runs share
two cores with the model; it also leaves a new user nothing to install for the agent.
"""

import argparse
import json
import os
import sys
import urllib.request

PROMPTS = {
    "vague": "My sister lives in Lyon and I live in Paris. How is the weather where I live?",
    "clear": "I live in Paris and my sister lives in Lyon. How is the weather in Paris today?",
}
WEATHER = {
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
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--prompt", choices=sorted(PROMPTS), default="vague")
    args = parser.parse_args()
    request = {
        "model": "gemma-3-270m",
        "messages": [{"role": "user", "content": PROMPTS[args.prompt]}],
        "tools": [WEATHER],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
        "max_tokens": 7,
        "temperature": 1.0,
    }
    base_url = os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1")
    http_request = urllib.request.Request(
        base_url.rstrip("/") + "/chat/completions",
        data=json.dumps(request).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", ""),
        },
    )
    with urllib.request.urlopen(http_request, timeout=120) as response:
        message = json.load(response)["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    arguments = calls[0]["function"]["arguments"] if calls else ""
    # The answer budget may cut the JSON short (`{"city": "Paris`): the city is read as text.
    passed = "paris" in arguments.lower()
    print(json.dumps(arguments), "passed" if passed else "failed", flush=True)
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
