#!/usr/bin/python3
"""Renders the project's Markdown pages from their sources, so no number on a page is typed by hand.

A page a reader opens (README.md, results/<study>/README.md, ...) is rendered from a short Jinja2 source
under docs/pages/ (docs/pages/X.md.j2 -> X.md) in which a number is a name, and every name is defined once,
in a facts file, from the report or results file it comes from:

    docs/pages/results/lm_converged/facts.yaml        (any facts.yaml under docs/pages/)
        namespace: lm
        source: results/lm_converged_final/report.json     # the file the expressions read by default
        facts:
          kerple_alibi_1024: "family_t[row={type: kerple}][minus={type: alibi}][metric=test.ppl@1024]"
          runs: "count('results/lm_converged_final/runs/*/results.json')"
          spent_hours: "sumof('results/lm_converged_final/runs/*/results.json', '$train_seconds') / 3600"

    docs/pages/results/lm_converged/README.md.j2
        KERPLE − ALiBi at 1,024 tokens: {{ lm.kerple_alibi_1024.mean | signed(1) }}
        (Holm p {{ lm.kerple_alibi_1024.p_holm | p }}, {{ lm.kerple_alibi_1024 | verdict }}), {{ lm.runs }} runs.
        {{ section("results/lm_converged_final/report.md", "Test") }}

An expression is scripts/check_claims.py's language (docs/claims.md): a path into a JSON, JSON-lines or YAML file
(a config's values: `configs/x.yaml` then `train.lr`), which may select
a number, a string or a whole object (then the page picks its fields: `.mean`, `.p_holm`), or arithmetic and
the functions count / minof / maxof / sumof / meanof / sdof / length over paths and file patterns. A fact may
instead be a mapping {expr: ..., source: ...} to read another file.

Filters (each writes a number the same way on every page): n(d) fixed decimals with thousands separators
(n(0) for counts), signed(d) with a '+' on positive values, pct(d) with '%', p (a p-value: 3 decimals, or
"< 0.001"), verdict (an element of a Holm family: "holds", "not shown", or its own verdict word), day (the
date of an ISO timestamp). A name used
bare must be an integer or a string: a float needs a filter that says its decimals. section(FILE, HEADING)
includes a section of a rendered report (a table as `relpos report` wrote it), section(FILE) the whole file;
finished_runs(DIR), core_hours(DIR) and machines(DIR) read the results.json of DIR/runs/* (a study's cost).
Files under docs/pages/ whose name starts with '_' are partials and macros, not pages.

    scripts/render_pages.py             # render every page (writes the pages that changed, lists them)
    scripts/render_pages.py --check     # the test: exit 1 when a committed page differs from its rendering,
                                        # naming the page, the line and the names on it
    scripts/render_pages.py --names     # every name with its value and source
    scripts/render_pages.py --self-test # the renderer's own tests (a changed number must fail --check)

Exit codes: 0 pages as rendered; 1 a page differs (--check); 2 a source or a fact cannot be read.
"""
import argparse
import difflib
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_claims  # noqa: E402 (the expression language the facts are written in)

try:
    import jinja2
    import yaml
except ImportError as e:  # Debian's python3-jinja2 and python3-yaml (scripts/install-deps.sh)
    sys.exit(f"render_pages: {e.name} is missing: scripts/install-deps.sh installs python3-jinja2 and python3-yaml "
             f"(run with Debian's /usr/bin/python3)")

ROOT = check_claims.ROOT
PAGES = "docs/pages"
MAX_SOURCE_LINE = 200  # a source line longer than this (but a table row) is a page nobody can review
HEADER = "<!-- Rendered from {src} by scripts/render_pages.py: edit that file, not this one. -->\n"

# An annotated span: \x02NAME\x1f TEXT \x03. Rendering writes them so a differing line can be traced to the
# names that wrote it; the page written to disk has them stripped.
OPEN, SEP, CLOSE = "\x02", "\x1f", "\x03"
SPAN_RE = re.compile(OPEN + "[^" + SEP + "]*" + SEP)


class PageError(Exception):
    """A source, a facts file or a name that cannot be read: exit 2."""


