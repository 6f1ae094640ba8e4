#!/usr/bin/env python3
"""tests/fuzz/fuzz.py: a grammar-aware mutation fuzzer for hvm4g.

Takes the golden programs (tests/golden) and, with --ref-tests DIR, the
reference's, mutates their tokens (delete, insert, duplicate, swap
brackets, random unicode, truncate, huge numbers, long names, deep nesting
of every construct), and runs each case under the ASan build with a
timeout: on the CPU, with -T4, on the simulated device in both --dup
modes, and with the simulated device taking over from the -T4 pool (or
starting over past --take-max). It reports any signal, sanitizer report, hang or difference that the
triage rules of tests/fuzz/README.md do not expect.

  fuzz.py --bin build-asan/hvm4g [--seed N] [--cases N | --time S]
          [--jobs N] [--timeout S] [--out DIR] [--ref-tests DIR]
          [--base BIN]

With --base BIN (a build of the change's parent), each case also runs on
the CPU with -s on both builds, which must print the same output and
interaction count: for changes to the core that keep HVM4's steps.

Each case is one line: "ok", or "FAIL <why>" with the case saved under
--out. The last line is "N passed, N failed"; the exit status is 1 when a
case failed. The same seed gives the same cases.
"""

import argparse, os, random, re, subprocess, sys, tempfile, time
from concurrent.futures import ProcessPoolExecutor

# Tokens: names (with unicode subscripts), numbers, strings and chars,
# multi-character operators, then any single character.
TOKEN = re.compile(r"""
    //[^\n]*                         # comment
  | "(?:\\.|[^"\\])*"                # string
  | '(?:\\.|[^'\\])*'                # char
  | [0-9]+n?                         # number / nat
  | [A-Za-z_$][A-Za-z0-9_$.]*[₀₁]?    # name
  | ~>|===|\.&\.|\.\|\.|<<|>>|<=|>=|==|!=|&&|\|\|
  | \s+
  | .
""", re.X | re.S)

OPEN, CLOSE = "([{", ")]}"
POOL = ["λ", "λ&", "&", "!", "!&", "↑", "↑↑", "#", "#P{", "#Z{}", "}", "{",
        "(", ")", "[", "]", ",", ";", ":", "=", ".", "@main", "@f", "%nf",
        "%log", "%gnf", "~>", "^", "*", "+", "-", "/", "%", "==", "<", "0",
        "1", "42", "x", "y", "x₀", "x₁", "&{}", "λ{", "#S:", "0:", "&A{",
        "\"s\"", "'c'", "<>", "0n", "1n+", "===", ".&.", ".|.", "@", "$",
        "#include", "\\", "\n"]
HUGE = ["4294967295", "4294967296", "18446744073709551616",
        "99999999999999999999999999", "9999999999999999999n", "0x"]
UNI  = ["λ", "↑", "₀", "₁", "\u00a0", "\u200b", "\ufeff", "é", "𝕏", "\u0000",
        "\ud7ff", "\U0010ffff", "\x7f", "\t", "\r"]
# Deep nesting: (prefix, suffix) around a term, repeated.
NEST = [("(", ")"), ("#S{", "}"), ("[", "]"), ("&A{", ",1}"), ("λx.", ""),
        ("λ&x.", ""), ("↑", ""), ("!x&A=1;", ""), ("(1+", ")"), ("λ{0:", ";1}"),
        ("f(", ")"), ("%nf(", ")"), ("&{", "}"), ("!&y=2;", "")]


