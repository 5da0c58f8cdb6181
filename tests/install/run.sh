#!/usr/bin/env bash
# Uses smd the way the README's "Use smd from your program" sections tell a user to, from an
# installed prefix, in a scratch folder outside the clone, with only the environment the README
# says to set (PATH, PKG_CONFIG_PATH; no LD_LIBRARY_PATH, no SMD_LIB_DIR):
#   smd        the installed `smd` command and example run from the prefix, after the prefix has
#              been moved (their RUNPATH is relative: $ORIGIN/../lib);
#   c          a program built with the README's pkg-config line starts and runs;
#   rust-path  a Cargo project with a path dependency on bindings/rust/smd;
#   rust-git   the same with a git dependency (a file:// URL of a local clone: no network);
#   rust-bundled  the git dependency again with no libsmd installed: libsmd is built from the
#              checkout's sources (the cmake crate); only when named (not in the default list);
#   go         a Go module requiring the binding with a replace directive;
#   java       `mvn install` of the binding, then a Maven project with its coordinates;
#   python     pip install of the binding over the installed libsmd (SMD_PYTHON_SYSTEM_LIBSMD=ON)
#              into a fresh venv of another Python than the build's;
#   wheel      scripts/python-wheel.sh --portable for one Python version, installed into a fresh
#              venv of that version.
# Each program writes a trial with the hook, reads a value back and runs a built-in rule
# (tests/install/app.*), and must print the same answer.
#   tests/install/run.sh [BUILD_DIR] [CHECK...]     (default: build, every check but rust-bundled)
# SMD_INSTALL_PYTHON / SMD_INSTALL_WHEEL_PYTHON: the Pythons of the python and wheel checks
# (default: pyenv's 3.12 and 3.9 when present, else python3). Prints one line per check and
# ends with "install tests: N passed, M failed".
set -uo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
shift || true
checks=("$@")
# rust-bundled is not in the default list: it compiles the whole of libsmd again (the cmake crate,
# in a scratch folder ccache cannot share with the build), too slow for the test command; run it
# by name: tests/install/run.sh build rust-bundled.
[ ${#checks[@]} -gt 0 ] || checks=(smd c rust-path rust-git go java python wheel)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/smd-install.XXXXXX")
case $scratch/ in "$src"/*) echo "the scratch folder $scratch is inside the clone"; exit 1 ;; esac
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
# Nothing from the caller's environment that the README does not tell a user to set.
unset LD_LIBRARY_PATH PKG_CONFIG_PATH SMD_LIB_DIR SMD_LINK SMD_BUILD_DIR RUSTFLAGS CARGO_TARGET_DIR \
  SMD_PYTHON_LIBSMD_BUILD_DIR SMD_PYTHON_SYSTEM_LIBSMD
export PATH="$HOME/.cargo/bin:$PATH"
expected='fc.weight at step 2: 2; AllZero conditions met: 1'
pyenv_python() {  # pyenv_python 3.12: that version's python, else python3
  local p
  p=$(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$1".*/bin/python3 2>/dev/null | sort -V | tail -1)
  echo "${p:-python3}"
}
# Compilers run through ccache when the machine has it (a speed-up only: results are the same).
if command -v ccache >/dev/null 2>&1; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi

passed=0 failed=0
run_check() {  # run_check NAME: runs check_NAME in the folder NAME, its output in NAME.log
  local name=$1 log="$scratch/$1.log" t0=$SECONDS
  mkdir -p "$scratch/$name"
  # (Not in an `if`: there, bash would ignore the subshell's set -e.)
  (set -e; cd "$scratch/$name"; "check_${name//-/_}") >"$log" 2>&1
  if [ $? -eq 0 ]; then
    passed=$((passed + 1)); echo "install: $name: ok ($((SECONDS - t0)) s)"
  else
    failed=$((failed + 1)); echo "install: $name: FAILED ($((SECONDS - t0)) s); its output:"
    tail -n 60 "$log" | sed 's/^/    /'
  fi
}
answer_is() {  # answer_is LANG OUTPUT_FILE: the program printed the expected answer
  # (Maven may write colour resets around a program's output even in batch mode: not compared.)
  sed 's/\x1b\[[0-9;]*m//g' "$2" | grep -qx "$1: $expected" ||
    { echo "expected '$1: $expected', got:"; cat -v "$2"; return 1; }
}

# The install: into a staging folder, then moved, so that nothing can rely on the configured or
# the first install prefix.
cmake --install "$build" --prefix "$scratch/staging" >"$scratch/install.log" || {
  cat "$scratch/install.log"; echo "install tests: 0 passed, 1 failed"; exit 1; }
mv "$scratch/staging" "$scratch/prefix"
prefix=$scratch/prefix
pcdir=$(dirname "$(find "$prefix" -name smd.pc | head -1)")
libdir=$(dirname "$pcdir")

check_smd() {
  # What the README says: put PREFIX/bin on PATH.
  PATH="$prefix/bin:$PATH"
  readelf -d "$prefix/bin/smd" | grep -E 'RUNPATH.*\$ORIGIN/\.\./' ||
    { echo "bin/smd has no \$ORIGIN RUNPATH"; readelf -d "$prefix/bin/smd" | grep -E 'RPATH|RUNPATH'; return 1; }
  smd --help >/dev/null
  "$prefix/libexec/smd/examples/train_mlp" run --steps 30 >train.out
  smd ls run | tee ls.out
  grep -q '^status: *ended' ls.out
  grep -q 'fc1.weight' ls.out
}

