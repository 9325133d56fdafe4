"""Converts files with markitdown in one process and times each conversion (bench/conversion.ts runs it).

Input (stdin, JSON): {"files": [absolute paths], "out_dir": path, "warmup": passes, "repeat": passes}.
Output: out_dir/result.json with the markitdown version, the import and constructor times, and per file
its conversion times (ms, one per measured pass), the error of the last pass (if any) and the length of
its Markdown; the Markdown of the last measured pass goes to out_dir/<index>.md. Warm-up passes are
converted but not timed, so lazily imported converters (pdfminer, mammoth, ...) load before measuring.
Python's start-up and markitdown's import are reported apart and never counted per file.
"""

import json
import os
import sys
import time
import warnings

t0 = time.perf_counter()
from markitdown import MarkItDown  # noqa: E402

import_ms = (time.perf_counter() - t0) * 1000


def main() -> None:
    job = json.load(sys.stdin)
    files = job["files"]
    out_dir = job["out_dir"]
    warmup = int(job.get("warmup", 1))
    repeat = int(job.get("repeat", 1))
    warnings.simplefilter("ignore")

    t1 = time.perf_counter()
    md = MarkItDown(enable_plugins=False)
    init_ms = (time.perf_counter() - t1) * 1000

    results = [{"file": f, "times_ms": [], "error": None, "chars": 0} for f in files]
    for p in range(warmup + repeat):
        measured = p >= warmup
        last = p == warmup + repeat - 1
        for i, path in enumerate(files):
            start = time.perf_counter()
            text = None
            error = None
            try:
                text = md.convert(path).markdown
            except Exception as exc:  # every failure is an outcome here
                error = f"{type(exc).__name__}: {exc}".strip()[:500]
            ms = (time.perf_counter() - start) * 1000
            if measured:
                results[i]["times_ms"].append(round(ms, 3))
            if last:
                results[i]["error"] = error
                results[i]["chars"] = len(text or "")
                with open(os.path.join(out_dir, f"{i}.md"), "w", encoding="utf-8") as fh:
                    fh.write(text or "")

    try:
        from importlib.metadata import version

        md_version = version("markitdown")
    except Exception:
        md_version = "unknown"
    with open(os.path.join(out_dir, "result.json"), "w", encoding="utf-8") as fh:
        json.dump(
            {
                "version": md_version,
                "python": sys.version.split()[0],
                "import_ms": round(import_ms, 1),
                "init_ms": round(init_ms, 1),
                "files": results,
            },
            fh,
        )


if __name__ == "__main__":
    main()
