#!/usr/bin/env python3
"""Checks that the numbers the READMEs show are the numbers their sources hold (make test runs it).

A number in prose is a claim; this script makes it a checked one. Two markers, both HTML comments (GitHub
does not render them, so the page reads as before):

1. A number checked against a field of a JSON file (a report.json, a results.json):

       Shaw k = 16 reaches **40.89 ± 0.24**<!-- check results/converged_table1/report.json
           cells[row={type: shaw, k: 16}][metric=test2016.bleu_tok].mean ;
           cells[row={type: shaw, k: 16}][metric=test2016.bleu_tok].std -->

   The comment names a JSON file (a path from the repository root) and then one expression per number,
   separated by ';'. They are matched, in order, to the numbers written just before the comment on its
   line (after the previous check comment of that line, if any): here 40.89 and 0.24. A number is right
   when the source value rounds to it at the decimals shown (40.89 accepts 40.885 to 40.895); a sign
   written as '-', '−' or '+' is part of the number, thousands separators (8,300) are allowed.

   An expression is a path into the JSON document, or arithmetic over several paths:
       cells[row={type: none}][metric=test2016.bleu_tok].mean     list element whose fields match, then a key
       metrics["test2016.bleu_tok"]                               a key with dots in it
       per_seed[3].value                                          a list index
       100 * ($cells[row=A][metric=m].mean / $cells[row=B][metric=m].mean - 1)   '$' marks each path;
                                                                  + - * / ( ) numbers abs() min() max() sqrt()
       ($results/a/results.json::metrics["val.accuracy"] + $results/b/results.json::metrics["val.accuracy"]) / 2
                                                                  FILE::PATH reads another file than the comment's
       count('results/x/runs/*/results.json', '$metrics["val.accuracy"] >= 99')   files matching a pattern
                                                                  (and a condition on each: < <= == != >= >
                                                                  and or not; '$best_step == $steps')
       count('@family_t', '$p_holm < 0.05')                       elements of a list in the comment's file
       length('cases')                                            the size of a list or object
       matches('scripts/x.py', '^ +[(]"')                         how often a regular expression occurs in files
       tq(1 - 0.025 / 120, 4)                                     Student's t quantile (P, degrees of freedom):
                                                                  a Holm bar, an interval's half-width factor

2. A block copied from a rendered report, kept identical to it:

       <!-- include results/converged_table1/report.md -->
       ...the table, pasted...
       <!-- end include -->

   `include FILE#Heading` takes only the section under that heading (up to the next heading of the same
   or a higher level), without the heading line itself. Leading and trailing blank lines are ignored, and
   so is a code fence around the copy (a source file shown whole: ```cpp ... ```).

    scripts/check_claims.py                  # README.md, results/**/README.md, docs/*.md; exit 1 on a mismatch
    scripts/check_claims.py FILE.md ...      # just these
    scripts/check_claims.py --coverage       # also: how many numbers each file shows and how many are checked
    scripts/check_claims.py --unchecked FILE.md ...
                                             # list the numbers with decimals and the percentages that no marker checks (line and
                                             # context): the measured figures a page still shows by hand. Config
                                             # values (lr 0.5) and published figures without a source file are
                                             # among them; the list is for the author to read
    scripts/check_claims.py --unchecked-baseline docs/unchecked-numbers.txt
                                             # the ratchet (a test): every number with decimals or % the default
                                             # pages show without a marker must be listed in that file, so a
                                             # new figure written by hand fails the suite until it gets a marker
                                             # (or, a config value or a version, is listed on purpose)
    scripts/check_claims.py --write-unchecked-baseline docs/unchecked-numbers.txt
                                             # rewrite that list from the pages as they are now
    scripts/check_claims.py --self-test      # the checker's own tests (a wrong number must fail)
    scripts/check_claims.py --list-pages     # the pages checked by default (scripts/campaign.sh updates their counts)
    scripts/check_claims.py --update-counts FILE.md ...
                                             # rewrite the number right before each count(...) marker to what
                                             # it counts now (a campaign's status line, "9 of 24 runs finished",
                                             # kept current by the loop that commits its finished runs)
    scripts/check_claims.py --fill FILE.md ...
                                             # write the numbers of new markers: each placeholder ?? (an
                                             # integer), ??.? (one decimal), ??.?? (two), +??.? (a sign on
                                             # positive values too) before a check marker becomes its value,
                                             # so a page is written marker first and never copied by hand
    scripts/check_claims.py --refresh FILE.md ...
                                             # --fill, and every checked number that no longer matches its
                                             # source rewritten to the source's value at the decimals it shows,
                                             # each change listed (old -> new): a page brought up to new runs;
                                             # read the prose around each change (verdicts are checked, words
                                             # such as "falls" are not)

3. A verdict checked against a comparison of a report's Holm family:

       Shaw k = 16 against sinusoidal at 1,024 tokens: holds<!-- verdict results/x/report.json
           family_t[row={type: shaw, k: 16}][minus={type: sinusoidal}][metric=test.ppl@1024] -->

   The path selects an element with a boolean "holds" (or a boolean itself); the last verdict word before
   the comment on its line (after the previous marker) must say the same: "holds" when it is true, "not
   shown" or "not visible" when it is false. So a verdict written in prose cannot outlive the runs that
   gave it: when more seeds move a comparison across the bar, the page fails until its words are changed.

Exit codes: 0 all checked numbers match; 1 a number or an included block differs from its source;
2 a marker cannot be read (bad syntax, a missing file, a path that selects nothing).
"""
import argparse
import collections
import glob
import json
import math
import os
import re
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

CHECK_RE = re.compile(r"<!--\s*check\s+(.*?)-->", re.S)
VERDICT_RE = re.compile(r"<!--\s*verdict\s+(.*?)-->", re.S)
VERDICT_WORDS_RE = re.compile(r"\b(holds|not shown|not visible)\b")
INCLUDE_RE = re.compile(r"<!--\s*include\s+(\S[^\n]*?)\s*-->(.*?)<!--\s*end include\s*-->", re.S)
# A number as prose writes it: optional sign (ASCII or Unicode minus), digits with optional thousands
# separators, optional decimals. Not part of a word (k0, x16, 2k+1 are not numbers here).
NUMBER_RE = re.compile(r"(?<![\w.])([+\-−]?)(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\w])")


class MarkerError(Exception):
    """A marker that cannot be read: exit 2."""


# ----------------------------------------------------------------------------- paths into JSON

def split_path(path):
    """'cells[row={type: a}][metric=m].mean' -> [('key', 'cells'), ('filter', [('row', '{type: a}'), ('metric',
    'm')]), ('key', 'mean')]: consecutive filters are conditions on the same list."""
    parts, i, n = [], 0, len(path)
    while i < n:
        c = path[i]
        if c == ".":
            i += 1
        elif c == "[":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"[": 1, "]": -1}.get(path[j], 0)
                j += 1
            if depth:
                raise MarkerError(f"unclosed '[' in path '{path}'")
            inner = path[i + 1:j - 1].strip()
            if inner.startswith('"') and inner.endswith('"') and len(inner) >= 2:
                parts.append(("key", inner[1:-1]))
            elif re.fullmatch(r"-?\d+", inner):
                parts.append(("index", int(inner)))
            elif re.fullmatch(r"-?\d*:-?\d*", inner):  # [27:], [:5], [2:4]: a slice of a list (a '@' source)
                a, b = inner.split(":")
                parts.append(("slice", int(a) if a else None, int(b) if b else None))
            elif "=" in inner:
                k, v = inner.split("=", 1)
                if parts and parts[-1][0] == "filter":  # [a=1][b=2]: both conditions on one list
                    parts[-1][1].append((k.strip(), v.strip()))
                else:
                    parts.append(("filter", [(k.strip(), v.strip())]))
            else:
                raise MarkerError(f"'[{inner}]' in path '{path}' is neither an index, a slice, a \"key\" nor a field=value filter")
            i = j
        else:
            j = i
            while j < n and path[j] not in ".[":
                j += 1
            parts.append(("key", path[i:j].strip()))
            i = j
    return parts


