#!/usr/bin/env python3
"""Writes the hostile-config corpus: tests/hostile/cases/*.toml and tests/hostile/manifest.tsv.

The generated files are committed; rerun this script after editing it (it rewrites both, and
removes case files it no longer generates). Every case states what spikeforge must do with it:
the exit status (0 = it is valid and must run, 1 = toolchain/machine failure, 2 = input mistake;
"1,2" where either is acceptable), a regular expression the stderr must match when the status is
not 0, and extra command-line arguments. See README.md for the placeholders in arguments.

Injection attempts try to create the file HOSTILE_MARKER in the working directory of the run
(a fresh temporary directory per case); the runner fails any case that leaves it behind.
"""
from case_helpers import CASES, ENTRIES, HERE
from families_code import (huge, injection_names, injection_preprocessor, injection_words,
                           memory, user_model_fields)
from families_config import (AUX_FILES, files, numbers, run_length, schema, shadowing,
                             special_inputs, spike_sources, toml_syntax, valid)


def main():
    injection_names()
    injection_preprocessor()
    injection_words()
    memory()
    user_model_fields()
    huge()
    numbers()
    run_length()
    toml_syntax()
    schema()
    shadowing()
    spike_sources()
    files()
    valid()
    special_inputs()

    CASES.mkdir(exist_ok=True)
    wanted = set()
    for stem, text, *_rest in ENTRIES:
        if text is None:
            continue
        binary = _rest[-1]
        path = CASES / f"{stem}.toml"
        wanted.add(path.name)
        if binary:
            path.write_bytes(text.encode("latin-1"))
        else:
            path.write_bytes(text.encode("utf-8"))
    for name, text in AUX_FILES.items():
        (CASES / name).write_text(text)
        wanted.add(name)
    for old in CASES.iterdir():
        if old.name not in wanted:
            old.unlink()

    lines = ["# case\texit\tstderr_regex\targs\tlimit_s\tcomment"]
    for stem, _text, code, regex, args, limit, comment, _binary in ENTRIES:
        for field in (regex, args, comment):
            assert "\t" not in field and "\n" not in field, stem
        name = stem if stem.startswith("@") else f"{stem}.toml"
        lines.append("\t".join([name, code, regex, args, limit, comment]))
    (HERE / "manifest.tsv").write_text("\n".join(lines) + "\n")
    toml_count = sum(1 for e in ENTRIES if e[1] is not None)
    print(f"{toml_count} TOML cases, {len(ENTRIES) - toml_count} special inputs")


if __name__ == "__main__":
    main()