check_c() {
  export PKG_CONFIG_PATH=$pcdir
  cc -o app "$src/tests/install/app.c" $(pkg-config --cflags --libs smd)
  ./app run | tee out
  answer_is c out
}

rust_project() {  # rust_project DIR 'smd = {...}': a Cargo project using the smd crate
  mkdir -p "$1/src"
  cp "$src/tests/install/rust/main.rs" "$1/src/main.rs"
  printf '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n%s\n' "$2" >"$1/Cargo.toml"
}
# cargo's git checkouts and build outputs stay in the scratch folder; crates.io's downloads are
# shared with the user's cargo (CARGO_HOME's registry), so that they are fetched once.
cargo_home() {
  export CARGO_HOME=$scratch/cargo-home
  mkdir -p "$CARGO_HOME"
  mkdir -p "$HOME/.cargo/registry"
  [ -e "$CARGO_HOME/registry" ] || ln -s "$HOME/.cargo/registry" "$CARGO_HOME/registry"
}
git_clone() {  # a bare clone of the repository's committed HEAD, reached by a file:// URL
  [ -d "$scratch/smd.git" ] || git clone -q --bare "$src" "$scratch/smd.git"
}

check_rust_path() {
  export PKG_CONFIG_PATH=$pcdir
  cargo_home
  rust_project . "smd = { path = \"$src/bindings/rust/smd\" }"
  cargo build -q
  ./target/debug/app run | tee out
  answer_is rust out
}

check_rust_git() {
  export PKG_CONFIG_PATH=$pcdir
  cargo_home; git_clone
  rust_project . "smd = { git = \"file://$scratch/smd.git\" }"
  cargo build -q
  ./target/debug/app run | tee out
  answer_is rust out
}

check_rust_bundled() {
  # No libsmd installed anywhere the build script looks: it builds one from the checkout.
  cargo_home; git_clone
  rust_project . "smd = { git = \"file://$scratch/smd.git\" }"
  cargo build -q
  ./target/debug/app run | tee out
  answer_is rust out
  if ldd ./target/debug/app | grep libsmd; then echo "the bundled build loads a libsmd.so"; return 1; fi
}

check_go() {
  export PKG_CONFIG_PATH=$pcdir
  export GOFLAGS=-mod=mod
  # A build cache of its own: go keys the binding's cached build by its sources, not by what
  # pkg-config answers, so a cache from a run with another prefix would link that prefix's rpath.
  export GOCACHE=$scratch/go-cache
  cp "$src/tests/install/go/main.go" .
  go mod init example.com/app
  go mod edit -require=github.com/smd-project/smd/bindings/go@v0.0.0 \
    -replace=github.com/smd-project/smd/bindings/go="$src/bindings/go"
  go build -o app .
  ./app run | tee out
  answer_is go out
}

check_java() {
  (cd "$src/bindings/java" && mvn -B -q -ntp install -DskipTests -Dsmd.build.dir="$build")
  mkdir -p src/main/java
  cp "$src/tests/install/java/App.java" src/main/java/
  cat >pom.xml <<'POM'
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>example</groupId>
  <artifactId>app</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>ai.smd</groupId>
      <artifactId>smd</artifactId>
      <version>0.2.0</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId>
        <version>3.13.0</version>
      </plugin>
      <plugin>
        <groupId>org.codehaus.mojo</groupId>
        <artifactId>exec-maven-plugin</artifactId>
        <version>3.5.1</version>
        <configuration><mainClass>App</mainClass></configuration>
      </plugin>
    </plugins>
  </build>
</project>
POM
  mvn -B -q -ntp compile exec:java -Dexec.args=run | tee out
  answer_is java out
}

check_python() {
  local py
  py=${SMD_INSTALL_PYTHON:-$(pyenv_python 3.12)}
  export PKG_CONFIG_PATH=$pcdir
  "$py" -m venv venv-py
  SMD_PYTHON_SYSTEM_LIBSMD=ON venv-py/bin/pip install -q --disable-pip-version-check "$src/bindings/python"
  unset PKG_CONFIG_PATH
  venv-py/bin/python "$src/tests/install/app.py" run | tee out
  answer_is python out
  # The extension loads the installed libsmd, through its rpath (as a path that may name the
  # folder another way: compared once resolved).
  ldd venv-py/lib/python*/site-packages/smd/*smdc*.so | tee ldd.out
  local loaded
  loaded=$(awk '$1 ~ /^libsmd\.so/ {print $3}' ldd.out)
  [ -n "$loaded" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f "$libdir/$(basename "$loaded")")" ] ||
    { echo "the extension loads '$loaded', not the installed $libdir/libsmd.so*"; return 1; }
}

check_wheel() {
  local py whl
  py=${SMD_INSTALL_WHEEL_PYTHON:-$(pyenv_python 3.9)}
  whl=$(SMD_BUILD_DIR="$build" "$src/scripts/python-wheel.sh" --portable "$py" | tail -1)
  echo "portable wheel: $whl"
  case $whl in *manylinux*.whl) ;; *) echo "not a manylinux wheel: $whl"; return 1 ;; esac
  "$py" -m venv venv-wheel
  venv-wheel/bin/pip install -q --disable-pip-version-check "$whl"
  # The wheel carries libsmd and the libraries it needs: nothing is looked up in the prefix.
  rm -rf "$prefix.hidden"; mv "$prefix" "$prefix.hidden"
  local rc=0
  venv-wheel/bin/python "$src/tests/install/app.py" run >out 2>&1 || rc=$?
  mv "$prefix.hidden" "$prefix"
  cat out
  [ $rc -eq 0 ] && answer_is python out
}

for c in "${checks[@]}"; do
  run_check "$c"
done
echo "install tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
