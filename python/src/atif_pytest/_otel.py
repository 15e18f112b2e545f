"""The `atif_otel` fixture's collector: the test's OpenTelemetry spans, kept in memory by the
SDK's in-memory exporter and imported by `atif import` as OTLP protobuf on its standard input.

No receiver, no port, no trace file: the spans go from the exporter's memory to the binary's
standard input. OpenTelemetry is imported only when a test asks for the fixture, so the plugin
works without it.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

from atif_pytest._errors import AtifError

_PACKAGES = "opentelemetry-sdk opentelemetry-exporter-otlp-proto-common"


class AtifOtel:
    """The value of the ``atif_otel`` fixture: a tracer provider whose spans stay in memory.

    Hand ``tracer_provider`` to the framework's instrumentation (pydantic-ai:
    ``Agent.instrument_all(InstrumentationSettings(tracer_provider=atif_otel.tracer_provider))``);
    ``trajectory()`` imports what it collected so far, and ``atif_golden()`` with no argument
    checks it against the test's golden.
    """

    def __init__(self, binary: str) -> None:
        try:
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        except ImportError as err:
            raise AtifError(
                f"the atif_otel fixture needs the OpenTelemetry SDK ({err}): pip install {_PACKAGES}"
            ) from None
        self._binary = binary
        self._exporter = InMemorySpanExporter()
        self.tracer_provider: Any = TracerProvider()
        """The tracer provider to instrument the framework with."""
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self._exporter))

    def otlp(self) -> bytes:
        """The spans finished so far, as one OTLP protobuf ``ExportTraceServiceRequest``."""
        try:
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
        except ImportError as err:
            raise AtifError(
                f"the atif_otel fixture encodes spans with the OTLP encoder ({err}): pip install {_PACKAGES}"
            ) from None
        self.tracer_provider.force_flush()
        return encode_spans(self._exporter.get_finished_spans()).SerializeToString()

    def trajectory(self) -> dict:
        """The ATIF trajectory of the spans finished so far (``atif import --from otel -``).

        Raises:
            AtifError: when the import fails (no span was collected, or no model call), with
                what `atif import` said.
        """
        if not self._exporter.get_finished_spans():
            raise AtifError(
                "atif_otel collected no span: instrument the framework with "
                "atif_otel.tracer_provider before the agent runs"
            )
        done = subprocess.run(
            [self._binary, "import", "--from", "otel", "-"],
            input=self.otlp(),
            capture_output=True,
            check=False,
        )
        stderr = done.stderr.decode("utf-8", "replace").strip()
        if done.returncode != 0:
            raise AtifError(f"atif import of the test's spans failed: {stderr}")
        return json.loads(done.stdout)

    def close(self) -> None:
        """Stops the provider (the in-memory exporter drops its spans)."""
        self.tracer_provider.shutdown()