def code_of(path):
    """The program without hvm4g's directives and expected lines."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    while lines and (lines[-1].startswith("//") or not lines[-1].strip()):
        lines.pop()
    return "\n".join(l for l in lines if not l.startswith("// "))


def mutate(rng, src):
    toks = TOKEN.findall(src) or [src]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        i = rng.randrange(len(toks))
        k = rng.randrange(10)
        if k == 0 and len(toks) > 1:
            del toks[i]
        elif k == 1:
            toks.insert(i, rng.choice(POOL))
        elif k == 2:
            toks.insert(i, toks[i])
        elif k == 3:
            js = [j for j, t in enumerate(toks) if t in OPEN or t in CLOSE]
            if js:
                j = rng.choice(js)
                toks[j] = rng.choice(OPEN + CLOSE)
        elif k == 4:
            toks.insert(i, rng.choice(UNI))
        elif k == 5:
            toks = toks[:i] if i else toks
        elif k == 6:
            js = [j for j, t in enumerate(toks) if t[:1].isdigit()] or [i]
            toks[rng.choice(js)] = rng.choice(HUGE)
        elif k == 7:
            js = [j for j, t in enumerate(toks) if t[:1].isalpha()] or [i]
            j = rng.choice(js)
            toks[j] = toks[j] + "a" * rng.choice([64, 1000, 70000])
        else:
            # deep nesting around a number or a name
            js = [j for j, t in enumerate(toks) if t[:1].isalnum()] or [i]
            j = rng.choice(js)
            pre, suf = rng.choice(NEST)
            n = rng.choice([10, 100, 1000, 10000])
            toks[j] = pre * n + toks[j] + suf * n
    return "".join(toks)


MODES = [("cpu", []), ("t4", ["-T4"]),
         # a heap collection every 64 words handed out (docs/memory.md):
         # what reclamation keeps must read as the default heap's
         ("cpu-reclaim", ["--reclaim-gap=64"]),
         ("t4-reclaim", ["-T4", "--reclaim-gap=64"]),
         # a heap of 64K words: collections when it fills, not by the gap
         # (a run whose live data outgrows it ends, and is not compared)
         ("cpu-small-heap", ["--heap=64K"]),
         ("t4-small-heap", ["-T4", "--heap=64K"]),
         ("sim-owner", ["--gpu", "--device=sim", "--dup=owner"]),
         ("sim-atomic", ["--gpu", "--device=sim", "--dup=atomic"]),
         # lanes that wait for held DUP slots (wnf.h HEAP_WAIT_POLLS, CUDA's
         # default): four blocks on four threads, so that holders on other
         # threads give slots back meanwhile
         ("sim-wait", ["--gpu", "--device=sim", "--dup=atomic", "--lanes=128",
                       "--sim-threads=4", "--dup-wait=4096"]),
         # the -T4 pool stopped after 4 tasks, the device taking the slots
         # it left (docs/gpu.md "CPU first")
         ("sim-take", ["--gpu", "--device=sim", "-T4", "--cpu-first=4",
                       "--take-max=4G"]),
         # the same past --take-max: the device starts over from the
         # program, the pool's work dropped (docs/gpu.md "Starting over")
         ("sim-restart", ["--gpu", "--device=sim", "-T4", "--cpu-first=4",
                          "--take-max=1K"]),
         # 4K words of device heap above the words in use: runs reclaim in
         # place between passes and grow (docs/memory.md, the device)
         ("sim-room", ["--gpu", "--device=sim", "--dup=atomic", "--handoff=0",
                       "--arena=256", "--region-shift=8"])]
# The second chance's limit, in timeouts, of a simulated device run that
# did not end where the CPU's did (value chosen by the 10,000-deep lists
# the mutator writes: a pass a level, about 4 s under ASan).
SLOW_SIM = 4
# Environment of a mode, where it needs one.
MODE_ENV = {"sim-room": {"HVM4G_SIM_ROOM": "4K"}}
# With --metal BIN (the Metal kernel on CPU threads, build-metal/hvm4g-mtl):
# tiny regions and budgets, and a yield before every second atomic access,
# so that lanes race where a GPU's would (it reproduced red_share_inert).
METAL = ["--gpu", "--device=metal", "--lanes=64", "--region-shift=8",
         "--budget=16"]
METAL_MODES = [("mtl-owner", METAL + ["--dup=owner"]),
               ("mtl-atomic", METAL + ["--dup=atomic"])]
SAN = re.compile(r"(ERROR|WARNING): (Address|Leak|Thread|Memory)Sanitizer|"
                 r": runtime error: |UndefinedBehaviorSanitizer")
# Resource ends, which differ between modes by design (tests/fuzz/README.md).
LIMIT = re.compile(r"heap exhausted|stack exhausted|out of memory|"
                   r"cannot reserve|too deep|too long|too large|"
                   r"larger than the heap")


ASAN = "halt_on_error=1:allocator_may_return_null=1"
# The hvm4g program leaves its runtime to the process's end; the library
# call driver closes its runtimes, so a leak there is a finding (one
# %panic's message leaked, fuzz seed 294338688 case 8).
API_ENV = {"ASAN_OPTIONS": "detect_leaks=1:" + ASAN}


def run(binary, path, args, limit, extra_env=None):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:" + ASAN,
               UBSAN_OPTIONS="halt_on_error=1")
    env.update(extra_env or {})
    t0 = time.time()
    try:
        p = subprocess.run([binary, os.path.basename(path)] + args,
                           cwd=os.path.dirname(path), env=env,
                           stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=limit)
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        return p.returncode, out, time.time() - t0
    except subprocess.TimeoutExpired:
        return None, "", limit


# A DUP printed as a binding after a collapsed result ("!A&L=expr").
FLOATING_DUP = re.compile(r"![A-Z]+&")
# A DUP projection in the source ("X₀", "X₁"). It starts where a name does
# (the look-behind), so a 70,000-character name is scanned once, not once
# per character (that took 5 s a case and starved the other runs' timers).
PROJECTION = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)([₀₁])")


# A fork's variables ("&Lλx,y{A;B}", "&(e)λx{A;B}"): in A each name is its
# variable's projection ₀, in B its projection ₁, without the subscript.
FORK = re.compile(r"&[\w.]*(?:\([^()]*\))?λ\s*([\w.]+(?:\s*,\s*[\w.]+)*)\s*\{")


def sup_label(code):
    """Whether a dynamic label's expression (`&(e)`) holds a SUP: DDU-SUP
    and DSU-SUP then build lambdas whose variables land in the other
    branch, so what a branch prints depends on when the other one ran."""
    i = code.find("&(")
    while i >= 0:
        depth, j = 0, i + 1
        while j < len(code):
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            if depth == 0:
                break
            j += 1
        if re.search(r"&[\w.]*(?:\(.*\))?\{", code[i + 2:j], re.S):
            return True
        i = code.find("&(", i + 2)
    return False


def reuses_projection(code):
    """Whether some DUP projection is used twice (its value then depends on
    the order of evaluation): written twice, or written as a fork variable's
    projection, which the fork's branches already use unwritten."""
    seen = set()
    for m in PROJECTION.finditer(code):
        if m.group(0) in seen:
            return True
        seen.add(m.group(0))
    for m in FORK.finditer(code):
        for v in m.group(1).split(","):
            # the parser takes "x ₁" (a blank before the subscript) as x₁
            if re.search(r"(?<![\w.])" + re.escape(v.strip()) + r"\s*[₀₁]", code):
                return True
    return False


