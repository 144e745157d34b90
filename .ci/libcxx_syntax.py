#!/usr/bin/env python3
"""Every file of a build, compiled again against libc++ (syntax only).

Apple Clang's standard library is libc++, not libstdc++, and what one
includes by the way or implements differs (libc++ before LLVM 20 has no
std::from_chars for double; its <fstream> brings std::quoted into every
file that includes fmt/ostream.h). CI has no Mac, so each command of
compile_commands.json (a Clang build) runs once more with -stdlib=libc++
-fsyntax-only. Prints each failing file with its errors; exit status 1 if
any failed.

    python3 .ci/libcxx_syntax.py build/clang/compile_commands.json
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys


def command(entry):
    """The build's command without its output, and without the precompiled
    header (built against libstdc++); its text header is still included."""
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out, i = [], 0
    while i < len(args):
        a = args[i]
        if a == "-o":
            i += 2
            continue
        if a == "-Xclang" and i + 3 < len(args) and args[i + 1] == "-include-pch":
            i += 4  # -Xclang -include-pch -Xclang <file>.pch
            continue
        if a not in ("-c", "-Winvalid-pch"):
            out.append(a)
        i += 1
    return out + ["-stdlib=libc++", "-fsyntax-only"]


def check(entry):
    r = subprocess.run(command(entry), cwd=entry["directory"], capture_output=True, text=True, errors="replace")
    return entry["file"], r.returncode, r.stderr


def main():
    entries = json.load(open(sys.argv[1]))
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for file, status, errors in pool.map(check, entries):
            if status != 0:
                failed += 1
                print(f"libc++: {file} does not compile:\n{errors[:4000]}")
    print(f"libc++: {len(entries) - failed} of {len(entries)} files compile")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
