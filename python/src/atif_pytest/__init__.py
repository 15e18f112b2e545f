"""Golden trajectories and model replay for pytest, on the `atif` binary.

Installing the `atif` wheel registers this package as a pytest plugin (entry point
`pytest11`), which provides three fixtures:

- ``atif_replay`` starts ``atif serve --replay`` for the test's script, points the OpenAI,
  Anthropic and Gemini SDKs at it through their base-URL variables, and fails the test with the
  server's verdict when the agent made more, fewer or different model calls than recorded;
- ``atif_otel`` collects the test's OpenTelemetry spans in memory (the SDK's in-memory
  exporter), for an agent framework that traces itself;
- ``atif_golden`` compares a trajectory (by default the one captured from the test's model
  traffic, or from its spans) with the test's golden file through ``atif check``.

Everything that reads, compares or serves trajectories is the Rust ``atif`` command: this
package only starts it and turns its verdicts into pytest failures.
"""

from atif_pytest._binary import find_atif
from atif_pytest._errors import AtifError

__all__ = ["AtifError", "find_atif"]