def judge(res, flags=(), limit=10.0, loose=False):
    """The first unexpected result of a case's runs, or None."""
    for name, (rc, out, _) in res.items():
        if rc is not None and rc < 0:
            return f"{name}: signal {-rc}"
        if SAN.search(out):
            return f"{name}: sanitizer report"
    rc0, out0, secs0 = res["cpu"]
    if rc0 is None:
        return None          # never ends on the CPU: nothing to compare
    for name, (rc, out, _) in res.items():
        if name == "cpu":
            continue
        if LIMIT.search(out0) or LIMIT.search(out):
            continue         # a resource ran out on one side
        if rc is None and name.startswith("mtl"):
            continue         # the shim's yields make it slow, not wrong
        if rc is None and name.startswith("sim") and secs0 > limit / 4:
            continue         # the simulator is slower than the CPU by design
        if rc is None:
            return f"{name}: hang (the CPU run ended)"
        if ((loose or (name != "cpu" and "-C20" in flags
                       and FLOATING_DUP.search(out0)))
                and rc == rc0 and out.count("\n") == out0.count("\n")):
            continue         # an order of evaluation shows (README)
        if (rc, out) != (rc0, out0):
            return f"{name}: differs from cpu"
    return None


def same_as_base(new, old):
    """Whether a case ran the same on this build and on --base: status,
    output and interaction count (-s's other lines are times). A run that
    timed out or ran out of a resource on either side is not compared."""
    (rc1, out1, _), (rc0, out0, _) = new, old
    if rc1 is None or rc0 is None or LIMIT.search(out0 + out1):
        return True
    keep = lambda o: [l for l in o.splitlines()
                      if not l.startswith("- ") or l.startswith("- Itrs")]
    return rc1 == rc0 and keep(out1) == keep(out0)