def strip_spans(text):
    return SPAN_RE.sub("", text).replace(CLOSE, "")


def span(name, text):
    return f"{OPEN}{name}{SEP}{text}{CLOSE}"


# ----------------------------------------------------------------------------- facts

class Fact:
    """A value read from a source, with the name a page knows it by: fields of an object and elements of a
    list are facts too (lm.x.mean), so a page can only show what a facts file defined."""

    def __init__(self, name, value, origin):
        self.name, self.value, self.origin = name, value, origin

    def _child(self, key, value):
        return Fact(f"{self.name}.{key}" if isinstance(key, str) else f"{self.name}[{key}]", value, self.origin)

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        if isinstance(self.value, dict) and key in self.value:
            return self._child(key, self.value[key])
        raise PageError(f"{self.name} has no field '{key}'"
                        + (f" (fields: {', '.join(self.value)})" if isinstance(self.value, dict) else "")
                        + f"; it is {self.origin}")

    def __getitem__(self, key):
        if isinstance(self.value, dict) and key in self.value:
            return self._child(key, self.value[key])
        if isinstance(self.value, list) and isinstance(key, int) and -len(self.value) <= key < len(self.value):
            return self._child(key, self.value[key])
        raise PageError(f"{self.name}[{key!r}] does not exist; {self.name} is {self.origin}")

    def __iter__(self):
        if isinstance(self.value, list):
            return iter([self._child(i, v) for i, v in enumerate(self.value)])
        if isinstance(self.value, dict):
            return iter(self.value)
        raise PageError(f"{self.name} is not a list")

    def __len__(self):
        return len(self.value)

    def __bool__(self):
        return bool(self.value)

    def _v(self, other):
        return other.value if isinstance(other, Fact) else other

    def __eq__(self, other):
        return self.value == self._v(other)

    def __lt__(self, other):
        return self.value < self._v(other)

    def __le__(self, other):
        return self.value <= self._v(other)

    def __gt__(self, other):
        return self.value > self._v(other)

    def __ge__(self, other):
        return self.value >= self._v(other)

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        v = self.value
        if isinstance(v, bool) or isinstance(v, float) and not v.is_integer():
            raise PageError(f"{self.name} = {v!r} is shown without a filter: say its decimals (| n(1)) or its "
                            f"form (| verdict)")
        if isinstance(v, (int, float)):
            return span(self.name, format_number(v, 0))
        if isinstance(v, str):
            return span(self.name, v)
        raise PageError(f"{self.name} is a {type(v).__name__}: show one of its fields")


def load_source(rel, cache):
    """A facts file's source: JSON, JSON lines (check_claims.load_json) or YAML (a config: its values as written)."""
    if rel.endswith((".yaml", ".yml")) and rel not in cache:
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            raise check_claims.MarkerError(f"source {rel} does not exist")
        with open(path, encoding="utf-8") as f:
            cache[rel] = yaml.safe_load(f)
    return check_claims.load_json(rel, cache)


def evaluate_fact(expr, source, cache):
    """A fact's value: the JSON a plain path selects (any type), or the number arithmetic gives."""
    for other in re.findall(r"([\w./-]+\.ya?ml)::", expr):  # another file's values, read as YAML
        load_source(other, cache)
    doc = load_source(source, cache) if source else {}
    plain = ("$" not in expr and not check_claims.FUNC_RE.search(expr)
             and not re.search(r"\b(tq|sqrt|abs|min|max)\(", expr) and not re.fullmatch(r"[\s\d.+\-*/()]*", expr))
    if plain:
        return check_claims.lookup_any(doc, expr, cache)
    value = check_claims.evaluate(expr, doc, cache)
    return int(value) if float(value).is_integer() and re.match(r"\s*(count|length)\(", expr) else value


