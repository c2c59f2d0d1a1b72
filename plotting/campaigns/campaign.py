"""What the campaign scripts here share: where a campaign's records are,
opening a record file whether it is gzip-compressed (`.gz`) or not, reading
its records, and a point's fixed share of its wall time."""
import gzip
import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "results"


def results_dir(campaign):
    """results/<campaign>/ of this checkout."""
    return RESULTS / campaign


def open_text(path):
    """A record file opened for reading as text; `.gz` files are decompressed."""
    path = str(path)
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def read_records(path):
    """The records of a JSON-lines file (`.gz` or not), blank lines skipped."""
    with open_text(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def fixed_share(wall_ms):
    """Set-up + validation + release over the point's whole wall time
    (timing.wall_ms): issue 44's fixed share."""
    return (wall_ms["setup"] + wall_ms["validate"] + wall_ms.get("release", 0)) / sum(wall_ms.values())