# Generated programs, besides the mutated ones
# ============================================
# Each returns (code, extra files {name: text}, extra modes, the names of
# the modes to run or None for all).

# Church numerals written with λ&f (or an explicit DUP, labelled or not)
# applied to themselves: copies that share a label, DUPs that come to hold
# their own copies.
def gen_numeral(rng):
    k = rng.choice([1, 2, 2, 3, 4])
    body = "x"
    for _ in range(k):
        body = f"f({body})"
    lab = rng.choice(["", "&L", "&F", "&A"])
    if k == 2 and rng.random() < 0.5:
        # an explicit DUP, labelled or with an automatic label
        head, body = f"λf.!g{lab or '&'}=f;λx.", "g₀(g₁(x))"
    else:
        head = rng.choice(["λ&f.λx.", "λ&f.λ&x."])
    defs = f"@c = {head}{body}\n"
    selfs = rng.choice(["@c(@c)", "@c(@c(@c))", "@c(@c)(@c)", "(@c @c)"])
    arg = rng.choice(["λy.y", "λy.#P{y}", "λy.y + 1", "λy.[y]", "λy.&B{y, 0}",
                      "λy.%log(\"s\")", "λ&y.#Q{y, y}"])
    main = rng.choice([f"{selfs}", f"{selfs}({arg})", f"{selfs}({arg}, 0)",
                       f"%nf({selfs}({arg}, 3))", f"%gnf({selfs}({arg}, 3))",
                       f"%nf({selfs})", f"#T{{{selfs}({arg}, 1), {selfs}({arg}, 2)}}",
                       # an effect and a -C line before the DUP is met
                       # again: replayed from the journal, not done twice
                       f"#P{{%log(\"a\"), {selfs}({arg}, 0)}}",
                       f"&A{{#L{{1}}, {selfs}({arg}, 0)}}"])
    # Every mode: a DUP met again while it is reduced starts the run over
    # on one thread, copying the book lazily as HVM4 does, whichever mode
    # met it (docs/architecture.md "A DUP met again while it is reduced")
    return defs + f"@main = {main}\n", {}, [("t2", ["-T2"])], None


