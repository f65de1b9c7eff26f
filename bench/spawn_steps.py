#!/usr/bin/env python3
"""Splits a spawn into its steps (docs/recovery.md, "A faster spawn").

Reads what bench/spawn_steps.patch makes each process print with RFT_SPAWN_TRACE=1
("TRACE <pid> <ms> <step>", CLOCK_MONOTONIC, which the processes of a node share) and prints, per
step, its median time from the start of rft_comm_spawn over the rounds: the slowest parent's for
the parents' steps, the first for rftrun's and the child's.

  git apply bench/spawn_steps.patch && bazel build --config=opt //bench:rft_bench_coll //tools/rftrun
  RFT_SPAWN_TRACE=1 rftrun -n 4 --ft --ft-deaths-ok rft_bench_coll --spawn --iters 20 2>trace.txt
  python3 bench/spawn_steps.py trace.txt 4     # 4: the parents, whose confirmations end a round
  git apply -R bench/spawn_steps.patch
"""
import collections
import re
import statistics
import sys

ev=[]
for line in open(sys.argv[1]):
    m=re.search(r'TRACE (\d+) ([\d.]+) (\S+)', line)
    if m: ev.append((float(m.group(2)), int(m.group(1)), m.group(3)))
ev.sort()
# rounds: start at each first parent.spawn.start after a parent.confirmed (or at beginning)
rounds=[]; cur=None; confirmed=0
nparents=None
for t,pid,what in ev:
    if what=='parent.spawn.start' and (cur is None or cur.get('_closed')):
        cur={'_t0':t,'_closed':False,'_ev':[]}; rounds.append(cur)
    if cur is None: continue
    cur['_ev'].append((t-cur['_t0'],pid,what))
    if what=='parent.confirmed':
        cur['_conf']=cur.get('_conf',0)+1
        if cur['_conf']>=int(sys.argv[2]): cur['_closed']=True
off=collections.defaultdict(list)
for r in rounds:
    seen={}
    for dt,pid,what in r['_ev']:
        # keep the last occurrence among parents for parent.*, first otherwise
        if what.startswith('parent.'):
            seen[what]=max(seen.get(what,0),dt)
        elif what not in seen:
            seen[what]=dt
    for k,v in seen.items(): off[k].append(v)
print(len(rounds),'rounds')
for k,v in sorted(off.items(), key=lambda kv: statistics.median(kv[1])):
    print('%-28s median %7.2f ms  (min %6.2f, max %6.2f, n=%d)'%(k,statistics.median(v),min(v),max(v),len(v)))
