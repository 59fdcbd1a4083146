"""The Simplified Chinese catalogue, step by step (no translation service: people write the Chinese).

    .venv/bin/python scripts/translations.py update          # makemessages with the project's flags
    .venv/bin/python scripts/translations.py todo > todo.json  # what is empty or fuzzy, as JSON
    # ... write each "msgstr" in todo.json (a list of one string for plurals) ...
    .venv/bin/python scripts/translations.py apply todo.json  # into the .po, fuzzy flags cleared, compiled
    .venv/bin/python scripts/translations.py check            # msgfmt --check: placeholders, syntax

``apply`` only touches the entries named in the file (matched on msgctxt and msgid) and refuses
a translation whose %(name)s / {name} placeholders differ from the English. Then run
tests/test_i18n_coverage.py, which walks every page in Chinese.
"""
from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PO = ROOT / "twin/locale/zh_Hans/LC_MESSAGES/django.po"
PYTHON = sys.executable
MAKEMESSAGES = [
    "makemessages", "-l", "zh_Hans", "-i", "frontend/*", "-i", "bench/*", "-i", "tests/*", "-i", "var/*", "--no-obsolete",
]
PLACEHOLDER = re.compile(r"%\((\w+)\)[sdifg]|\{(\w+)\}|%[sd]")


def manage(*arguments: str) -> None:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "twin.settings", "TWIN_DATA_DIR": os.environ.get("TWIN_DATA_DIR", "/tmp/twin-messages")}
    subprocess.run([PYTHON, "manage.py", *arguments], cwd=ROOT, env=env, check=True)


# -- a small reader and writer of Django's .po files -------------------------------------------


def read_entries(text: str) -> list[dict]:
    """Each entry: its ``lines`` (verbatim), ``flags``, ``msgctxt``, ``msgid``, ``msgid_plural``,
    ``msgstr`` (a string, or a list for plurals)."""
    entries = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.split("\n")
        entry = {"lines": lines, "flags": [], "msgctxt": None, "msgid": None, "msgid_plural": None, "msgstr": None}
        field = None
        for line in lines:
            if line.startswith("#,"):
                entry["flags"] = [flag.strip() for flag in line[2:].split(",")]
            elif line.startswith("#"):
                continue
            elif line.startswith('"'):
                value = ast.literal_eval(line)
                if isinstance(entry[field[0]], list):
                    entry[field[0]][field[1]] += value
                else:
                    entry[field[0]] += value
            else:
                keyword, _, value = line.partition(" ")
                plural = re.fullmatch(r"msgstr\[(\d+)\]", keyword)
                if plural:
                    entry["msgstr"] = entry["msgstr"] if isinstance(entry["msgstr"], list) else []
                    entry["msgstr"].append(ast.literal_eval(value))
                    field = ("msgstr", int(plural.group(1)))
                else:
                    entry[keyword] = ast.literal_eval(value)
                    field = (keyword, None)
        entries.append(entry)
    return entries


def quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def rewritten(entry: dict, msgstr: str | list[str]) -> list[str]:
    """The entry's lines with the new translation, without the fuzzy flag nor the previous msgid
    (``#|``). A translation is always the last field of an entry."""
    first_msgstr = next(number for number, line in enumerate(entry["lines"]) if line.startswith("msgstr"))
    lines = []
    for line in entry["lines"][:first_msgstr]:
        if line.startswith("#,"):
            flags = [flag for flag in entry["flags"] if flag != "fuzzy"]
            lines += ["#, " + ", ".join(flags)] if flags else []
        elif not line.startswith("#|"):
            lines.append(line)
    if isinstance(msgstr, list):
        return lines + [f"msgstr[{number}] {quoted(text)}" for number, text in enumerate(msgstr)]
    return lines + [f"msgstr {quoted(msgstr)}"]


def placeholders(text: str) -> list[str]:
    return sorted(match.group(0) for match in PLACEHOLDER.finditer(text))


def pending(entry: dict) -> bool:
    if entry["msgid"] in (None, ""):
        return False  # the header
    strings = entry["msgstr"] if isinstance(entry["msgstr"], list) else [entry["msgstr"]]
    return "fuzzy" in entry["flags"] or any(not text for text in strings)


# -- commands ----------------------------------------------------------------------------------


def todo() -> None:
    rows = [
        {key: entry[key] for key in ("msgctxt", "msgid", "msgid_plural", "msgstr") if entry[key] is not None}
        for entry in read_entries(PO.read_text(encoding="utf-8"))
        if pending(entry)
    ]
    json.dump(rows, sys.stdout, ensure_ascii=False, indent=1)
    print()


def apply(path: str) -> None:
    filled = {(row.get("msgctxt"), row["msgid"]): row["msgstr"] for row in json.loads(Path(path).read_text(encoding="utf-8"))}
    text = PO.read_text(encoding="utf-8")
    entries = read_entries(text)
    problems, blocks, applied = [], [], 0
    for entry in entries:
        key = (entry["msgctxt"], entry["msgid"])
        msgstr = filled.get(key)
        if msgstr is None or entry["msgid"] == "" or not (msgstr if isinstance(msgstr, str) else all(msgstr)):
            blocks.append("\n".join(entry["lines"]))
            continue
        if isinstance(entry["msgstr"], list) != isinstance(msgstr, list):
            problems.append(f"{entry['msgid']!r}: {'a list (plural)' if isinstance(entry['msgstr'], list) else 'one string'} expected")
        else:
            english = placeholders(entry["msgid_plural"] or entry["msgid"])
            for text in msgstr if isinstance(msgstr, list) else [msgstr]:
                # Chinese has one plural form: the singular's placeholders may be spelled out.
                if placeholders(text) != english and placeholders(text) != placeholders(entry["msgid"]):
                    problems.append(f"{entry['msgid']!r}: placeholders {placeholders(text)}, expected {english}")
        blocks.append("\n".join(rewritten(entry, msgstr)))
        applied += 1
    if problems:
        sys.exit("nothing written:\n" + "\n".join(problems))
    PO.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    print(f"{applied} translations written to {PO.relative_to(ROOT)}")
    check()
    manage("compilemessages", "-l", "zh_Hans")


def check() -> None:
    subprocess.run(["msgfmt", "--check", "--statistics", "-o", os.devnull, str(PO)], check=True)


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "update":
        manage(*MAKEMESSAGES)
    elif command == "todo":
        todo()
    elif command == "apply" and len(sys.argv) == 3:
        apply(sys.argv[2])
    elif command == "check":
        check()
    else:
        sys.exit(__doc__)
