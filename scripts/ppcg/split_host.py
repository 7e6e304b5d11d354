#!/usr/bin/env python3
"""Split a ppcg-generated <k>_host.cu into a C part and a CUDA part.

Why: polytune's PolyBench sources use C99 variable-length array parameters and
`T (*A)[n] = malloc(...)` in main; ppcg copies that code verbatim into its
host .cu file, which nvcc (a C++ front end) rejects ("a parameter is not
allowed").  The code that ppcg *generated* (the body of the kernel function:
cudaMalloc, copies, launches) is plain C++ and only uses the arrays as
pointers.  So, mechanically and without changing a character of ppcg's
generated body:

  <k>_region.cu : the ppcg body of kernel_<k>, wrapped as
                  extern "C" void ppcg_region(<params, arrays as void *>)
  <k>_main.c    : ppcg's host file with that body replaced by a call to
                  ppcg_region(...) and the #include of <k>_kernel.hu dropped;
                  compiled as C99 by gcc, exactly like the original program.

usage: split_host.py <k>_host.cu <kernel function name> <outdir> <k>
"""
import re
import sys


def match_close(text, i, open_ch, close_ch):
    depth = 0
    while i < len(text):
        c = text[i]
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise SystemExit("unbalanced %s%s" % (open_ch, close_ch))


def split_params(plist):
    out, depth, cur = [], 0, ""
    for c in plist:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    if cur.strip():
        out.append(cur.strip())
    return out


def main():
    host, fname, outdir, k = sys.argv[1:5]
    text = open(host).read()
    m = re.search(r"static\s+void\s+" + re.escape(fname) + r"\s*\(", text)
    if not m:
        raise SystemExit("no function %s in %s" % (fname, host))
    p_open = m.end() - 1
    p_close = match_close(text, p_open, "(", ")")
    params = split_params(text[p_open + 1:p_close])
    b_open = text.index("{", p_close)
    b_close = match_close(text, b_open, "{", "}")
    body = text[b_open:b_close + 1]

    cu_params, c_params, args = [], [], []
    for p in params:
        pm = re.match(r"^(.*?)\b(\w+)\s*((?:\[[^\]]*\])*)$", p, re.S)
        if not pm:
            raise SystemExit("cannot parse parameter %r" % p)
        ty, name, dims = pm.group(1).strip(), pm.group(2), pm.group(3)
        if dims:
            cu_params.append("void *" + name)
            c_params.append("void *" + name)
        else:
            cu_params.append(ty + " " + name)
            c_params.append(ty + " " + name)
        args.append(name)

    region = (
        "/* ppcg's generated host code for %s, verbatim, wrapped as a C-callable\n"
        "   function by split_host.py (arrays are passed as plain pointers). */\n"
        "#include <assert.h>\n#include <stdio.h>\n"
        "#include \"%s_kernel.hu\"\n"
        "#ifndef DATA_TYPE\n#define DATA_TYPE double\n#endif\n"
        "extern \"C\" void ppcg_region(%s)\n%s\n"
    ) % (fname, k, ", ".join(cu_params), body)

    head = text[:m.start()]
    head = head.replace('#include "%s_kernel.hu"\n' % k, "")
    main_c = (
        head
        + "void ppcg_region(%s);\n" % ", ".join(c_params)
        + text[m.start():b_open]
        + "{\n  ppcg_region(%s);\n}" % ", ".join(args)
        + text[b_close + 1:]
    )
    open("%s/%s_region.cu" % (outdir, k), "w").write(region)
    open("%s/%s_main.c" % (outdir, k), "w").write(main_c)


if __name__ == "__main__":
    main()
