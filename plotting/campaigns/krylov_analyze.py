#!/usr/bin/env python3
"""Sweep tables of the Krylov campaigns' READMEs from gpu_krylov* records, e.g.
python3 plotting/campaigns/krylov_analyze.py results/h100x1-2026-11-25-krylov/gpu_krylov-27298f8-r1.jsonl.gz"""
import json, sys
from campaign import open_text, results_dir
def table(name):
    recs=[json.loads(l) for l in open_text(name)]
    rows={}
    for r in recs:
        if r['status']!='ok': continue
        p=r['problem']; c=r['config']; t=r['timing']; k=r['krylov']; it=k['iterations_per_step']
        rows[(p['size'][0],c['format'],c['fusion'])]=r
    out=[]
    for n in (128,256):
        ref=rows[(n,'cusparse_csr','none')]['timing']['total']['median']
        for (nn,f,fu),r in sorted(rows.items()):
            if nn!=n: continue
            t=r['timing']; k=r['krylov']; it=k['iterations_per_step']
            med=t['total']['median']; ci=t['total']['ci99']
            ph={a:v['median']/it*1e3 for a,v in t['phases'].items()}
            tr=r['traffic']; 
            bw={a:(tr[a]['device_bytes']/(t['phases'][a]['median']*1e6) if t['phases'][a]['median']>0 else 0) for a in tr}
            tot=sum(v['device_bytes'] for v in tr.values())/(med*1e6)
            out.append((n,f,fu,med/it*1e3,ci[0]/it*1e3,ci[1]/it*1e3,ref/med,ph,bw,tot,k['copy_GBps']))
    return out
for name in sys.argv[1:]:
    print(name)
    print("| n | format | fusion | µs/iteration (99% CI) | cusparse_csr ÷ this | spmv µs (GB/s) | update µs (GB/s) | reduce µs | halo µs | iteration GB/s | copy GB/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (n,f,fu,m,lo,hi,ratio,ph,bw,tot,cp) in table(name):
        print(f"| {n}³ | {f} | {fu} | {m:.1f} ({lo:.1f}–{hi:.1f}) | {ratio:.2f}× | {ph['spmv']:.1f} ({bw['spmv']:.0f}) | {ph['update']:.1f} ({bw['update']:.0f}) | {ph['reduce']:.1f} | {ph['halo']:.1f} | {tot:.0f} | {cp:.0f} |")
    print()
