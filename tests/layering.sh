#!/bin/bash
# The library's layers (README "Architecture"): each folder of lib/ and
# include/erofs/ is a layer, and a file may use only its own layer and the
# layers below it.  Derived from the code itself, twice:
#   - the include graph of the sources (#include "erofs/LAYER/NAME.h");
#   - the call graph of the built library: each object's undefined symbols
#     resolved to the object that defines them (nm).
# A .c and the .h of the same name are one unit.  The test fails, naming
# the files, on a use that points to a higher or a sideways layer, and on
# any circle of units (even inside one layer).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$(pwd)}
command -v python3 >/dev/null || { echo "SKIP: python3 not installed"; exit 77; }
command -v nm >/dev/null || { echo "SKIP: nm not installed"; exit 77; }

python3 - "$top" "$build" <<'PY'
import collections, glob, os, re, subprocess, sys

top, build = sys.argv[1], sys.argv[2]
# what each layer may use besides itself (bottom first)
ALLOWED = {
    'common': set(),
    'codec': {'common'},
    'read': {'common', 'codec'},
    'source': {'common', 'codec', 'read'},
    'build': {'common', 'codec', 'read', 'source'},
    'check': {'common', 'codec', 'read'},
    'dump': {'common', 'codec', 'read'},
    'fsops': {'common', 'codec', 'read'},
}

layer_of = {}          # unit -> layer
where = collections.defaultdict(list)
problems = []
# include/erofs-forge/: liberofs-forge's installed header, the read layer's public face
for kind, pattern in (('c', 'lib/*/*.c'), ('h', 'include/erofs/*/*.h'), ('h', 'include/erofs-forge/*.h')):
    for path in sorted(glob.glob(os.path.join(top, pattern))):
        rel = os.path.relpath(path, top)
        layer = os.path.basename(os.path.dirname(path))
        if layer == 'erofs-forge':
            layer = 'read'
        unit = os.path.splitext(os.path.basename(path))[0]
        if layer not in ALLOWED:
            problems.append(f'{rel}: folder "{layer}" is no layer (add it to tests/layering.sh and README)')
            continue
        if unit in layer_of and layer_of[unit] != layer:
            problems.append(f'{rel}: unit "{unit}" is split between {layer_of[unit]} and {layer}')
        layer_of[unit] = layer
        where[unit].append(rel)
for f in glob.glob(os.path.join(top, 'lib/*.c')) + glob.glob(os.path.join(top, 'include/erofs/*.h')):
    problems.append(f'{os.path.relpath(f, top)}: outside every layer folder')

def check_graph(name, edges):
    """edges: unit -> {unit: [reason, ...]}"""
    for a in sorted(edges):
        for b in sorted(edges[a]):
            la, lb = layer_of[a], layer_of[b]
            if la != lb and lb not in ALLOWED[la]:
                why = ', '.join(sorted(edges[a][b])[:4])
                problems.append(f'{name}: {a} ({la}) uses {b} ({lb}), a layer {la} may not use: {why}')
    # circles: Tarjan's strongly connected components
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))
    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for comp in sccs:
        links = [f'{a}->{b}' for a in comp for b in sorted(edges.get(a, ())) if b in comp]
        problems.append(f'{name}: circle of {len(comp)} units: {" ".join(comp)} ({", ".join(links)})')

# 1. includes
inc = collections.defaultdict(lambda: collections.defaultdict(set))
nincludes = 0
for unit, files in where.items():
    for rel in files:
        for line in open(os.path.join(top, rel), encoding='utf-8', errors='replace'):
            m = re.match(r'\s*#\s*include\s+"erofs/([a-z]+)/([A-Za-z0-9_-]+)\.h"', line) or \
                re.match(r'\s*#\s*include\s+"(erofs-forge)/([A-Za-z0-9_-]+)\.h"', line)
            if not m:
                if re.match(r'\s*#\s*include\s+"', line) and 'config.h' not in line:
                    problems.append(f'{rel}: include not of the form "erofs/LAYER/NAME.h": {line.strip()}')
                continue
            nincludes += 1
            target = m.group(2)
            named = 'read' if m.group(1) == 'erofs-forge' else m.group(1)
            if target not in layer_of or layer_of[target] != named:
                problems.append(f'{rel}: includes "erofs/{m.group(1)}/{target}.h", which does not exist')
                continue
            if target != unit:
                inc[unit][target].add(os.path.basename(rel))