# %log under -T with errors: a tree of constructors whose leaves log after
# a slow sum, fail (apply a number or a constructor), or are values. The
# -T runs must print -T1's lines, in its order, and its first error.
def gen_log(rng):
    def leaf():
        c = rng.randrange(65, 91)
        n = rng.choice([0, 10, 1000, 20000])
        k = rng.random()
        if k < 0.5:
            return f"%log([#CHR{{(@w({n}) * 0) + {c}}}, #CHR{{{c}}}])"
        if k < 0.65:
            return f"(@w({n}) * 0)(1)"
        if k < 0.75:
            return "#A{1}(2)"
        if k < 0.85:
            return f"%nf(#V{{{leaf()}}})"
        return str(rng.randrange(100))
    def tree(d):
        if d == 0 or rng.random() < 0.3:
            return leaf()
        return "#T{" + ", ".join(tree(d - 1) for _ in range(rng.choice([2, 3]))) + "}"
    code = ("@w = λ{0: 0; λ&n. n + @w(n - 1)}\n"
            f"@main = {tree(rng.choice([1, 2, 3, 4]))}\n")
    return code, {}, [("t2", ["-T2"]), ("t16", ["-T16"]),
                      ("sim-take-t2", ["--gpu", "--device=sim", "-T2", "--cpu-first=2"])], None


# Include trees: files that include each other (a tree, shared files,
# cycles, a chain past the depth bound, a path past PATH_MAX, a missing
# file): each must be read once or refused with a message, never a crash.
def gen_include(rng):
    files = {}
    n = rng.choice([2, 5, 20, 200])
    for i in range(n):
        incs = []
        for _ in range(rng.choice([0, 1, 1, 2, 3])):
            k = rng.random()
            if k < 0.7:
                j = i + 1 + rng.randrange(3)
            elif k < 0.85:
                j = rng.randrange(n + 1)         # shared, or a cycle
            else:
                j = None
            if j is None:
                name = rng.choice(["missing.hvm4", "./" * 2100 + "inc0.hvm4.x",
                                   "sub/../inc1.hvm4", "/nonexistent/x.hvm4"])
            else:
                name = f"inc{min(j, n)}.hvm4"
            incs.append(f'#include "{name}"')
        files[f"inc{i}.hvm4"] = "\n".join(incs) + f"\n@d{i} = {i}\n"
    files[f"inc{n}.hvm4"] = f"@d{n} = {n}\n"
    code = '#include "inc0.hvm4"\n@main = [@d0, @d1]\n'
    return code, files, [], None


# Restarts under -C: trees of SUPs whose leaves print, log, or meet a DUP
# again (c2(c2)): the run starts over on one thread copying the book
# lazily, the lines it printed and the effects it did replayed, not done
# twice. Its lines, at -T1, -T2 and -T4, must be those of the same tree
# run after a restart that comes first, before any line (REF, the
# baseline): a restart's queue once kept the first run's branches.
def gen_restart(rng):
    def leaf():
        k = rng.random()
        if k < 0.3:
            return str(rng.randrange(10))
        if k < 0.5:
            return f'%log("{rng.choice("xyz")}")'
        if k < 0.8:
            f = rng.choice(["λy.#P{y}", "λy.y + 1", "λy.[y]", "λy.&B{y, 0}", "λ&y.#Q{y, y}"])
            return f"@c2(@c2, {f}, {rng.randrange(3)})"
        if k < 0.9:
            return f"#P{{{leaf()}, {leaf()}}}"
        return "&{}"
    def tree(d):
        if d == 0 or rng.random() < 0.25:
            return leaf()
        return f"&{rng.choice('ABC')}{{{tree(d - 1)}, {tree(d - 1)}}}"
    body = tree(rng.choice([1, 2, 3, 4]))
    defs = "@c2 = λ&f.λx.f(f(x))\n"
    ref = defs + f"@main = !!t = @c2(@c2, λy.y, 0); {body}\n"
    return (defs + f"@main = {body}\n", {REF: ref}, [("t2", ["-T2"])],
            ["cpu", "t2", "t4", "cpu-small-heap"], [rng.choice(["-C", "-C3"])])