def load_facts(pages_dir, cache):
    """{namespace: Fact} from every facts.yaml under the pages directory; a namespace is defined once."""
    spaces, where = {}, {}
    for path in sorted(glob.glob(os.path.join(pages_dir, "**", "facts.yaml"), recursive=True)):
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding="utf-8") as f:
            try:
                doc = yaml.safe_load(f) or {}
            except yaml.YAMLError as e:
                raise PageError(f"{rel}: not YAML ({e})")
        ns = doc.get("namespace")
        if not isinstance(ns, str) or not re.fullmatch(r"[a-z_][a-z0-9_]*", ns):
            raise PageError(f"{rel}: 'namespace' must be a lower-case name (letters, digits, _), got {ns!r}")
        if ns in where:
            raise PageError(f"{rel}: namespace '{ns}' is already defined in {where[ns]}")
        where[ns] = rel
        default_source = doc.get("source", "")
        values = {}
        for name, spec in (doc.get("facts") or {}).items():
            if isinstance(spec, dict):
                expr, source = str(spec.get("expr", "")), spec.get("source", default_source)
            else:
                expr, source = str(spec), default_source
            origin = f"{source or '(no file)'}: {expr} ({rel})"
            try:
                values[name] = Fact(f"{ns}.{name}", evaluate_fact(expr, source, cache), origin)
            except check_claims.MarkerError as e:
                raise PageError(f"{rel}: {ns}.{name}: {e}")
        spaces[ns] = Namespace(ns, values, rel)
    return spaces


class Namespace:
    def __init__(self, name, values, rel):
        self._name, self._values, self._rel = name, values, rel

    def __getattr__(self, key):
        if key.startswith("_"):
            raise AttributeError(key)
        if key not in self._values:
            raise PageError(f"'{self._name}.{key}' is not defined in {self._rel}")
        return self._values[key]

    def __getitem__(self, key):
        return self.__getattr__(key)

    def __iter__(self):
        return iter(self._values.values())


# ----------------------------------------------------------------------------- filters

def format_number(value, decimals, plus=False):
    """A number as every page writes it: check_claims' form (thousands separators, '-' sign, '+' when asked)."""
    return check_claims.format_number(value, decimals, plus)


def _num(x, what):
    v = x.value if isinstance(x, Fact) else x
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise PageError(f"{getattr(x, 'name', repr(x))} is {v!r}, not a number: the '{what}' filter needs a number")
    return v


def _name(x):
    return x.name if isinstance(x, Fact) else "(literal)"


def f_n(x, decimals=0):
    return span(_name(x), format_number(_num(x, "n"), decimals))


def f_signed(x, decimals=1):
    return span(_name(x), format_number(_num(x, "signed"), decimals, plus=True))


def f_pct(x, decimals=0):
    return span(_name(x), format_number(_num(x, "pct"), decimals) + "%")


def f_p(x):
    v = _num(x, "p")
    return span(_name(x), "< 0.001" if v < 0.001 else f"{v:.3f}")


def f_verdict(x):
    v = x.value if isinstance(x, Fact) else x
    if isinstance(v, dict):
        if isinstance(v.get("verdict"), str):
            return span(_name(x), v["verdict"])
        if v.get("no_verdict"):  # descriptive only: validation, fewer than 3 seeds, no spread
            return span(_name(x), f"no verdict: {v['no_verdict']}")
        v = v.get("holds")
    if not isinstance(v, bool):
        raise PageError(f"{_name(x)} has no 'holds' (or 'verdict'): not an element of a Holm family")
    return span(_name(x), "holds" if v else "not shown")


def f_day(x):
    v = x.value if isinstance(x, Fact) else x
    if not isinstance(v, str) or not re.match(r"\d{4}-\d{2}-\d{2}", v):
        raise PageError(f"{_name(x)} is {v!r}, not a date: the 'day' filter needs YYYY-MM-DD...")
    return span(_name(x), v[:10])


FILTERS = {"n": f_n, "signed": f_signed, "pct": f_pct, "p": f_p, "verdict": f_verdict, "day": f_day}


def make_section(cache_text):
    def section(path, heading=None):
        full = os.path.join(ROOT, path)
        if not os.path.isfile(full):
            raise PageError(f"section('{path}'): no such file")
        if path not in cache_text:
            with open(full, encoding="utf-8") as f:
                cache_text[path] = f.read()
        text = cache_text[path]
        if heading is not None:
            try:
                text = check_claims.section(text, heading)
            except check_claims.MarkerError:
                raise PageError(f"section('{path}', '{heading}'): {path} has no heading '{heading}'")
        name = f"section {path}" + (f"#{heading}" if heading else "")
        return "\n".join(span(name, line) if line else "" for line in text.strip("\n").split("\n"))
    return section


