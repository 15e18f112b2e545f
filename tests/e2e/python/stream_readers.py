"""Streaming readers that stop at the stream's terminal event, for the record end-to-end tests.

Runs N streamed Chat Completions calls at once through OPENAI_BASE_URL (as `atif record` sets
it), spread over three kinds of reader: the `openai` SDK's sync client (in threads), its async
client (with asyncio), and a plain HTTP reader (the standard library's) that stops at
`data: [DONE]` and closes the connection, as LangChain-style streaming clients do. Each reader joins the text deltas it got;
the script prints one line per reader kind with how many calls got the whole text, and exits 1
when any did not.

Usage: stream_readers.py N EXPECTED_TEXT
"""

import asyncio
import http.client
import json
import os
import sys
import urllib.parse
from concurrent.futures import ThreadPoolExecutor

import openai

BASE_URL = os.environ["OPENAI_BASE_URL"]
KEY = os.environ.get("OPENAI_API_KEY", "not-a-key")


def request(idx):
    return {
        "model": "fake-model",
        "stream": True,
        "messages": [{"role": "user", "content": f"Say hello, reader {idx}."}],
    }


def sync_reader(idx):
    client = openai.OpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)
    stream = client.chat.completions.create(**request(idx))
    return "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)


async def async_reader(idx):
    client = openai.AsyncOpenAI(base_url=BASE_URL, api_key=KEY, max_retries=0)
    stream = await client.chat.completions.create(**request(idx))
    text = ""
    async for chunk in stream:
        if chunk.choices:
            text += chunk.choices[0].delta.content or ""
    await client.close()
    return text


def raw_reader(idx):
    text = ""
    url = urllib.parse.urlsplit(BASE_URL)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"authorization": f"Bearer {KEY}", "content-type": "application/json"}
    body = json.dumps(request(idx))
    connection.request("POST", f"{url.path}/chat/completions", body=body, headers=headers)
    response = connection.getresponse()
    for line in response:
        line = line.decode().strip()
        if not line.startswith("data: "):
            continue
        data = line[len("data: "):]
        if data == "[DONE]":
            break
        for choice in json.loads(data).get("choices", []):
            text += choice.get("delta", {}).get("content") or ""
    connection.close()
    return text


async def run_async(indices):
    return await asyncio.gather(*(async_reader(idx) for idx in indices))


def main():
    count, expected = int(sys.argv[1]), sys.argv[2]
    kinds = {"sync": [], "async": [], "raw": []}
    for idx in range(count):
        kinds[("sync", "async", "raw")[idx % 3]].append(idx)
    with ThreadPoolExecutor(max_workers=count) as pool:
        sync = pool.map(sync_reader, kinds["sync"])
        raw = pool.map(raw_reader, kinds["raw"])
        texts = {"async": asyncio.run(run_async(kinds["async"]))}
        texts["sync"] = list(sync)
        texts["raw"] = list(raw)
    ok = True
    for kind in ("sync", "async", "raw"):
        whole = sum(text == expected for text in texts[kind])
        print(f"{kind} {whole} of {len(texts[kind])}")
        ok = ok and whole == len(texts[kind])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
