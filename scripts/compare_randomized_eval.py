#!/usr/bin/env python3
"""The identity vs sampled test-position table of results/algorithmic_randomized_sampled/README.md:
for every randomized encoding and task, test and validation accuracy of the two studies
(results/algorithmic_length_generalization, randomized_eval: identity; results/algorithmic_randomized_sampled,
randomized_eval: sample) and their difference paired by seed, as a Markdown table, then the means over tasks.
Run from the repository root: scripts/compare_randomized_eval.py"""
import json, glob, statistics as st
def load(study, enc_filter):
    out = {}
    for f in glob.glob(f'results/{study}/runs/*/results.json'):
        d = json.load(open(f)); l = d['labels']
        if not enc_filter(l['model.position']): continue
        key = (l['data.task'], l['model.position'].replace(', randomized_eval: sample', ''))
        out.setdefault(key, {})[l['seed']] = (d['metrics'].get('test.accuracy'), d['metrics'].get('val.accuracy'))
    return out
ident = load('algorithmic_length_generalization', lambda p: 'randomized' in p)
samp = load('algorithmic_randomized_sampled', lambda p: True)
tasks = ['copy','reverse','sort','duplicate_string','odds_first','parity','cycle_navigation','addition']
encs = sorted({k[1] for k in samp})
print('| encoding (randomized 256) | task | test acc, identity | test acc, sample | Δ paired by seed | val acc, identity | val acc, sample |')
print('|---|---|---|---|---|---|---|')
means = {}
for e in encs:
    for t in tasks:
        a = ident.get((t, e), {}); b = samp.get((t, e), {})
        seeds = sorted(set(a) & set(b))
        if not b: continue
        fa = [a[s][0] for s in sorted(a)]; fb = [b[s][0] for s in sorted(b)]
        va = [a[s][1] for s in sorted(a)]; vb = [b[s][1] for s in sorted(b)]
        d = [b[s][0] - a[s][0] for s in seeds]
        def ms(x): return f'{st.mean(x):.1f} ± {st.stdev(x):.1f}' if len(x) > 1 else (f'{x[0]:.1f}' if x else '–')
        print(f'| {e} | {t} | {ms(fa)} | {ms(fb)} | {ms(d)} (n={len(d)}) | {ms(va)} | {ms(vb)} |')
        means.setdefault(e, {'i': [], 's': []}); means[e]['i'].append(st.mean(fa)); means[e]['s'].append(st.mean(fb))
print()
for e, m in means.items():
    print(f'{e}: mean over {len(m["i"])} tasks: identity {st.mean(m["i"]):.1f}, sample {st.mean(m["s"]):.1f}')
