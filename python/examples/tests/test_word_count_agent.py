"""The Anthropic example, replayed: the answer, and how the agent got there, against its golden."""

import word_count_agent


def test_word_count_uses_bash_once(atif_replay, atif_golden):
    answer = word_count_agent.run("How many words are in 'the quick brown fox'?")
    assert "4" in answer
    atif_golden()
