# Every measurement of a campaign store, per kernel: role, status, median,
# spread, and the point's non-default settings.
import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
rows = c.execute("""select g.kernel, g.dataset, m.role, m.status, m.median_s, m.spread, p.json
                    from measurements m join points p on p.id = m.point_id
                    join programs g on g.id = m.program_id order by g.kernel, m.id""")
for kernel, dataset, role, status, median, spread, point in rows:
    p = json.loads(point)
    s = p.get("scheduler", {})
    o = s.get("options", {}) or {}
    code = p.get("code", {}) or {}
    what = [s.get("mode", "?"), o.get("target", "")]
    what += [f"tiles={'x'.join(map(str, p['tiles']))}" if p.get("tiles") else "untiled"]
    what += [f"{k}={v}" for k, v in code.items() if k.startswith("gpu")]
    med = f"{median * 1e3:.3f} ms" if median is not None else "-"
    spr = f"{spread * 100:.0f}%" if spread is not None else "-"
    print(f"{kernel} {dataset} {role:9} {status:8} {med:>12} {spr:>6}  {' '.join(x for x in what if x)}")
