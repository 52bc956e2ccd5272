"""What the converters of published runs into capsim.validation/v1 cases share
(scripts/convert-moe-runs.py, scripts/convert-dense-blackwell.py)."""
import json


def source_text(src, how):
    """A case's source: repository, path, commit or version, table, the row as printed, and how
    the iteration time was derived."""
    row = src.get("row_text") or src.get("row") or ""
    return ("%s %s @ %s, %s: %s (%s)" % (src.get("repo") or src.get("kind"), src.get("path") or "",
                                        src.get("commit") or src.get("version") or "",
                                        src.get("table") or "", row, how)).strip()


def write_cases(out, note, cases):
    """Writes `cases` as a capsim.validation/v1 file with its generation note."""
    doc = {"schema": "capsim.validation/v1", "note": note, "cases": cases}
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print("wrote %d cases to %s" % (len(cases), out))
