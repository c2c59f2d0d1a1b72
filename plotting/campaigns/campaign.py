"""What the campaign scripts here share: where a campaign's records are,
opening a record file whether it is gzip-compressed (`.gz`) or not, reading
its records, the record files whose names match a pattern, and a point's
fixed share of its wall time."""
import gzip
import json
import statistics
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


def share_cells(records):
    """A run's table cells: its fixed shares' median and max (percent) and how
    many points are over 25%, and how many points are ok and validated."""
    sh = [fixed_share(r["timing"]["wall_ms"]) for r in records]
    ok = sum(r["status"] == "ok" and r["validation"]["passed"] for r in records)
    return (f"{100 * statistics.median(sh):.0f}%", f"{100 * max(sh):.0f}%", str(sum(s > 0.25 for s in sh)),
            f"{ok}/{len(records)}")


def matching_records(campaign, name):
    """(match, records) for each file of results/<campaign>/ whose whole name
    matches the compiled pattern `name`, in file-name order."""
    out = []
    for path in sorted(results_dir(campaign).iterdir()):
        m = name.fullmatch(path.name)
        if m:
            out.append((m, read_records(path)))
    return out


def value_range(xs, fmt="{:.1f}"):
    """"lo-hi" of the values (one value alone where there is one), each in `fmt`."""
    return fmt.format(min(xs)) if len(xs) == 1 else (fmt + "-" + fmt).format(min(xs), max(xs))
