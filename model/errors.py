"""One exception type for every problem a user can cause; the CLI prints it as one line."""


class ModelError(Exception):
    """Bad input or a bad file: the message alone tells the user what is wrong."""
