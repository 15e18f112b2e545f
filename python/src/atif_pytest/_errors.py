"""The one error type of the plugin: a sentence for the pytest report, never a traceback."""


class AtifError(Exception):
    """Something the plugin could not do, said as what happened and what to do about it.

    The plugin turns it into ``pytest.fail(message, pytrace=False)``, so the test report shows
    the sentence and not a traceback from inside the plugin.
    """
