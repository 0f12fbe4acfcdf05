# SPDX-License-Identifier: MIT
"""What the PyTorch harness scripts (norms.py, rope.py) write after their table: the row
count footer, the -J JSON document, and the exit status their accuracy check gives."""
import json


def finish(out, results, header, check_error, limit, json_path):
    """Writes the footer, the JSON file when @json_path is given, and returns 0 when
    @check_error is within @limit, else 1."""
    out.write(f"# {len(results)} rows\n")
    if json_path:
        with open(json_path, "w") as f:
            json.dump({"header": header, "check_error": check_error, "results": results}, f,
                      indent=1)
    return 0 if check_error <= limit else 1
