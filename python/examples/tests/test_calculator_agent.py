"""The OpenAI example, replayed: the answer, and how the agent got there, against its golden."""

import calculator_agent


def test_calculator_answers_with_one_shell_call(atif_replay, atif_golden):
    answer = calculator_agent.run("What is (17 * 23) + 4?")
    assert "395" in answer
    atif_golden()
