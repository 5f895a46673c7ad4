"""The one wording of an encoding fault, for every reader of text (files and messages)."""


def not_utf8(exc: UnicodeDecodeError) -> str:
    """What is wrong with bytes that are not UTF-8, for an error message."""
    return f"not UTF-8 text ({exc.reason} at byte {exc.start})"