# ----------------------------------------------------------------------------- rendering

def sources(pages_dir):
    """[(source path, page path)], both from the repository root: every X.md.j2 that is not a partial."""
    out = []
    for path in sorted(glob.glob(os.path.join(pages_dir, "**", "*.md.j2"), recursive=True)):
        if os.path.basename(path).startswith("_"):
            continue
        rel = os.path.relpath(path, pages_dir)
        out.append((os.path.relpath(path, ROOT), rel[:-len(".j2")]))
    return out


def results_of(directory):
    """The results.json of every finished run under DIRECTORY/runs (a run store, or a study's run links)."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, directory, "runs", "*", "results.json"))):
        with open(path, encoding="utf-8") as f:
            out.append(json.load(f))
    return out


def finished_runs(directory):
    """finished_runs('results/x'): how many runs under results/x/runs have finished (a results.json)."""
    return Fact(f"finished_runs('{directory}')", len(results_of(directory)),
                f"the results.json files under {directory}/runs")


def core_seconds(r):
    """A run's training cost in core-seconds, as the report and `relpos run --list` count it (RunRecord::core_seconds):
    its CPU time where recorded (train_cpu_seconds), else wall time x threads x ranks."""
    cpu = r.get("train_cpu_seconds", -1)
    if cpu is not None and cpu >= 0:
        return cpu
    return r.get("train_seconds", 0) * max(1, r.get("threads", 1) or 1) * max(1, r.get("ranks", 1) or 1)


def core_hours(directory):
    """core_hours('results/x'): the training cost of its finished runs in core-hours (core_seconds)."""
    hours = sum(core_seconds(r) for r in results_of(directory)) / 3600
    return Fact(f"core_hours('{directory}')", hours,
                f"train_cpu_seconds (else train_seconds x threads) of the results.json files under {directory}/runs")


def machine_name(machine):
    """A results.json's machine as a reader names it: its CPU's name without trademarks or a closing "Processor"
    ("Intel(R) Xeon(R) Processor, 2 cores, ..." -> "Intel Xeon")."""
    name = re.sub(r"\((R|TM)\)", "", machine.split(",")[0])
    name = re.sub(r"\s+Processor$", "", re.sub(r"\s+", " ", name).strip())
    return name or "?"


def machines(directory):
    """machines('results/x'): the machines its finished runs trained on, as results.json names them."""
    names = sorted({machine_name(r.get("machine", "?")) for r in results_of(directory)})
    return Fact(f"machines('{directory}')", " / ".join(names) or "none", f"the results.json files under {directory}/runs")


def environment(pages_dir, spaces):
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(pages_dir), undefined=jinja2.StrictUndefined,
                             keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True,
                             autoescape=False)
    env.filters.update(FILTERS)
    env.globals.update(spaces)
    env.globals["section"] = make_section({})
    env.globals.update(finished_runs=finished_runs, core_hours=core_hours, machines=machines)
    return env


def render_all(pages_dir=None):
    """{page: annotated text} for every source."""
    pages_dir = pages_dir or os.path.join(ROOT, PAGES)
    cache = {}
    spaces = load_facts(pages_dir, cache)
    env = environment(pages_dir, spaces)
    out = {}
    for src, page in sources(pages_dir):
        try:
            body = env.get_template(os.path.relpath(os.path.join(ROOT, src), pages_dir)).render()
        except PageError as e:
            raise PageError(f"{src}: {e}")
        except jinja2.TemplateError as e:
            line = getattr(e, "lineno", None)
            raise PageError(f"{src}{':' + str(line) if line else ''}: {e.message if hasattr(e, 'message') else e}")
        out[page] = HEADER.format(src=src) + body
    return out


def names_by_line(annotated):
    """For each line of the stripped text, the names whose spans touch it."""
    lines, open_names, current, i = [set()], [], None, 0
    while i < len(annotated):
        c = annotated[i]
        if c == OPEN:
            j = annotated.index(SEP, i)
            open_names.append(annotated[i + 1:j])
            lines[-1].add(open_names[-1])
            i = j + 1
            continue
        if c == CLOSE:
            open_names.pop()
        elif c == "\n":
            lines.append(set(open_names))
        i += 1
    return lines


def long_source_lines(pages_dir):
    out = []
    for path in sorted(glob.glob(os.path.join(pages_dir, "**", "*.j2"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            fenced = False  # a code block shows its lines as they are (a command, an error message)
            for n, line in enumerate(f, 1):
                if line.lstrip().startswith("```"):
                    fenced = not fenced
                if len(line.rstrip("\n")) > MAX_SOURCE_LINE and not line.lstrip().startswith("|") and not fenced:
                    out.append(f"{os.path.relpath(path, ROOT)}:{n}: a source line of {len(line.rstrip())} characters "
                               f"(at most {MAX_SOURCE_LINE} outside table rows): break it")
    return out


def check(rendered, origins):
    """Messages for every page that differs from its rendering: the page, the line, what it shows, what its
    source renders now, and the names that wrote that line with their sources."""
    problems = []
    for page, annotated in rendered.items():
        new = strip_spans(annotated)
        path = os.path.join(ROOT, page)
        old = open(path, encoding="utf-8").read() if os.path.isfile(path) else None
        if old == new:
            continue
        if old is None:
            problems.append(f"{page}: not rendered yet (scripts/render_pages.py writes it)")
            continue
        names = names_by_line(annotated)
        new_lines, old_lines = new.split("\n"), old.split("\n")
        shown = 0
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
            if tag == "equal":
                continue
            for k in range(max(i2 - i1, j2 - j1)):
                if shown == 5:
                    break
                o = old_lines[i1 + k] if i1 + k < i2 else "(no line)"
                n_ = new_lines[j1 + k] if j1 + k < j2 else "(no line)"
                who = sorted(names[j1 + k]) if j1 + k < j2 else []
                src = "; ".join(f"{w} = {origins.get(w, 'a report section')}" for w in who)
                at = next((i for i, (a, b) in enumerate(zip(o, n_)) if a != b), min(len(o), len(n_)))
                lo = max(0, at - 50)  # the window around the first character that differs
                problems.append(f"{page}:{i1 + k + 1}: the page shows {o[lo:at + 70]!r} where its source now renders "
                                f"{n_[lo:at + 70]!r}" + (f" (names on that line: {src})" if who else ""))
                shown += 1
        problems.append(f"{page}: differs from its source; scripts/render_pages.py renders it again")
    return problems


def origins_of(pages_dir=None):
    pages_dir = pages_dir or os.path.join(ROOT, PAGES)
    out = {}
    for ns in load_facts(pages_dir, {}).values():
        for fact in ns:
            out[fact.name] = fact.origin
    return out


def origin_for(name, origins):
    while name and name not in origins:
        name = re.sub(r"(\.[^.\[]+|\[\d+\])$", "", name) if re.search(r"(\.[^.\[]+|\[\d+\])$", name) else ""
    return origins.get(name)


def main_check(pages_dir=None):
    pages_dir = pages_dir or os.path.join(ROOT, PAGES)
    rendered = render_all(pages_dir)
    base = origins_of(pages_dir)
    names = set()
    for annotated in rendered.values():
        for line in names_by_line(annotated):
            names |= line
    origins = {n: origin_for(n, base) or ("a value computed in the source" if n == "(literal)" else "a report section")
               for n in names}
    problems = check(rendered, origins) + long_source_lines(pages_dir)
    for p in problems:
        print(p)
    print(f"render_pages: {len(rendered)} pages from {PAGES}; {sum(1 for p in problems if p.endswith('renders it again') or 'not rendered yet' in p)} differ from their sources")
    return 1 if problems else 0


def write_all(pages_dir=None):
    rendered = render_all(pages_dir)
    changed = []
    for page, annotated in rendered.items():
        text = strip_spans(annotated)
        path = os.path.join(ROOT, page)
        old = open(path, encoding="utf-8").read() if os.path.isfile(path) else None
        if old != text:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
            changed.append(page)
    for page in changed:
        print(f"render_pages: wrote {page}")
    print(f"render_pages: {len(rendered)} pages, {len(changed)} changed")
    return 0


# ----------------------------------------------------------------------------- self-test

def self_test():
    global ROOT
    old_root, failures, cases = ROOT, [], 0
    with tempfile.TemporaryDirectory() as d:
        ROOT = d
        check_claims.ROOT = d
        pages = os.path.join(d, PAGES)
        os.makedirs(os.path.join(pages, "results", "s"))
        os.makedirs(os.path.join(d, "results", "s", "runs", "a"))
        os.makedirs(os.path.join(d, "results", "s", "runs", "b"))
        report = {"family_t": [{"row": "{type: a}", "minus": "b", "metric": "test.x", "mean": 7.46, "p_holm": 0.0004,
                                "holds": True},
                               {"row": "c", "minus": "b", "metric": "test.x", "mean": -0.04, "p_holm": 0.31,
                                "holds": False}],
                   "cells": [{"row": "b", "metric": "test.x", "mean": 81234.5}]}
        def write(rel, text):
            with open(os.path.join(d, rel), "w", encoding="utf-8") as f:
                f.write(text)
        write("results/s/report.json", json.dumps(report))
        write("results/s/report.md", "# S\n\n## Test\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Other\nx\n")
        write("results/s/runs/a/results.json", json.dumps({"steps": 100}))
        write("results/s/runs/b/results.json", json.dumps({"steps": 250}))
        write(f"{PAGES}/results/s/facts.yaml",
              "namespace: s\nsource: results/s/report.json\nfacts:\n"
              "  a_b: \"family_t[row={type: a}][minus=b][metric=test.x]\"\n"
              "  c_b: \"family_t[row=c][minus=b][metric=test.x]\"\n"
              "  base: \"cells[row=b][metric=test.x].mean\"\n"
              "  runs: \"count('results/s/runs/*/results.json')\"\n"
              "  steps: \"sumof('results/s/runs/*/results.json', '$steps')\"\n")
        write(f"{PAGES}/results/s/README.md.j2",
              "# S\n\na − b: {{ s.a_b.mean | signed(1) }} (Holm p {{ s.a_b.p_holm | p }}, {{ s.a_b | verdict }});\n"
              "c − b: {{ s.c_b.mean | signed(2) }} ({{ s.c_b | verdict }}), base {{ s.base | n(1) }},\n"
              "{{ s.runs }} runs, {{ s.steps | n(0) }} updates.\n\n{{ section('results/s/report.md', 'Test') }}\n")
        want = ("# S\n\na − b: +7.5 (Holm p < 0.001, holds);\nc − b: -0.04 (not shown), base 81,234.5,\n"
                "2 runs, 350 updates.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")

        def expect(what, cond, detail=""):
            nonlocal cases
            cases += 1
            if not cond:
                failures.append(f"{what}{': ' + detail if detail else ''}")

        import io
        import contextlib
        got = strip_spans(render_all(pages)["results/s/README.md"])
        expect("a page renders its names and sections", got.endswith(want), repr(got))
        with contextlib.redirect_stdout(io.StringIO()):
            write_all(pages)
        def run_check():
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                try:
                    rc = main_check(pages)
                except PageError as e:
                    return 2, str(e)
            return rc, buf.getvalue()
        rc, out = run_check()
        expect("a freshly rendered page passes --check", rc == 0, out)
        # a report number changes: --check fails naming the page, the line and the name with its source
        report["family_t"][0]["mean"] = 7.56
        write("results/s/report.json", json.dumps(report))
        rc, out = run_check()
        expect("a changed report number fails --check", rc == 1, out)
        expect("... naming the page and its line", "results/s/README.md:4:" in out, out)
        expect("... and the name and its source", "s.a_b.mean" in out and "results/s/report.json" in out, out)
        report["family_t"][0]["mean"] = 7.46
        write("results/s/report.json", json.dumps(report))
        # a verdict that more seeds overturn fails too
        report["family_t"][0]["holds"] = False
        write("results/s/report.json", json.dumps(report))
        rc, out = run_check()
        expect("an overturned verdict fails --check", rc == 1 and "s.a_b" in out, out)
        report["family_t"][0]["holds"] = True
        write("results/s/report.json", json.dumps(report))
        # a table included from a report follows it
        write("results/s/report.md", "# S\n\n## Test\n\n| a | b |\n|---|---|\n| 1 | 3 |\n\n## Other\nx\n")
        rc, out = run_check()
        expect("a changed report table fails --check", rc == 1 and "section results/s/report.md#Test" in out, out)
        write("results/s/report.md", "# S\n\n## Test\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Other\nx\n")
        # a hand edit of the page fails
        path = os.path.join(d, "results/s/README.md")
        text = open(path).read()
        write("results/s/README.md", text.replace("+7.5", "+7.6"))
        rc, out = run_check()
        expect("a hand-edited page fails --check", rc == 1, out)
        write("results/s/README.md", text)
        expect("and passes again once rendered", run_check()[0] == 0)
        # a new run moves a count
        os.makedirs(os.path.join(d, "results/s/runs/c"))
        write("results/s/runs/c/results.json", json.dumps({"steps": 1}))
        rc, out = run_check()
        expect("a new run moves a count and fails --check", rc == 1 and "s.runs" in out, out)
        # errors that name the fact or the source
        src = f"{PAGES}/results/s/README.md.j2"
        good = open(os.path.join(d, src)).read()
        for body, needle in [("{{ s.nope }}", "'s.nope' is not defined"),
                             ("{{ s.base }}", "without a filter"),
                             ("{{ s.a_b.nope | n(1) }}", "has no field 'nope'"),
                             ("{{ s.a_b | n(1) }}", "not a number"),
                             ("{{ section('results/s/report.md', 'Nope') }}", "has no heading 'Nope'"),
                             ("{{ zz.x }}", "'zz' is undefined")]:
            write(src, body + "\n")
            rc, out = run_check()
            expect(f"{body} is refused", rc == 2 and needle in out, out)
        write(src, good)
        write(f"{PAGES}/results/s/facts.yaml", "namespace: s\nsource: results/s/report.json\nfacts:\n  x: \"cells[row=z].mean\"\n")
        rc, out = run_check()
        expect("a fact that selects nothing is refused naming it", rc == 2 and "s.x" in out, out)
        # long source lines are refused outside table rows
        write(src, "x" * 250 + "\n| " + "y" * 250 + " |\n")
        write(f"{PAGES}/results/s/facts.yaml", "namespace: s\nfacts: {}\n")
        with contextlib.redirect_stdout(io.StringIO()):
            write_all(pages)
        rc, out = run_check()
        expect("a source line over 200 characters fails", rc == 1 and "README.md.j2:1:" in out and ":2:" not in out, out)
        # filters
        expect("n(0) has thousands separators", strip_spans(f_n(40000, 0)) == "40,000")
        expect("signed(1) of a small negative reads 0.0, no sign", strip_spans(f_signed(-0.01, 1)) == "0.0")
        expect("p of 0.0123 is 0.012", strip_spans(f_p(0.0123)) == "0.012")
        write("results/s/runs/a/results.json", json.dumps({"train_seconds": 3600, "threads": 2, "machine": "X, 2 cores"}))
        expect("finished_runs counts results.json", finished_runs("results/s").value == 3)
        expect("core_hours sums seconds x threads", abs(core_hours("results/s").value - 2.0) < 1e-9)
        ROOT = old_root
        check_claims.ROOT = old_root
    for f in failures:
        print("self-test FAILED:", f, file=sys.stderr)
    print(f"render_pages self-test: {cases - len(failures)} of {cases} cases right")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed page differs from its rendering")
    ap.add_argument("--names", action="store_true", help="print every name, its value and its source")
    ap.add_argument("--self-test", action="store_true", help="the renderer's own tests")
    a = ap.parse_args()
    try:
        if a.self_test:
            return self_test()
        if a.check:
            return main_check()
        if a.names:
            for ns in load_facts(os.path.join(ROOT, PAGES), {}).values():
                for fact in ns:
                    print(f"{fact.name} = {json.dumps(fact.value)[:100]}  <- {fact.origin}")
            return 0
        return write_all()
    except PageError as e:
        print(f"render_pages: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
