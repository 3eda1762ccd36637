#!/usr/bin/env python3
"""Checks that what the documentation points at exists (make test runs it).

Two kinds of pointer a reader follows:

1. A relative Markdown link, `[text](path)` or `[text](path#anchor)`, in a Markdown file of the repository
   (README.md, docs/, results/, configs/, data/, ...): the file or directory it names must exist. Links with
   a scheme (https:, mailto:) and bare anchors (#section) are not checked; neither is anything inside a code
   span or a fenced code block (an example, not a link).
2. A symbolic link under results/ (an experiment's runs/<name> pointing into its run store): its target must
   exist. A link to a run that never trained points at nothing in a clone, and a reader who opens it finds
   nothing; `relpos report` treats such a point as not run, so a link adds nothing until its run finishes.

In a git checkout only tracked files are checked (a campaign's untracked links to runs still training are
its own business); elsewhere (an archive) every file is.

    scripts/check_links.py               # exit 1 and one line per broken pointer
    scripts/check_links.py --self-test   # the checker's own tests (a broken pointer must fail)
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def tracked(root):
    """The repository's tracked files as (path, is_symlink), or None when root is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-s", "-z"], capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    files = []
    for entry in out.decode("utf-8", "surrogateescape").split("\0"):
        if entry:
            meta, path = entry.split("\t", 1)
            files.append((path, meta.split()[0] == "120000"))
    return files


def walked(root):
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "build") and not os.path.islink(os.path.join(d, x))]
        for n in names + [x for x in os.listdir(d) if os.path.islink(os.path.join(d, x)) and x not in names]:
            p = os.path.join(d, n)
            files.append((os.path.relpath(p, root), os.path.islink(p)))
    return files


def broken_pointers(root):
    files = tracked(root)
    if files is None:
        files = walked(root)
    broken = []
    for path, is_link in files:
        full = os.path.join(root, path)
        if is_link:
            if path.startswith("results/") and not os.path.exists(full):
                broken.append(f"{path}: symbolic link to {os.readlink(full)}, which does not exist")
            continue
        if not path.endswith(".md") or not os.path.isfile(full):
            continue
        with open(full, encoding="utf-8") as f:
            text = f.read()
        text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for lineno, line in enumerate(text.split("\n"), 1):
            for m in LINK.finditer(CODE_SPAN.sub("", line)):
                target = m.group(1)
                if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", target) or target.startswith("#"):
                    continue
                rel = target.split("#", 1)[0]
                where = os.path.normpath(os.path.join(os.path.dirname(full), rel))
                if rel.startswith("/"):
                    where = os.path.normpath(os.path.join(root, rel.lstrip("/")))
                if not os.path.exists(where):
                    broken.append(f"{path}:{lineno}: link to {target}, which does not exist")
    return broken


def self_test():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        def write(p, text):
            os.makedirs(os.path.dirname(os.path.join(d, p)), exist_ok=True)
            with open(os.path.join(d, p), "w") as f:
                f.write(text)
        write("README.md", "See [docs](docs/a.md#x), [web](https://x.org), [top](#t) and `[not](a link)`.\n"
                           "```\n[an example](missing.md)\n```\n")
        write("docs/a.md", "[back](../README.md) [dir](../results/exp/)\n")
        write("results/store/r1/results.json", "{}")
        os.makedirs(os.path.join(d, "results/exp/runs"))
        os.symlink("../../store/r1", os.path.join(d, "results/exp/runs/seed=1"))
        got = broken_pointers(d)
        if got:
            failures.append(f"clean tree: want nothing, got {got}")
        os.symlink("../../store/r2", os.path.join(d, "results/exp/runs/seed=2"))
        got = broken_pointers(d)
        if len(got) != 1 or not got[0].startswith("results/exp/runs/seed=2:"):
            failures.append(f"dangling run link: want one line for results/exp/runs/seed=2, got {got}")
        os.remove(os.path.join(d, "results/exp/runs/seed=2"))
        write("docs/b.md", "ok [a](a.md)\nbroken [b](gone.md#y)\n")
        got = broken_pointers(d)
        if len(got) != 1 or not got[0].startswith("docs/b.md:2:"):
            failures.append(f"broken Markdown link: want one line for docs/b.md:2, got {got}")
    n = 3
    for f in failures:
        print("self-test FAILED:", f, file=sys.stderr)
    print(f"self-test: {n - len(failures)} of {n} cases right")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--self-test", action="store_true", help="run the checker's own tests")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    broken = broken_pointers(ROOT)
    for b in broken:
        print(b)
    print(f"check_links: {len(broken)} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