def meets(element, conds):
    """Whether a list element passes a path's [field=value] filters ([field=*]: it has the field)."""
    return isinstance(element, dict) and all((k in element) if v == "*" else str(element.get(k)) == v for k, v in conds)


def lookup(doc, path, cache=None):
    node = lookup_any(doc, path, cache)
    if isinstance(node, bool):  # a condition on a flag: '$holds', '$competence.reached'
        return float(node)
    if not isinstance(node, (int, float)):
        raise MarkerError(f"path '{path}' selects {json.dumps(node)[:60]}, not a number")
    return float(node)


def lookup_any(doc, path, cache=None):
    if "::" in path:  # another file's value: FILE::PATH
        file, path = path.split("::", 1)
        doc = load_json(file.strip(), cache if cache is not None else {})
    node = doc
    for part in split_path(path):
        if part[0] == "key":
            if not isinstance(node, dict) or part[1] not in node:
                raise MarkerError(f"path '{path}': no key '{part[1]}'"
                                  + (f" (keys: {', '.join(list(node)[:12])})" if isinstance(node, dict) else ""))
            node = node[part[1]]
        elif part[0] == "index":
            if not isinstance(node, list) or not -len(node) <= part[1] < len(node):
                raise MarkerError(f"path '{path}': no element [{part[1]}]")
            node = node[part[1]]
        elif part[0] == "slice":
            if not isinstance(node, list) or not node[part[1]:part[2]]:
                raise MarkerError(f"path '{path}': the slice selects no element")
            node = node[part[1]:part[2]]
        else:
            conds = part[1]
            what = "".join(f"[{k}={v}]" for k, v in conds)
            if not isinstance(node, list):
                raise MarkerError(f"path '{path}': {what} filters a list, not a {type(node).__name__}")
            hits = [e for e in node if meets(e, conds)]
            if len(hits) != 1:
                raise MarkerError(f"path '{path}': {what} selects {len(hits)} elements, not one")
            node = hits[0]
    return node


# count('GLOB') / count('GLOB', 'CONDITION') / length('PATH'): functions with single-quoted arguments,
# computed before the arithmetic. GLOB is a file pattern from the repository root (JSON files); CONDITION
# an expression over each file's values ($path ... >= 99, ==, and, or); length the size of a list or object.
# minof('SOURCE', 'EXPR'[, 'CONDITION']) / maxof(...) / sumof(...) / meanof(...) / sdof(...): the lowest /
# highest value / the sum / the mean / the sample standard deviation of EXPR over the files of a GLOB or the elements of '@PATH' (those that meet CONDITION, e.g. '$step >= 13750').
# With '@', a PATH ending in a filter keeps every element it matches ('@[valid_loss=*]': a JSON-lines file's
# validation lines; '@' alone: the whole list; '@cells[5:]': a slice). In EXPR and CONDITION, {field} is each
# element's value of that field, so one element can be paired with its partner in another file:
# '$other.jsonl::[epoch={epoch}][valid_loss=*].valid_loss - $valid_loss'.


def select_all(doc, path, cache):
    """The elements of the list at PATH (from an '@PATH' source): a trailing filter keeps every element it
    matches, where a path elsewhere must select exactly one."""
    parts = split_path(path) if path.strip() else []
    conds = parts[-1][1] if parts and parts[-1][0] == "filter" else None
    if conds is not None:
        cut = path.rstrip()
        for _ in conds:  # drop the trailing [k=v] groups
            cut = cut[:cut.rindex("[")].rstrip()
        path = cut
    node = lookup_any(doc, path, cache) if path.strip() else doc
    if not isinstance(node, list):
        raise MarkerError(f"'@{path}': not a list")
    if conds is None:
        return node
    return [e for e in node if meets(e, conds)]


def bind_fields(expr, element):
    """EXPR with each {field} replaced by the element's value of that field."""
    def value(m):
        if not isinstance(element, dict) or m.group(1) not in element:
            raise MarkerError(f"'{{{m.group(1)}}}' in '{expr}': an element has no field '{m.group(1)}'")
        return str(element[m.group(1)])
    return re.sub(r"\{(\w+)\}", value, expr)


def source_elements(name, a, doc, cache):
    """The elements a function reads: '@PATH' the list PATH of the comment's file, else one JSON document per
    file matching the pattern A (a count may find none where the folder the pattern searches exists)."""
    if a.startswith("@"):  # count('@family_t', '$p_holm < 0.05')
        return select_all(doc, a[1:], cache)
    files = sorted(glob.glob(os.path.join(ROOT, a)))
    # A count of files may be 0 (a campaign's "0 of 6 finished") where the folder the pattern searches exists:
    # its part before the first wildcard; a pattern that can match nothing is a typo.
    fixed = os.path.dirname(re.split(r"[*?\[]", a, maxsplit=1)[0])
    if not files and not (name == "count" and fixed and os.path.isdir(os.path.join(ROOT, fixed))):
        raise MarkerError(f"{name}('{a}'): no file matches")
    return [load_json(os.path.relpath(f, ROOT), cache) for f in files]


def holds(cond, element, cache):
    return bool(evaluate(bind_fields(cond, element), element, cache))


def fn_matches(name, doc, cache, glob_, regex, _cond):
    """matches('GLOB', 'REGEX'): how many times REGEX (multi-line) occurs in the files."""
    files = sorted(glob.glob(os.path.join(ROOT, glob_)))
    if not files or regex is None:
        raise MarkerError(f"matches('{glob_}', ...): " + ("no file matches" if not files else "needs a REGEX"))
    try:
        rx = re.compile(regex, re.M)
    except re.error as e:
        raise MarkerError(f"matches('{glob_}', '{regex}'): not a regular expression ({e})")
    n = 0
    for f in files:
        with open(f, encoding="utf-8") as fh:
            n += len(rx.findall(fh.read()))
    return n


def fn_length(name, doc, cache, path, _b, _cond):
    """length('PATH'): the size of a list or object."""
    node = lookup_any(doc, path, cache)
    if not isinstance(node, (list, dict)):
        raise MarkerError(f"length('{path}'): not a list or object")
    return len(node)


def fn_count(name, doc, cache, source, cond, _c):
    """count('SOURCE'[, 'CONDITION']): how many files or elements (meeting the condition)."""
    return sum(1 for e in source_elements(name, source, doc, cache) if not cond or holds(cond, e, cache))


def sample_sd(values):
    """The sample standard deviation (n - 1 in the denominator, as the reports' ± sd)."""
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


AGGREGATES = {"minof": min, "maxof": max, "sumof": sum, "meanof": lambda v: sum(v) / len(v), "sdof": sample_sd}


def fn_aggregate(name, doc, cache, source, expr, cond):
    """minof / maxof / sumof / meanof / sdof('SOURCE', 'EXPR'[, 'CONDITION']): EXPR over the elements (meeting
    CONDITION); sdof is the sample standard deviation and needs two elements."""
    if not expr:
        raise MarkerError(f"{name}('{source}'): needs an EXPR, e.g. {name}('{source}', '$steps')")
    elements = [e for e in source_elements(name, source, doc, cache) if not cond or holds(cond, e, cache)]
    if not elements:
        raise MarkerError(f"{name}('{source}', ...): selects no element")
    if name == "sdof" and len(elements) < 2:
        raise MarkerError(f"sdof('{source}', ...): selects one element; a standard deviation needs two")
    values = [evaluate(bind_fields(expr, e), e, cache) for e in elements]
    return AGGREGATES[name](values)


