# Every measurement of a campaign store, per kernel: role, status, median,
# spread, a GPU point's kernels alone, and the point's non-default settings.
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
# Stores from before schema 4 have no kernels' times.
columns = {r[1] for r in c.execute("pragma table_info(measurements)")}
kernel_s = "m.kernel_s" if "kernel_s" in columns else "null"
rows = c.execute(f"""select g.kernel, g.dataset, m.role, m.status, m.median_s, m.spread, {kernel_s}, p.json
                    from measurements m join points p on p.id = m.point_id
                    join programs g on g.id = m.program_id order by g.kernel, m.id""")
for kernel, dataset, role, status, median, spread, kernels, point in rows:
    p = json.loads(point)
    s = p.get("scheduler", {})
    o = s.get("options", {}) or {}
    code = p.get("code", {}) or {}
    what = [s.get("mode", "?"), o.get("target", "")]
    what += [f"tiles={'x'.join(map(str, p['tiles']))}" if p.get("tiles") else "untiled"]
    what += [f"{k}={v}" for k, v in code.items() if k.startswith("gpu")]
    med = f"{median * 1e3:.3f} ms" if median is not None else "-"
    spr = f"{spread * 100:.0f}%" if spread is not None else "-"
    ker = f"{kernels * 1e3:.3f} ms" if kernels is not None else "-"
    print(f"{kernel} {dataset} {role:9} {status:8} {med:>12} {spr:>6} {ker:>11}  {' '.join(x for x in what if x)}")
