# tests/upstream/ffi/lib.sh: sourced by tests/upstream/run.sh. Builds the
# libraries of a program of this folder as HVM4's runner (test/_all_.sh)
# does, with this repository's header (include/hvm4g_ffi.h): PROG.c beside
# PROG.hvm becomes one library, loaded with --ffi; a folder PROG/ of .c
# files becomes a folder of libraries, loaded with --ffi-dir. They are
# built into a temporary folder, never into the tree.

FFI_CC="${CC:-cc}"
FFI_INCLUDE="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../include" && pwd)"
case "$(uname -s)" in
  Darwin*) FFI_EXT=.dylib; FFI_LDFLAGS=(-dynamiclib -fPIC) ;;
  *)       FFI_EXT=.so;    FFI_LDFLAGS=(-shared -fPIC) ;;
esac

# ffi_build PROG.hvm OUT: builds PROG's libraries under OUT and sets
# FFI_ARGS to the flags that load them. Returns 1 when one does not build
# (the compiler's message on stderr).
ffi_build() {
  local prog=$1 out=$2 base name src
  base=${prog%.hvm}
  name=$(basename "$base")
  FFI_ARGS=()
  if [ -d "$base" ]; then
    mkdir -p "$out/$name" || return 1
    for src in "$base"/*.c; do
      "$FFI_CC" "${FFI_LDFLAGS[@]}" -I "$FFI_INCLUDE" \
        -o "$out/$name/$(basename "${src%.c}")$FFI_EXT" "$src" || return 1
    done
    FFI_ARGS=(--ffi-dir "$out/$name")
  else
    "$FFI_CC" "${FFI_LDFLAGS[@]}" -I "$FFI_INCLUDE" -o "$out/$name$FFI_EXT" "$base.c" || return 1
    FFI_ARGS=(--ffi "$out/$name$FFI_EXT")
  fi
}