# name -> (handler, whether it takes a third argument, a condition)
FUNCTIONS = {"matches": (fn_matches, False), "length": (fn_length, False), "count": (fn_count, False),
             **{name: (fn_aggregate, True) for name in AGGREGATES}}
FUNC_RE = re.compile(r"\b(" + "|".join(FUNCTIONS) + r")\(\s*'([^']*)'\s*(?:,\s*'([^']*)'\s*)?(?:,\s*'([^']*)'\s*)?\)")


def apply_functions(expr, doc, cache):
    """EXPR with each function call replaced by its value (digits the arithmetic reads, never 1e-05)."""
    def call(m):
        name, a, b, cond = m.groups()
        handler, takes_condition = FUNCTIONS[name]
        if cond is not None and not takes_condition:
            raise MarkerError(f"{name}(...): takes at most two arguments (a third, a condition, is minof's, "
                              f"maxof's, sumof's, meanof's and sdof's)")
        value = handler(name, doc, cache, a, b, cond)
        return str(value) if isinstance(value, int) else f"({value:.17f})"
    return FUNC_RE.sub(call, expr)


def incomplete_beta(x, a, b):
    """The regularized incomplete beta function I_x(a, b) (Lentz's continued fraction, Numerical Recipes 6.4)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    if x > (a + 1.0) / (a + b + 2.0):  # the fraction converges fast below the mean; use the symmetry above it
        return 1.0 - incomplete_beta(1.0 - x, b, a)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)) / a
    tiny, f, c, d = 1e-300, 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 + num * d
        d = tiny if abs(d) < tiny else d
        d = 1.0 / d
        c = 1.0 + num / c
        c = tiny if abs(c) < tiny else c
        f *= c * d
        if abs(1.0 - c * d) < 1e-15:
            break
    return front * (f - 1.0)


def t_quantile(p, df):
    """tq(P, DF): the P quantile of Student's t with DF degrees of freedom (0 < P < 1), by bisection on its
    distribution function, 1 - I_{df/(df+t^2)}(df/2, 1/2) / 2 for t > 0: the bar a paired test must clear."""
    if not 0.0 < p < 1.0 or df <= 0:
        raise MarkerError(f"tq({p}, {df}): needs 0 < P < 1 and DF > 0")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    tail = 2.0 * (1.0 - p)  # two-sided tail mass beyond t
    lo, hi = 0.0, 1.0
    while incomplete_beta(df / (df + hi * hi), df / 2.0, 0.5) > tail:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if incomplete_beta(df / (df + mid * mid), df / 2.0, 0.5) > tail:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


NUMERIC = {"abs": abs, "min": min, "max": max, "sqrt": math.sqrt, "tq": t_quantile}


def evaluate(expr, doc, cache=None):
    expr = apply_functions(expr.strip(), doc, cache)
    if "$" not in expr and not re.fullmatch(r"[\s\d.+\-*/(),]*", re.sub(r"\b(" + "|".join(NUMERIC) + r")\b", "", expr)):
        return lookup(doc, expr, cache)
    values = []
    # a path after '$' runs to the next operator, comma or space outside brackets
    code, i = "", 0
    while i < len(expr):
        if expr[i] == "$":
            j, depth = i + 1, 0
            f = re.match(r"[^\s$:()]+::", expr[j:])  # a FILE:: prefix may hold '/', '-', '=', ','
            if f:
                j += f.end()
            while j < len(expr) and (depth or expr[j] not in " +-*/(),<>=!"):
                depth += {"[": 1, "]": -1}.get(expr[j], 0)
                j += 1
            values.append(lookup(doc, expr[i + 1:j], cache))
            code += f"_v[{len(values) - 1}]"
            i = j
        else:
            code += expr[i]
            i += 1
    if not re.fullmatch(r"[\s\d.+\-*/(),\[\]<>=!]*", re.sub(r"\b(" + "|".join(NUMERIC) + r"|_v|and|or|not)\b", "", code)):
        raise MarkerError(f"expression '{expr}': only paths after '$', numbers, + - * / ( ) < <= == != >= > and or "
                          f"not, abs min max sqrt tq(P, DF), count('GLOB'[, 'CONDITION']), minof / maxof / sumof / meanof / sdof('SOURCE', 'EXPR'[, 'CONDITION']) and length('PATH')")
    try:
        return float(eval(code, {"__builtins__": {}}, {"_v": values, **NUMERIC}))
    except Exception as e:  # noqa: BLE001 (a marker's arithmetic, reported as one sentence)
        raise MarkerError(f"expression '{expr}' cannot be computed: {e}")


# ----------------------------------------------------------------------------- one markdown file

def shown_numbers(text):
    """The numbers of a piece of prose: (value, decimals, text) in order."""
    out = []
    for m in NUMBER_RE.finditer(text):
        sign, whole, frac = m.group(1), m.group(2), m.group(3) or ""
        v = float(whole.replace(",", "") + frac)
        if sign in ("-", "−"):
            v = -v
        out.append((v, len(frac) - 1 if frac else 0, m.group(0)))
    return out


def marker_segment_start(text, pos):
    """Where the prose a marker at POS checks begins: after the previous marker on its line, or the line's start."""
    line_start = text.rfind("\n", 0, pos) + 1
    prev = text.rfind("-->", line_start, pos)
    return prev + 3 if prev >= 0 else line_start


def rounds_to(value, shown, decimals):
    """Whether a source value rounds to the number shown at its decimals (40.885 to 40.895 for 40.89)."""
    return abs(value - shown) <= 0.5 * 10 ** -decimals + 1e-9


def load_json(rel, cache):
    if rel not in cache:
        path = os.path.join(ROOT, rel)
        if not os.path.isfile(path):
            raise MarkerError(f"source {rel} does not exist")
        with open(path, encoding="utf-8") as f:
            if rel.endswith(".jsonl"):  # JSON lines (a run's metrics.jsonl): a list, one element per line
                cache[rel] = [json.loads(line) for line in f if line.strip()]
            else:
                cache[rel] = json.load(f)
    return cache[rel]


def section(text, heading):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = re.match(r"(#+)\s+(.*?)\s*$", line)
        if m and m.group(2) == heading:
            level, out = len(m.group(1)), []
            for nxt in lines[i + 1:]:
                m2 = re.match(r"(#+)\s", nxt)
                if m2 and len(m2.group(1)) <= level:
                    break
                out.append(nxt)
            return "\n".join(out)
    raise MarkerError(f"no heading '{heading}'")


def blank_code_blocks(text):
    """The text with every fenced code block's characters blanked, newlines kept (positions and line numbers
    stay): markers in code blocks are examples, not claims."""
    return re.sub(r"^```.*?^```", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S | re.M)


