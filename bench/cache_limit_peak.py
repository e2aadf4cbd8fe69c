# docs/RELIABILITY.md, "Hostile inputs: local files": the peak size of a cache
# with a 1 MiB limit while six builds store into it.
# Six concurrent manifest builds sharing one cache limited to 1 MiB; a watcher
# sums the entry sizes under v1/ every ~2 ms and reports the peak.
import json, os, shutil, subprocess, sys, threading, time
OB = sys.argv[1]  # usage: python3 bench/cache_limit_peak.py path/to/offload-build
root = '/tmp/ob-cache-limit-peak'
shutil.rmtree(root, ignore_errors=True)
os.makedirs(root)
cache = root + '/cache'
ex = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'examples', 'saxpy-c')
procs = []
for i in range(6):
    d = f'{root}/p{i}'
    shutil.copytree(ex, d)
    m = json.load(open(d + '/offload.json'))
    m['name'] = f'six{i}'; m['output'] = f'six{i}'; m['cache_max_size'] = '1M'
    json.dump(m, open(d + '/offload.json', 'w'))
    import random
    r = random.Random(i)
    arr = ','.join(str(r.getrandbits(32)) for _ in range(50000))  # 200 KB of incompressible data
    with open(d + '/saxpy.c', 'a') as f: f.write(f'\nconst unsigned six_data_{i}[] = {{{arr}}};\n')
peak = 0; samples = 0; stop = False
def size():
    t = 0
    for dp, dn, fn in os.walk(cache + '/v1'):
        for f in fn:
            if '.tmp.' in f: continue
            try: t += os.lstat(os.path.join(dp, f)).st_size
            except FileNotFoundError: pass
    return t
def watch():
    global peak, samples
    while not stop:
        peak = max(peak, size()); samples += 1; time.sleep(0.002)
th = threading.Thread(target=watch); th.start()
t0 = time.time()
for i in range(6):
    procs.append(subprocess.Popen([OB, '-C', f'{root}/p{i}', '--cache-dir', cache, 'build'], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
rcs = [p.wait() for p in procs]
stop = True; th.join()
final = size()
st = json.loads(subprocess.run([OB, '--cache-dir', cache, 'cache', 'stats', '--json'], capture_output=True, text=True).stdout)
print(f'rcs={rcs} wall={time.time()-t0:.1f}s peak={peak} final={final} samples={samples} stores={st["stores"]} evictions={st["evictions"]}')