# Library call sequences (--api BIN: tests/fuzz/api_seq.c, built by `make
# fuzz`): one runtime in a small heap normalizes and collapses definitions
# that answer, fail (a runtime error, a %panic, the heap exhausted), log or
# start over, many times in any order; each call must give what it gives
# in a runtime of its own (a failed call once left its garbage, or a stale
# root, to the next).
def gen_api(rng):
    code = ("@gen = λ{0: #N; λ&n. #C{n, @gen(n - 1)}}\n"
            "@sum = λ{#N: 0; #C: λh. λt. h + @sum(t)}\n"
            "@c2 = λ&f.λx.f(f(x))\n"
            f"@ok = @sum(@gen({rng.choice([10, 100, 1000])}))\n"
            "@err = 1(2)\n"
            "@panic = #P{1, %panic(\"stop here\")}\n"
            "@big = %nf(@gen(400000))\n"
            "@again = @c2(@c2, λy.#P{y}, 0)\n"
            "@sup = &A{1, &B{@sum(@gen(5)), %nf(@sum(@gen(11)))}}\n"
            "@log = #P{%log(\"l\"), 1}\n")
    names = ["ok", "err", "panic", "big", "again", "sup", "log"]
    calls = [f"{rng.choice('nc')}:{rng.choice(names)}" for _ in range(rng.randrange(2, 40))]
    heap = rng.choice(["65536", "1048576"])
    threads = rng.choice(["1", "1", "2", "4"])
    return code, {API: " ".join([heap, threads] + calls)}, [], ["cpu"]


# A generator's file of library calls (gen_api): the driver runs the case.
API = "calls.txt"

# A generator's file that is the baseline of its case: run first as "cpu",
# the case's own CPU run then compared with it as "case-cpu".
REF = "ref.hvm4"

GENERATORS = [(0.12, gen_numeral), (0.12, gen_log), (0.06, gen_include),
              (0.08, gen_restart), (0.06, gen_api)]


def one_case(a, idx, src, seed):
    rng = random.Random(f"{seed}:{idx}")
    files, modes, only = {}, [], None
    pick, gen = rng.random(), None
    for p, g in GENERATORS:
        if pick < p:
            gen = g
            break
        pick -= p
    gen_flags = None
    if gen:
        made = gen(rng)
        code, files, modes, only = made[:4]
        gen_flags = made[4] if len(made) > 4 else None   # flags of its own
    else:
        code = mutate(rng, src)
    flags = rng.choice([["-C20"], []])
    if gen_flags is not None:
        flags = gen_flags
    with tempfile.TemporaryDirectory(prefix="hvm4g-fuzz.") as d:
        path = os.path.join(d, "case.hvm4")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(code)
        for name, text in files.items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as f:
                f.write(text)
        if API in files:
            if not a.api:
                return None   # no driver (--api): the case is not run
            rc, out, _ = run(a.api, path, files[API].split(), a.timeout * 3, API_ENV)
            said = [l for l in out.splitlines() if l.startswith("api_seq:")]
            why = ("api: hang" if rc is None else f"api: signal {-rc}" if rc < 0 else
                   "api: sanitizer report" if SAN.search(out) else
                   f"api: status {rc}: {said[-1][:300] if said else out[-300:]}"
                   if rc != 0 else None)
            return keep_case(a, seed, idx, [], code, files, why)
        res = {}
        for name, extra in MODES + modes:
            if only and name not in only:
                continue
            res[name] = run(a.bin, path, flags + [f"--heap={a.heap}"] + extra,
                            a.timeout, MODE_ENV.get(name))
            if res["cpu"][0] is None:
                break        # never ends on the CPU: nothing to compare
        # A simulated device run that times out where the CPU ended runs
        # once more with SLOW_SIM times the limit: a deep structure takes
        # a pass a level (slow, not hung), and only one that still does
        # not end is judged a hang.
        for name, extra in MODES + modes:
            if (name.startswith("sim") and name in res and res[name][0] is None
                    and res["cpu"][0] is not None):
                res[name] = run(a.bin, path, flags + [f"--heap={a.heap}"] + extra,
                                a.timeout * SLOW_SIM, MODE_ENV.get(name))
        if a.metal and not only and res["cpu"][0] is not None:
            for name, extra in METAL_MODES:
                res[name] = run(a.metal, path,
                                flags + [f"--heap={a.heap}"] + extra,
                                a.timeout, {"HVM4G_MTL_YIELD": "2"})
        if REF in files and res["cpu"][0] is not None:
            res["case-cpu"] = res["cpu"]
            res["cpu"] = run(a.bin, os.path.join(d, REF),
                             flags + [f"--heap={a.heap}"], a.timeout)
        base = None
        if a.base and res["cpu"][0] is not None:
            args = flags + [f"--heap={a.heap}", "-s"]
            base = (run(a.bin, path, args, a.timeout),
                    run(a.base, path, args, a.timeout))
    why = judge(res, flags, a.timeout,
                reuses_projection(code) or sup_label(code))
    if not why and base and not same_as_base(*base):
        why = "base: output or interaction count differs"
    return keep_case(a, seed, idx, flags, code, files, why)


