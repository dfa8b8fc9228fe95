"""One exception type for every problem a user can cause; the CLI prints it as one line."""


import json
from pathlib import Path


class ModelError(Exception):
    """Bad input or a bad file: the message alone tells the user what is wrong."""


def read_json(path, missing: str):
    """A JSON file's content; a missing file is ModelError(missing), an unreadable one names the file."""
    path = Path(path)
    if not path.is_file():
        raise ModelError(missing)
    try:
        return json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ModelError(f"{path}: not valid JSON ({e})") from None