def check_file(md_path, cache, coverage=None):
    """Returns (mismatches, checked count); raises MarkerError for an unreadable marker."""
    with open(md_path, encoding="utf-8") as f:
        text = f.read()
    raw = text
    # Markers inside fenced code blocks are examples, not claims: blanked out (line numbers kept). An
    # include block may itself be a code block (a source file shown whole): includes read the raw text.
    text = blank_code_blocks(text)
    rel = os.path.relpath(md_path, ROOT)
    bad, checked = [], 0

    def line_of(pos):
        return text.count("\n", 0, pos) + 1

    # A marker the patterns do not take (an include without its end, a check without a closing -->) would
    # be skipped without a word: refused instead.
    opened = len(re.findall(r"<!--\s*include\b", text))
    if opened != len(INCLUDE_RE.findall(text)) or opened != len(re.findall(r"<!--\s*end include\s*-->", text)):
        raise MarkerError(f"{rel}: {opened} include markers but {len(INCLUDE_RE.findall(text))} complete "
                          f"include ... end include blocks")
    if len(re.findall(r"<!--\s*check\b", text)) != len(CHECK_RE.findall(text)):
        raise MarkerError(f"{rel}: a check marker without its closing -->")
    for m in INCLUDE_RE.finditer(text):  # markers outside code blocks; the copy itself read from the raw text
        target = m.group(1)
        file, _, heading = target.partition("#")
        src = os.path.join(ROOT, file)
        if not os.path.isfile(src):
            raise MarkerError(f"{rel}:{line_of(m.start())}: include: {file} does not exist")
        with open(src, encoding="utf-8") as f:
            want = f.read()
        try:
            if heading:
                want = section(want, heading)
        except MarkerError as e:
            raise MarkerError(f"{rel}:{line_of(m.start())}: include {target}: {e}")
        checked += 1
        shown = raw[m.start(2):m.end(2)].strip("\n")
        fence = re.fullmatch(r"```[\w+-]*\n(.*)\n```", shown, flags=re.S)  # a code block around the copy
        if fence:
            shown = fence.group(1)
        if want.strip("\n") != shown.strip("\n"):
            bad.append(f"{rel}:{line_of(m.start())}: the block included from {target} differs from it "
                       f"(copy it again from the source)")

    for m in CHECK_RE.finditer(text):
        body = " ".join(m.group(1).split())
        where = f"{rel}:{line_of(m.start())}"
        src, _, exprs = body.partition(" ")
        if not exprs.strip():
            raise MarkerError(f"{where}: check needs a source file and at least one expression")
        exprs = [e for e in (x.strip() for x in exprs.split(";")) if e]
        before = re.sub(r"<!--.*?-->", "", text[marker_segment_start(text, m.start()):m.start()])
        nums = shown_numbers(before)
        if len(nums) < len(exprs):
            raise MarkerError(f"{where}: {len(exprs)} expressions but only {len(nums)} numbers before the comment "
                              f"on its line ({before.strip()[-60:]!r})")
        try:
            # a source that is not JSON (a script, a source file) serves the functions only: matches(...)
            if src.endswith((".json", ".jsonl")):
                doc = load_json(src, cache)
            elif os.path.isfile(os.path.join(ROOT, src)):
                doc = {}
            else:
                raise MarkerError(f"{src} does not exist")
        except MarkerError as e:
            raise MarkerError(f"{where}: {e}")
        except json.JSONDecodeError as e:
            raise MarkerError(f"{where}: {src} is not valid JSON ({e})")
        for (shown, decimals, as_text), expr in zip(nums[-len(exprs):], exprs):
            try:
                value = evaluate(expr, doc, cache)
            except MarkerError as e:
                raise MarkerError(f"{where}: {src}: {e}")
            checked += 1
            if not rounds_to(value, shown, decimals):
                bad.append(f"{where}: shows {as_text} but {src} {expr} is {value:.{decimals + 2}f} "
                           f"(rounds to {value:.{decimals}f})")
    if len(re.findall(r"<!--\s*verdict\b", text)) != len(VERDICT_RE.findall(text)):
        raise MarkerError(f"{rel}: a verdict marker without its closing -->")
    for m in VERDICT_RE.finditer(text):
        where = f"{rel}:{line_of(m.start())}"
        src, _, path = " ".join(m.group(1).split()).partition(" ")
        if not path.strip() or not src.endswith(".json"):
            raise MarkerError(f"{where}: verdict needs a report.json and a path to one comparison")
        before = re.sub(r"<!--.*?-->", "", text[marker_segment_start(text, m.start()):m.start()])
        words = VERDICT_WORDS_RE.findall(before)
        if not words:
            raise MarkerError(f"{where}: no verdict ('holds', 'not shown' or 'not visible') before the comment "
                              f"on its line ({before.strip()[-60:]!r})")
        try:
            node = lookup_any(load_json(src, cache), path.strip(), cache)
        except MarkerError as e:
            raise MarkerError(f"{where}: {src}: {e}")
        if isinstance(node, dict):
            node = node.get("holds")
        if not isinstance(node, bool):
            raise MarkerError(f"{where}: {src} {path.strip()} has no boolean 'holds'")
        checked += 1
        if (words[-1] == "holds") != node:
            bad.append(f"{where}: says '{words[-1]}' but {src} {path.strip()} "
                       f"{'holds' if node else 'does not hold'} after Holm")
    if coverage is not None:
        prose = re.sub(r"<!--.*?-->", "", INCLUDE_RE.sub("", text), flags=re.S)
        prose = re.sub(r"```.*?```", "", prose, flags=re.S)
        coverage[rel] = (checked, len(shown_numbers(prose)))
    return bad, checked


# What the ratchet counts as a figure: a number with decimals, or a whole number followed by % (a percentage is
# how a result is most often written by hand: "+15%"). Other whole numbers (counts, lengths, seeds, config
# values) are too often not results to be listed one by one.
DECIMAL_RE = re.compile(r"(?<![\w.])[+\-−]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)\.\d+(?![\w])|(?:\d{1,3}(?:,\d{3})+|\d+)(?=\s?%))")


def unchecked_numbers(md_path):
    """The numbers with decimals and the percentages a page shows that no check marker covers: [(line, number, context, before)],
    before: the prose right before the number (UNCHECKED_BEFORE characters, whitespace collapsed, each number
    as '#'), what the ratchet keys it by. A marker with k expressions covers the k numbers before it on its line (after the
    previous marker), as check_file matches them; code blocks, includes, link targets and `code` spans are
    left out."""
    with open(md_path, encoding="utf-8") as f:
        text = f.read()
    if md_path.endswith(".j2"):  # a page's source: what Jinja2 writes is names and sections, not typed numbers
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = blank_code_blocks(text)
    text = INCLUDE_RE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    out = []
    for i, line in enumerate(text.split("\n"), 1):
        kept, pos = [], 0
        for m in CHECK_RE.finditer(line):
            seg = line[pos:m.start()]
            _, _, exprs = " ".join(m.group(1).split()).partition(" ")
            k = len([e for e in exprs.split(";") if e.strip()])
            nums = list(NUMBER_RE.finditer(re.sub(r"<!--.*?-->", lambda c: " " * len(c.group(0)), seg)))
            kept.append(seg[:nums[-k].start()] if k and len(nums) >= k else seg)
            pos = m.end()
        kept.append(line[pos:])
        prose = re.sub(r"<!--.*?-->", "", " ".join(kept))
        prose = re.sub(r"`[^`]*`", "", re.sub(r"\]\([^)]*\)", "]", prose))
        for m in DECIMAL_RE.finditer(prose):
            # every number as one '#': a count the campaign loop rewrites (9 -> 10), or a checked figure whose
            # data moved, near the number must not change its key
            before = re.sub(r"\d+(?:[.,]\d+)*", "#", " ".join(prose[:m.start()].split()))[-UNCHECKED_BEFORE:]
            out.append((i, m.group(0), prose[max(0, m.start() - 60):m.end() + 30].strip(), before))
    return out


UNCHECKED_BEFORE = 40


def unchecked_keys(files):
    """The ratchet's multiset: Counter of (page, number, prose before it) over the pages' unchecked numbers,
    with the first line each key is on (for messages)."""
    keys, where = collections.Counter(), {}
    for f in files:
        rel = os.path.relpath(f, ROOT)
        for ln, num, _, before in unchecked_numbers(f):
            keys[(rel, num, before)] += 1
            where.setdefault((rel, num, before), ln)
    return keys, where


def read_unchecked_baseline(path):
    """The listed keys: lines 'page<TAB>number<TAB>before' ('#' lines are comments)."""
    keys = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                raise MarkerError(f"{path}:{n}: expected 'page<TAB>number<TAB>text before it', got {line!r}")
            keys[tuple(parts)] += 1
    return keys


