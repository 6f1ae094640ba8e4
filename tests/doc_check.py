#!/usr/bin/env python3
# tests/doc_check.py links ROOT: every relative link of README.md, docs/*.md
# and tests/README.md names a file that exists, and its #anchor a heading
# of that file (GitHub's slugs). Prints "ok N links" or each broken one.
#
# tests/doc_check.py examples ROOT BIN: each row of docs/language.md's
# tables of forms with an example and a result in backquotes runs as `BIN -e
# EXAMPLE` and prints that result. Prints "ok N examples" or each mismatch.
#
# tests/doc_check.py traps ROOT BIN: each program of docs/language.md's
# "Traps" section whose @main line ends in `// RESULT (remark)` prints
# RESULT. Prints "ok N programs" or each mismatch.
import os, re, subprocess, sys

LINK = re.compile(r'\[[^\]]*\]\(([^)\s]+)\)')


def slug(heading):
    s = heading.strip().lower()
    s = re.sub(r'[^\w\- ]', '', s)   # GitHub drops punctuation, keeps - and _
    return s.replace(' ', '-')


def anchors(path):
    seen, out = {}, set()
    in_code = False
    for line in open(path, encoding='utf-8'):
        if line.startswith('```'):
            in_code = not in_code
        if in_code or not line.startswith('#'):
            continue
        base = slug(line.lstrip('#'))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else '%s-%d' % (base, n))
    return out


def links(root):
    files = [os.path.join(root, 'README.md'), os.path.join(root, 'tests/README.md')]
    docs = os.path.join(root, 'docs')
    files += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith('.md'))
    bad, n = [], 0
    for md in files:
        text = open(md, encoding='utf-8').read()
        text = re.sub(r'```.*?```', '', text, flags=re.S)   # code is not a link
        for target in LINK.findall(text):
            if re.match(r'^[a-z]+:', target):
                continue   # http:, https:, mailto: are not checked here
            n += 1
            file, _, anchor = target.partition('#')
            path = os.path.normpath(os.path.join(os.path.dirname(md), file)) if file else md
            where = os.path.relpath(md, root)
            if not os.path.exists(path):
                bad.append('%s: %s: no such file' % (where, target))
            elif anchor and path.endswith('.md') and anchor not in anchors(path):
                bad.append('%s: %s: no such heading' % (where, target))
    for b in bad:
        print(b)
    if not bad:
        print('ok %d links' % n)
    return 1 if bad else 0


def cells(row):
    # a table row's cells; `\|` is a bar inside a cell
    parts = re.split(r'(?<!\\)\|', row.strip())[1:-1]
    return [p.strip().replace('\\|', '|') for p in parts]


def code(cell):
    m = re.fullmatch(r'`([^`]+)`', cell)
    return m.group(1) if m else None


def examples(root, binary):
    bad, n = [], 0
    head = None
    for line in open(os.path.join(root, 'docs/language.md'), encoding='utf-8'):
        if not line.startswith('|'):
            head = None
            continue
        row = cells(line)
        if head is None:
            head = row
            continue
        if head[0] != 'form' or 'result' not in head or set(line) <= set('|-: \n'):
            continue
        ex, want = code(row[head.index('example')]), code(row[head.index('result')])
        if ex is None or want is None:
            continue
        n += 1
        r = subprocess.run([binary, '-e', ex], capture_output=True, text=True, timeout=30)
        got = r.stdout.strip()
        if r.returncode != 0 or got != want:
            bad.append('%s: want %s, got %s (exit %d) %s' % (ex, want, got, r.returncode,
                                                           r.stderr.strip()[:120]))
    for b in bad:
        print(b)
    if not bad:
        print('ok %d examples' % n)
    return 1 if bad or n == 0 else 0


def traps(root, binary, tmp):
    text = open(os.path.join(root, 'docs/language.md'), encoding='utf-8').read()
    m = re.search(r'^## Traps\n(.*?)(?=^## |\Z)', text, flags=re.S | re.M)
    bad, n = [], 0
    for block in re.findall(r'```\n(.*?)```', m.group(1) if m else '', flags=re.S):
        main = re.search(r'^@main.*//\s*(.*)$', block, flags=re.M)
        if not main:
            continue
        want = main.group(1).split(' (')[0].strip()
        n += 1
        path = os.path.join(tmp, 'trap%d.hvm4' % n)
        with open(path, 'w', encoding='utf-8') as f:
            f.write(block)
        r = subprocess.run([binary, path], capture_output=True, text=True, timeout=30)
        if r.returncode != 0 or r.stdout.strip() != want:
            bad.append('trap %d: want %s, got %s (exit %d) %s' % (n, want, r.stdout.strip(),
                                                                  r.returncode, r.stderr.strip()[:120]))
    for b in bad:
        print(b)
    if not bad:
        print('ok %d programs' % n)
    return 1 if bad or n == 0 else 0


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'traps':
        sys.exit(traps(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) == 3 and sys.argv[1] == 'links':
        sys.exit(links(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == 'examples':
        sys.exit(examples(sys.argv[2], sys.argv[3]))
    sys.exit('usage: doc_check.py links ROOT | examples ROOT BIN | traps ROOT BIN TMP')
