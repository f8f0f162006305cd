#!/usr/bin/env python3
"""The shards of spikeforge_tests (tests/support/shard_main.cpp) together run every case once:
for the whole binary and for a GoogleTest filter, the cases listed by the shards
(SPIKEFORGE_TEST_SHARD=i/n --gtest_list_tests) are exactly the cases the binary lists without
shards, each in one shard.

    check_shards.py BINARY SHARDS
"""
import os
import subprocess
import sys


def listed(binary, shard=None, gtest_filter=None):
    """(suite.case names, shard header line) the binary lists."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("SPIKEFORGE_TEST_SHARD", "GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")}
    if shard is not None:
        env["SPIKEFORGE_TEST_SHARD"] = shard
    args = [binary, "--gtest_list_tests"]
    if gtest_filter:
        args.append("--gtest_filter=" + gtest_filter)
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True).stdout
    names, suite, header = [], None, ""
    for line in out.splitlines():
        if line.startswith("[shard"):
            header = line
        elif line and not line.startswith(" "):
            suite = line.split()[0]
        elif line.startswith("  "):
            names.append(suite + line.split()[0])
    return names, header


def check(binary, shards, gtest_filter=None):
    what = f"filter {gtest_filter!r}" if gtest_filter else "the whole binary"
    everything, _ = listed(binary, gtest_filter=gtest_filter)
    if not everything:
        return [f"{what}: the binary lists no case"]
    seen, errors = {}, []
    for i in range(shards):
        names, header = listed(binary, f"{i}/{shards}", gtest_filter)
        if not header:
            errors.append(f"{what}: shard {i}/{shards} printed no '[shard ...]' line")
        for name in names:
            if name in seen:
                errors.append(f"{what}: {name} is in shards {seen[name]} and {i}")
            seen[name] = i
    missing = sorted(set(everything) - set(seen))
    extra = sorted(set(seen) - set(everything))
    errors += [f"{what}: {n} is in no shard" for n in missing[:20]]
    errors += [f"{what}: {n} is in a shard but not in the binary's list" for n in extra[:20]]
    if len(seen) != len(everything):
        errors.append(f"{what}: {len(seen)} cases in the shards, {len(everything)} in the binary")
    print(f"{what}: {len(everything)} cases, {shards} shards")
    return errors


def main():
    binary, shards = sys.argv[1], int(sys.argv[2])
    errors = check(binary, shards)
    # A filter that crosses files and backends, with a negative part, as --quick takes them.
    errors += check(binary, 2, "*Snippet*:*Toeplitz*:*/cpu*-*Death*")
    for e in errors:
        print("FAIL:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