def write_unchecked_baseline(path, keys):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write("# Numbers with decimals and percentages that the default pages show without a check marker, listed on purpose:\n"
                "# config values (lr 0.5), versions, thresholds, and the dated logs whose measurements were not kept.\n"
                "# Each line: page, number, the 40 characters of prose before it, each number as # (tab-separated). The suite\n"
                "# (claims/no_new_unchecked_numbers) fails on a number not listed here: give a new figure a check\n"
                "# marker (docs/claims.md), or, when it is not a result, rewrite this file with\n"
                "#   scripts/check_claims.py --write-unchecked-baseline docs/unchecked-numbers.txt\n"
                "# and let the diff show what was added.\n")
        for (page, num, before), n in sorted(keys.items()):
            for _ in range(n):
                f.write(f"{page}\t{num}\t{before}\n")
    os.replace(path + ".tmp", path)


def ratchet(current, baseline):
    """(new, stale): the keys the pages show more often than the baseline lists them, and the reverse."""
    return current - baseline, baseline - current


# A count(...) marker right after the number it checks: the one kind of number --update-counts rewrites.
COUNT_MARKER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(<!--\s*check\s+(\S+)\s+(count\((?:(?!-->).)*?\))\s*-->)",
                             re.S)


def update_counts(md_path, cache):
    """Rewrites, in place, the number written right before each marker whose one expression is a count(...)
    to the count its sources give now (markers in code blocks are examples and stay). Returns one line per
    number changed. Every other number stays a claim to check, never rewritten."""
    with open(md_path, encoding="utf-8") as f:
        raw = f.read()
    text = blank_code_blocks(raw)
    rel, changes, out, last = os.path.relpath(md_path, ROOT), [], [], 0
    for m in COUNT_MARKER_RE.finditer(text):
        src, expr = m.group(3), " ".join(m.group(4).split())
        doc = load_json(src, cache) if src.endswith((".json", ".jsonl")) else {}
        value = int(round(evaluate(expr, doc, cache)))
        new = f"{value:,}" if value >= 1000 else str(value)
        if new != m.group(1):
            changes.append(f"{rel}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(1)} -> {new}")
        out += [raw[last:m.start(1)], new]
        last = m.end(1)
    if changes:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write("".join(out) + raw[last:])
    return changes


# A placeholder for a number --fill writes: ??, ??.?, ??.??, ... with an optional '+' (show the sign of a
# positive value too); in the order of the numbers a marker checks, mixed with numbers already written.
PLACEHOLDER_RE = re.compile(r"(\+?)\?\?(?:\.(\?+))?(?![\w?])")
NUMBER_OR_PLACEHOLDER_RE = re.compile(PLACEHOLDER_RE.pattern + "|" + NUMBER_RE.pattern)


def format_number(value, decimals, plus):
    text = f"{abs(value):,.{decimals}f}" if round(abs(value), decimals) >= 1000 else f"{abs(value):.{decimals}f}"
    if float(text.replace(",", "")) == 0:
        return text
    return ("-" if value < 0 else "+" if plus else "") + text


def refresh_numbers(md_path, cache):
    """--refresh: fill_placeholders, and also every checked number that no longer matches its source rewritten
    to the source's value at the decimals it shows (its '+' and its thousands separators kept): a page brought up
    to new runs without a number copied by hand. Returns one line per number changed, old -> new, for the author
    to read the prose around each (a word such as "falls" is not checked; a verdict is: verdict markers)."""
    return fill_placeholders(md_path, cache, stale=True)


def fill_placeholders(md_path, cache, stale=False):
    """Rewrites, in place, each placeholder (??, ??.?, +??.?? ...) before a check marker to the value of the
    marker's expression that checks it, rounded to the placeholder's decimals (markers in code blocks are
    examples and stay); with stale, also each shown number that differs from its value (refresh_numbers).
    Returns one line per number written."""
    with open(md_path, encoding="utf-8") as f:
        raw = f.read()
    text = blank_code_blocks(raw)
    rel, filled, edits = os.path.relpath(md_path, ROOT), [], []
    for m in CHECK_RE.finditer(text):
        body = " ".join(m.group(1).split())
        src, _, exprs = body.partition(" ")
        exprs = [e for e in (x.strip() for x in exprs.split(";")) if e]
        start = marker_segment_start(text, m.start())
        # the numbers and placeholders before the marker, comments blanked (offsets kept)
        before = re.sub(r"<!--.*?-->", lambda c: " " * len(c.group(0)), text[start:m.start()], flags=re.S)
        tokens = list(NUMBER_OR_PLACEHOLDER_RE.finditer(before))[-len(exprs):] if exprs else []
        where = f"{rel}:{text.count(chr(10), 0, m.start()) + 1}"
        for tok, expr in zip(tokens, exprs[len(exprs) - len(tokens):]):
            placeholder = "?" in tok.group(0)
            if not placeholder and not stale:
                continue
            doc = load_json(src, cache) if src.endswith((".json", ".jsonl")) else {}
            try:
                value = evaluate(expr, doc, cache)
            except MarkerError as e:
                raise MarkerError(f"{where}: {src}: {e}")
            if placeholder:
                new = format_number(value, len(tok.group(2) or ""), tok.group(1) == "+")
            else:
                (shown, decimals, _), = shown_numbers(tok.group(0))
                if rounds_to(value, shown, decimals):
                    continue
                new = format_number(value, decimals, tok.group(0)[0] == "+")
                if tok.group(0)[0] == "−":
                    new = new.replace("-", "−", 1)
                if "," not in tok.group(0):
                    new = new.replace(",", "")
            edits.append((start + tok.start(), start + tok.end(), new))
            filled.append(f"{where}: {tok.group(0)} -> {new}")
    for a, b, new in sorted(edits, reverse=True):
        raw = raw[:a] + new + raw[b:]
    if edits:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(raw)
    return filled


def rendered_pages():
    """The pages scripts/render_pages.py renders from a source docs/pages/X.md.j2 (X.md): their numbers come
    from names, checked by rendering (pages/rendered_pages_match_their_sources), so this script reads their
    sources instead (the ratchet below: a number typed into a source by hand)."""
    pages_dir = os.path.join(ROOT, "docs", "pages")
    out = {}
    for src in glob.glob(os.path.join(pages_dir, "**", "*.md.j2"), recursive=True):
        if not os.path.basename(src).startswith("_"):
            out[os.path.join(ROOT, os.path.relpath(src, pages_dir)[:-len(".j2")])] = src
    return out