# A failing case kept in --out (its files inline), its path added to why.
def keep_case(a, seed, idx, flags, code, files, why):
    if why and a.out:
        os.makedirs(a.out, exist_ok=True)
        keep = os.path.join(a.out, f"case_{seed}_{idx}.hvm4")
        with open(keep, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(f"// fuzz: seed {seed} case {idx} flags {' '.join(flags)}: {why}\n")
            f.write(code + "\n")
            for name, text in files.items():   # the include tree, inline
                f.write(f"// --- {name}\n// " + text.replace("\n", "\n// ") + "\n")
        why += f" ({keep})"
    return why


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build-asan/hvm4g")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--time", type=float, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=10)
    ap.add_argument("--heap", default="16M")
    ap.add_argument("--out", default="")
    ap.add_argument("--ref-tests", default="")
    ap.add_argument("--metal", default="")
    # The library call driver (tests/fuzz/api_seq.c): gen_api's cases run
    # only with it.
    ap.add_argument("--api", default="")
    # A build of the change's parent: each case whose CPU run ended runs
    # on the CPU with -s on both, and must print the same, count included
    # (a change to the core that keeps HVM4's steps).
    ap.add_argument("--base", default="")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    a.metal = os.path.abspath(a.metal) if a.metal else ""
    a.base = os.path.abspath(a.base) if a.base else ""
    a.api = os.path.abspath(a.api) if a.api else ""
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    dirs = [os.path.join(root, "tests", "golden")] + ([a.ref_tests] if a.ref_tests else [])
    corpus = []
    for d in dirs:
        for n in sorted(os.listdir(d)):
            p = os.path.join(d, n)
            if n.endswith(".hvm4") and not n.startswith("_"):
                src = code_of(p)
                # a cpu-only program differs on the device by design
                cpu_only = "\n// cpu-only:" in "\n" + open(p, encoding="utf-8", errors="replace").read()
                if "#include" not in src and not cpu_only:
                    corpus.append(src)
    print(f"fuzz: seed {seed}, {len(corpus)} programs, {a.bin}", flush=True)
    end = time.time() + a.time if a.time else None
    passed = failed = 0
    # Processes, not threads: a case's Python work (holding the GIL) must
    # not delay another case's reading of its child past its time limit.
    with ProcessPoolExecutor(a.jobs) as ex:
        idx = 0
        while True:
            if end is None and idx >= a.cases:
                break
            if end is not None and time.time() > end:
                break
            batch = []
            for _ in range(a.jobs * 4 if end else min(a.jobs * 4, a.cases - idx)):
                src = random.Random(f"{seed}:{idx}:pick").choice(corpus)
                batch.append(ex.submit(one_case, a, idx, src, seed))
                idx += 1
            for f in batch:
                why = f.result()
                if why:
                    failed += 1
                    print(f"FAIL {why}", flush=True)
                else:
                    passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
