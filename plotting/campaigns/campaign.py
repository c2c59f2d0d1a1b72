"""What the campaign scripts here share: where a campaign's records are, and
opening a record file whether it is gzip-compressed (`.gz`) or not."""
import gzip
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"


def results_dir(campaign):
    """results/<campaign>/ of this checkout."""
    return RESULTS / campaign


def open_text(path):
    """A record file opened for reading as text; `.gz` files are decompressed."""
    path = str(path)
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)
