//! Record an LLM's replies once, replay them strictly offline, and capture agent runs as ATIF.
#![forbid(unsafe_code)]