def default_files():
    files = [os.path.join(ROOT, "README.md")]
    files += sorted(glob.glob(os.path.join(ROOT, "results", "**", "README.md"), recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    rendered = rendered_pages()
    files = [f for f in files if "/runs/" not in f and f not in rendered]
    return files + sorted(glob.glob(os.path.join(ROOT, "docs", "pages", "**", "*.j2"), recursive=True))


# ----------------------------------------------------------------------------- self-test

def self_test():
    global ROOT
    old_root, failures = ROOT, []
    with tempfile.TemporaryDirectory() as d:
        ROOT = d
        os.makedirs(os.path.join(d, "r"))
        with open(os.path.join(d, "r", "m.jsonl"), "w") as f:
            f.write('{"step": 10, "loss": 2.0}\n{"step": 10, "lr": 0.1}\n{"step": 20, "loss": 1.7341}\n')
        with open(os.path.join(d, "r", "a.jsonl"), "w") as f:  # two curves to pair by epoch
            f.write('{"epoch": 1, "loss": 2.0}\n{"epoch": 1, "lr": 0.1}\n{"epoch": 2, "loss": 1.5}\n')
        with open(os.path.join(d, "r", "b.jsonl"), "w") as f:
            f.write('{"epoch": 1, "loss": 2.3}\n{"epoch": 2, "loss": 1.6}\n')
        with open(os.path.join(d, "r", "m.py"), "w") as f:
            f.write("M = [\n    (1,),\n    (2,),\n    (3,),\n]\n")
        with open(os.path.join(d, "r", "report.json"), "w") as f:
            json.dump({"cells": [{"row": "{type: a, k: 2}", "metric": "t.bleu", "mean": 40.886, "std": 0.2449},
                                 {"row": "b", "metric": "t.bleu", "mean": 20.0, "std": 1.0}],
                       "metrics": {"t.bleu": -8.3005}, "n": 8300}, f)
        for i, (acc, best, steps) in enumerate([(99.5, 10, 20), (50.0, 20, 20)]):
            os.makedirs(os.path.join(d, "r", "runs", f"s={i}"))
            with open(os.path.join(d, "r", "runs", f"s={i}", "results.json"), "w") as f:
                json.dump({"m": {"acc": acc}, "best": best, "steps": steps}, f)
        with open(os.path.join(d, "r", "holm.json"), "w") as f:
            json.dump({"family_t": [{"row": "{type: a, k: 2}", "minus": "b", "metric": "t.bleu", "holds": True},
                                    {"row": "b", "minus": "c", "metric": "t.bleu", "holds": False, "p": 0.3}]}, f)
        with open(os.path.join(d, "r", "report.md"), "w") as f:
            f.write("# T\n\n## Table\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Next\nx\n## Next step\ny\n")

        def run(body):
            p = os.path.join(d, "x.md")
            with open(p, "w") as f:
                f.write(body)
            try:
                bad, n = check_file(p, {})
                return ("bad" if bad else "ok"), n
            except MarkerError:
                return "error", 0
        cases = [
            ("CI ±0.84<!-- check r/report.json tq(0.975, 7) * $cells[row=b][metric=t.bleu].std / sqrt(8) -->", ("ok", 1)),
            ("CI ±0.83<!-- check r/report.json tq(0.975, 7) * $cells[row=b][metric=t.bleu].std / sqrt(8) -->", ("bad", 1)),
            ("a: holds<!-- verdict r/holm.json family_t[row={type: a, k: 2}][minus=b] -->", ("ok", 1)),
            ("1 holds<!-- check r/holm.json count('@family_t', '$holds') -->", ("ok", 1)),   # a flag as a condition
            ("a: not shown<!-- verdict r/holm.json family_t[row={type: a, k: 2}][minus=b] -->", ("bad", 1)),
            ("b: not visible (p 0.3)<!-- verdict r/holm.json family_t[row=b][minus=c] -->", ("ok", 1)),
            ("b: holds<!-- verdict r/holm.json family_t[row=b][minus=c] -->", ("bad", 1)),   # a stale verdict
            ("a holds, b: not shown<!-- verdict r/holm.json family_t[row=b][minus=c] -->", ("ok", 1)),  # the last word
            ("a: yes<!-- verdict r/holm.json family_t[row={type: a, k: 2}][minus=b] -->", ("error", 0)),  # no verdict word
            ("a: holds<!-- verdict r/holm.json family_t[row=b][minus=c].p -->", ("error", 0)),  # not a verdict
            ("a: holds<!-- verdict r/holm.json family_t[row=z] -->", ("error", 0)),             # selects nothing
            ("40.89 ± 0.24<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean ; "
             "cells[row={type: a, k: 2}][metric=t.bleu].std -->", ("ok", 2)),
            ("40.88 ± 0.24<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean ; "
             "cells[row={type: a, k: 2}][metric=t.bleu].std -->", ("bad", 2)),      # mistyped
            ("40.9<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean -->", ("ok", 1)),
            ("41<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean -->", ("ok", 1)),
            ("40.8<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean -->", ("bad", 1)),  # hand-rounded wrong
            ("Δ −8.30<!-- check r/report.json metrics[\"t.bleu\"] -->", ("ok", 1)),
            ("Δ 8.30<!-- check r/report.json metrics[\"t.bleu\"] -->", ("bad", 1)),  # sign lost
            ("8,300 updates<!-- check r/report.json n -->", ("ok", 1)),
            ("+104%<!-- check r/report.json 100 * ($cells[row={type: a, k: 2}][metric=t.bleu].mean / "
             "$cells[row=b][metric=t.bleu].mean - 1) -->", ("ok", 1)),
            ("30.00<!-- check r/report.json ($r/report.json::cells[row=b][metric=t.bleu].mean + "
             "$cells[row=b][metric=t.bleu].mean * 2) / 2 -->", ("ok", 1)),
            ("2 runs<!-- check r/report.json count('r/runs/*/results.json') -->", ("ok", 1)),
            ("0 finished<!-- check r/report.json count('r/runs/*/done.json') -->", ("ok", 1)),  # none yet, folder there
            ("0 finished<!-- check r/report.json count('r/nofolder/*/done.json') -->", ("error", 0)),  # a typo
            ("1 competent<!-- check r/report.json count('r/runs/*/results.json', '$m[\"acc\"] >= 99') -->", ("ok", 1)),
            ("1 at the last step<!-- check r/report.json count('r/runs/*/results.json', '$best == $steps') -->", ("ok", 1)),
            ("2 competent<!-- check r/report.json count('r/runs/*/results.json', '$m[\"acc\"] >= 99') -->", ("bad", 1)),
            ("2 cells<!-- check r/report.json length('cells') -->", ("ok", 1)),
            ("loss 1.734<!-- check r/m.jsonl [step=20][loss=*].loss -->", ("ok", 1)),       # JSON lines
            ("2.0<!-- check r/m.jsonl [step=10].loss -->", ("error", 0)),                    # two lines of step 10
            ("loss 1.735<!-- check r/m.jsonl [step=20].loss -->", ("bad", 1)),
            ("3 mutants<!-- check r/m.py matches('r/m.py', '^ +[(]') -->", ("ok", 1)),
            ("4 mutants<!-- check r/m.py matches('r/m.py', '^ +[(]') -->", ("bad", 1)),        # stale count
            ("above 30: 1<!-- check r/report.json count('@cells', '$mean > 30') -->", ("ok", 1)),
            ("1.734<!-- check r/m.jsonl minof('@[loss=*]', '$loss') -->", ("ok", 1)),           # lines with a loss
            ("2.0<!-- check r/m.jsonl maxof('@[loss=*]', '$loss') -->", ("ok", 1)),
            ("99.5<!-- check r/report.json maxof('r/runs/*/results.json', '$m[\"acc\"]') -->", ("ok", 1)),
            ("99.4<!-- check r/report.json maxof('r/runs/*/results.json', '$m[\"acc\"]') -->", ("bad", 1)),
            ("by 0.1–0.3<!-- check r/a.jsonl minof('@[loss=*]', '$r/b.jsonl::[epoch={epoch}].loss - $loss') ; "
             "maxof('@[loss=*]', '$r/b.jsonl::[epoch={epoch}].loss - $loss') -->", ("ok", 2)),  # paired by epoch
            ("by 0.2<!-- check r/a.jsonl minof('@[loss=*]', '$r/b.jsonl::[epoch={epoch}].loss - $loss') -->", ("bad", 1)),
            ("lower at 2<!-- check r/a.jsonl count('@[loss=*]', '$loss < $r/b.jsonl::[epoch={epoch}].loss') -->", ("ok", 1)),
            ("0.1<!-- check r/a.jsonl minof('@', '$r/b.jsonl::[epoch={epoch}].loss - $loss') -->", ("error", 0)),  # lr line
            ("0.1<!-- check r/a.jsonl minof('@[loss=*]', '$loss - {step}') -->", ("error", 0)),  # no such field
            ("0.1<!-- check r/a.jsonl minof('@[loss=*]') -->", ("error", 0)),                     # no EXPR
            ("1.5<!-- check r/a.jsonl minof('@[loss=*]', '$loss', '$epoch >= 2') -->", ("ok", 1)),  # a condition
            ("2.0<!-- check r/a.jsonl minof('@[loss=*]', '$loss', '$epoch >= 2') -->", ("bad", 1)),
            ("2<!-- check r/a.jsonl count('@[loss=*]', '$loss > 0', '$epoch >= 2') -->", ("error", 0)),  # count: two args
            ("2.0<!-- check r/a.jsonl max(minof('@[loss=*]', '$loss'), maxof('@[loss=*]', '$loss')) -->", ("ok", 1)),  # no '$' left
            ("0.1<!-- check r/a.jsonl minof('@[loss=nothing]', '$loss') -->", ("error", 0)),      # selects none
            ("1.5<!-- check r/a.jsonl minof('@[1:]', '$loss', '$epoch >= 1') -->", ("error", 0)),  # the lr line has no loss
            ("1.5<!-- check r/a.jsonl minof('@[2:]', '$loss') -->", ("ok", 1)),                   # a slice
            ("3.5<!-- check r/a.jsonl sumof('@[loss=*]', '$loss') -->", ("ok", 1)),               # 2.0 + 1.5
            ("40<!-- check r/report.json sumof('r/runs/*/results.json', '$steps') -->", ("ok", 1)),
            ("2.0<!-- check r/a.jsonl sumof('@[loss=*]', '$loss', '$epoch < 2') -->", ("ok", 1)),
            ("1.75<!-- check r/a.jsonl meanof('@[loss=*]', '$loss') -->", ("ok", 1)),             # (2.0 + 1.5) / 2
            ("1.6<!-- check r/a.jsonl meanof('@[loss=*]', '$loss') -->", ("bad", 1)),
            ("20<!-- check r/report.json meanof('r/runs/*/results.json', '$steps') -->", ("ok", 1)),  # 40 / 2
            ("0.354<!-- check r/a.jsonl sdof('@[loss=*]', '$loss') -->", ("ok", 1)),               # 0.5 / sqrt(2)
            ("0.250<!-- check r/a.jsonl sdof('@[loss=*]', '$loss') -->", ("bad", 1)),             # not the population sd
            ("0<!-- check r/a.jsonl sdof('@[loss=*]', '$loss', '$epoch < 2') -->", ("error", 0)),  # one element
            ("20<!-- check r/report.json maxof('@cells[:1]', '$mean') -->", ("bad", 1)),         # the first cell: 40.886
            ("1<!-- check r/report.json minof('@cells[5:]', '$mean') -->", ("error", 0)),        # an empty slice
            ("4.30<!-- check r/report.json tq(0.975, 2) -->", ("ok", 1)),                      # t quantiles
            ("2.78 and -2.57<!-- check r/report.json tq(0.975, 4) ; tq(0.025, 5) -->", ("ok", 2)),
            ("2.77<!-- check r/report.json tq(0.975, 4) -->", ("bad", 1)),
            ("49.0<!-- check r/report.json tq(1 - 0.025 / 120, 2) + 0 * $n -->", ("ok", 1)),   # with a path
            ("1<!-- check r/report.json tq(1.5, 2) -->", ("error", 0)),
            ("<!-- include r/report.md#Next step -->\ny\n<!-- end include -->", ("ok", 1)),   # a heading with a space
            ("<!-- include r/report.md#Next -->\nx\n", ("error", 0)),                              # no end marker
            ("20.00<!-- check r/report.json $r/runs/s=0/results.json::steps + 0 -->", ("ok", 1)),  # '=' in a path
            ("x<!-- check r/report.json cells[row=c][metric=t.bleu].mean -->", ("error", 0)),   # selects nothing
            ("1<!-- check r/missing.json n -->", ("error", 0)),
            ("<!-- check r/report.json n -->", ("error", 0)),                                     # no number
            ("<!-- include r/report.md#Table -->\n| a | b |\n|---|---|\n| 1 | 2 |\n<!-- end include -->", ("ok", 1)),
            ("<!-- include r/report.md#Table -->\n| a | b |\n|---|---|\n| 1 | 3 |\n<!-- end include -->", ("bad", 1)),
            ("<!-- include r/report.md#Nope -->\nx\n<!-- end include -->", ("error", 0)),
            ("```\n1<!-- check r/missing.json n -->\n```\n", ("ok", 0)),                       # an example in a code block
            ("<!-- include r/report.md#Table -->\n```md\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n<!-- end include -->", ("ok", 1)),
            ("<!-- include r/report.md#Table -->\n```md\n| a | b |\n|---|---|\n| 1 | 9 |\n```\n<!-- end include -->", ("bad", 1)),
        ]
        for body, want in cases:
            got = run(body)
            if got != want:
                failures.append(f"{body[:70]!r}: want {want}, got {got}")
        # --update-counts: the count before a count(...) marker follows its files; nothing else moves
        marker = "<!-- check r/report.json count('r/runs/*/results.json') -->"
        body = (f"**5{marker} of 9 runs**, 40.8<!-- check r/report.json cells[row=b][metric=t.bleu].mean -->\n"
                f"```\n7{marker}\n```\n")
        p = os.path.join(d, "x.md")
        with open(p, "w") as f:
            f.write(body)
        changes = update_counts(p, {})
        with open(p) as f:
            after = f.read()
        cases.append(("--update-counts", None))
        if after != body.replace("**5<", "**2<", 1) or len(changes) != 1 or update_counts(p, {}):
            failures.append(f"--update-counts: got {after!r}, changes {changes}")
        def rewrite_case(flag, rewrite, body, want, n_lines, n_checked):
            """A rewriting mode on BODY: the page it leaves, the lines it prints, and that the page then checks."""
            with open(p, "w") as f:
                f.write(body)
            lines = rewrite(p, {})
            with open(p) as f:
                after = f.read()
            cases.append((flag, None))
            if after != want or len(lines) != n_lines or check_file(p, {}) != ([], n_checked):
                failures.append(f"{flag}: got {after!r}, lines {lines}")

        # --fill: placeholders become the values their markers check, at the decimals they ask for
        body = ("a 40.89 ± ??.??<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean ; "
                "cells[row={type: a, k: 2}][metric=t.bleu].std -->, Δ +??.?<!-- check r/report.json "
                "metrics[\"t.bleu\"] --> and ??<!-- check r/report.json n -->, +??<!-- check r/report.json "
                "cells[row=b][metric=t.bleu].mean -->\n```\n??<!-- check r/report.json n -->\n```\n")
        want = (body.replace("± ??.??<", "± 0.24<").replace("+??.?<", "-8.3<").replace("and ??<", "and 8,300<")
                .replace("+??<", "+20<"))
        rewrite_case("--fill", fill_placeholders, body, want, 4, 5)
        # --refresh: a stale number becomes its source's value at its own decimals, sign style and separators;
        # a right one and a placeholder-free line stay as written
        body = ("a 40.80 ± 0.24<!-- check r/report.json cells[row={type: a, k: 2}][metric=t.bleu].mean ; "
                "cells[row={type: a, k: 2}][metric=t.bleu].std -->, Δ −7.1<!-- check r/report.json "
                "metrics[\"t.bleu\"] -->, 8,299<!-- check r/report.json n --> and +19<!-- check r/report.json "
                "cells[row=b][metric=t.bleu].mean -->, ??<!-- check r/report.json n -->\n")
        want = (body.replace("40.80 ±", "40.89 ±").replace("−7.1<", "−8.3<").replace("8,299<", "8,300<")
                .replace("+19<", "+20<").replace(", ??<", ", 8,300<"))
        rewrite_case("--refresh", refresh_numbers, body, want, 5, 6)
        # --unchecked: a number a marker covers is not listed, the others are (in order, with their line)
        with open(p, "w") as f:
            f.write("a 40.89 ± 0.24<!-- check r/report.json cells[row=b][metric=t.bleu].mean ; "
                    "cells[row=b][metric=t.bleu].std --> and 1.5 by hand\nlr `0.5`, [x](y/1.2) 3.25, +12% and 7 seeds "
                    "at 95 %, 12<!-- check r/report.json n -->%\n")
        got = [(ln, num) for ln, num, _, _ in unchecked_numbers(p)]
        cases.append(("--unchecked", None))
        if got != [(1, "1.5"), (2, "3.25"), (2, "+12"), (2, "95")]:
            failures.append(f"--unchecked: got {got}")
        # the ratchet: a listed number passes, a new one (or one more of the same) fails, a checked one is stale
        base_path = os.path.join(d, "baseline.txt")
        write_unchecked_baseline(base_path, unchecked_keys([p])[0])
        listed = read_unchecked_baseline(base_path)
        cases.append(("ratchet: the pages as listed", None))
        if ratchet(unchecked_keys([p])[0], listed) != (collections.Counter(), collections.Counter()):
            failures.append(f"ratchet: the listed page does not pass: {ratchet(unchecked_keys([p])[0], listed)}")
        with open(p, "a") as f:
            f.write("and 3.25 again by hand, 7.5 new\n")
        new, stale = ratchet(unchecked_keys([p])[0], listed)
        cases.append(("ratchet: new numbers fail", None))
        grown = os.path.join(d, "grown.md")
        with open(grown, "w") as f:
            f.write("9 of 40 runs, lr 0.5\n")
        before_keys = unchecked_keys([grown])[0]
        with open(grown, "w") as f:
            f.write("10 of 40 runs, lr 0.5\n")
        cases.append(("ratchet: a count that grows a digit nearby keeps the key", None))
        if unchecked_keys([grown])[0] != before_keys:
            failures.append(f"ratchet: 9 -> 10 moved the key: {before_keys} -> {unchecked_keys([grown])[0]}")
        if sorted(k[1] for k in new.elements()) != ["3.25", "7.5"] or stale:
            failures.append(f"ratchet: new {new}, stale {stale}")
        with open(p, "w") as f:
            f.write("a 40.89 ± 0.24<!-- check r/report.json cells[row=b][metric=t.bleu].mean ; "
                    "cells[row=b][metric=t.bleu].std --> and 1.5<!-- check r/report.json n -->\nlr `0.5`, [x](y/1.2) 3.25, "
                    "+12% and 7 seeds at 95 %, 12<!-- check r/report.json n -->%\n")
        new, stale = ratchet(unchecked_keys([p])[0], listed)
        cases.append(("ratchet: a number given a marker is stale, not a failure", None))
        if new or [k[1] for k in stale.elements()] != ["1.5"]:
            failures.append(f"ratchet: after a marker: new {new}, stale {stale}")
        ROOT = old_root
    for f in failures:
        print("self-test FAILED:", f, file=sys.stderr)
    print(f"self-test: {len(cases) - len(failures)} of {len(cases)} cases right")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 epilog="Markers and paths: see the top of this file.")
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md, results/**/README.md, docs/*.md)")
    ap.add_argument("--coverage", action="store_true", help="also print, per file, numbers shown and numbers checked")
    ap.add_argument("--self-test", action="store_true", help="run the checker's own tests")
    ap.add_argument("--unchecked", action="store_true",
                    help="list the numbers with decimals and the percentages of FILES that no marker checks, and exit (not a test)")
    ap.add_argument("--update-counts", action="store_true",
                    help="rewrite the number before each count(...) marker of FILES to the current count, then check")
    ap.add_argument("--fill", action="store_true",
                    help="write each placeholder (??, ??.?, +??.??) before a check marker of FILES, then check")
    ap.add_argument("--refresh", action="store_true",
                    help="as --fill, and rewrite every checked number of FILES that differs from its source (listing each), then check")
    ap.add_argument("--unchecked-baseline", metavar="LIST",
                    help="fail on a number with decimals or a percentage of the default pages that no marker checks and LIST does not list")
    ap.add_argument("--write-unchecked-baseline", metavar="LIST",
                    help="write LIST: every number with decimals or percentage the default pages show without a marker")
    ap.add_argument("--list-pages", action="store_true",
                    help="print the pages checked by default (paths from the repository root), one a line, and exit")
    a = ap.parse_args()
    if a.list_pages:
        print("\n".join(os.path.relpath(f, ROOT) for f in default_files()))
        return 0
    if a.self_test:
        return self_test()
    if a.write_unchecked_baseline:
        keys = unchecked_keys(default_files())[0]
        write_unchecked_baseline(a.write_unchecked_baseline, keys)
        print(f"check_claims: {a.write_unchecked_baseline}: {sum(keys.values())} unchecked numbers listed")
        return 0
    if a.unchecked_baseline:
        try:
            listed = read_unchecked_baseline(a.unchecked_baseline)
        except OSError as e:
            print(f"check_claims: cannot read the list of unchecked numbers {a.unchecked_baseline}: {e.strerror} "
                  f"(--write-unchecked-baseline {a.unchecked_baseline} writes it)", file=sys.stderr)
            return 2
        except MarkerError as e:
            print(f"check_claims: {e}", file=sys.stderr)
            return 2
        current, where = unchecked_keys(default_files())
        new, stale = ratchet(current, listed)
        for (page, num, before) in sorted(new):
            print(f"{page}:{where[(page, num, before)]}: {num} (after \"...{before[-30:]}\") is a number with decimals or a percentage "
                  f"that no check marker covers and {a.unchecked_baseline} does not list: give it a marker "
                  f"(docs/claims.md), or if it is not a result (a config value, a version) list it with "
                  f"--write-unchecked-baseline {a.unchecked_baseline}")
        if stale:
            print(f"check_claims: {sum(stale.values())} listed number(s) no longer shown unchecked (given a marker, "
                  f"or their text changed): --write-unchecked-baseline {a.unchecked_baseline} drops them")
        print(f"check_claims: {sum(current.values())} unchecked numbers on the default pages, "
              f"{sum(new.values())} not listed in {a.unchecked_baseline}")
        return 1 if new else 0
    if a.unchecked:
        for f in [os.path.abspath(f) for f in a.files] or default_files():
            rel = os.path.relpath(f, ROOT)
            found = unchecked_numbers(f)
            for ln, num, ctx, _ in found:
                print(f"{rel}:{ln}: {num}  | {ctx}")
            print(f"{rel}: {len(found)} numbers with decimals or percentages not checked", file=sys.stderr)
        return 0
    # the two modes that rewrite numbers before checking: --fill (placeholders), --update-counts (counts)
    for on, flag, rewrite in ((a.fill, "--fill", fill_placeholders), (a.refresh, "--refresh", refresh_numbers),
                              (a.update_counts, "--update-counts", update_counts)):
        if not on:
            continue
        if not a.files:
            print(f"check_claims: {flag} needs the files to rewrite", file=sys.stderr)
            return 2
        try:
            for f in a.files:
                for line in rewrite(os.path.abspath(f), {}):
                    print(line)
        except MarkerError as e:
            print(f"check_claims: {e}", file=sys.stderr)
            return 2
    files = [os.path.abspath(f) for f in a.files] or default_files()
    cache, mismatches, total, coverage = {}, [], 0, ({} if a.coverage else None)
    for f in files:
        try:
            bad, n = check_file(f, cache, coverage)
        except MarkerError as e:
            print(f"check_claims: {e}", file=sys.stderr)
            return 2
        except OSError as e:
            print(f"check_claims: cannot read {f}: {e.strerror}", file=sys.stderr)
            return 2
        mismatches += bad
        total += n
    for b in mismatches:
        print(b)
    if coverage is not None:
        for rel, (checked, shown) in coverage.items():
            print(f"{rel}: {checked} checked of {shown} numbers shown")
    print(f"check_claims: {total} checked numbers and blocks in {len(files)} files; "
          f"{len(mismatches)} differ from their source")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
