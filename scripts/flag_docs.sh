#!/usr/bin/env python3
# scripts/flag_docs.sh [--check] [BIN]: writes the flag tables of README.md
# (user flags) and docs/flags.md (user and tuning flags) from the flag
# table's rows (BIN --help=markdown, --help=markdown-tuning; BIN defaults to
# ./hvm4g). Each table sits between `<!-- flags:KIND -->` and
# `<!-- /flags:KIND -->`. --check writes nothing and exits 1 if a table
# differs from the rows.
import os, re, subprocess, sys

args = sys.argv[1:]
check = "--check" in args
args = [a for a in args if a != "--check"]
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = args[0] if args else os.path.join(root, "hvm4g")

tables = {
    kind: subprocess.run([binary, "--help=" + opt], check=True,
                         capture_output=True, text=True).stdout
    for kind, opt in (("user", "markdown"), ("tuning", "markdown-tuning"))
}
files = {"README.md": ["user"], "docs/flags.md": ["user", "tuning"]}

stale = []
for name, kinds in files.items():
    path = os.path.join(root, name)
    text = open(path, encoding="utf-8").read()
    new = text
    for kind in kinds:
        pat = re.compile(r"(<!-- flags:%s -->\n).*?(<!-- /flags:%s -->)" % (kind, kind), re.S)
        if not pat.search(new):
            sys.exit("flag_docs: %s has no <!-- flags:%s --> table" % (name, kind))
        new = pat.sub(lambda m: m.group(1) + tables[kind] + m.group(2), new)
    if new != text:
        stale.append(name)
        if not check:
            open(path, "w", encoding="utf-8").write(new)

if check and stale:
    sys.exit("flag_docs: the flag tables of %s differ from the flag table "
             "(scripts/flag_docs.sh writes them)" % ", ".join(stale))