check_graph('include', inc)

# 2. calls, from the built objects
objs = sorted(glob.glob(os.path.join(build, 'lib', '*', '*.o')))
defs, undef = {}, collections.defaultdict(set)
for o in objs:
    unit = re.sub(r'^lib_liberofs[a-z_]*-', '', os.path.basename(o)[:-2])
    layer = os.path.basename(os.path.dirname(o))
    if not os.path.exists(os.path.join(top, 'lib', layer, unit + '.c')):
        continue        # a stale object of a file moved away
    out = subprocess.run(['nm', o], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in 'TDBRCGV':
            defs[p[2]] = unit
        elif len(p) == 2 and p[0] == 'U':
            undef[unit].add(p[1])
if len(defs) < 100:
    problems.append(f'calls: only {len(defs)} symbols found in {build}/lib/*/*.o (build the library first)')
calls = collections.defaultdict(lambda: collections.defaultdict(set))
for unit, syms in undef.items():
    for s in syms:
        d = defs.get(s)
        if d and d != unit:
            calls[unit][d].add(s)
check_graph('calls', calls)

# 3. the front ends: their layers' headers and, of the reader, only the
# public API (erofs-forge/erofs-forge.h): issue 25, "fsck.erofs,
# dump.erofs and erofsfuse use only this API plus the checker layer"
# (a front end that needs a reader header again lists it here)
FRONT = {
    'fsck': ({'common', 'codec', 'read', 'check', 'dump'}, set()),  # the public API only
    'dump': ({'common', 'codec', 'read', 'dump'}, set()),  # the public API only
    'fuse': ({'common', 'read', 'fsops'}, set()),   # the public API only
}
for front, (allowed, read_allowed) in FRONT.items():
    for path in sorted(glob.glob(os.path.join(top, front, '*.[ch]'))):
        rel = os.path.relpath(path, top)
        for line in open(path, encoding='utf-8', errors='replace'):
            m = re.match(r'\s*#\s*include\s+"erofs/([a-z]+)/([A-Za-z0-9_-]+)\.h"', line)
            if not m:
                continue
            layer, name = m.groups()
            if layer not in allowed:
                problems.append(f'{rel}: a {front} front end includes erofs/{layer}/{name}.h')
            elif layer == 'read' and name not in read_allowed:
                problems.append(f'{rel}: includes erofs/read/{name}.h: a {front} front end '
                                f'uses the reader only through erofs-forge/erofs-forge.h'
                                + (f' and {", ".join(sorted(read_allowed))}' if read_allowed else ''))

# 4. what the front ends on the public API call: of the library, only
# eforge_* and their own layers (the built objects' undefined symbols)
FRONT_CALLS = {
    'fuse': {'fsops', 'common'},
    'dump': {'dump', 'common', 'codec'},
    'fsck': {'check', 'dump', 'common', 'codec'},
}
for front, layers in FRONT_CALLS.items():
    fobjs = sorted(glob.glob(os.path.join(build, front, '*.o')))
    if not fobjs:       # erofsfuse is built only with libfuse3
        print(f'note: no objects in {build}/{front}: its calls not checked')
    for o in fobjs:
        out = subprocess.run(['nm', '-u', o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            s = line.split()[-1]
            d = defs.get(s)
            if d and not s.startswith('eforge_') and layer_of.get(d) not in layers:
                problems.append(f'{os.path.relpath(o, build)}: calls {s} ({d}, '
                                f'{layer_of.get(d)}): a {front} front end uses the reader '
                                f'only through eforge_* calls')

for p in problems:
    print('FAIL:', p)
print(f'{len(layer_of)} units in {len(ALLOWED)} layers, {nincludes} includes, '
      f'{sum(len(v) for v in calls.values())} unit-to-unit call edges from {len(objs)} objects: '
      f'{len(problems)} problem(s)')
sys.exit(1 if problems else 0)
PY
